package etcd3

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapi/miniapi/storage"
)

// maxPageSize caps one etcd range read when a selector filters a paged
// list and the store fetches more pages to fill it (Kubernetes' value).
const maxPageSize = 10000

// List implements storage.Interface.
//
// Which revision it reads, as kube-apiserver does: a continue token's
// revision; else revision N when opts.Exact; else the latest, which must
// be at least resourceVersion N when one is given. A paged list pins
// every later page to its first page's revision. With a selector, the
// store keeps reading (doubling the page size, up to maxPageSize) until it
// has Limit matching items or the range is done.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (*storage.List, error) {
	if !strings.HasSuffix(prefix, "/") {
		return nil, storage.NewError(storage.CodeInvalid, prefix, 0, errors.New("etcd3: list prefix must end in /"))
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	minRev, _ := storage.ParseResourceVersion(opts.ResourceVersion) // valid: Validate parsed it
	fromKey := prefix
	var readRev int64 // 0: latest, then pinned to the first read
	switch {
	case opts.Continue != "":
		var err error
		if fromKey, readRev, err = storage.DecodeContinue(opts.Continue, prefix); err != nil {
			return nil, err
		}
		minRev = 0
	case opts.Exact():
		readRev = minRev
	}

	rangeEnd := clientv3.GetPrefixRangeEnd(prefix)
	limit := opts.Limit
	filtered := !opts.Predicate.Empty()
	list := &storage.List{Items: []*storage.Object{}}
	var lastKey string
	for {
		ops := []clientv3.OpOption{clientv3.WithRange(rangeEnd)}
		if limit > 0 {
			ops = append(ops, clientv3.WithLimit(limit))
		}
		if readRev > 0 {
			ops = append(ops, clientv3.WithRev(readRev))
		}
		resp, err := s.get(ctx, "list", fromKey, ops...)
		if errors.Is(err, rpctypes.ErrFutureRev) {
			// As kube-apiserver's store: said with the current revision.
			if cur, cerr := CurrentRevision(ctx, s.client); cerr == nil {
				if tooLarge := checkNotTooLarge(prefix, readRev, cur); tooLarge != nil {
					return nil, tooLarge
				}
			}
		}
		if err != nil {
			return nil, listError(prefix, opts.Continue != "", err)
		}
		if readRev == 0 {
			if err := checkNotTooLarge(prefix, minRev, resp.Header.Revision); err != nil {
				return nil, err
			}
			readRev = resp.Header.Revision
		}
		hasMore := resp.More
		if !filtered {
			list.Items = slices.Grow(list.Items, len(resp.Kvs))
		}
		for i, kv := range resp.Kvs {
			if opts.Limit > 0 && int64(len(list.Items)) >= opts.Limit {
				hasMore = true
				break
			}
			obj, err := objectFromKV(kv)
			if err != nil {
				return nil, err
			}
			lastKey = obj.Key
			resp.Kvs[i] = nil // let a long list's values go early
			if filtered {
				ok, err := opts.Predicate.MatchesData(obj.Data)
				if err != nil {
					return nil, storage.NewError(storage.CodeInternal, obj.Key, obj.Revision, fmt.Errorf("etcd3: filter: %w", err))
				}
				if !ok {
					continue
				}
			}
			list.Items = append(list.Items, obj)
		}
		if !hasMore || opts.Limit <= 0 {
			break
		}
		if int64(len(list.Items)) >= opts.Limit {
			list.Continue, err = storage.EncodeContinue(lastKey+"\x00", prefix, readRev)
			if err != nil {
				return nil, storage.NewError(storage.CodeInternal, prefix, readRev, fmt.Errorf("etcd3: %w", err))
			}
			if !filtered {
				// Count is every key from fromKey on; this page took Limit.
				remaining := resp.Count - opts.Limit
				list.RemainingItemCount = &remaining
			}
			break
		}
		// A selector dropped items: read on, in larger pages.
		limit = min(limit*2, max(maxPageSize, opts.Limit))
		fromKey = lastKey + "\x00"
	}
	list.Revision = readRev
	return list, nil
}

// listError converts a range read's error; a compacted continue token
// gets Kubernetes' explanation.
func listError(prefix string, continuing bool, err error) error {
	serr := etcdError(prefix, "list", err)
	if continuing && storage.IsCompacted(serr) {
		return storage.NewError(storage.CodeCompacted, prefix, 0,
			fmt.Errorf("etcd3: the provided continue parameter is too old to display a consistent list result, start a new list: %w", err))
	}
	return serr
}
