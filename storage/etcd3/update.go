package etcd3

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapi/miniapi/storage"
)

// GuaranteedUpdate implements storage.Interface. Each attempt is one
// transaction: put if the key's mod revision is still the one tryUpdate
// saw, else get the key, so a conflict costs no extra round trip before
// the retry. Errors from tryUpdate are returned unchanged.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, opts storage.UpdateOptions, tryUpdate storage.UpdateFunc) (*storage.Object, error) {
	cur, err := s.readCurrent(ctx, key)
	if err != nil {
		return nil, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, etcdError(key, "update", err)
		}
		if cur == nil && !opts.IgnoreNotFound {
			return nil, storage.NewError(storage.CodeNotFound, key, 0, nil)
		}
		if err := checkPreconditions(key, opts.Preconditions, cur); err != nil {
			return nil, err
		}
		var curObj *storage.Object
		var curRev int64
		if cur != nil {
			curObj, curRev = cur.obj, cur.obj.Revision
		}
		next, err := tryUpdate(curObj)
		if err != nil {
			return nil, err
		}
		if cur != nil && bytes.Equal(next, curObj.Data) {
			return curObj, nil
		}
		value, err := storedValue(key, next)
		if err != nil {
			return nil, err
		}
		// Equal storage encodings are a no-op too: next differs from the
		// current object only in its resourceVersion or where it is.
		if cur != nil && bytes.Equal(value, cur.value) {
			return curObj, nil
		}
		txn, err := s.commit("update", s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", curRev)).
			Then(clientv3.OpPut(key, string(value))).
			Else(clientv3.OpGet(key)))
		if err != nil {
			return nil, etcdError(key, "update", err)
		}
		if txn.Succeeded {
			return newObject(key, value, txn.Header.Revision)
		}
		if cur, err = currentFromKVs(key, elseKVs(txn)); err != nil {
			return nil, err
		}
	}
}

// Delete implements storage.Interface: delete if the key's mod revision is
// still the one the preconditions and opts.Validate were checked against,
// else get the key and check again.
func (s *Store) Delete(ctx context.Context, key string, opts storage.DeleteOptions) (*storage.Object, error) {
	cur, err := s.readCurrent(ctx, key)
	if err != nil {
		return nil, err
	}
	for {
		if cur == nil {
			return nil, storage.NewError(storage.CodeNotFound, key, 0, nil)
		}
		if err := checkPreconditions(key, opts.Preconditions, cur); err != nil {
			return nil, err
		}
		if opts.Validate != nil {
			if err := opts.Validate(cur.obj); err != nil {
				return nil, err
			}
		}
		txn, err := s.commit("delete", s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", cur.obj.Revision)).
			Then(clientv3.OpDelete(key)).
			Else(clientv3.OpGet(key)))
		if err != nil {
			return nil, etcdError(key, "delete", err)
		}
		if txn.Succeeded {
			return newObject(key, cur.value, txn.Header.Revision)
		}
		if cur, err = currentFromKVs(key, elseKVs(txn)); err != nil {
			return nil, err
		}
	}
}

// current is an object as read for a conditional write: as callers see
// it, and as stored.
type current struct {
	obj   *storage.Object
	value []byte
}

// currentFromKVs returns the object in a single-key read, or nil if the
// key was missing.
func currentFromKVs(key string, kvs []*mvccpb.KeyValue) (*current, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	obj, err := objectFromKV(kvs[0])
	if err != nil {
		return nil, err
	}
	return &current{obj: obj, value: kvs[0].Value}, nil
}

// elseKVs returns what the Else(Get) branch of a failed transaction read.
func elseKVs(txn *clientv3.TxnResponse) []*mvccpb.KeyValue {
	if len(txn.Responses) == 0 {
		return nil
	}
	if r := txn.Responses[0].GetResponseRange(); r != nil {
		return r.Kvs
	}
	return nil
}

// checkPreconditions compares p with the current object, or with an empty
// one when the key is missing (as Kubernetes does), and fails with
// Conflict.
func checkPreconditions(key string, p *storage.Preconditions, cur *current) error {
	if p == nil {
		return nil
	}
	var uid, rv string
	var rev int64
	if cur != nil {
		rev = cur.obj.Revision
		rv = storage.FormatResourceVersion(rev)
		var err error
		if uid, err = objectUID(cur.value); err != nil {
			return storage.NewError(storage.CodeInternal, key, rev, fmt.Errorf("etcd3: decode stored value: %w", err))
		}
	}
	if p.UID != nil && *p.UID != uid {
		return storage.NewError(storage.CodeConflict, key, rev,
			//lint:ignore ST1005 kube-apiserver's message, word for word
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, uid))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != rv {
		return storage.NewError(storage.CodeConflict, key, rev,
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	return nil
}

func objectUID(value []byte) (string, error) {
	var m struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	err := json.Unmarshal(value, &m)
	return m.Metadata.UID, err
}

// readCurrent reads the object at key, nil if there is none: where an update
// or delete starts.
func (s *Store) readCurrent(ctx context.Context, key string) (*current, error) {
	resp, err := s.get(ctx, "get", key)
	if err != nil {
		return nil, etcdError(key, "get", err)
	}
	return currentFromKVs(key, resp.Kvs)
}
