package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/fieldmanager"
	"github.com/miniapi/miniapi/kuberest"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// kind is the registry Strategy of one built-in resource: it turns the
// registry's capabilities into calls of kube's code for the kind (its
// decoding and defaults, its REST strategies, its field selectors, its
// printer), converting between the Store's JSON objects and kube's Go
// types at each call.
type kind struct {
	r *resource
	// gvk is the served (versioned) kind, internal the hub kube's
	// strategies work on.
	gvk, internal schema.GroupVersionKind
	gr            schema.GroupResource
	// pathAttrs reads the attributes of kinds with selectable paths.
	pathAttrs storage.AttrFunc
	// stored is the kind as kube stores it, when not as served.
	stored schema.GroupVersionKind
}

func newKind(r *resource) *kind {
	gv := schema.GroupVersion{Group: r.group, Version: r.version}
	k := &kind{
		r:        r,
		gvk:      gv.WithKind(r.kind),
		internal: schema.GroupVersionKind{Group: r.group, Version: runtime.APIVersionInternal, Kind: r.kind},
		gr:       schema.GroupResource{Group: r.group, Resource: r.plural},
	}
	if r.storageVersion != "" {
		t := registry.Type{Group: r.group, Version: r.version, StorageVersion: r.storageVersion, StorageGroup: r.storageGroup}
		k.stored = schema.FromAPIVersionAndKind(t.StorageAPIVersion(), r.kind)
	}
	if len(r.selectable) > 0 {
		k.pathAttrs = registry.AttrFunc(&registry.Type{Namespaced: r.namespaced, SelectableFields: r.selectable})
	} else if r.attrs != nil {
		k.pathAttrs = metadataAttrs(k)
	}
	return k
}

// metadataAttrs returns the scanner of labels, name and namespace when
// kube's GetAttrs for the kind selects on nothing else (ConfigMaps,
// Secrets...), found by asking it about a probe object; nil when it
// reads more and the object must be decoded. Caches compute the
// attributes of every object they load: a full decode for each cost a
// start with 10,000 ConfigMaps a third of its CPU.
func metadataAttrs(k *kind) storage.AttrFunc {
	probe := k.newInternal()
	m, err := meta.Accessor(probe)
	if err != nil {
		return nil
	}
	m.SetName("n")
	if k.r.namespaced {
		m.SetNamespace("ns")
	}
	m.SetLabels(map[string]string{"l": "v"})
	ls, fs, err := k.r.attrs(probe)
	if err != nil || !maps.Equal(ls, labels.Set{"l": "v"}) {
		return nil
	}
	want := fields.Set{"metadata.name": "n"}
	if k.r.namespaced {
		want["metadata.namespace"] = "ns"
	}
	if !maps.Equal(fs, want) {
		return nil
	}
	if k.r.namespaced {
		return storage.DefaultAttrs
	}
	return func(data []byte) (storage.Attrs, error) {
		a, err := storage.DefaultAttrs(data)
		delete(a.Fields, "metadata.namespace")
		return a, err
	}
}

// The registry capabilities a kind has. Status, subresources and
// graceful deletion vary by kind: see kindWithStatus and friends.
var (
	_ registry.Decoder                    = (*kind)(nil)
	_ registry.CreateRules                = (*kind)(nil)
	_ registry.UpdateRules                = (*kind)(nil)
	_ registry.AttrSource                 = (*kind)(nil)
	_ registry.TablePrinter               = (*kind)(nil)
	_ registry.MergeSchema                = (*kind)(nil)
	_ registry.StrategicMerger            = (*kind)(nil)
	_ registry.StatusSubresource          = (*kind)(nil)
	_ registry.SubresourceLister          = (*kind)(nil)
	_ registry.GarbageCollectionDefaulter = (*kind)(nil)
	_ registry.DeleteWarner               = (*kind)(nil)
	_ registry.ConditionalUpdater         = (*kind)(nil)
	_ registry.FieldResetter              = (*kind)(nil)
	_ registry.TypeMetaJudge              = (*kind)(nil)
)

// builtin returns k, through the kinds that embed it.
func (k *kind) builtin() *kind { return k }

// newVersioned returns an empty object of the served version's Go type.
func (k *kind) newVersioned() runtime.Object {
	obj, err := scheme.New(k.gvk)
	if err != nil {
		panic(fmt.Sprintf("builtin: %s is not in the scheme: %v", k.gvk, err)) // the resource table names only registered kinds
	}
	return obj
}

// newInternal returns an empty object of the internal Go type.
func (k *kind) newInternal() runtime.Object {
	obj, err := scheme.New(k.internal)
	if err != nil {
		panic(fmt.Sprintf("builtin: %s is not in the scheme: %v", k.internal, err))
	}
	return obj
}

// Decode decodes data into the kind's Go type as kube-apiserver's JSON
// decoder does (case-sensitive field names, integers kept, strict
// findings listed), applies the kind's defaults, converts the result to
// the internal version and back, as kube-apiserver decodes a body into
// the internal version, and returns it as the Store's object. The
// conversion's own changes (a Secret's stringData merged into data, a
// DaemonSet's template generation annotation) are thus there before
// managedFields are recorded, as in kube-apiserver.
func (k *kind) Decode(data []byte) (*api.Object, []string, error) {
	obj := k.newVersioned()
	strictErrs, err := sigsjson.UnmarshalStrict(data, obj)
	if err != nil {
		return nil, nil, k.undecodable(err)
	}
	scheme.Default(obj)
	sent := obj.GetObjectKind().GroupVersionKind()
	in := k.newInternal()
	if err := scheme.Convert(obj, in, nil); err != nil {
		return nil, nil, k.undecodable(err)
	}
	obj = k.newVersioned()
	if err := scheme.Convert(in, obj, nil); err != nil {
		return nil, nil, k.undecodable(err)
	}
	// The body's own apiVersion and kind stay as sent: the Store checks
	// them against the URL.
	obj.GetObjectKind().SetGroupVersionKind(sent)
	out, err := k.encodeVersioned(obj)
	if err != nil {
		return nil, nil, err
	}
	var strict []string
	for _, e := range strictErrs {
		strict = append(strict, e.Error())
	}
	return out, strict, nil
}

// TypeMetaError is kube-apiserver's answer to a body of another
// apiVersion or kind: its decoder, given the body's apiVersion and
// kind, decodes into the kind's internal type, so a kind or version
// kube does not know is "no kind ... is registered", another kind
// "converting (v1.Secret) to (core.ConfigMap): unknown conversion", and
// only the kind in another version it knows is left to the Store's
// "the API version in the data ... does not match".
func (k *kind) TypeMetaError(apiVersion, kindName string) error {
	gvk, err := k.decodeTypeMeta(apiVersion, kindName)
	if err == nil {
		return nil
	}
	if gvk != nil && gvk.Kind != "" {
		return api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, k.r.kind, err))
	}
	return api.NewBadRequest(err.Error())
}

// PatchedTypeMetaError is kube-apiserver's patch handler's judgement of
// a JSON or merge patch that changed apiVersion or kind: its decoder's
// own words, which the handler answers in a 422 naming the patched
// object.
func (k *kind) PatchedTypeMetaError(apiVersion, kindName string) error {
	_, err := k.decodeTypeMeta(apiVersion, kindName)
	return err
}

// decodeTypeMeta decodes a body of only apiVersion and kind (the kind's
// own for an empty one) as kube-apiserver decodes one into the kind.
func (k *kind) decodeTypeMeta(apiVersion, kindName string) (*schema.GroupVersionKind, error) {
	if apiVersion == "" {
		apiVersion = k.gvk.GroupVersion().String()
	}
	if kindName == "" {
		kindName = k.gvk.Kind
	}
	body, err := json.Marshal(map[string]string{"apiVersion": apiVersion, "kind": kindName})
	if err != nil {
		return nil, nil
	}
	info, ok := runtime.SerializerInfoForMediaType(Codecs().SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		return nil, nil
	}
	defaults := k.gvk
	_, gvk, err := Codecs().DecoderToVersion(info.Serializer, k.internal.GroupVersion()).Decode(body, &defaults, k.newInternal())
	return gvk, err
}

// undecodable is kube-apiserver's 400 for a body that does not decode
// (or convert) into the kind.
func (k *kind) undecodable(err error) error {
	return api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", k.r.kind, k.r.version, k.r.kind, err))
}

// toVersioned decodes the Store's object into the served Go type.
func (k *kind) toVersioned(obj *api.Object) (runtime.Object, error) {
	v, err := decodeInto(obj, k.newVersioned())
	if err != nil {
		return nil, fmt.Errorf("builtin: decode %s: %w", k.gvk, err)
	}
	return v, nil
}

// decodeVersioned decodes stored JSON into the served Go type.
func (k *kind) decodeVersioned(data []byte) (runtime.Object, error) {
	out := k.newVersioned()
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, out); err != nil {
		return nil, fmt.Errorf("builtin: decode %s: %w", k.gvk, err)
	}
	return out, nil
}

// toInternal decodes the Store's object into kube's internal Go type.
func (k *kind) toInternal(obj *api.Object) (runtime.Object, error) {
	v, err := k.toVersioned(obj)
	if err != nil {
		return nil, err
	}
	return k.internalOf(v)
}

// internalOf converts a served-version object to the internal version.
func (k *kind) internalOf(v runtime.Object) (runtime.Object, error) {
	in := k.newInternal()
	if err := scheme.Convert(v, in, nil); err != nil {
		return nil, fmt.Errorf("builtin: convert %s to internal: %w", k.gvk, err)
	}
	return in, nil
}

// fromInternal converts kube's internal object back into the Store's,
// with the kind's defaults applied again: kube-apiserver applies them to
// every object it reads from storage, its answer to a write included, so
// what the strategy left for a default to fill (a Job's labels from its
// generated template labels, a new claim's Pending phase) is filled.
func (k *kind) fromInternal(in runtime.Object) (*api.Object, error) {
	v := k.newVersioned()
	if err := scheme.Convert(in, v, nil); err != nil {
		return nil, fmt.Errorf("builtin: convert %s from internal: %w", k.gvk, err)
	}
	scheme.Default(v)
	return k.fromVersioned(v)
}

// fromVersioned encodes a served-version object as the Store's object,
// with the served apiVersion and kind.
func (k *kind) fromVersioned(v runtime.Object) (*api.Object, error) {
	v.GetObjectKind().SetGroupVersionKind(k.gvk)
	return k.encodeVersioned(v)
}

// encodeVersioned encodes a served-version object as the Store's object.
func (k *kind) encodeVersioned(v runtime.Object) (*api.Object, error) {
	out, err := objectOf(v)
	if err != nil {
		return nil, fmt.Errorf("builtin: encode %s: %w", k.gvk, err)
	}
	return out, nil
}

// requestContext is the context kube's strategies expect of a request:
// its namespace, its RequestInfo (declarative validation names the
// operation by it) and a warning recorder that hands their warnings to
// ours.
func (k *kind) requestContext(ctx context.Context, verb, ns, name, subresource string) context.Context {
	return genericapirequest.WithRequestInfo(kuberest.Context(ctx, ns), &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: verb, APIPrefix: apiPrefix(k.r.group),
		APIGroup: k.r.group, APIVersion: k.r.version, Namespace: ns, Resource: k.r.plural,
		Subresource: subresource, Name: name,
	})
}

func apiPrefix(group string) string {
	if group == "" {
		return "api"
	}
	return "apis"
}

// DefaultGarbageCollectionPolicy is the kind's strategy's, asked with
// the served group and version as kube's store asks it: batch/v1 Jobs
// and v1 ReplicationControllers orphan their dependents unless a delete
// says otherwise, Events take no garbage collector finalizers.
func (k *kind) DefaultGarbageCollectionPolicy(ctx context.Context) registry.GarbageCollectionPolicy {
	gc, ok := k.r.strategy.(rest.GarbageCollectionDeleteStrategy)
	if !ok {
		return registry.DeleteDependents
	}
	switch gc.DefaultGarbageCollectionPolicy(k.requestContext(ctx, "delete", "", "", "")) {
	case rest.OrphanDependents:
		return registry.OrphanDependents
	case rest.Unsupported:
		return registry.Unsupported
	}
	return registry.DeleteDependents
}

// WarnDelete records the warnings kube's storage of the kind gives a
// delete of the named object (a collection when name is empty) with
// policy.
func (k *kind) WarnDelete(ctx context.Context, ns, name, policy string) {
	if k.r.deleteWarnings == nil {
		return
	}
	verb := "delete"
	if name == "" {
		verb = "deletecollection"
	}
	opts := &metav1.DeleteOptions{}
	if policy != "" {
		p := metav1.DeletionPropagation(policy)
		opts.PropagationPolicy = &p
	}
	k.r.deleteWarnings(k.requestContext(ctx, verb, ns, name, ""), opts)
}

// BeforeCreate runs kube's rest.BeforeCreate with the kind's strategy:
// PrepareForCreate, Validate (ObjectMeta included), WarningsOnCreate and
// Canonicalize.
func (k *kind) BeforeCreate(ctx context.Context, obj *api.Object) error {
	in, err := k.toInternal(obj)
	if err != nil {
		return err
	}
	kctx := k.requestContext(ctx, "create", obj.Metadata.Namespace, obj.Metadata.Name, "")
	if err := rest.BeforeCreate(k.r.strategy, kctx, in); err != nil {
		return statusError(err)
	}
	out, err := k.fromInternal(in)
	if err != nil {
		return err
	}
	*obj = *out
	return nil
}

// BeforeUpdate runs kube's rest.BeforeUpdate with the strategy of the
// (sub)resource written.
func (k *kind) BeforeUpdate(ctx context.Context, obj, old *api.Object, subresource string) error {
	strategy := k.r.updateStrategy(subresource)
	if strategy == nil {
		return api.NewNotFound(api.GroupResource{Group: k.r.group, Resource: k.r.plural}, obj.Metadata.Name)
	}
	// kube-apiserver's generic store gives an unconditional update the
	// stored resourceVersion before the strategy judges it.
	obj.Metadata.ResourceVersion = old.Metadata.ResourceVersion
	in, err := k.toInternal(obj)
	if err != nil {
		return err
	}
	oldIn, err := k.toInternal(old)
	if err != nil {
		return err
	}
	kctx := k.requestContext(ctx, "update", obj.Metadata.Namespace, obj.Metadata.Name, subresource)
	if err := rest.BeforeUpdate(strategy, kctx, in, oldIn); err != nil {
		return statusError(err)
	}
	out, err := k.fromInternal(in)
	if err != nil {
		return err
	}
	out.Metadata.ResourceVersion = ""
	*obj = *out
	return nil
}

// RequiresResourceVersion reports whether the kind refuses updates that
// do not name the resourceVersion they replace.
func (k *kind) RequiresResourceVersion() bool {
	return !k.r.strategy.AllowUnconditionalUpdate(context.Background())
}

// CreatesOnUpdate reports whether a PUT of a missing object creates it
// (kube's AllowCreateOnUpdate).
func (k *kind) CreatesOnUpdate() bool {
	return k.r.strategy.AllowCreateOnUpdate(context.Background())
}

// HasStatus reports whether the kind has a status subresource.
func (k *kind) HasStatus() bool { return k.r.status != nil }

// Subresources lists the kind's subresources other than status and scale.
func (k *kind) Subresources() []registry.Subresource { return k.r.subresources() }

// ResetFields returns the fields kube's strategy for the (sub)resource
// resets, in the form kube-apiserver's handler installer hands its field
// manager; nil when the strategy resets none or the kind has no such
// subresource.
func (k *kind) ResetFields(subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	return kuberest.ResetFields(k.r.updateStrategy(subresource))
}

// TypeConverter returns the kind's merge schema: Kubernetes' own, built
// from its definitions as kube-apiserver builds it.
func (k *kind) TypeConverter() (fieldmanager.TypeConverter, error) {
	return mergeSchema()
}

// Attrs returns the labels and the fields kube's GetAttrs function for
// the kind selects on; kinds without one select on metadata.name and
// metadata.namespace only.
func (k *kind) Attrs(data []byte) (storage.Attrs, error) {
	if k.pathAttrs != nil {
		return k.pathAttrs(data)
	}
	if k.r.attrs == nil {
		return storage.DefaultAttrs(data)
	}
	v, err := k.decodeVersioned(data)
	if err != nil {
		return storage.Attrs{}, err
	}
	in, err := k.internalOf(v)
	if err != nil {
		return storage.Attrs{}, err
	}
	l, f, err := k.r.attrs(in)
	if err != nil {
		return storage.Attrs{}, err
	}
	return storage.Attrs{Labels: labels.Set(l), Fields: fields.Set(f)}, nil
}

// ConvertFieldLabel maps a field selector label with the kind's field
// label conversion, refusing one it does not know with kube-apiserver's
// message.
func (k *kind) ConvertFieldLabel(label, value string) (string, string, error) {
	l, v, err := scheme.ConvertFieldLabel(k.gvk, label, value)
	if err != nil {
		return "", "", api.NewBadRequest(err.Error())
	}
	return l, v, nil
}

// StrategicMerge applies a strategic merge patch with the patch
// strategies and merge keys of the kind's Go type, as kube-apiserver's
// patch handler does.
func (k *kind) StrategicMerge(original, patch []byte) ([]byte, error) {
	return registry.StrategicMergeTyped(original, patch, k.newVersioned())
}

// newInvalid is kube's 422 Invalid error.
var newInvalid = apierrors.NewInvalid

// statusError turns an error kube's code returned into ours: a
// StatusError keeps its Status; anything else is a server fault.
var statusError = api.FromKubeError

var (
	_ registry.VersionConverter = (*kind)(nil)
	_ registry.KindConverter    = (*kind)(nil)
)

// ConvertKind converts an encoded object between two versions of the
// kind's group through its internal type, as kube's scheme does.
func (k *kind) ConvertKind(data []byte, from, to schema.GroupVersionKind) ([]byte, error) {
	return k.convertEncoded(data, from, to)
}

// ToStorage converts an encoded object from the served version to the
// one kube stores, through the internal version, as kube's storage codec
// does.
func (k *kind) ToStorage(data []byte) ([]byte, error) { return k.convertEncoded(data, k.gvk, k.stored) }

// FromStorage converts an encoded object from the stored version to the
// served one.
func (k *kind) FromStorage(data []byte) ([]byte, error) {
	return k.convertEncoded(data, k.stored, k.gvk)
}

// convertEncoded converts JSON of kind from into kind to, and returns it
// in the Store's canonical encoding.
func (k *kind) convertEncoded(data []byte, from, to schema.GroupVersionKind) ([]byte, error) {
	src, err := scheme.New(from)
	if err != nil {
		return nil, err
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, src); err != nil {
		return nil, fmt.Errorf("builtin: decode %s: %w", from, err)
	}
	in := k.newInternal()
	if err := scheme.Convert(src, in, nil); err != nil {
		return nil, fmt.Errorf("builtin: convert %s: %w", from, err)
	}
	dst, err := scheme.New(to)
	if err != nil {
		return nil, err
	}
	if err := scheme.Convert(in, dst, nil); err != nil {
		return nil, fmt.Errorf("builtin: convert to %s: %w", to, err)
	}
	dst.GetObjectKind().SetGroupVersionKind(to)
	obj, err := k.encodeVersioned(dst)
	if err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}

// AdmissionObject returns obj as kube's admission plugins see a built-in
// kind's object: kube's internal Go type.
func (k *kind) AdmissionObject(obj *api.Object) (runtime.Object, error) { return k.toInternal(obj) }

// FromAdmissionObject returns the Store's object of what admission
// plugins made of AdmissionObject's result.
func (k *kind) FromAdmissionObject(in runtime.Object) (*api.Object, error) {
	return k.fromInternal(in)
}

// AdmissionScheme is the scheme that converts the kind's objects to the
// versions webhooks ask for.
func (k *kind) AdmissionScheme() *runtime.Scheme { return scheme }
