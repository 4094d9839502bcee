package registry

import (
	"context"
	"net/http"
	"net/url"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/fieldmanager"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Strategy is a type's behaviour beyond generic storage. Any value is a
// Strategy; the Store discovers what it can do through the capability
// interfaces below, each optional.
type Strategy any

// Defaulter fills defaults into an object before it is validated and
// written, on create and on update.
type Defaulter interface {
	Default(obj *api.Object)
}

// StatusDefaulter is implemented by strategies whose defaults apply to
// writes through /status too, as a custom resource's schema defaults do:
// kube-apiserver's decoder defaults every body it reads, whichever
// (sub)resource it is sent to. A Defaulter alone defaults only writes
// of the main resource, where its rules (a CRD's v1 defaults) belong.
type StatusDefaulter interface {
	// DefaultStatus fills defaults into obj, the stored object with the
	// status the write sent.
	DefaultStatus(obj *api.Object)
}

// Normalizer rewrites an object into its stored form after defaulting on
// the generic path, or refuses it with a StatusError (a CRD whose spec
// does not decode).
type Normalizer interface {
	Normalize(obj *api.Object) error
}

// StatusSubresource is implemented by strategies whose type has a /status
// subresource: writes to the main resource keep .status, writes to /status
// change only .status.
type StatusSubresource interface {
	HasStatus() bool
}

// FieldReader is implemented by strategies that compute selectable field
// values themselves instead of reading them by path (e.g. a field whose
// default applies when it is absent).
type FieldReader interface {
	SelectableFieldValue(obj *api.Object, path string) (string, bool)
}

// ColumnComputer is implemented by strategies with printer columns that a
// JSONPath cannot express, such as a ConfigMap's count of data keys. Table
// output asks it for every column declared with an empty JSONPath; obj is
// the object decoded as generic JSON.
type ColumnComputer interface {
	ComputeColumn(column string, obj map[string]any) (value any, ok bool)
}

// CollectionDeleteRefuser is implemented by strategies whose type does not
// serve DELETE on its collection, as kube-apiserver does not for
// namespaces: one request must not be able to delete every namespace.
type CollectionDeleteRefuser interface {
	RefusesCollectionDelete() bool
}

// SupportsDeleteCollection reports whether t serves DELETE on its
// collection.
func SupportsDeleteCollection(t *Type) bool {
	r, ok := t.Strategy.(CollectionDeleteRefuser)
	return !ok || !r.RefusesCollectionDelete()
}

// hasStatus reports whether s declares a status subresource.
func hasStatus(s Strategy) bool {
	ss, ok := s.(StatusSubresource)
	return ok && ss.HasStatus()
}

// GenericStrategy is the strategy of types declared only as data (from a
// resources file): an optional status subresource and nothing else.
type GenericStrategy struct {
	Status bool
}

// HasStatus reports whether the type has a /status subresource.
func (g GenericStrategy) HasStatus() bool { return g.Status }

// HasStatus reports whether t has a /status subresource.
func HasStatus(t *Type) bool { return hasStatus(t.Strategy) }

// MergeSchema is implemented by strategies whose objects merge (for
// managedFields and server-side apply) by a schema other than the Type's
// Schema: the built-in types, which merge by Kubernetes' own definitions
// of them, with their list and map types.
type MergeSchema interface {
	TypeConverter() (fieldmanager.TypeConverter, error)
}

// KindConverter is implemented by strategies of kinds served in several
// versions that differ in more than apiVersion (the built-in kinds, by
// Kubernetes' own conversions): managedFields entries recorded through
// one version are reconciled with writes through another by converting
// between them, as kube-apiserver's field manager does.
type KindConverter interface {
	ConvertKind(data []byte, from, to schema.GroupVersionKind) ([]byte, error)
}

// FieldResetter is implemented by strategies whose (sub)resources reset
// fields of their own, as kube's strategies for the built-in kinds
// declare them (rest.ResetFieldsStrategy): a write of the subresource
// ("" for the main resource) does not own them in managedFields. A
// namespace's /status resets spec only, so a status write that changes
// labels owns them. Without it, the rules of kube's strategies for
// custom resources apply (fieldmanager.Config.ResetFields).
type FieldResetter interface {
	ResetFields(subresource string) map[fieldpath.APIVersion]fieldpath.Filter
}

// Decoder is implemented by strategies that decode request bodies as
// kube-apiserver's decoder does for their kind: the built-in kinds, into
// their Go types, with their defaults. Without one the Store decodes
// generically and checks fields against Type.Schema.
type Decoder interface {
	// Decode turns data, the JSON of one object as a client sent it (or
	// as a patch or an apply left it), into the object to store: fields
	// the kind does not have dropped, defaults applied. strict lists
	// what a strict decoder refuses (unknown and duplicate fields), in
	// kube-apiserver's words; the Store acts on it as the request's
	// fieldValidation asks. A body that does not decode at all is an
	// error: 400 BadRequest with kube-apiserver's message.
	Decode(data []byte) (obj *api.Object, strict []string, err error)
}

// CreateRules is implemented by strategies that hold a kind's rules for
// new objects as kube-apiserver's REST create strategies do, through
// kube's own code: the built-in kinds', custom resources' and CRDs'.
// Without it (the types of a resources file, a CRD version without a
// schema) the Store applies generic rules: generation, status kept out
// of main-resource writes, ObjectMeta and scale paths validated.
type CreateRules interface {
	// BeforeCreate runs once a new object's name is final, its uid and
	// creationTimestamp set and its managedFields recorded: it clears
	// what creators may not set, validates the object, its metadata
	// included (an *api.StatusError, 422 Invalid as kube-apiserver words
	// it), records warnings on ctx (api.AddWarning) and canonicalizes
	// it, in place.
	BeforeCreate(ctx context.Context, obj *api.Object) error
}

// UpdateRules is CreateRules' counterpart for updates of the main
// resource ("") and of the subresources the kind updates through a
// strategy of their own (status, and for some kinds finalize, approval,
// ephemeralcontainers or resize).
type UpdateRules interface {
	// BeforeUpdate runs on an update whose managedFields are recorded:
	// it keeps what the (sub)resource may not change from old, moves
	// metadata.generation as the kind does, validates obj against old
	// and canonicalizes obj, in place.
	BeforeUpdate(ctx context.Context, obj, old *api.Object, subresource string) error
}

// GracefulDeleter is implemented by strategies of kinds whose objects may
// be deleted gracefully, as kube-apiserver deletes a pod on a node: the
// object is only marked (deletionTimestamp in the future) and stays
// until something deletes it again with no grace period left.
type GracefulDeleter interface {
	// BeforeDelete decides, for obj (the current object) and the grace
	// period the request asked for (nil: the kind's default), whether
	// the delete is graceful. When it is, it sets obj's
	// deletionTimestamp, deletionGracePeriodSeconds and generation and
	// reports true; the Store writes obj instead of deleting it. pending
	// reports a graceful deletion already under way that this request
	// does not shorten: the object stays as it is.
	BeforeDelete(ctx context.Context, obj *api.Object, gracePeriodSeconds *int64) (graceful, pending bool, err error)
}

// GarbageCollectionPolicy is what a delete that names no propagation
// policy does to the object's dependents, as kube's
// rest.GarbageCollectionPolicy.
type GarbageCollectionPolicy string

// The policies a kind may default to.
const (
	// DeleteDependents, every kind's default unless it says otherwise:
	// no finalizer is added, dependents go in the background.
	DeleteDependents GarbageCollectionPolicy = "DeleteDependents"
	// OrphanDependents adds the orphan finalizer (kube's batch/v1 Jobs
	// and core/v1 ReplicationControllers, for compatibility).
	OrphanDependents GarbageCollectionPolicy = "OrphanDependents"
	// Unsupported: the kind's objects never take the garbage
	// collector's finalizers, whatever the request asks (kube's Events).
	Unsupported GarbageCollectionPolicy = "Unsupported"
)

// GarbageCollectionDefaulter is implemented by strategies whose kind
// says what a delete with no propagation policy does to its dependents;
// without it the kind deletes them in the background.
type GarbageCollectionDefaulter interface {
	DefaultGarbageCollectionPolicy(ctx context.Context) GarbageCollectionPolicy
}

// DeleteWarner is implemented by strategies whose kind warns about a
// delete before doing it, as kube's Job storage warns that a delete
// leaving the propagation policy to the kind's default orphans the
// Job's pods.
type DeleteWarner interface {
	// WarnDelete records, with api.AddWarning, the warnings of a delete
	// of the named object, or of a collection when name is empty, with
	// policy (empty: none given).
	WarnDelete(ctx context.Context, ns, name, policy string)
}

// AttrSource is implemented by strategies that compute the attributes
// field selectors match themselves, as kube-apiserver's GetAttrs
// functions do, and that read field selectors as the kind's field label
// conversion does.
type AttrSource interface {
	// Attrs returns the selectable attributes of an encoded object.
	Attrs(data []byte) (storage.Attrs, error)
	// ConvertFieldLabel maps a field selector's label and value to the
	// attribute Attrs names it by (events.k8s.io's regarding.kind is
	// involvedObject.kind), or refuses (400 BadRequest) a label the
	// kind does not support.
	ConvertFieldLabel(label, value string) (string, string, error)
}

// VersionConverter is implemented by strategies of built-in kinds served
// in a version other than the one they are stored in
// (Type.StorageVersion): it converts encoded objects between the two
// with Kubernetes' own conversions.
type VersionConverter interface {
	ToStorage(data []byte) ([]byte, error)
	FromStorage(data []byte) ([]byte, error)
}

// TablePrinter is implemented by strategies that print their objects as
// Table rows themselves, as kube-apiserver's printers print the built-in
// kinds (kubectl get's columns).
type TablePrinter interface {
	// TableColumns returns the Table's column definitions.
	TableColumns() []api.TableColumnDefinition
	// TableRows prints the rows of the encoded objects, in order: one
	// row per object, without the row's object (the caller adds it).
	TableRows(ctx context.Context, items [][]byte) ([]api.TableRow, error)
}

// SubresourceLister is implemented by strategies whose kinds serve
// subresources beyond status and scale (a pod's binding or eviction, a
// namespace's finalize). Discovery lists them; the handlers route them.
type SubresourceLister interface {
	Subresources() []Subresource
}

// Subresource describes one subresource a kind serves.
type Subresource struct {
	// Name is the path segment, e.g. "binding".
	Name string
	// Verbs are the verbs discovery lists for it.
	Verbs []string
	// Group, Version and Kind name the object it takes and answers;
	// empty means the parent's.
	Group, Version, Kind string
	// Serve is how the Store serves it.
	Serve SubresourceServe
}

// SubresourceServe says how a subresource is served.
type SubresourceServe int

const (
	// ServeUpdate is a view of the parent object written through the
	// kind's rules for that subresource (UpdateRules), like status.
	ServeUpdate SubresourceServe = iota
	// ServeCreate takes a different kind of object (a Binding, an
	// Eviction) that acts on the parent (SubresourceCreater).
	ServeCreate
	// ServeConnect is a streaming subresource (log, exec, proxy) that
	// needs a kubelet or a backend miniapi does not run: it answers
	// the error kube-apiserver answers when none can be reached.
	ServeConnect
	// ServeNotYet is listed in discovery by kube-apiserver but not
	// served by miniapi yet (e.g. serviceaccounts/token).
	ServeNotYet
)

// SubresourceCreater is implemented by strategies that serve ServeCreate
// subresources.
type SubresourceCreater interface {
	// CheckSubresource refuses a body that is not an object of the kind
	// subresource takes, in kube-apiserver's words; the Store asks
	// before the object is admitted, as kube-apiserver decodes first.
	CheckSubresource(subresource string, body []byte) error
	// CreateSubresource handles a POST of body (JSON) to subresource of
	// the named parent through store, answering the object to return.
	CreateSubresource(ctx context.Context, store *Store, subresource, ns, name string, body []byte, opts CreateOptions) ([]byte, error)
}

// Connecter is implemented by strategies that serve ServeConnect
// subresources.
type Connecter interface {
	// Connect checks one request as kube-apiserver does before it
	// reaches the backend and answers the handler that serves the rest
	// of it (a stream, an upgrade, a proxied request), or the error
	// kube-apiserver answers. The handler is called once, with the
	// request's own ResponseWriter and Request, and writes the errors
	// it meets on the way through req.Fail.
	Connect(ctx context.Context, store *Store, req ConnectRequest) (http.Handler, error)
}

// ConnectDescriber is implemented by Connecters that describe their
// subresources for the OpenAPI documents, as kube-apiserver's installer
// reads the same off its REST objects.
type ConnectDescriber interface {
	// DescribeConnect describes the ServeConnect subresource named
	// subresource; ok is false for one it does not serve.
	DescribeConnect(subresource string) (d ConnectDescription, ok bool)
}

// ConnectDescription is what the OpenAPI documents say of a ServeConnect
// subresource.
type ConnectDescription struct {
	// Methods are the HTTP methods it serves.
	Methods []string
	// Options is the kind, in the parent's group version, whose fields
	// are its query parameters (PodExecOptions).
	Options string
	// Path says it also serves whatever path follows its name
	// (proxy/{path}).
	Path bool
	// Produces, for a subresource read as a stream rather than
	// connected to (a pod's log), are the media types it answers
	// besides the kind's own; nil for a connection.
	Produces []string
}

// ConnectRequest is one request to a streaming subresource.
type ConnectRequest struct {
	Subresource, Namespace, Name string
	// Verb is the request's API verb ("get", "create", ...), as
	// kube-apiserver names it for authorization.
	Verb string
	// Path is what follows a proxy subresource in the URL, as
	// kube-apiserver passes it on: "" for none, otherwise with a leading
	// slash and the URL's trailing slash kept.
	Path string
	// Query holds the subresource's options (container, command...).
	Query url.Values
	// Fail answers err as the request's Status.
	Fail func(err error)
}

// ConditionalUpdater is implemented by strategies of kinds whose updates
// must name the resourceVersion they replace (kube's
// AllowUnconditionalUpdate false).
type ConditionalUpdater interface {
	RequiresResourceVersion() bool
}

// CreatorOnUpdate is implemented by strategies of kinds whose objects a
// PUT creates when they do not exist (kube's AllowCreateOnUpdate: Leases,
// Services, Endpoints, Events, LimitRanges, RuntimeClasses, RBAC's roles
// and bindings).
type CreatorOnUpdate interface {
	CreatesOnUpdate() bool
}

// OpenAPIModeler is implemented by strategies of kinds whose OpenAPI
// definitions are Kubernetes' own (the built-in kinds): the names of the
// definitions of the kind and its list, which a definition source
// supplies.
type OpenAPIModeler interface {
	OpenAPIModels() (kind, list string)
}

// Virtual is implemented by strategies of resources kube-apiserver serves
// without storing them (bindings, componentstatuses): the registry builds
// no storage for them, and only the verbs listed are served, through
// VirtualCreater and VirtualReader.
type Virtual interface {
	Verbs() []string
}

// VirtualCreater serves POST on a virtual resource's collection: it acts
// on body (JSON) and answers the object to return.
type VirtualCreater interface {
	CreateVirtual(ctx context.Context, reg *Registry, ns string, body []byte, opts CreateOptions) ([]byte, error)
}

// VirtualReader serves get and list of a virtual resource, answering
// encoded objects.
type VirtualReader interface {
	GetVirtual(ctx context.Context, name string) ([]byte, error)
	ListVirtual(ctx context.Context) ([][]byte, error)
}

// IsVirtual reports whether t is served without storage.
func IsVirtual(t *Type) bool {
	_, ok := t.Strategy.(Virtual)
	return ok
}

// WriteHooks is implemented by strategies of kinds whose writes reserve
// something outside the object, as kube-apiserver's storage hooks do for
// a Service's ClusterIPs and NodePorts.
type WriteHooks interface {
	// BeginCreate reserves what obj needs, filling it in, before the
	// kind's rules judge it. finish(true) after the object is stored
	// keeps the reservation; finish(false) releases it.
	BeginCreate(ctx context.Context, obj *api.Object, dryRun bool) (finish func(stored bool), err error)
	// BeginUpdate is BeginCreate's counterpart for an update of old.
	BeginUpdate(ctx context.Context, obj, old *api.Object, dryRun bool) (finish func(stored bool), err error)
	// AfterDelete releases what a deleted object held.
	AfterDelete(obj *api.Object, dryRun bool)
}

// TypeMetaValidator is implemented by strategies whose rules validate an
// object's apiVersion and kind themselves, as kube's strategy for custom
// resources does (422 Invalid, `kind: Invalid value: "Bogus": must be
// Widget`). The Store leaves them another kind, and after a patch
// another apiVersion, to refuse; a body sent whole with another
// apiVersion is refused before, as kube-apiserver's decoder refuses it.
// After a JSON patch that removes kind or apiVersion, the Store refuses
// the patched object as kube-apiserver's decoder of custom resources
// does (see patchedTypeMeta).
type TypeMetaValidator interface {
	ValidatesTypeMeta()
}

// TypeMetaJudge is a kind that refuses a body of another apiVersion or
// kind in its own words, as kube-apiserver's decoder of the kind does:
// TypeMetaError returns the error for a body that says apiVersion and
// kind (one of them may be empty: the URL's), or nil to leave the
// Store's generic answer.
//
// PatchedTypeMetaError judges the result of a JSON or merge patch that
// says apiVersion and kind: the decoder's own error, which the Store
// answers as kube-apiserver's patch handler does (422 naming the
// patched object), or nil to leave the generic answer.
type TypeMetaJudge interface {
	TypeMetaError(apiVersion, kind string) error
	PatchedTypeMetaError(apiVersion, kind string) error
}
