package miniapitest

import (
	"context"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Compact forgets the server's history up to now, as kube-apiserver's
// periodic etcd compaction does once it passes: from then on a watch,
// an Exact list, a GetAt or a continue token at an older
// resourceVersion is answered 410 Expired, and informers relist. It
// returns the resourceVersion compacted to, the oldest still readable.
// Tests call it to exercise their 410 handling. The history forgotten
// is this environment's only: on the process's shared etcd member the
// server's caches refuse the older resourceVersions and the member
// keeps them for the other environments; with WithOwnEtcd, etcd itself
// is compacted.
func (e *Env) Compact(ctx context.Context) (string, error) {
	rev, err := e.Server.Compact(ctx)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(rev, 10), nil
}

// GetAt reads the named object of resource gvr as it was at
// resourceVersion rv: the state a Get would have answered once the
// server had seen rv and nothing later. It is kube's exact list
// (resourceVersionMatch=Exact) narrowed to the name, so it works on any
// server for as long as rv is retained: until a compaction passes it
// (every 5 minutes by default, keeping one interval; or Compact). An
// object that did not exist at rv is NotFound; a compacted rv is 410
// Expired.
func (e *Env) GetAt(ctx context.Context, gvr schema.GroupVersionResource, namespace, name, rv string) (*unstructured.Unstructured, error) {
	dc, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		return nil, err
	}
	list, err := dc.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{
		FieldSelector:        fields.OneTermEqualSelector("metadata.name", name).String(),
		ResourceVersion:      rv,
		ResourceVersionMatch: metav1.ResourceVersionMatchExact,
	})
	if err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return &list.Items[0], nil
}
