package registry

import (
	"context"
	"fmt"
	"slices"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// ListOptions qualify a List, a Watch or a DeleteCollection.
type ListOptions struct {
	Label                labels.Selector
	Field                fields.Selector
	ResourceVersion      string
	ResourceVersionMatch string
	Limit                int64
	Continue             string
}

// List returns one page of the objects in namespace ns ("" for all
// namespaces) that match the selectors.
func (s *Store) List(ctx context.Context, ns string, opts ListOptions) (*storage.List, error) {
	pred, err := s.predicate(opts)
	if err != nil {
		return nil, err
	}
	prefix := s.keys.NamespacePrefix(s.namespaceOf(ns))
	out, err := s.storage.List(ctx, prefix, storage.ListOptions{
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Predicate:            pred,
		Limit:                opts.Limit,
		Continue:             opts.Continue,
	})
	if storage.IsCompacted(err) {
		if opts.Continue != "" {
			return nil, continueExpired(opts.Continue, prefix)
		}
		if opts.ResourceVersionMatch == "Exact" {
			// kube-apiserver's words for a list its etcd refused.
			return nil, api.NewResourceExpired("The resourceVersion for the provided list is too old.")
		}
	}
	return out, s.statusErr(err, "")
}

// predicate builds the storage predicate for opts, refusing field
// selectors on fields the type does not support.
func (s *Store) predicate(opts ListOptions) (storage.Predicate, error) {
	if src, kind := s.t.Strategy.(AttrSource); kind && opts.Field != nil {
		field, err := opts.Field.Transform(src.ConvertFieldLabel)
		if err != nil {
			return storage.Predicate{}, err
		}
		opts.Field = field
	} else if opts.Field != nil {
		for _, r := range opts.Field.Requirements() {
			if !s.selectable(r.Field) {
				return storage.Predicate{}, api.NewBadRequest(fmt.Sprintf("field label not supported: %s", r.Field))
			}
		}
	}
	return storage.Predicate{Label: opts.Label, Field: opts.Field, Attrs: AttrFunc(s.t)}, nil
}

// selectable reports whether a field selector may use path on this type.
func (s *Store) selectable(path string) bool {
	return path == "metadata.name" || (path == "metadata.namespace" && s.t.Namespaced) ||
		slices.Contains(s.t.SelectableFields, path)
}
