package server

import (
	"context"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/admissionregistration"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/discovery"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/informers/networking"
	"k8s.io/client-go/informers/node"
	"k8s.io/client-go/informers/resource"
	"k8s.io/client-go/informers/scheduling"
	"k8s.io/client-go/informers/storage"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// informerFactory is kube's SharedInformerFactory for the server's own
// components (the admission plugins, the webhook service resolver), over
// the loopback client. Only the groups those components watch are
// served: the embedded interface is nil, so asking for another group is
// a programming error that panics at once. client-go's own factory would
// link every group's informers, listers and clients into the binary.
type informerFactory struct {
	informers.SharedInformerFactory
	client kubernetes.Interface

	mu        sync.Mutex
	informers map[reflect.Type]cache.SharedIndexInformer
	started   map[reflect.Type]bool
	wg        sync.WaitGroup
	stop      context.Context
}

func newInformerFactory(client kubernetes.Interface) *informerFactory {
	return &informerFactory{
		client:    client,
		informers: map[reflect.Type]cache.SharedIndexInformer{},
		started:   map[reflect.Type]bool{},
	}
}

// InformerFor returns the shared informer of obj's type, made by newFunc
// on first use.
func (f *informerFactory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := reflect.TypeOf(obj)
	if inf, ok := f.informers[t]; ok {
		return inf
	}
	inf := newFunc(f.client, 0)
	f.informers[t] = inf
	if f.stop != nil {
		f.runLocked(t, inf)
	}
	return inf
}

// InformerName is nil: the server's own informers publish no metrics.
func (f *informerFactory) InformerName() *cache.InformerName { return nil }

// Start runs every informer asked for so far, and from then on each one
// asked for later, until stopCh closes.
func (f *informerFactory) Start(stopCh <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-stopCh
		cancel()
	}()
	f.StartWithContext(ctx)
}

// StartWithContext is Start until ctx ends.
func (f *informerFactory) StartWithContext(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stop == nil {
		f.stop = ctx
	}
	for t, inf := range f.informers {
		f.runLocked(t, inf)
	}
}

func (f *informerFactory) runLocked(t reflect.Type, inf cache.SharedIndexInformer) {
	if f.started[t] {
		return
	}
	f.started[t] = true
	ctx := f.stop
	f.wg.Go(func() { inf.RunWithContext(ctx) })
}

// Shutdown waits for every started informer to end; their context must
// be done.
func (f *informerFactory) Shutdown() { f.wg.Wait() }

// WaitForCacheSync waits until every started informer has synced, or
// stopCh closes.
func (f *informerFactory) WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool {
	f.mu.Lock()
	started := map[reflect.Type]cache.SharedIndexInformer{}
	for t, inf := range f.informers {
		if f.started[t] {
			started[t] = inf
		}
	}
	f.mu.Unlock()
	out := map[reflect.Type]bool{}
	for t, inf := range started {
		out[t] = cache.WaitForCacheSync(stopCh, inf.HasSynced)
	}
	return out
}

// WaitForCacheSyncWithContext is WaitForCacheSync until ctx ends.
func (f *informerFactory) WaitForCacheSyncWithContext(ctx context.Context) cache.SyncResult {
	synced := f.WaitForCacheSync(ctx.Done())
	return cache.SyncResult{Synced: synced, Err: ctx.Err()}
}

// The groups served.

// Admissionregistration returns the admissionregistration.k8s.io informers.
func (f *informerFactory) Admissionregistration() admissionregistration.Interface {
	return admissionregistration.New(f, "", nil)
}

// Core returns the core group's informers.
func (f *informerFactory) Core() core.Interface { return core.New(f, "", nil) }

// Discovery returns the discovery.k8s.io informers.
func (f *informerFactory) Discovery() discovery.Interface { return discovery.New(f, "", nil) }

// Networking returns the networking.k8s.io informers.
func (f *informerFactory) Networking() networking.Interface { return networking.New(f, "", nil) }

// Node returns the node.k8s.io informers.
func (f *informerFactory) Node() node.Interface { return node.New(f, "", nil) }

// Resource returns the resource.k8s.io informers.
func (f *informerFactory) Resource() resource.Interface { return resource.New(f, "", nil) }

// Scheduling returns the scheduling.k8s.io informers.
func (f *informerFactory) Scheduling() scheduling.Interface { return scheduling.New(f, "", nil) }

// Storage returns the storage.k8s.io informers.
func (f *informerFactory) Storage() storage.Interface { return storage.New(f, "", nil) }
