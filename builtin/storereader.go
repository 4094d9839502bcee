package builtin

import (
	"context"
	"errors"
	"strings"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	kubestorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// Some of kube's code reads objects only through a generic registry store
// of its own (a pod's log finds its pod so, a Service's proxy its
// Service), and words a missing object as that store does. storeReader
// is the storage under such a store: Get reads the registry's store and
// converts to kube's internal type; nothing else is served.

// GetRESTOptions returns options whose storage is a storeReader.
func (o readerOptions) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{
		StorageConfig: &storagebackend.ConfigForResource{GroupResource: resource},
		Decorator: func(_ *storagebackend.ConfigForResource, prefix string, _ func(runtime.Object) (string, error), _ func() runtime.Object,
			_ func() runtime.Object, _ kubestorage.AttrFunc, _ kubestorage.IndexerFuncs, _ *cache.Indexers) (kubestorage.Interface, factory.DestroyFunc, error) {
			return storeReader{store: o.store, k: o.k, prefix: prefix + "/"}, func() {}, nil
		},
		ResourcePrefix: resource.Resource,
	}, nil
}

// storeReader serves Get of a kube storage.Interface from a registry
// store.
type storeReader struct {
	store  *registry.Store
	k      *kind
	prefix string
}

var _ kubestorage.Interface = storeReader{}

// errReadOnly is what storeReader answers for anything but Get.
var errReadOnly = errors.New("builtin: this store only reads objects")

// Get reads the object at key ("<prefix>/[<namespace>/]<name>") into out,
// an internal object of the kind.
func (s storeReader) Get(ctx context.Context, key string, _ kubestorage.GetOptions, out runtime.Object) error {
	ns, name := "", strings.TrimPrefix(key, s.prefix)
	if s.k.r.namespaced {
		ns, name, _ = strings.Cut(name, "/")
	}
	obj, err := s.store.Get(ctx, ns, name, "")
	if api.IsNotFound(err) {
		return kubestorage.NewKeyNotFoundError(key, 0)
	}
	if err != nil {
		return err
	}
	v, err := s.k.decodeVersioned(obj.Data)
	if err != nil {
		return err
	}
	return scheme.Convert(v, out, nil)
}

// Versioner is kube's, for resourceVersions.
func (storeReader) Versioner() kubestorage.Versioner { return kubestorage.APIObjectVersioner{} }

// Create is not served.
func (storeReader) Create(context.Context, string, runtime.Object, runtime.Object, uint64) error {
	return errReadOnly
}

// Delete is not served.
func (storeReader) Delete(context.Context, string, runtime.Object, *kubestorage.Preconditions, kubestorage.ValidateObjectFunc,
	runtime.Object, kubestorage.DeleteOptions) error {
	return errReadOnly
}

// Watch is not served.
func (storeReader) Watch(context.Context, string, kubestorage.ListOptions) (watch.Interface, error) {
	return nil, errReadOnly
}

// GetList is not served.
func (storeReader) GetList(context.Context, string, kubestorage.ListOptions, runtime.Object) error {
	return errReadOnly
}

// GuaranteedUpdate is not served.
func (storeReader) GuaranteedUpdate(context.Context, string, runtime.Object, bool, *kubestorage.Preconditions,
	kubestorage.UpdateFunc, runtime.Object) error {
	return errReadOnly
}

// Stats is not served.
func (storeReader) Stats(context.Context) (kubestorage.Stats, error) {
	return kubestorage.Stats{}, errReadOnly
}

// ReadinessCheck reports the store ready: the registry's is.
func (storeReader) ReadinessCheck() error { return nil }

// RequestWatchProgress is not served.
func (storeReader) RequestWatchProgress(context.Context) error { return errReadOnly }

// GetCurrentResourceVersion is not served.
func (storeReader) GetCurrentResourceVersion(context.Context) (uint64, error) { return 0, errReadOnly }

// EnableResourceSizeEstimation does nothing: nothing is listed.
func (storeReader) EnableResourceSizeEstimation(kubestorage.KeysFunc) error { return nil }

// CompactRevision is unknown.
func (storeReader) CompactRevision() int64 { return 0 }
