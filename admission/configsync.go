package admission

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/miniapi/miniapi/registry"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	arinformers "k8s.io/client-go/informers/admissionregistration"
	arv1informers "k8s.io/client-go/informers/admissionregistration/v1"
	"k8s.io/client-go/tools/cache"
)

// A configuration written through this server takes effect for the
// first request after the write, not some milliseconds later as on
// kube-apiserver, where a client that writes a webhook configuration
// and at once an object it refuses sees the object admitted. Three
// steps lie between the write and kube's webhook plugin acting on it,
// each on its own goroutine: the informer's reflector receives the
// event, the informer's indexer stores it and hands it to each handler,
// and the plugin's handler tells its configuration manager to read the
// indexer again. A request waits for the last step that concerns it:
// the indexer, which says whether the plugin runs at all
// (idleUnconfigured) and which a plugin built now reads; and, once the
// plugin is built, its own handler.

// configWatch is one resource of admission configuration: the informer
// the plugins read it from, and how far each step has gone, as the
// resourceVersion of the newest event it has handled.
type configWatch struct {
	resource string
	informer cache.SharedIndexInformer
	// indexing is set for the webhook configurations: indexed is then
	// the newest event the informer's indexer holds, told by a handler
	// of our own (the indexer is written before handlers run). Kube's
	// policy plugins compile what they read on a timer, which settle
	// waits out, so for them the reflector's word is enough, and a
	// handler (two goroutines and a 16 KB buffer in every logical
	// cluster) would buy nothing.
	indexing bool
	indexed  atomic.Int64
	// plugin is the newest event the plugin's handlers have run for;
	// built is set once the plugin has added one.
	plugin atomic.Int64
	built  atomic.Bool
	// seen is the newest write through this server found in effect, so a
	// request after it pays an atomic load.
	seen atomic.Int64
}

// configWait bounds how long a request waits for a configuration
// written a moment before to take effect; past it, the request is
// admitted with what the plugins hold, as kube-apiserver's would be. A
// relist can deliver a deletion as a tombstone with an older
// resourceVersion; the write is then taken as seen once the wait ends.
const configWait = 2 * time.Second

// newConfigWatch follows inf for the plugins that read resource,
// through its indexer if indexing.
func newConfigWatch(resource string, inf cache.SharedIndexInformer, indexing bool) *configWatch {
	w := &configWatch{resource: resource, informer: inf, indexing: indexing}
	if indexing {
		_, _ = inf.AddEventHandler(handled{track: &w.indexed})
	}
	return w
}

// inEffect reports whether the write at revision want has reached the
// indexer (the reflector, if not indexing) and, once the plugin is
// built, the plugin's handlers.
func (w *configWatch) inEffect(want int64) bool {
	if !w.indexing {
		got, _ := strconv.ParseInt(w.informer.LastSyncResourceVersion(), 10, 64)
		return got >= want
	}
	if w.indexed.Load() < want {
		return false
	}
	return !w.built.Load() || w.plugin.Load() >= want
}

// awaitConfig waits until the plugins act on every admission
// configuration this server has written.
func (c *Chain) awaitConfig(ctx context.Context) {
	var snap *registry.Snapshot
	for _, w := range c.configs {
		if snap == nil {
			snap = c.reg.Snapshot()
		}
		res, ok := snap.Lookup("admissionregistration.k8s.io", "v1", w.resource)
		if !ok {
			continue
		}
		want := res.Store.LastWrite()
		if want <= w.seen.Load() {
			continue
		}
		deadline := time.Now().Add(configWait)
		for !w.inEffect(want) && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		if ctx.Err() == nil {
			w.seen.Store(want)
		}
	}
}

// handled runs a handler, then records the resourceVersion of the event
// it ran for in track, if newer.
type handled struct {
	cache.ResourceEventHandler
	track *atomic.Int64
}

func (h handled) OnAdd(obj any, initial bool) {
	if h.ResourceEventHandler != nil {
		h.ResourceEventHandler.OnAdd(obj, initial)
	}
	h.record(obj)
}

func (h handled) OnUpdate(old, obj any) {
	if h.ResourceEventHandler != nil {
		h.ResourceEventHandler.OnUpdate(old, obj)
	}
	h.record(obj)
}

func (h handled) OnDelete(obj any) {
	if h.ResourceEventHandler != nil {
		h.ResourceEventHandler.OnDelete(obj)
	}
	h.record(obj)
}

// record raises track to obj's resourceVersion; a deleted object's is
// the deletion's.
func (h handled) record(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	rv, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	raise(h.track, rv)
}

// raise sets a to v if v is greater.
func raise(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// webhookInformers is the informer factory kube's plugins are
// initialized with: the server's, except that a handler a webhook
// plugin adds to its configuration informer is followed by the
// resource's configWatch.
type webhookInformers struct {
	informers.SharedInformerFactory
	watches map[string]*configWatch // by resource, filled before plugins are built
}

func (f webhookInformers) Admissionregistration() arinformers.Interface {
	return webhookGroup{Interface: f.SharedInformerFactory.Admissionregistration(), watches: f.watches}
}

type webhookGroup struct {
	arinformers.Interface
	watches map[string]*configWatch
}

func (g webhookGroup) V1() arv1informers.Interface {
	return webhookV1{Interface: g.Interface.V1(), watches: g.watches}
}

type webhookV1 struct {
	arv1informers.Interface
	watches map[string]*configWatch
}

func (v webhookV1) ValidatingWebhookConfigurations() arv1informers.TypedValidatingWebhookConfigurationInformer {
	i := v.Interface.ValidatingWebhookConfigurations()
	return validatingConfigs{TypedValidatingWebhookConfigurationInformer: i, informer: followed(i.Informer(), v.watches["validatingwebhookconfigurations"])}
}

func (v webhookV1) MutatingWebhookConfigurations() arv1informers.TypedMutatingWebhookConfigurationInformer {
	i := v.Interface.MutatingWebhookConfigurations()
	return mutatingConfigs{TypedMutatingWebhookConfigurationInformer: i, informer: followed(i.Informer(), v.watches["mutatingwebhookconfigurations"])}
}

type validatingConfigs struct {
	arv1informers.TypedValidatingWebhookConfigurationInformer
	informer cache.SharedIndexInformer
}

func (i validatingConfigs) Informer() cache.SharedIndexInformer { return i.informer }

type mutatingConfigs struct {
	arv1informers.TypedMutatingWebhookConfigurationInformer
	informer cache.SharedIndexInformer
}

func (i mutatingConfigs) Informer() cache.SharedIndexInformer { return i.informer }

// followed returns inf with the handlers added to it followed by w; inf
// itself when no plugin reads it.
func followed(inf cache.SharedIndexInformer, w *configWatch) cache.SharedIndexInformer {
	if w == nil {
		return inf
	}
	return followedInformer{SharedIndexInformer: inf, w: w}
}

// followedInformer records, for each handler added, the newest event it
// has run for. A handler added to a running informer is first handed
// what the indexer holds, which is at least what w.indexed says; so it
// starts from there.
type followedInformer struct {
	cache.SharedIndexInformer
	w *configWatch
}

func (f followedInformer) wrap(h cache.ResourceEventHandler) cache.ResourceEventHandler {
	raise(&f.w.plugin, f.w.indexed.Load())
	f.w.built.Store(true)
	return handled{ResourceEventHandler: h, track: &f.w.plugin}
}

func (f followedInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return f.SharedIndexInformer.AddEventHandler(f.wrap(h))
}

func (f followedInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return f.SharedIndexInformer.AddEventHandlerWithResyncPeriod(f.wrap(h), resync)
}

func (f followedInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, o cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return f.SharedIndexInformer.AddEventHandlerWithOptions(f.wrap(h), o)
}
