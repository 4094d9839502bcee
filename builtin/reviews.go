package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/fieldmanager"
	"github.com/miniapi/miniapi/registry"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/registry/authentication/selfsubjectreview"
	"k8s.io/kubernetes/pkg/registry/authentication/tokenreview"
	"k8s.io/kubernetes/pkg/registry/authorization/localsubjectaccessreview"
	"k8s.io/kubernetes/pkg/registry/authorization/selfsubjectaccessreview"
	"k8s.io/kubernetes/pkg/registry/authorization/selfsubjectrulesreview"
	"k8s.io/kubernetes/pkg/registry/authorization/subjectaccessreview"
	serviceaccountstore "k8s.io/kubernetes/pkg/registry/core/serviceaccount/storage"
	rbacregistryvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"
	"k8s.io/kubernetes/pkg/serviceaccount"
)

// Auth is what the authentication and authorization resources act with:
// the server's authenticator and authorizer, and its service account
// token issuer.
type Auth struct {
	// Authenticator authenticates the tokens of TokenReviews.
	Authenticator authenticator.Request
	// APIAudiences are the audiences tokens are for by default.
	APIAudiences []string
	// Authorizer answers SubjectAccessReviews and authorizes bound
	// tokens' objects.
	Authorizer authorizer.Authorizer
	// RuleResolver answers SelfSubjectRulesReviews.
	RuleResolver authorizer.RuleResolver
	// RuleResolverRBAC resolves the RBAC rules a user holds, for the
	// escalation checks of RBAC writes; nil leaves them out (plain HTTP,
	// where every request is system:masters).
	RuleResolverRBAC rbacregistryvalidation.AuthorizationRuleResolver
	// Issuer signs the tokens of serviceaccounts/token.
	Issuer serviceaccount.TokenGenerator
	// MaxTokenExpiration caps a requested token's lifetime (kube's
	// --service-account-max-token-expiration); 0 means no cap.
	MaxTokenExpiration time.Duration
}

// reviewResources are authentication.k8s.io/v1's and
// authorization.k8s.io/v1's resources: reviews created and answered at
// once, never stored, by kube's own REST storage.
func reviewResources(a *Auth) []*resource {
	if a == nil {
		return nil
	}
	return []*resource{
		{group: "authentication.k8s.io", version: "v1", kind: "SelfSubjectReview", plural: "selfsubjectreviews", virtual: virtualReview,
			review: selfsubjectreview.NewREST()},
		{group: "authentication.k8s.io", version: "v1", kind: "TokenReview", plural: "tokenreviews", virtual: virtualReview,
			review: tokenreview.NewREST(a.Authenticator, a.APIAudiences)},
		{group: "authorization.k8s.io", version: "v1", kind: "LocalSubjectAccessReview", plural: "localsubjectaccessreviews", namespaced: true, virtual: virtualReview,
			review: localsubjectaccessreview.NewREST(a.Authorizer, scheme)},
		{group: "authorization.k8s.io", version: "v1", kind: "SelfSubjectAccessReview", plural: "selfsubjectaccessreviews", virtual: virtualReview,
			review: selfsubjectaccessreview.NewREST(a.Authorizer, scheme)},
		{group: "authorization.k8s.io", version: "v1", kind: "SelfSubjectRulesReview", plural: "selfsubjectrulesreviews", virtual: virtualReview,
			review: selfsubjectrulesreview.NewREST(a.RuleResolver)},
		{group: "authorization.k8s.io", version: "v1", kind: "SubjectAccessReview", plural: "subjectaccessreviews", virtual: virtualReview,
			review: subjectaccessreview.NewREST(a.Authorizer, scheme)},
	}
}

// reviewKind serves POST of a review through kube's REST storage of it.
type reviewKind struct {
	*kind
	rest rest.Creater
}

// tokenRequest is serviceaccounts/token's kind.
var tokenRequest = schema.GroupVersionKind{Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest"}

// creators are the field managers of the kinds that are created and
// answered but never stored (the reviews, TokenRequests), by kind and
// subresource, each built at its first create.
var creators sync.Map // creatorKey -> func() (*fieldmanager.Manager, error)

type creatorKey struct {
	gvk         schema.GroupVersionKind
	subresource string
}

// recordCreator records the creator in body's managedFields, as
// kube-apiserver's create handler does for every create before the REST
// storage sees the object: the kinds whose answer is the object they
// were given (TokenReview, the SubjectAccessReviews, TokenRequest) carry
// the entry back. As there, a failure to compute it leaves the body as
// it is.
func recordCreator(gvk schema.GroupVersionKind, subresource string, body []byte, manager string) []byte {
	build, _ := creators.LoadOrStore(creatorKey{gvk, subresource}, sync.OnceValues(func() (*fieldmanager.Manager, error) {
		tc, err := mergeSchema()
		if err != nil {
			return nil, err
		}
		return fieldmanager.New(fieldmanager.Config{Kind: gvk, TypeConverter: tc, Subresource: subresource})
	}))
	fm, err := build.(func() (*fieldmanager.Manager, error))()
	if err != nil {
		return body
	}
	var obj api.Object
	if json.Unmarshal(body, &obj) != nil {
		return body // decodeDefaulted says what is wrong
	}
	if manager == "" {
		manager = registry.DefaultFieldManager
	}
	out, err := fm.Update(nil, &obj, manager, subresource)
	if err != nil {
		return body
	}
	data, err := out.MarshalJSON()
	if err != nil {
		return body
	}
	return data
}

var (
	_ registry.Virtual        = reviewKind{}
	_ registry.VirtualCreater = reviewKind{}
)

// Verbs lists create alone, as kube-apiserver serves reviews.
func (reviewKind) Verbs() []string { return []string{"create"} }

// CreateVirtual answers the review: the requesting user is the one kube's
// authentication filter put in ctx.
func (k reviewKind) CreateVirtual(ctx context.Context, _ *registry.Registry, ns string, body []byte, opts registry.CreateOptions) ([]byte, error) {
	in, err := decodeBody(k.gvk, recordCreator(k.gvk, "", body, opts.FieldManager))
	if err != nil {
		return nil, err
	}
	kctx := k.requestContext(ctx, "create", ns, "", "")
	out, err := k.rest.Create(kctx, in, rest.ValidateAllObjectFunc, createOptions(opts))
	if err != nil {
		return nil, statusError(err)
	}
	return k.encodeInternal(out)
}

// createOptions are kube's options of a create.
func createOptions(opts registry.CreateOptions) *metav1.CreateOptions {
	o := &metav1.CreateOptions{FieldManager: opts.FieldManager}
	if opts.DryRun {
		o.DryRun = []string{metav1.DryRunAll}
	}
	return o
}

// serviceAccountKind serves serviceaccounts/token: a TokenRequest answered
// with a token kube's TokenREST signs, bound to the objects it names.
type serviceAccountKind struct {
	*kind
	auth *Auth
}

var _ registry.SubresourceCreater = serviceAccountKind{}

// CheckSubresource refuses a token request body that is not a
// TokenRequest, in kube-apiserver's words.
func (k serviceAccountKind) CheckSubresource(subresource string, body []byte) error {
	if subresource != "token" {
		return nil
	}
	_, err := decodeBody(tokenRequest, body)
	return err
}

// CreateSubresource serves POST to a service account's token.
func (k serviceAccountKind) CreateSubresource(ctx context.Context, store *registry.Store, subresource, ns, name string, body []byte, opts registry.CreateOptions) ([]byte, error) {
	if subresource != "token" || k.auth == nil || k.auth.Issuer == nil {
		return nil, api.NewGenericNotFound()
	}
	in, err := decodeBody(tokenRequest, recordCreator(tokenRequest, subresource, body, opts.FieldManager))
	if err != nil {
		return nil, err
	}
	r, err := k.tokenREST(store)
	if err != nil {
		return nil, err
	}
	kctx := k.requestContext(ctx, "create", ns, name, "token")
	out, err := r.Create(kctx, name, in, rest.ValidateAllObjectFunc, createOptions(opts))
	if err != nil {
		return nil, statusError(err)
	}
	v, err := scheme.New(tokenRequest)
	if err != nil {
		return nil, err
	}
	if err := scheme.Convert(out, v, nil); err != nil {
		return nil, err
	}
	v.GetObjectKind().SetGroupVersionKind(tokenRequest)
	return json.Marshal(v)
}

// tokenREST is kube's TokenREST over the registry's service accounts,
// pods, secrets, nodes and webhook configurations, configured as
// kube-apiserver's defaults (expiration extended for tokens bound to
// pods, up to a year).
func (k serviceAccountKind) tokenREST(store *registry.Store) (*serviceaccountstore.TokenREST, error) {
	reg := store.Registry()
	getters := map[string]rest.Getter{}
	for _, plural := range []string{"pods", "secrets", "nodes"} {
		s, err := kubeStore(reg, plural)
		if err != nil {
			return nil, err
		}
		getters[plural] = s
	}
	r, err := serviceaccountstore.NewREST(readerOptions{store, k.kind}, k.auth.Issuer, k.auth.APIAudiences, k.auth.Authorizer,
		k.auth.MaxTokenExpiration, getters["pods"], getters["secrets"], getters["nodes"],
		webhookConfigs[*admissionregistrationv1.ValidatingWebhookConfiguration]{reg, "validatingwebhookconfigurations"},
		webhookConfigs[*admissionregistrationv1.MutatingWebhookConfiguration]{reg, "mutatingwebhookconfigurations"},
		true, serviceaccount.ExpirationExtensionSeconds*time.Second)
	if err != nil {
		return nil, fmt.Errorf("builtin: token storage: %w", err)
	}
	return r.Token, nil
}

// webhookConfigs reads webhook configurations, which a token may be bound
// to, from the registry.
type webhookConfigs[T interface {
	*admissionregistrationv1.ValidatingWebhookConfiguration | *admissionregistrationv1.MutatingWebhookConfiguration
	metav1.Object
}] struct {
	reg    *registry.Registry
	plural string
}

// Get reads the named configuration in admissionregistration.k8s.io/v1.
func (w webhookConfigs[T]) Get(ctx context.Context, name string, _ metav1.GetOptions) (T, error) {
	var out T
	res, ok := w.reg.Snapshot().Lookup("admissionregistration.k8s.io", "v1", w.plural)
	if !ok {
		return out, api.NewGenericNotFound()
	}
	obj, err := res.Store.Get(ctx, "", name, "")
	if err != nil {
		return out, api.ToKubeError(err)
	}
	out = reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	if err := json.Unmarshal(obj.Data, out); err != nil {
		return out, err
	}
	return out, nil
}
