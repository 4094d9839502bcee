package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/miniapi/miniapi/storage/cacher"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	apistorage "k8s.io/apiserver/pkg/storage"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	flowcontrolrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"
	"k8s.io/client-go/informers"
	flowcontrolinformers "k8s.io/client-go/informers/flowcontrol"
	fcinformers "k8s.io/client-go/informers/flowcontrol/v1"
	flowcontrolclient "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	fclisters "k8s.io/client-go/listers/flowcontrol/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/ensurer"
)

// Kube-apiserver's defaults for --max-requests-inflight and
// --max-mutating-requests-inflight: with priority and fairness their sum
// is the server's concurrency limit, shared among the priority levels.
const (
	DefaultMaxRequestsInFlight         = 400
	DefaultMaxMutatingRequestsInFlight = 200
)

// inflightLimits returns kube's two in-flight limits from the Config: 0
// means the default, negative means none (kube's 0).
func inflightLimits(cfg Config) (readOnly, mutating int) {
	limit := func(v, def int) int {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return limit(cfg.MaxRequestsInFlight, DefaultMaxRequestsInFlight),
		limit(cfg.MaxMutatingRequestsInFlight, DefaultMaxMutatingRequestsInFlight)
}

// flowControl is kube-apiserver's API priority and fairness: kube's
// config controller (utilflowcontrol), fed by FlowSchema and
// PriorityLevelConfiguration informers over the loopback client, and
// the work estimator its filter asks how many seats a request takes.
type flowControl struct {
	ctl            utilflowcontrol.Interface
	client         flowcontrolclient.FlowcontrolV1Interface
	flowSchemas    cache.SharedIndexInformer
	priorityLevels cache.SharedIndexInformer
	estimator      flowcontrolrequest.WorkEstimatorFunc
}

// newFlowControl builds it as kube-apiserver's FeatureOptions and
// DefaultBuildHandlerChain do, for a server whose concurrency limit is
// limit. Nothing runs yet; see startFlowControl.
func newFlowControl(client *loopbackClient, limit int, stats func(string) (apistorage.Stats, error)) *flowControl {
	fc := &flowControl{
		client:         client.FlowcontrolV1(),
		flowSchemas:    fcinformers.NewFlowSchemaInformer(client, 0, cache.Indexers{}),
		priorityLevels: fcinformers.NewPriorityLevelConfigurationInformer(client, 0, cache.Indexers{}),
	}
	fc.ctl = utilflowcontrol.New(flowcontrolFactory{v1: fc}, fc.client, limit)
	fc.estimator = flowcontrolrequest.NewWorkEstimator(stats, fc.ctl.GetInterestedWatchCount,
		flowcontrolrequest.DefaultWorkEstimatorConfig(), fc.ctl.GetMaxSeats)
	return fc
}

// startFlowControl runs the informers, creates or updates kube's
// mandatory and suggested configuration, as kube-apiserver's
// priority-and-fairness-config-producer post-start hook does (and again
// every minute until bg ends), and runs the config controller and the
// filter's watermark maintenance until bg ends.
func (s *Server) startFlowControl(ctx, bg context.Context, fc *flowControl) error {
	for _, inf := range []cache.SharedIndexInformer{fc.flowSchemas, fc.priorityLevels} {
		s.background.Go(func() { inf.RunWithContext(bg) })
	}
	s.background.Go(func() {
		if err := fc.ctl.Run(bg.Done()); err != nil {
			s.log.Error("server: API priority and fairness config controller", "err", err)
		}
	})
	s.background.Go(func() {
		genericfilters.StartPriorityAndFairnessWatermarkMaintenance(bg.Done())
		<-bg.Done()
	})
	// cache.WaitFor, not WaitForCacheSync: that polls every 100 ms, most
	// of what this would add to the start.
	if !cache.WaitFor(ctx, "", fc.flowSchemas.HasSyncedChecker(), fc.priorityLevels.HasSyncedChecker()) {
		return fmt.Errorf("server: the flow control informers did not fill: %w", ctx.Err())
	}
	bctx, cancel := context.WithTimeout(ctx, bootstrapTimeout)
	defer cancel()
	for {
		err := fc.ensure(bctx)
		if err == nil {
			break
		}
		// Another replica may be writing the same objects: kube's
		// hook retries every second.
		s.log.Warn("server: API priority and fairness bootstrap configuration, will retry", "err", err)
		select {
		case <-bctx.Done():
			return fmt.Errorf("server: API priority and fairness bootstrap configuration: %w", err)
		case <-time.After(time.Second):
		}
	}
	s.hooks.flowControl.finish()
	s.background.Go(func() {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-bg.Done():
				return
			case <-t.C:
			}
			if err := fc.ensure(bg); err != nil && bg.Err() == nil {
				s.log.Warn("server: API priority and fairness bootstrap configuration, will retry", "err", err)
			}
		}
	})
	return nil
}

// ensure creates the missing bootstrap FlowSchemas and
// PriorityLevelConfigurations and updates those that differ, with kube's
// ensurer and its strategies (the suggested ones only while their
// apf.kubernetes.io/autoupdate-spec annotation allows, the mandatory ones
// always), then deletes the bootstrap objects kube no longer has. Kube's
// hook writes the ~20 objects one after the other; they are independent,
// so here they are written at once: one round trip to etcd instead of
// twenty on a new data directory.
func (fc *flowControl) ensure(ctx context.Context) error {
	fsOps := ensurer.NewFlowSchemaOps(fc.client.FlowSchemas(), fclisters.NewFlowSchemaLister(fc.flowSchemas.GetIndexer()))
	plOps := ensurer.NewPriorityLevelConfigurationOps(fc.client.PriorityLevelConfigurations(),
		fclisters.NewPriorityLevelConfigurationLister(fc.priorityLevels.GetIndexer()))
	var tasks []func() error
	for _, pl := range bootstrap.SuggestedPriorityLevelConfigurations {
		tasks = append(tasks, func() error {
			return ensurer.EnsureConfiguration(ctx, plOps, pl, ensurer.NewSuggestedEnsureStrategy[*flowcontrolv1.PriorityLevelConfiguration]())
		})
	}
	for _, pl := range bootstrap.MandatoryPriorityLevelConfigurations {
		tasks = append(tasks, func() error {
			return ensurer.EnsureConfiguration(ctx, plOps, pl, ensurer.NewMandatoryEnsureStrategy[*flowcontrolv1.PriorityLevelConfiguration]())
		})
	}
	for _, fs := range bootstrap.SuggestedFlowSchemas {
		tasks = append(tasks, func() error {
			return ensurer.EnsureConfiguration(ctx, fsOps, fs, ensurer.NewSuggestedEnsureStrategy[*flowcontrolv1.FlowSchema]())
		})
	}
	for _, fs := range bootstrap.MandatoryFlowSchemas {
		tasks = append(tasks, func() error {
			return ensurer.EnsureConfiguration(ctx, fsOps, fs, ensurer.NewMandatoryEnsureStrategy[*flowcontrolv1.FlowSchema]())
		})
	}
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i, t := range tasks {
		wg.Go(func() { errs[i] = t() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := ensurer.RemoveUnwantedObjects(ctx, fsOps, slices.Concat(bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas)); err != nil {
		return err
	}
	return ensurer.RemoveUnwantedObjects(ctx, plOps,
		slices.Concat(bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations))
}

// flowcontrolFactory is the informer factory kube's config controller
// takes, serving only the two informers it asks for: a shared informer
// factory would link an informer for every group.
type flowcontrolFactory struct {
	// The embedded interfaces are nil: the controller calls only
	// Flowcontrol().V1().FlowSchemas() and PriorityLevelConfigurations().
	informers.SharedInformerFactory
	flowcontrolinformers.Interface
	v1 *flowControl
}

func (f flowcontrolFactory) Flowcontrol() flowcontrolinformers.Interface { return f }
func (f flowcontrolFactory) V1() fcinformers.Interface                   { return f }
func (f flowcontrolFactory) FlowSchemas() fcinformers.TypedFlowSchemaInformer {
	return flowSchemaInformer{cache.NewTypedSharedIndexInformer[*flowcontrolv1.FlowSchema](f.v1.flowSchemas)}
}
func (f flowcontrolFactory) PriorityLevelConfigurations() fcinformers.TypedPriorityLevelConfigurationInformer {
	return priorityLevelInformer{cache.NewTypedSharedIndexInformer[*flowcontrolv1.PriorityLevelConfiguration](f.v1.priorityLevels)}
}

type (
	flowSchemaInformer struct {
		inf fcinformers.FlowSchemaIndexInformer
	}
	priorityLevelInformer struct {
		inf fcinformers.PriorityLevelConfigurationIndexInformer
	}
)

func (i flowSchemaInformer) Informer() cache.SharedIndexInformer                { return i.inf }
func (i flowSchemaInformer) TypedInformer() fcinformers.FlowSchemaIndexInformer { return i.inf }
func (i flowSchemaInformer) Lister() fclisters.FlowSchemaLister {
	return fclisters.NewFlowSchemaLister(i.inf.GetIndexer())
}
func (i priorityLevelInformer) Informer() cache.SharedIndexInformer { return i.inf }
func (i priorityLevelInformer) TypedInformer() fcinformers.PriorityLevelConfigurationIndexInformer {
	return i.inf
}
func (i priorityLevelInformer) Lister() fclisters.PriorityLevelConfigurationLister {
	return fclisters.NewPriorityLevelConfigurationLister(i.inf.GetIndexer())
}

// objectCounts are the cached types' object counts and sizes, by kube's
// group-resource key ("pods", "deployments.apps"): what kube's storage
// object count tracker gives the work estimator, which charges a list
// more seats the more (and larger) objects it returns.
type objectCounts struct {
	mu sync.RWMutex
	// byResource is guarded by mu.
	byResource map[string]*cacher.Cacher
}

func (o *objectCounts) add(gr schema.GroupResource, c *cacher.Cacher) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byResource == nil {
		o.byResource = map[string]*cacher.Cacher{}
	}
	o.byResource[gr.String()] = c
}

func (o *objectCounts) remove(gr schema.GroupResource, c *cacher.Cacher) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byResource[gr.String()] == c {
		delete(o.byResource, gr.String())
	}
}

// each calls f with every cache.
func (o *objectCounts) each(f func(*cacher.Cacher)) {
	o.mu.RLock()
	cs := make([]*cacher.Cacher, 0, len(o.byResource))
	for _, c := range o.byResource {
		cs = append(cs, c)
	}
	o.mu.RUnlock()
	for _, c := range cs {
		f(c)
	}
}

// stats answers as kube's tracker does: ObjectCountNotFoundErr for a type
// with no cache here.
func (o *objectCounts) stats(key string) (apistorage.Stats, error) {
	o.mu.RLock()
	c := o.byResource[key]
	o.mu.RUnlock()
	if c == nil {
		return apistorage.Stats{}, flowcontrolrequest.ObjectCountNotFoundErr
	}
	st := c.Stats()
	out := apistorage.Stats{ObjectCount: int64(st.Objects)}
	if st.Objects > 0 {
		out.EstimatedAverageObjectSizeBytes = st.ObjectBytes / int64(st.Objects)
	}
	return out, nil
}
