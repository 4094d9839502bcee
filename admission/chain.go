package admission

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"go.opentelemetry.io/otel/trace/noop"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	admissionmetrics "k8s.io/apiserver/pkg/admission/metrics"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	mutatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	webhookinit "k8s.io/apiserver/pkg/admission/plugin/webhook/initializer"
	mutatingwebhook "k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	validatingwebhook "k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	apiserverapi "k8s.io/apiserver/pkg/apis/apiserver"
	apiserverapiv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	apiserverapiv1alpha1 "k8s.io/apiserver/pkg/apis/apiserver/v1alpha1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/kubernetes/pkg/controlplane/apiserver/admission"
	"k8s.io/kubernetes/pkg/kubeapiserver/admission/exclusion"
	quotainstall "k8s.io/kubernetes/pkg/quota/v1/install"
)

// Config configures the admission chain: what kube-apiserver gives its
// plugin initializers.
type Config struct {
	// Registry is the live set of served types, for the kinds and
	// equivalent resources of requests and the REST mappings plugins
	// resolve.
	Registry *registry.Registry
	// Client, Dynamic and Informers reach the server's own API, as
	// kube-apiserver's loopback clients and shared informers do; the
	// caller starts Informers once the server serves.
	Client    kubernetes.Interface
	Dynamic   dynamic.Interface
	Informers informers.SharedInformerFactory
	// Authorizer is the server's, for the plugins that authorize
	// (certificate signing and approval, cluster trust bundles).
	Authorizer authorizer.Authorizer
	// ServiceResolver finds the webhooks named by a Service.
	ServiceResolver webhookutil.ServiceResolver
	// Loopback is the server's own client configuration, used for
	// webhooks that name the server itself (kubernetes.default.svc).
	Loopback *rest.Config
	// Enable and Disable are --enable-admission-plugins and
	// --disable-admission-plugins; ConfigFile is
	// --admission-control-config-file.
	Enable, Disable []string
	ConfigFile      string
	// Drained closes when the server has stopped serving requests.
	Drained <-chan struct{}
	// APIServerID names this server to the plugins that record it.
	APIServerID string
	// Converter converts the objects of a custom resource whose CRD
	// converts by webhook to another of its versions, for webhooks and
	// policies registered for that version (matchPolicy Equivalent);
	// nil, or a nil answer, rewrites apiVersion only (strategy None).
	Converter func(t *registry.Type) (VersionConverter, error)
}

// VersionConverter converts an encoded object to another version of its
// resource.
type VersionConverter interface {
	ToVersion(data []byte, version string) ([]byte, error)
}

// Chain is kube's admission chain for the registry's writes; it
// implements registry.Admission.
type Chain struct {
	handler kadmission.Interface
	mutate  kadmission.MutationInterface
	check   kadmission.ValidationInterface
	mapper  *resourceMapper
	names   []string
	reg     *registry.Registry
	// converter converts custom resources by their CRD's webhook.
	converter func(t *registry.Type) (VersionConverter, error)
	// configs are the admission configurations the enabled plugins
	// read through informers (webhook configurations, policies and
	// their bindings).
	configs []*configWatch
	// policies is set when a policy plugin runs: the writes that follow
	// a policy write wait for it to take effect.
	policies *settle
}

var _ registry.Admission = (*Chain)(nil)

// configScheme decodes --admission-control-config-file, as
// kube-apiserver's.
var configScheme = runtime.NewScheme()

func init() {
	utilruntime.Must(apiserverapi.AddToScheme(configScheme))
	utilruntime.Must(apiserverapiv1alpha1.AddToScheme(configScheme))
	utilruntime.Must(apiserverapiv1.AddToScheme(configScheme))
}

// New builds the chain of the plugins cfg enables, in kube-apiserver's
// order, each initialized as kube-apiserver initializes it.
func New(cfg Config) (*Chain, error) {
	names, err := EnabledPlugins(cfg.Enable, cfg.Disable)
	if err != nil {
		return nil, err
	}
	provider, err := kadmission.ReadAdmissionConfiguration(names, cfg.ConfigFile, configScheme)
	if err != nil {
		return nil, fmt.Errorf("admission: failed to read plugin config: %w", err)
	}
	// kube holds kube's registrations; all, the chain's, stands the
	// webhook plugins in by lazyWebhook unless a configuration file
	// configures them (which building checks).
	kube, all := kadmission.NewPlugins(), kadmission.NewPlugins()
	var initializers, lifecycleInitializers kadmission.PluginInitializers
	configured := map[string]*configWatch{}
	for _, p := range plugins {
		p.register(kube)
		if p.name == lifecycle.PluginName {
			all.Register(p.name, func(io.Reader) (kadmission.Interface, error) {
				h, err := kube.InitPlugin(p.name, nil, lifecycleInitializers)
				if err != nil {
					return nil, err
				}
				return initialized{h.(kadmission.MutationInterface)}, nil
			})
			continue
		}
		if p.name != mutatingwebhook.PluginName && p.name != validatingwebhook.PluginName {
			p.register(all)
			continue
		}
		if r, err := provider.ConfigFor(p.name); err != nil || r != nil {
			p.register(all)
			continue
		}
		// The plugin reads namespaces too; built after the informers
		// start, it could not ask for their informer itself.
		if slices.Contains(names, p.name) {
			cfg.Informers.Core().V1().Namespaces().Informer()
		}
		all.Register(p.name, func(io.Reader) (kadmission.Interface, error) {
			return &lazyWebhook{build: func() (kadmission.Interface, error) {
				h, err := kube.InitPlugin(p.name, nil, initializers)
				if err != nil {
					return nil, err
				}
				// kube's plugin waits before its first request until its
				// configuration manager's informer handler has replayed
				// the informer, polling every 100 ms; the manager reads
				// the configurations from the informer's lister, which
				// awaitConfig has waited for, so the plugin is ready when
				// the informers it reads are.
				if r, ok := h.(interface{ SetReadyFunc(kadmission.ReadyFunc) }); ok {
					ns, conf := cfg.Informers.Core().V1().Namespaces().Informer(), configured[p.name].informer
					r.SetReadyFunc(func() bool { return ns.HasSynced() && conf.HasSynced() })
				}
				return h, nil
			}}, nil
		})
	}
	mapper := newResourceMapper(cfg.Registry)
	quota, err := quotainstall.NewQuotaConfigurationForAdmission(cfg.Informers, nil)
	if err != nil {
		return nil, fmt.Errorf("admission: %w", err)
	}
	authWrapper := webhookutil.NewDefaultAuthenticationInfoResolverWrapper(nil, nil, cfg.Loopback, noop.NewTracerProvider())
	version := basecompatibility.NewEffectiveVersionFromString(kubeVersion, "", "")
	// watches holds the configWatch of each configuration resource by
	// name, for the webhook plugins' informers (filled below, before
	// any plugin is built).
	watches := map[string]*configWatch{}
	initializers = kadmission.PluginInitializers{
		initializer.NewAPIServerIDInitializer(cfg.APIServerID),
		initializer.New(cfg.Client, cfg.Dynamic, webhookInformers{SharedInformerFactory: cfg.Informers, watches: watches}, cfg.Authorizer, utilfeature.DefaultFeatureGate,
			version, cfg.Drained, restMapper{mapper}),
		webhookinit.NewPluginInitializer(authWrapper, cfg.ServiceResolver),
		admission.NewPluginInitializer(quota, exclusion.Excluded()),
	}
	namespaces := freshNamespaces{
		SharedInformerFactory: cfg.Informers,
		lister:                registryNamespaces{reg: cfg.Registry, NamespaceLister: cfg.Informers.Core().V1().Namespaces().Lister(), decoded: &sync.Map{}},
	}
	lifecycleInitializers = kadmission.PluginInitializers{
		initializer.New(cfg.Client, cfg.Dynamic, namespaces, cfg.Authorizer, utilfeature.DefaultFeatureGate,
			version, cfg.Drained, restMapper{mapper}),
	}
	c := &Chain{mapper: mapper, names: names, reg: cfg.Registry, converter: cfg.Converter}
	// The plugins configured by objects, and the informers they read
	// them from.
	v1 := cfg.Informers.Admissionregistration().V1()
	watch := func(plugin, resource string, inf cache.SharedIndexInformer) {
		webhook := plugin == validatingwebhook.PluginName || plugin == mutatingwebhook.PluginName
		w := newConfigWatch(resource, inf, webhook)
		watches[resource] = w
		c.configs = append(c.configs, w)
		if configured[plugin] == nil {
			configured[plugin] = w
		}
	}
	for _, n := range names {
		switch n {
		case validatingwebhook.PluginName:
			watch(n, "validatingwebhookconfigurations", v1.ValidatingWebhookConfigurations().Informer())
		case mutatingwebhook.PluginName:
			watch(n, "mutatingwebhookconfigurations", v1.MutatingWebhookConfigurations().Informer())
		case validatingpolicy.PluginName:
			watch(n, "validatingadmissionpolicies", v1.ValidatingAdmissionPolicies().Informer())
			watch(n, "validatingadmissionpolicybindings", v1.ValidatingAdmissionPolicyBindings().Informer())
		case mutatingpolicy.PluginName:
			watch(n, "mutatingadmissionpolicies", v1.MutatingAdmissionPolicies().Informer())
			watch(n, "mutatingadmissionpolicybindings", v1.MutatingAdmissionPolicyBindings().Informer())
		}
	}
	decorate := kadmission.DecoratorFunc(func(h kadmission.Interface, name string) kadmission.Interface {
		h = admissionmetrics.WithControllerMetrics(h, name)
		if w := configured[name]; w != nil {
			return idleUnconfigured{Interface: h, config: w.informer}
		}
		return h
	})
	h, err := all.NewFromPlugins(names, provider, initializers, decorate)
	if err != nil {
		return nil, fmt.Errorf("admission: %w", err)
	}
	h = kadmission.WithAudit(admissionmetrics.WithStepMetrics(h))
	c.handler = h
	if usesPolicies(names) {
		c.policies = &settle{}
	}
	c.mutate, _ = h.(kadmission.MutationInterface)
	c.check, _ = h.(kadmission.ValidationInterface)
	return c, nil
}

// kubeVersion is the Kubernetes version whose behaviour the plugins
// follow where it depends on one.
const kubeVersion = "1.37"

// Plugins returns the names of the plugins the chain runs, in order.
func (c *Chain) Plugins() []string { return slices.Clone(c.names) }

// EnabledPlugins returns the plugins that run given
// --enable-admission-plugins and --disable-admission-plugins, in
// kube-apiserver's order, refusing names miniapi does not know with
// kube-apiserver's words, and a name in both.
func EnabledPlugins(enable, disable []string) ([]string, error) {
	known := PluginNames()
	var errs []string
	for _, n := range enable {
		if !slices.Contains(known, n) {
			errs = append(errs, fmt.Sprintf("enable-admission-plugins plugin %q is unknown", n))
		}
	}
	for _, n := range disable {
		if !slices.Contains(known, n) {
			errs = append(errs, fmt.Sprintf("disable-admission-plugins plugin %q is unknown", n))
		}
	}
	var both []string
	for _, n := range enable {
		if slices.Contains(disable, n) {
			both = append(both, n)
		}
	}
	if len(both) > 0 {
		slices.Sort(both)
		errs = append(errs, fmt.Sprintf("%v in enable-admission-plugins and disable-admission-plugins overlapped", both))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	var out []string
	for _, p := range plugins {
		on := (p.defaultOn || slices.Contains(enable, p.name)) && !(slices.Contains(disable, p.name) && !slices.Contains(enable, p.name))
		if on {
			out = append(out, p.name)
		}
	}
	return out, nil
}

// begin readies a request for the plugins: it waits until the
// configurations this server wrote are in effect, gives kube's plugins
// a warning recorder, and describes r to them.
func (c *Chain) begin(ctx context.Context, r *registry.AdmissionRequest) (context.Context, *attributes, kadmission.ObjectInterfaces, error) {
	c.awaitConfig(ctx)
	if err := c.settle(ctx, r); err != nil {
		return nil, nil, nil, err
	}
	ctx = withWarnings(ctx)
	a, o := c.attributes(ctx, r)
	return ctx, a, o, nil
}

// Mutate runs the mutating plugins on a write and hands their changes
// to the Store.
func (c *Chain) Mutate(ctx context.Context, r *registry.AdmissionRequest) error {
	if c.mutate == nil || !c.mutate.Handles(kadmission.Operation(r.Operation)) {
		return nil
	}
	ctx, a, o, err := c.begin(ctx, r)
	if err != nil {
		return err
	}
	if err := c.mutate.Admit(ctx, a, o); err != nil {
		return c.refusal(a, err)
	}
	return a.writeBack()
}

// Validate runs the validating plugins on a write.
func (c *Chain) Validate(ctx context.Context, r *registry.AdmissionRequest) error {
	if c.check == nil || !c.check.Handles(kadmission.Operation(r.Operation)) {
		return nil
	}
	ctx, a, o, err := c.begin(ctx, r)
	if err != nil {
		return err
	}
	if err := c.check.Validate(ctx, a, o); err != nil {
		return c.refusal(a, err)
	}
	if err := a.conversionErr(); err != nil {
		return err
	}
	if c.policies != nil && isPolicyWrite(r) {
		c.policies.wrote()
	}
	return nil
}

// settle waits, before r is admitted, for the policy writes admitted
// before it to take effect; policy writes themselves do not wait, as
// the plugins never judge them.
func (c *Chain) settle(ctx context.Context, r *registry.AdmissionRequest) error {
	if c.policies == nil || isPolicyWrite(r) {
		return nil
	}
	return c.policies.wait(ctx)
}

// refusal is a plugin's error as the Store answers it.
func (c *Chain) refusal(a *attributes, err error) error {
	if cerr := a.conversionErr(); cerr != nil {
		return cerr
	}
	return api.FromKubeError(err)
}

// attributes describes r to kube's plugins.
func (c *Chain) attributes(ctx context.Context, r *registry.AdmissionRequest) (*attributes, kadmission.ObjectInterfaces) {
	t := r.Type
	resource := schema.GroupVersionResource{Group: t.Group, Version: t.Version, Resource: t.Plural}
	kind := c.mapper.KindFor(resource, r.Subresource)
	if kind.Empty() {
		kind = schema.GroupVersionKind{Group: t.Group, Version: t.Version, Kind: t.Kind}
	}
	forms := c.formsOf(t, kind)
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		// The server's own components write in process, as
		// kube-apiserver's do through its loopback client.
		u = &user.DefaultInfo{Name: user.APIServerUser, Groups: []string{user.SystemPrivilegedGroup}}
	}
	return newAttributes(r, forms, kind, resource, options(r), u), forms.interfaces()
}

// options are the request's options as kube's AdmissionReview carries
// them.
func options(r *registry.AdmissionRequest) runtime.Object {
	var dryRun []string
	if r.DryRun {
		dryRun = []string{metav1.DryRunAll}
	}
	meta := func(kind string) metav1.TypeMeta {
		return metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: kind}
	}
	switch r.Operation {
	case registry.OpCreate:
		return &metav1.CreateOptions{TypeMeta: meta("CreateOptions"), DryRun: dryRun, FieldManager: r.FieldManager, FieldValidation: r.FieldValidation}
	case registry.OpUpdate:
		return &metav1.UpdateOptions{TypeMeta: meta("UpdateOptions"), DryRun: dryRun, FieldManager: r.FieldManager, FieldValidation: r.FieldValidation}
	case registry.OpDelete:
		o := &metav1.DeleteOptions{TypeMeta: meta("DeleteOptions"), DryRun: dryRun, GracePeriodSeconds: r.GracePeriodSeconds}
		if r.PropagationPolicy != "" {
			p := metav1.DeletionPropagation(r.PropagationPolicy)
			o.PropagationPolicy = &p
		}
		return o
	}
	return nil
}

// idleUnconfigured runs a plugin configured by objects (webhook
// configurations, policies) only while there is at least one of them.
// With none, kube's plugins do nothing to a request, but the mutating
// webhook plugin still converts and deep-copies every object for its
// reinvocation bookkeeping: skipping it keeps writes as cheap as without
// webhooks. The informer is the one the plugin reads, after awaitConfig.
type idleUnconfigured struct {
	kadmission.Interface
	config cache.SharedIndexInformer
}

func (p idleUnconfigured) configured() bool { return len(p.config.GetIndexer().ListKeys()) > 0 }

// Admit runs the plugin's mutation if it is configured.
func (p idleUnconfigured) Admit(ctx context.Context, a kadmission.Attributes, o kadmission.ObjectInterfaces) error {
	m, ok := p.Interface.(kadmission.MutationInterface)
	if !ok || !p.configured() {
		return nil
	}
	return m.Admit(ctx, a, o)
}

// Validate runs the plugin's validation if it is configured.
func (p idleUnconfigured) Validate(ctx context.Context, a kadmission.Attributes, o kadmission.ObjectInterfaces) error {
	v, ok := p.Interface.(kadmission.ValidationInterface)
	if !ok || !p.configured() {
		return nil
	}
	return v.Validate(ctx, a, o)
}

// lazyWebhook stands in for one of kube's webhook plugins until a
// request finds a webhook configuration for it (idleUnconfigured calls
// it only then), and builds kube's plugin at that first request. kube's
// plugin compiles its CEL environments for match conditions when it is
// built: a third of a logical cluster's start and about 0.4 MB of its
// memory each, spent by every cluster though most never register a
// webhook. Built, it is kube's plugin with kube's initializers, as it
// would have been at start.
type lazyWebhook struct {
	build  func() (kadmission.Interface, error)
	mu     sync.Mutex
	plugin atomic.Pointer[kadmission.Interface]
}

// Handles is true: kube's webhook plugins handle every operation; the
// built plugin is asked again before it runs.
func (l *lazyWebhook) Handles(kadmission.Operation) bool { return true }

// get returns kube's plugin, building it the first time.
func (l *lazyWebhook) get() (kadmission.Interface, error) {
	if p := l.plugin.Load(); p != nil {
		return *p, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.plugin.Load(); p != nil {
		return *p, nil
	}
	p, err := l.build()
	if err != nil {
		return nil, fmt.Errorf("admission: building a webhook plugin: %w", err)
	}
	l.plugin.Store(&p)
	return p, nil
}

// Admit runs kube's mutating webhook plugin.
func (l *lazyWebhook) Admit(ctx context.Context, a kadmission.Attributes, o kadmission.ObjectInterfaces) error {
	p, err := l.get()
	if err != nil {
		return err
	}
	if m, ok := p.(kadmission.MutationInterface); ok && p.Handles(a.GetOperation()) {
		return m.Admit(ctx, a, o)
	}
	return nil
}

// Validate runs kube's validating webhook plugin.
func (l *lazyWebhook) Validate(ctx context.Context, a kadmission.Attributes, o kadmission.ObjectInterfaces) error {
	p, err := l.get()
	if err != nil {
		return err
	}
	if v, ok := p.(kadmission.ValidationInterface); ok && p.Handles(a.GetOperation()) {
		return v.Validate(ctx, a, o)
	}
	return nil
}
