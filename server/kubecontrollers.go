package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/miniapi/miniapi/admission"
	"github.com/miniapi/miniapi/controllers"
	"github.com/miniapi/miniapi/internal/workqueues"
	"github.com/miniapi/miniapi/registry"
	corev1 "k8s.io/api/core/v1"
	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	k8sscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/util/flowcontrol"
	cmconfig "k8s.io/controller-manager/config/v1alpha1"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/klog/v2"
	kcmconfig "k8s.io/kube-controller-manager/config/v1alpha1"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
	pkgcontroller "k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/certificates/rootcacertpublisher"
	"k8s.io/kubernetes/pkg/controller/cronjob"
	cronjobconfig "k8s.io/kubernetes/pkg/controller/cronjob/config/v1alpha1"
	"k8s.io/kubernetes/pkg/controller/daemon"
	daemonconfig "k8s.io/kubernetes/pkg/controller/daemon/config/v1alpha1"
	"k8s.io/kubernetes/pkg/controller/deployment"
	deploymentconfig "k8s.io/kubernetes/pkg/controller/deployment/config/v1alpha1"
	"k8s.io/kubernetes/pkg/controller/disruption"
	disruptionconfig "k8s.io/kubernetes/pkg/controller/disruption/config/v1alpha1"
	"k8s.io/kubernetes/pkg/controller/endpoint"
	endpointconfig "k8s.io/kubernetes/pkg/controller/endpoint/config/v1alpha1"
	"k8s.io/kubernetes/pkg/controller/endpointslice"
	endpointsliceconfig "k8s.io/kubernetes/pkg/controller/endpointslice/config/v1alpha1"
	"k8s.io/kubernetes/pkg/controller/endpointslicemirroring"
	endpointslicemirroringconfig "k8s.io/kubernetes/pkg/controller/endpointslicemirroring/config/v1alpha1"
	"k8s.io/kubernetes/pkg/controller/job"
	jobconfig "k8s.io/kubernetes/pkg/controller/job/config/v1alpha1"
	namespacecontroller "k8s.io/kubernetes/pkg/controller/namespace"
	namespaceconfig "k8s.io/kubernetes/pkg/controller/namespace/config/v1alpha1"
	podgcconfig "k8s.io/kubernetes/pkg/controller/podgc/config/v1alpha1"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	replicasetconfig "k8s.io/kubernetes/pkg/controller/replicaset/config/v1alpha1"
	"k8s.io/kubernetes/pkg/controller/replication"
	replicationconfig "k8s.io/kubernetes/pkg/controller/replication/config/v1alpha1"
	"k8s.io/kubernetes/pkg/controller/resourcequota"
	resourcequotaconfig "k8s.io/kubernetes/pkg/controller/resourcequota/config/v1alpha1"
	"k8s.io/kubernetes/pkg/controller/serviceaccount"
	"k8s.io/kubernetes/pkg/controller/statefulset"
	statefulsetconfig "k8s.io/kubernetes/pkg/controller/statefulset/config/v1alpha1"
	"k8s.io/kubernetes/pkg/controller/ttlafterfinished"
	ttlafterfinishedconfig "k8s.io/kubernetes/pkg/controller/ttlafterfinished/config/v1alpha1"
	"k8s.io/kubernetes/pkg/controller/validatingadmissionpolicystatus"
	"k8s.io/kubernetes/pkg/generated/openapi"
	quotainstall "k8s.io/kubernetes/pkg/quota/v1/install"
)

// kubeControllers are the controllers of kube-controller-manager that
// miniapi runs as they are, built as kube-controller-manager builds them
// (cmd/kube-controller-manager/app) with its default options, over the
// server's loopback client and shared informers instead of its own.
type kubeControllers struct {
	reg       *registry.Registry
	client    *loopbackClient
	config    *rest.Config
	informers *informerFactory
	cfg       kcmconfig.KubeControllerManagerConfiguration
	// rootCA is what kube-root-ca.crt publishes: the CA of the served
	// certificate, nil with plain HTTP.
	rootCA []byte

	// Built on first use, for the controllers that need them: a RESTMapper
	// over discovery (disruption) and metadata-only informers for the
	// resources the resource quota controller counts.
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	metadata metadatainformer.SharedInformerFactory
	// informersStarted is closed once the informers run, as
	// kube-controller-manager's InformersStarted: the quota monitors wait
	// for it before they add informers of their own.
	informersStarted chan struct{}
	// built is closed once every selected controller (ours too) is
	// built and running, or once stopping came before building began:
	// Shutdown waits for it before it cancels them, since a controller
	// built against a server going away fails after making work queues
	// only its Run would shut down.
	built chan struct{}
	// mu guards building and stopping: a stop that comes first means
	// building never begins, so it has nothing to wait for.
	mu                 sync.Mutex
	building, stopping bool
	// queues counts the server's work queues: a controller built after
	// the others (resourcequota) makes its queues in a workqueues.Own
	// call of its own.
	queues *workqueues.Owner
}

// kubeControllerFunc builds one controller and returns what runs it until
// ctx ends; the run function returns after its goroutines have exited.
type kubeControllerFunc func(ctx context.Context, k *kubeControllers) (func(context.Context), error)

// kubeControllerFuncs are kube-controller-manager's controllers by name
// (the names controllers.Names lists and the server runs).
var kubeControllerFuncs = map[string]kubeControllerFunc{
	names.NamespaceController:                       newNamespaceController,
	names.ServiceAccountController:                  newServiceAccountController,
	names.RootCACertificatePublisherController:      newRootCAPublisher,
	names.DeploymentController:                      newDeploymentController,
	names.ReplicaSetController:                      newReplicaSetController,
	names.StatefulSetController:                     newStatefulSetController,
	names.DaemonSetController:                       newDaemonSetController,
	names.JobController:                             newJobController,
	names.CronJobController:                         newCronJobController,
	names.TTLAfterFinishedController:                newTTLAfterFinishedController,
	names.ReplicationControllerController:           newReplicationController,
	names.EndpointsController:                       newEndpointsController,
	names.EndpointSliceController:                   newEndpointSliceController,
	names.EndpointSliceMirroringController:          newEndpointSliceMirroringController,
	names.DisruptionController:                      newDisruptionController,
	names.ResourceQuotaController:                   newResourceQuotaController,
	names.PodGarbageCollectorController:             newPodGCController,
	names.ValidatingAdmissionPolicyStatusController: newPolicyStatusController,
}

// kubeControllerDefaults is kube-controller-manager's default component
// configuration for the controllers miniapi runs, from kube's own
// defaulting functions.
func kubeControllerDefaults() kcmconfig.KubeControllerManagerConfiguration {
	var c kcmconfig.KubeControllerManagerConfiguration
	cmconfig.RecommendedDefaultGenericControllerManagerConfiguration(&c.Generic)
	namespaceconfig.RecommendedDefaultNamespaceControllerConfiguration(&c.NamespaceController)
	deploymentconfig.RecommendedDefaultDeploymentControllerConfiguration(&c.DeploymentController)
	replicasetconfig.RecommendedDefaultReplicaSetControllerConfiguration(&c.ReplicaSetController)
	statefulsetconfig.RecommendedDefaultStatefulSetControllerConfiguration(&c.StatefulSetController)
	daemonconfig.RecommendedDefaultDaemonSetControllerConfiguration(&c.DaemonSetController)
	jobconfig.RecommendedDefaultJobControllerConfiguration(&c.JobController)
	cronjobconfig.RecommendedDefaultCronJobControllerConfiguration(&c.CronJobController)
	ttlafterfinishedconfig.RecommendedDefaultTTLAfterFinishedControllerConfiguration(&c.TTLAfterFinishedController)
	replicationconfig.RecommendedDefaultReplicationControllerConfiguration(&c.ReplicationController)
	endpointconfig.RecommendedDefaultEndpointControllerConfiguration(&c.EndpointController)
	endpointsliceconfig.RecommendedDefaultEndpointSliceControllerConfiguration(&c.EndpointSliceController)
	endpointslicemirroringconfig.RecommendedDefaultEndpointSliceMirroringControllerConfiguration(&c.EndpointSliceMirroringController)
	disruptionconfig.RecommendedDefaultDisruptionControllerConfiguration(&c.DisruptionController)
	resourcequotaconfig.RecommendedDefaultResourceQuotaControllerConfiguration(&c.ResourceQuotaController)
	podgcconfig.RecommendedDefaultPodGCControllerConfiguration(&c.PodGCController)
	return c
}

// startControllers runs the selected built-in controllers, ours
// (s.controllers) and kube-controller-manager's, each until ctx ends on
// a goroutine the server's background group owns; Shutdown waits for
// them before it closes the registry and storage they use. kube's are
// built on one of those goroutines too. All start once the server is
// ready, as kube-controller-manager starts once kube-apiserver is
// healthy: their informers' first lists (every Pod, ReplicaSet, ...
// stored) would otherwise compete with the post-start work readiness
// waits for.
func (s *Server) startControllers(ctx context.Context, sel controllers.Selection) {
	k := &kubeControllers{
		reg:              s.reg,
		client:           s.sec.client,
		config:           s.ownConfig(),
		informers:        s.informers,
		cfg:              kubeControllerDefaults(),
		rootCA:           s.sec.servingCA,
		informersStarted: make(chan struct{}),
		queues:           &s.queues,
	}
	s.kubeControllers = k
	k.built = make(chan struct{})
	s.background.Go(func() {
		defer close(k.built)
		// A post-start hook that failed leaves the server unready,
		// which is reported where it failed; the controllers run
		// regardless.
		_ = s.WaitReady(ctx)
		if !k.beginBuilding() || ctx.Err() != nil {
			return
		}
		for _, c := range s.controllers {
			s.background.Go(func() { c.Run(ctx) })
		}
		// No handler a constructor adds is called before every
		// constructor has returned, as in kube-controller-manager,
		// which starts its informers after building its controllers.
		release := s.informers.holdHandlers()
		defer release()
		for _, name := range controllers.Names() {
			build, ok := kubeControllerFuncs[name]
			if !ok || !sel.Enabled(name) {
				continue
			}
			// Each controller logs under its name, as in
			// kube-controller-manager.
			cctx := klog.NewContext(ctx, klog.LoggerWithName(klog.Background(), name))
			owned := workqueues.Own(&s.queues)
			run, err := build(cctx, k)
			owned()
			if err != nil {
				s.log.Error("server: a controller cannot run", "controller", name, "err", err)
				continue
			}
			if run != nil {
				s.background.Go(func() { run(cctx) })
			}
		}
		// The shared informers run already; the metadata ones start now.
		k.started(ctx)
	})
}

// started tells the controllers that the shared informers run, and
// starts the metadata informers, until ctx ends.
func (k *kubeControllers) started(ctx context.Context) {
	if k.metadata != nil {
		k.metadata.Start(ctx.Done())
	}
	close(k.informersStarted)
}

// beginBuilding reports whether building may begin: not once stopping
// has.
func (k *kubeControllers) beginBuilding() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.building = !k.stopping
	return k.building
}

// waitBuilt waits, for at most d, until the controllers are built, if
// building has begun; after it, building no longer begins.
func (k *kubeControllers) waitBuilt(d time.Duration) {
	if k == nil || k.built == nil {
		return
	}
	k.mu.Lock()
	k.stopping = true
	building := k.building
	k.mu.Unlock()
	if !building {
		return
	}
	select {
	case <-k.built:
	case <-time.After(d):
	}
}

// shutdown waits for the metadata informers, once ctx has ended.
func (k *kubeControllers) shutdown() {
	if k != nil && k.metadata != nil {
		k.metadata.Shutdown()
	}
}

// restMapper is kube-controller-manager's RESTMapper: discovery, cached
// and reread when a kind is not found.
func (k *kubeControllers) restMapper() *restmapper.DeferredDiscoveryRESTMapper {
	if k.mapper == nil {
		k.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(k.client.Discovery()))
	}
	return k.mapper
}

// metadataInformers are informers of objects' metadata only, for the
// resources no typed informer is linked for.
func (k *kubeControllers) metadataInformers() (metadatainformer.SharedInformerFactory, error) {
	if k.metadata == nil {
		client, err := metadata.NewForConfig(k.config)
		if err != nil {
			return nil, err
		}
		k.metadata = metadatainformer.NewSharedInformerFactory(client, k.resyncPeriod())
	}
	return k.metadata, nil
}

// resyncPeriod is kube-controller-manager's: between one and two
// MinResyncPeriods, at random, so informers do not resync in step.
func (k *kubeControllers) resyncPeriod() time.Duration {
	return time.Duration(float64(k.cfg.Generic.MinResyncPeriod.Duration) * (1 + rand.Float64()))
}

// newNamespaceController builds kube's namespace controller as
// kube-controller-manager does: it empties a namespace being deleted
// through the metadata client, resource by resource as discovery lists
// them, records what is left in the namespace's conditions, and removes
// its "kubernetes" finalizer through /finalize once nothing is.
func newNamespaceController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	meta, err := metadata.NewForConfig(k.config)
	if err != nil {
		return nil, err
	}
	cfg := k.cfg.NamespaceController
	c := namespacecontroller.NewNamespaceController(ctx, k.client, meta, k.client.Discovery().ServerPreferredNamespacedResources,
		k.informers.Core().V1().Namespaces(), cfg.NamespaceSyncPeriod.Duration, corev1.FinalizerKubernetes)
	return func(ctx context.Context) { c.Run(ctx, int(cfg.ConcurrentNamespaceSyncs)) }, nil
}

func newServiceAccountController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	core := k.informers.Core().V1()
	c, err := serviceaccount.NewServiceAccountsController(klog.FromContext(ctx), core.ServiceAccounts(), core.Namespaces(),
		k.client, serviceaccount.DefaultServiceAccountsControllerOptions())
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) { c.Run(ctx, 1) }, nil
}

// policyStatusWorkers is kube-controller-manager's default
// --concurrent-validating-admission-policy-status-syncs.
const policyStatusWorkers = 5

// newPolicyStatusController builds kube's ValidatingAdmissionPolicy
// status controller as kube-controller-manager does: its type checker
// resolves the built-in kinds' schemas from kube's generated OpenAPI and
// the others' (custom resources) from the server's OpenAPI, and maps
// kinds by the live registry.
func newPolicyStatusController(_ context.Context, k *kubeControllers) (func(context.Context), error) {
	schemas := lazySchemas{discovery: &resolver.ClientDiscoveryResolver{Discovery: k.client.Discovery()}}
	checker := &validatingpolicy.TypeChecker{SchemaResolver: schemas, RestMapper: admission.NewRESTMapper(k.reg)}
	c, err := validatingadmissionpolicystatus.NewController(
		k.informers.Admissionregistration().V1().ValidatingAdmissionPolicies(),
		k.client.AdmissionregistrationV1().ValidatingAdmissionPolicies(),
		checker,
	)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) { c.Run(ctx, policyStatusWorkers) }, nil
}

// builtinSchemas resolves the built-in kinds' schemas from kube's
// generated OpenAPI definitions. Constructing every definition costs
// ~30 ms of CPU, and the policy status controller needs them only once a
// ValidatingAdmissionPolicy is written: they are built on first use,
// once per process (kube's resolver only reads them).
var builtinSchemas = sync.OnceValue(func() *resolver.DefinitionsSchemaResolver {
	return resolver.NewDefinitionsSchemaResolver(openapi.GetOpenAPIDefinitions, k8sscheme.Scheme, apiextensionsscheme.Scheme)
})

// lazySchemas is kube-controller-manager's schema resolver for the
// policy status controller, the built-in kinds' from builtinSchemas and
// the others' from the server's OpenAPI.
type lazySchemas struct{ discovery resolver.SchemaResolver }

// ResolveSchema returns the schema of gvk.
func (l lazySchemas) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	return builtinSchemas().Combine(l.discovery).ResolveSchema(gvk)
}

func newRootCAPublisher(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	if len(k.rootCA) == 0 {
		// Plain HTTP has no CA to publish; kube-controller-manager would
		// fail to start this controller.
		klog.FromContext(ctx).Info("Not publishing kube-root-ca.crt: the server serves plain HTTP, without a CA")
		return nil, nil
	}
	core := k.informers.Core().V1()
	c, err := rootcacertpublisher.NewPublisher(core.ConfigMaps(), core.Namespaces(), k.client, k.rootCA)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) { c.Run(ctx, 1) }, nil
}

func newDeploymentController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	inf := k.informers
	c, err := deployment.NewDeploymentController(ctx, inf.Apps().V1().Deployments(), inf.Apps().V1().ReplicaSets(),
		inf.Core().V1().Pods(), k.client)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) { c.Run(ctx, int(k.cfg.DeploymentController.ConcurrentDeploymentSyncs)) }, nil
}

func newReplicaSetController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	inf := k.informers
	c := replicaset.NewReplicaSetController(ctx, inf.Apps().V1().ReplicaSets(), inf.Core().V1().Pods(), k.client,
		replicaset.BurstReplicas)
	return func(ctx context.Context) { c.Run(ctx, int(k.cfg.ReplicaSetController.ConcurrentRSSyncs)) }, nil
}

func newStatefulSetController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	inf := k.informers
	c := statefulset.NewStatefulSetController(ctx, inf.Core().V1().Pods(), inf.Apps().V1().StatefulSets(),
		inf.Core().V1().PersistentVolumeClaims(), inf.Apps().V1().ControllerRevisions(), k.client)
	return func(ctx context.Context) { c.Run(ctx, int(k.cfg.StatefulSetController.ConcurrentStatefulSetSyncs)) }, nil
}

func newDaemonSetController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	inf := k.informers
	c, err := daemon.NewDaemonSetsController(ctx, inf.Apps().V1().DaemonSets(), inf.Apps().V1().ControllerRevisions(),
		inf.Core().V1().Pods(), inf.Core().V1().Nodes(), k.client, flowcontrol.NewBackOff(time.Second, 15*time.Minute))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) { c.Run(ctx, int(k.cfg.DaemonSetController.ConcurrentDaemonSetSyncs)) }, nil
}

func newJobController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	inf := k.informers
	// The Workload and PodGroup informers are for the WorkloadWithJob
	// feature, alpha and off: the server does not serve
	// scheduling.k8s.io/v1beta1's Workloads to a controller.
	c, err := job.NewController(ctx, k.client, inf.Core().V1().Pods(), inf.Batch().V1().Jobs(), nil, nil)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) { c.Run(ctx, int(k.cfg.JobController.ConcurrentJobSyncs)) }, nil
}

func newCronJobController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	inf := k.informers
	c, err := cronjob.NewControllerV2(ctx, inf.Batch().V1().Jobs(), inf.Batch().V1().CronJobs(), k.client)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) { c.Run(ctx, int(k.cfg.CronJobController.ConcurrentCronJobSyncs)) }, nil
}

func newTTLAfterFinishedController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	c := ttlafterfinished.New(ctx, k.informers.Batch().V1().Jobs(), k.client)
	return func(ctx context.Context) { c.Run(ctx, int(k.cfg.TTLAfterFinishedController.ConcurrentTTLSyncs)) }, nil
}

func newReplicationController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	core := k.informers.Core().V1()
	c := replication.NewReplicationManager(ctx, core.Pods(), core.ReplicationControllers(), k.client, replication.BurstReplicas)
	return func(ctx context.Context) { c.Run(ctx, int(k.cfg.ReplicationController.ConcurrentRCSyncs)) }, nil
}

func newEndpointsController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	core := k.informers.Core().V1()
	cfg := k.cfg.EndpointController
	c := endpoint.NewEndpointController(ctx, core.Pods(), core.Services(), core.Endpoints(), k.client,
		cfg.EndpointUpdatesBatchPeriod.Duration)
	return func(ctx context.Context) { c.Run(ctx, int(cfg.ConcurrentEndpointSyncs)) }, nil
}

func newEndpointSliceController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	inf := k.informers
	cfg := k.cfg.EndpointSliceController
	c := endpointslice.NewController(ctx, inf.Core().V1().Pods(), inf.Core().V1().Services(), inf.Core().V1().Nodes(),
		inf.Discovery().V1().EndpointSlices(), cfg.MaxEndpointsPerSlice, k.client, cfg.EndpointUpdatesBatchPeriod.Duration)
	return func(ctx context.Context) { c.Run(ctx, int(cfg.ConcurrentServiceEndpointSyncs)) }, nil
}

func newEndpointSliceMirroringController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	inf := k.informers
	cfg := k.cfg.EndpointSliceMirroringController
	c := endpointslicemirroring.NewController(ctx, inf.Core().V1().Endpoints(), inf.Discovery().V1().EndpointSlices(),
		inf.Core().V1().Services(), cfg.MirroringMaxEndpointsPerSubset, k.client, cfg.MirroringEndpointUpdatesBatchPeriod.Duration)
	return func(ctx context.Context) { c.Run(ctx, int(cfg.MirroringConcurrentServiceEndpointSyncs)) }, nil
}

func newDisruptionController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	inf := k.informers
	discovery := k.client.Discovery()
	scales, err := scale.NewForConfig(k.config, k.restMapper(), dynamic.LegacyAPIPathResolverFunc,
		scale.NewDiscoveryScaleKindResolver(discovery))
	if err != nil {
		return nil, err
	}
	c := disruption.NewDisruptionController(ctx, inf.Core().V1().Pods(), inf.Policy().V1().PodDisruptionBudgets(),
		inf.Core().V1().ReplicationControllers(), inf.Apps().V1().ReplicaSets(), inf.Apps().V1().Deployments(),
		inf.Apps().V1().StatefulSets(), k.client, k.restMapper(), scales, discovery)
	return func(ctx context.Context) { c.Run(ctx, int(k.cfg.DisruptionController.ConcurrentDisruptionSyncs)) }, nil
}

func newResourceQuotaController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	meta, err := k.metadataInformers()
	if err != nil {
		return nil, err
	}
	// Typed informers for what the evaluators read as typed objects,
	// metadata for the rest: kube-controller-manager's
	// ObjectOrMetadataInformerFactory over this server's narrow factory.
	objects := informerfactory.NewInformerFactory(k.informers, meta)
	quota, err := quotainstall.NewQuotaConfigurationForControllers(generic.ListerFuncForResourceFunc(objects.ForResource), k.informers)
	if err != nil {
		return nil, err
	}
	discover := k.client.Discovery().ServerPreferredNamespacedResources
	cfg := k.cfg.ResourceQuotaController
	opts := &resourcequota.ControllerOptions{
		QuotaClient:               k.client.CoreV1(),
		ResourceQuotaInformer:     k.informers.Core().V1().ResourceQuotas(),
		ResyncPeriod:              pkgcontroller.StaticResyncPeriodFunc(cfg.ResourceQuotaSyncPeriod.Duration),
		InformerFactory:           objects,
		ReplenishmentResyncPeriod: k.resyncPeriod,
		DiscoveryFunc:             discover,
		IgnoredResourcesFunc:      quota.IgnoredResources,
		InformersStarted:          k.informersStarted,
		Registry:                  generic.NewRegistry(quota.Evaluators()),
		UpdateFilter:              quotainstall.DefaultUpdateFilter(),
	}
	return func(ctx context.Context) {
		// Built here, not before the server is ready: it reads discovery
		// to choose what to monitor, which would delay the start.
		// Its first discovery can fail on a loaded machine (a timeout,
		// not a group's failure, which it tolerates): try again, as
		// kube-controller-manager would be restarted.
		var c *resourcequota.Controller
		for {
			var err error
			// Discovery is a request to the server: made before the
			// queues' window, which is process-wide, and handed in.
			resources, derr := discover()
			withResources := *opts
			withResources.DiscoveryFunc = func() ([]*metav1.APIResourceList, error) { return resources, derr }
			owned := workqueues.Own(k.queues)
			c, err = resourcequota.NewController(ctx, &withResources)
			owned()
			if err == nil {
				break
			}
			klog.FromContext(ctx).Error(err, "Cannot start the resource quota controller yet; retrying")
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
		var wg sync.WaitGroup
		// New resources (CRDs) are monitored once discovery finds them,
		// looked for every 30 s as in kube-controller-manager.
		wg.Go(func() { c.Sync(ctx, discover, 30*time.Second) })
		c.Run(ctx, int(cfg.ConcurrentResourceQuotaSyncs))
		wg.Wait()
	}, nil
}

func newPodGCController(ctx context.Context, k *kubeControllers) (func(context.Context), error) {
	if linkedPodGC == nil {
		// Not linked: Start refused a list that names it.
		return nil, nil
	}
	core := k.informers.Core().V1()
	return linkedPodGC(ctx, k.client, core.Pods(), core.Nodes(), int(k.cfg.PodGCController.TerminatedPodGCThreshold)), nil
}

// PodGCConstructor builds kube-controller-manager's pod garbage
// collector (k8s.io/kubernetes/pkg/controller/podgc) over a server's
// client and shared informers, with kube's --terminated-pod-gc-threshold,
// and returns what runs it until its context ends.
type PodGCConstructor func(ctx context.Context, client kubernetes.Interface, pods coreinformers.PodInformer, nodes coreinformers.NodeInformer, terminatedPodThreshold int) func(context.Context)

// linkedPodGC is the pod garbage collector LinkPodGC linked, or nil.
var linkedPodGC PodGCConstructor

// LinkPodGC links kube's pod garbage collector into the program's
// servers; importing package server/podgc calls it from its init, and it
// must not be called after any server has started. kube's podgc imports
// the kubelet's eviction package for one function, and with it the
// kubelet, the scheduler, cAdvisor and containerd's API: 192 packages,
// a sixth of what the linker reads for a test binary. The miniapi
// command imports it; a test binary that does not runs every other
// controller, and a server asked for this one by name refuses to start.
func LinkPodGC(c PodGCConstructor) { linkedPodGC = c }

// podGCPackage is the package to import for the pod garbage collector.
const podGCPackage = "github.com/miniapi/miniapi/server/podgc"

// checkLinked refuses a controller list that names a controller this
// program does not link.
func checkLinked(list []string) error {
	if linkedPodGC == nil && slices.Contains(controllers.Named(list), names.PodGarbageCollectorController) {
		return fmt.Errorf("server: controller %q is not linked into this program: import _ %q", names.PodGarbageCollectorController, podGCPackage)
	}
	return nil
}
