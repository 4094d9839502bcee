package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/core"
	corev1informers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// initialized is a plugin initialized apart from the chain's other
// plugins: it shows the chain only what admits, so the chain's
// initializers cannot hand it their informers in place of its own.
type initialized struct{ kadmission.MutationInterface }

// freshNamespaces is the informer factory kube's NamespaceLifecycle
// plugin is initialized with: the server's, except that the plugin's
// namespace lister reads the registry. An informer learns of a new
// namespace a moment after the client that created it does, and the
// plugin, finding no namespace, sleeps 50 ms before it looks again; a
// test that creates a namespace and then its objects would pay that on
// most runs. The registry's namespace cache has the same lag, so a miss
// there is read again from etcd.
type freshNamespaces struct {
	informers.SharedInformerFactory
	lister corelisters.NamespaceLister
}

func (f freshNamespaces) Core() core.Interface {
	return freshCore{Interface: f.SharedInformerFactory.Core(), lister: f.lister}
}

type freshCore struct {
	core.Interface
	lister corelisters.NamespaceLister
}

func (c freshCore) V1() corev1informers.Interface {
	return freshCoreV1{Interface: c.Interface.V1(), lister: c.lister}
}

type freshCoreV1 struct {
	corev1informers.Interface
	lister corelisters.NamespaceLister
}

// Namespaces is the factory's namespace informer, which the plugin
// waits to have synced as kube's does, with the registry's lister.
func (c freshCoreV1) Namespaces() corev1informers.TypedNamespaceInformer {
	return freshNamespaceInformer{TypedNamespaceInformer: c.Interface.Namespaces(), lister: c.lister}
}

type freshNamespaceInformer struct {
	corev1informers.TypedNamespaceInformer
	lister corelisters.NamespaceLister
}

func (i freshNamespaceInformer) Lister() corelisters.NamespaceLister { return i.lister }

// registryNamespaces reads namespaces from the registry: its cache
// first, etcd on a miss, so a namespace whose create has been answered
// is always found. List is the informer's.
type registryNamespaces struct {
	reg *registry.Registry
	corelisters.NamespaceLister
	// decoded holds the last namespace decoded under each name, with its
	// revision: every create in a namespace reads it, and it seldom
	// changes. What a lister returns is read-only, as an informer's.
	decoded *sync.Map // name -> decodedNamespace
}

type decodedNamespace struct {
	revision int64
	ns       *corev1.Namespace
}

func (r registryNamespaces) List(selector labels.Selector) ([]*corev1.Namespace, error) {
	return r.NamespaceLister.List(selector)
}

func (r registryNamespaces) Get(name string) (*corev1.Namespace, error) {
	res, ok := r.reg.Snapshot().Lookup("", "v1", "namespaces")
	if !ok {
		return r.NamespaceLister.Get(name)
	}
	ctx := context.Background()
	obj, err := res.Store.Get(ctx, "", name, "0")
	if api.IsNotFound(err) {
		obj, err = res.Store.Get(ctx, "", name, "")
	}
	if api.IsNotFound(err) {
		r.decoded.Delete(name)
		return nil, kerrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	if err != nil {
		return nil, err
	}
	if d, ok := r.decoded.Load(name); ok && d.(decodedNamespace).revision == obj.Revision {
		return d.(decodedNamespace).ns, nil
	}
	ns := &corev1.Namespace{}
	if err := json.Unmarshal(obj.Data, ns); err != nil {
		return nil, fmt.Errorf("admission: decode namespace %q: %w", name, err)
	}
	r.decoded.Store(name, decodedNamespace{revision: obj.Revision, ns: ns})
	return ns, nil
}
