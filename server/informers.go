package server

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/admissionregistration"
	admissionregistrationv1 "k8s.io/client-go/informers/admissionregistration/v1"
	"k8s.io/client-go/informers/apps"
	appsv1 "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/informers/batch"
	batchv1 "k8s.io/client-go/informers/batch/v1"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/discovery"
	discoveryv1 "k8s.io/client-go/informers/discovery/v1"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/informers/networking"
	networkingv1 "k8s.io/client-go/informers/networking/v1"
	"k8s.io/client-go/informers/node"
	nodev1 "k8s.io/client-go/informers/node/v1"
	"k8s.io/client-go/informers/policy"
	policyv1 "k8s.io/client-go/informers/policy/v1"
	"k8s.io/client-go/informers/resource"
	resourcev1 "k8s.io/client-go/informers/resource/v1"
	"k8s.io/client-go/informers/scheduling"
	schedulingv1 "k8s.io/client-go/informers/scheduling/v1"
	"k8s.io/client-go/informers/storage"
	storagev1 "k8s.io/client-go/informers/storage/v1"
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
	// hold is open while handlers added now must wait (holdHandlers).
	hold chan struct{}
}

// holdHandlers makes the handlers added from now on wait, before their
// first call, until release is called: kube's controllers are built
// while the informers run, and expect none of their handlers called
// before their constructor returns.
func (f *informerFactory) holdHandlers() (release func()) {
	ch := make(chan struct{})
	f.mu.Lock()
	f.hold = ch
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		if f.hold == ch {
			f.hold = nil
		}
		f.mu.Unlock()
		close(ch)
	}
}

// currentHold is what a handler added now waits on, nil for nothing.
func (f *informerFactory) currentHold() <-chan struct{} {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hold == nil {
		return nil
	}
	return f.hold
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
	// Tracked, so WaitForControllers can tell when its handlers have
	// seen every write.
	inf := cache.SharedIndexInformer(&trackedInformer{SharedIndexInformer: newFunc(f.client, 0), obj: obj, factory: f})
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
	// cache.WaitFor, not cache.WaitForCacheSync, which polls every
	// 100 ms.
	ctx := wait.ContextForChannel(stopCh)
	out := map[reflect.Type]bool{}
	for t, inf := range started {
		out[t] = cache.WaitFor(ctx, "", inf.HasSyncedChecker())
	}
	return out
}

// WaitForCacheSyncWithContext is WaitForCacheSync until ctx ends.
func (f *informerFactory) WaitForCacheSyncWithContext(ctx context.Context) cache.SyncResult {
	synced := f.WaitForCacheSync(ctx.Done())
	return cache.SyncResult{Synced: synced, Err: ctx.Err()}
}

// ForResource returns the shared informer of a core resource the
// server's components read by resource: the parameters of admission
// policies (ConfigMaps, Secrets), and what the resource quota
// evaluators read as typed objects or count. For any other resource it
// returns an error, on which kube's policy plugin falls back to an
// informer of its own over the dynamic client, as it does for custom
// resources, and the quota controller to a metadata informer.
// client-go's ForResource switches over every resource of every group,
// and would link them all.
func (f *informerFactory) ForResource(r schema.GroupVersionResource) (informers.GenericInformer, error) {
	if r.Group != "" || r.Version != "v1" {
		return nil, fmt.Errorf("server: no shared informer for %v", r)
	}
	core := f.Core().V1()
	var inf cache.SharedIndexInformer
	switch r.Resource {
	case "configmaps":
		inf = core.ConfigMaps().Informer()
	case "secrets":
		inf = core.Secrets().Informer()
	case "pods":
		inf = core.Pods().Informer()
	case "services":
		inf = core.Services().Informer()
	case "persistentvolumeclaims":
		inf = core.PersistentVolumeClaims().Informer()
	case "replicationcontrollers":
		inf = core.ReplicationControllers().Informer()
	case "resourcequotas":
		inf = core.ResourceQuotas().Informer()
	default:
		return nil, fmt.Errorf("server: no shared informer for %v", r)
	}
	return genericInformer{inf: inf, resource: r.GroupResource()}, nil
}

// genericInformer is one of the factory's informers, listed as objects.
type genericInformer struct {
	inf      cache.SharedIndexInformer
	resource schema.GroupResource
}

func (g genericInformer) Informer() cache.SharedIndexInformer { return g.inf }
func (g genericInformer) Lister() cache.GenericLister {
	return cache.NewGenericLister(g.inf.GetIndexer(), g.resource)
}

// The groups served: each only in the versions the server's components
// watch (the group's other versions are nil, so that their informers,
// listers and clients are not linked in).

// Admissionregistration returns the admissionregistration.k8s.io/v1 informers.
func (f *informerFactory) Admissionregistration() admissionregistration.Interface {
	return admissionGroup{f: f}
}

// Apps returns the apps/v1 informers.
func (f *informerFactory) Apps() apps.Interface { return appsGroup{f: f} }

// Batch returns the batch/v1 informers.
func (f *informerFactory) Batch() batch.Interface { return batchGroup{f: f} }

// Policy returns the policy/v1 informers.
func (f *informerFactory) Policy() policy.Interface { return policyGroup{f: f} }

// Core returns the core group's informers.
func (f *informerFactory) Core() core.Interface { return core.New(f, "", nil) }

// Discovery returns the discovery.k8s.io/v1 informers.
func (f *informerFactory) Discovery() discovery.Interface { return discoveryGroup{f: f} }

// Networking returns the networking.k8s.io/v1 informers.
func (f *informerFactory) Networking() networking.Interface { return networkingGroup{f: f} }

// Node returns the node.k8s.io/v1 informers.
func (f *informerFactory) Node() node.Interface { return nodeGroup{f: f} }

// Resource returns the resource.k8s.io/v1 informers.
func (f *informerFactory) Resource() resource.Interface { return resourceGroup{f: f} }

// Scheduling returns the scheduling.k8s.io/v1 informers.
func (f *informerFactory) Scheduling() scheduling.Interface { return schedulingGroup{f: f} }

// Storage returns the storage.k8s.io/v1 informers.
func (f *informerFactory) Storage() storage.Interface { return storageGroup{f: f} }

// One version of a group; the embedded interfaces are nil.
type (
	admissionGroup struct {
		admissionregistration.Interface
		f *informerFactory
	}
	appsGroup struct {
		apps.Interface
		f *informerFactory
	}
	batchGroup struct {
		batch.Interface
		f *informerFactory
	}
	policyGroup struct {
		policy.Interface
		f *informerFactory
	}
	discoveryGroup struct {
		discovery.Interface
		f *informerFactory
	}
	networkingGroup struct {
		networking.Interface
		f *informerFactory
	}
	nodeGroup struct {
		node.Interface
		f *informerFactory
	}
	resourceGroup struct {
		resource.Interface
		f *informerFactory
	}
	schedulingGroup struct {
		scheduling.Interface
		f *informerFactory
	}
	storageGroup struct {
		storage.Interface
		f *informerFactory
	}
)

func (g admissionGroup) V1() admissionregistrationv1.Interface {
	return admissionregistrationv1.New(g.f, "", nil)
}
func (g appsGroup) V1() appsv1.Interface             { return appsv1.New(g.f, "", nil) }
func (g batchGroup) V1() batchv1.Interface           { return batchv1.New(g.f, "", nil) }
func (g policyGroup) V1() policyv1.Interface         { return policyv1.New(g.f, "", nil) }
func (g discoveryGroup) V1() discoveryv1.Interface   { return discoveryv1.New(g.f, "", nil) }
func (g networkingGroup) V1() networkingv1.Interface { return networkingv1.New(g.f, "", nil) }
func (g nodeGroup) V1() nodev1.Interface             { return nodev1.New(g.f, "", nil) }
func (g resourceGroup) V1() resourcev1.Interface     { return resourcev1.New(g.f, "", nil) }
func (g schedulingGroup) V1() schedulingv1.Interface { return schedulingv1.New(g.f, "", nil) }
func (g storageGroup) V1() storagev1.Interface       { return storagev1.New(g.f, "", nil) }
