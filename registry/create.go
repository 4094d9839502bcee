package registry

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"net/http"

	"github.com/google/uuid"
	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/journal"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CreateOptions qualify a Create.
type CreateOptions struct {
	// DryRun validates and answers without persisting.
	DryRun bool
	// FieldManager is recorded in managedFields as the manager of the
	// fields obj sets (DefaultFieldManager when empty).
	FieldManager string
	// FieldValidation is how unknown and duplicate fields in the body
	// are treated: FieldValidationStrict, FieldValidationWarn (also
	// for "") or FieldValidationIgnore.
	FieldValidation string
	// BodyErrors are problems of the body's original encoding that a
	// strict decoder reports, such as duplicate keys in YAML.
	BodyErrors []string

	// fieldsRecorded marks an object whose managedFields the caller has
	// computed (an apply that creates): Create records nothing more.
	fieldsRecorded bool
	// authorize, for a PUT that creates, checks that the client may
	// create, where kube-apiserver does: after the kind has judged the
	// object, before validating admission.
	authorize func(context.Context) error
}

// admitValidateCreate runs validating admission on a create, after the
// check of a PUT that creates (opts.authorize).
func (s *Store) admitValidateCreate(ctx context.Context, r *AdmissionRequest, opts CreateOptions) error {
	if opts.authorize != nil {
		if err := opts.authorize(ctx); err != nil {
			return err
		}
	}
	return s.admitValidate(ctx, r)
}

// generateNameAttempts bounds retries when a generated name collides.
const generateNameAttempts = 8

// Create stores a new object, given as the JSON a client sent, in
// namespace ns (ignored for cluster-scoped types) and returns it as
// stored. The Store decodes it (decodeBody), as it does for every write.
func (s *Store) Create(ctx context.Context, ns string, body []byte, opts CreateOptions) (*storage.Object, error) {
	obj, err := s.decodeBody(ctx, body, opts.FieldValidation, opts.BodyErrors)
	if err != nil {
		return nil, err
	}
	return s.create(ctx, ns, obj, opts)
}

// create stores a decoded object: kube-apiserver's create, from the
// checks of the request's identity to the write.
func (s *Store) create(ctx context.Context, ns string, obj *api.Object, opts CreateOptions) (*storage.Object, error) {
	if s.t.CreatesRefused {
		gr := s.t.GroupResource()
		return nil, &api.StatusError{ErrStatus: api.Status{
			Status: api.StatusFailure, Code: http.StatusMethodNotAllowed, Reason: api.ReasonMethodNotAllowed,
			Message: "create not allowed while custom resource definition is terminating",
			Details: &api.StatusDetails{Group: gr.Group, Kind: gr.Resource},
		}}
	}
	ns = s.namespaceOf(ns)
	if err := s.checkTypeMeta(obj, sourceWhole); err != nil {
		return nil, err
	}
	if err := s.checkNamespace(obj, ns); err != nil {
		return nil, err
	}
	if obj.Metadata.ResourceVersion != "" {
		return nil, api.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	rules, kind := s.t.Strategy.(CreateRules)
	s.prepareForCreate(obj, !kind)
	if !kind {
		if err := s.normalize(obj); err != nil {
			return nil, err
		}
	}
	if !opts.fieldsRecorded {
		var err error
		if obj, err = s.recordUpdate(nil, obj, opts.FieldManager, ""); err != nil {
			return nil, err
		}
	}
	// As kube-apiserver's create handler: mutating admission once the
	// creator's managedFields are recorded, before the kind judges it.
	admission := &AdmissionRequest{
		Operation: OpCreate, Namespace: ns, Name: obj.Metadata.Name, Object: obj,
		DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation,
	}
	if err := s.admitMutate(ctx, admission); err != nil {
		return nil, err
	}
	if kind {
		return s.createWithRules(ctx, ns, obj, rules, admission, opts)
	}
	// Validate with a placeholder name when one will be generated, so a bad
	// generateName is reported once, on generateName.
	if errs := s.validateCreate(obj); len(errs) > 0 {
		return nil, api.NewInvalid(s.t.GroupKind(), displayName(obj), errs)
	}
	if err := s.admitValidateCreate(ctx, admission, opts); err != nil {
		return nil, err
	}
	generate := obj.Metadata.Name == ""
	for attempt := 0; ; attempt++ {
		if generate {
			obj.Metadata.Name = generatedName(obj.Metadata.GenerateName)
		}
		out, retry, err := s.put(ctx, ns, obj, generate, attempt, opts)
		if retry {
			continue
		}
		return out, err
	}
}

// createWithRules finishes a create through the kind's own rules, as
// kube-apiserver's generic store does: the name is generated first and
// the rules judge the object with it; a generated name that is taken
// starts again from the object as it was, with a new name.
func (s *Store) createWithRules(ctx context.Context, ns string, obj *api.Object, rules CreateRules, admission *AdmissionRequest, opts CreateOptions) (*storage.Object, error) {
	generate := obj.Metadata.Name == "" && obj.Metadata.GenerateName != ""
	for attempt := 0; ; attempt++ {
		try := obj
		if generate {
			try = obj.DeepCopy()
			try.Metadata.Name = generatedName(obj.Metadata.GenerateName)
		}
		finish := func(bool) {}
		if h, ok := s.t.Strategy.(WriteHooks); ok {
			f, err := h.BeginCreate(ctx, try, opts.DryRun)
			if err != nil {
				return nil, err
			}
			finish = f
		}
		if err := rules.BeforeCreate(ctx, try); err != nil {
			finish(false)
			return nil, err
		}
		// As kube-apiserver's generic store: validating admission sees
		// the object the kind has judged, its name generated.
		validate := *admission
		validate.Name, validate.Object = try.Metadata.Name, try
		if err := s.admitValidateCreate(ctx, &validate, opts); err != nil {
			finish(false)
			return nil, err
		}
		out, retry, err := s.put(ctx, ns, try, generate, attempt, opts)
		finish(err == nil && !retry && !opts.DryRun)
		if retry {
			continue
		}
		return out, err
	}
}

// put writes a new object. With a generated name that is taken it asks
// for another attempt (retry) until generateNameAttempts are spent. An
// object etcd refuses as too large is written once more without its
// managedFields, as kube-apiserver's create handler does, unless an apply
// computed them.
func (s *Store) put(ctx context.Context, ns string, obj *api.Object, generated bool, attempt int, opts CreateOptions) (out *storage.Object, retry bool, err error) {
	data, err := encode(obj)
	if err != nil {
		return nil, false, err
	}
	key := s.keys.Key(ns, obj.Metadata.Name)
	if opts.DryRun {
		// As kube-apiserver's dry-run storage: the name must be free, so
		// a dry run answers the 409 the write would.
		_, err = s.storage.Get(ctx, key, storage.GetOptions{})
		switch {
		case err == nil:
			err = storage.NewError(storage.CodeExists, key, 0, nil)
		case storage.IsNotFound(err):
			return &storage.Object{Key: key, Data: data}, false, nil
		}
	} else {
		out, err = s.storage.Create(ctx, key, data)
		if storage.IsEntityTooLarge(err) && obj.Metadata.ManagedFields != nil && !opts.fieldsRecorded {
			obj.Metadata.ManagedFields = nil
			if data, err = encode(obj); err != nil {
				return nil, false, err
			}
			out, err = s.storage.Create(ctx, key, data)
		}
	}
	if generated && storage.IsExists(err) {
		if attempt+1 < generateNameAttempts {
			return nil, true, nil
		}
		// kube's generic store's answer (apimachinery's
		// NewGenerateNameConflict): 409 AlreadyExists, retry after 1 s.
		gr := s.t.GroupResource()
		st := api.NewAlreadyExists(gr, obj.Metadata.Name)
		st.ErrStatus.Message = fmt.Sprintf("%s %q already exists, the server was not able to generate a unique name for the object", gr, obj.Metadata.Name)
		st.ErrStatus.Details.RetryAfterSeconds = 1
		return nil, false, st
	}
	if err == nil && !opts.DryRun {
		s.noteWrite(out)
		journal.Wrote(ctx, obj.Metadata.Name, 0, out.Revision)
	}
	return out, false, s.statusErr(err, obj.Metadata.Name)
}

// prepareForCreate sets the metadata the server owns on a new object, as
// kube-apiserver's FillObjectMetaSystemFields does, and applies the
// type's defaults (custom resources' schemas: kube's decoder defaults a
// body before anything else sees it); with generic rules also
// generation and status.
func (s *Store) prepareForCreate(obj *api.Object, generic bool) {
	m := &obj.Metadata
	m.UID = uuid.NewString()
	m.CreationTimestamp = api.Now()
	m.SelfLink = ""
	m.DeletionTimestamp = nil
	m.DeletionGracePeriodSeconds = nil
	if !generic {
		if d, ok := s.t.Strategy.(Defaulter); ok {
			d.Default(obj)
		}
		return
	}
	m.Generation = 1
	if hasStatus(s.t.Strategy) {
		// Status belongs to controllers, written through /status; as in
		// kube-apiserver, a create through the main resource drops it.
		delete(obj.Fields, "status")
	}
	if d, ok := s.t.Strategy.(Defaulter); ok {
		d.Default(obj)
	}
}

// normalize lets the strategy rewrite an object into its stored form.
func (s *Store) normalize(obj *api.Object) error {
	if n, ok := s.t.Strategy.(Normalizer); ok {
		return n.Normalize(obj)
	}
	return nil
}

// validateCreate checks metadata and asks the strategy about the rest.
func (s *Store) validateCreate(obj *api.Object) field.ErrorList {
	errs := ValidateObjectMeta(&obj.Metadata, s.t.Namespaced, s.t.NameValidation)
	// As kube-apiserver for custom resources with a scale subresource:
	// the replica paths are checked on every write, not only via /scale.
	return append(errs, ValidateScale(s.t, obj)...)
}

// displayName is the name to report in errors about obj.
func displayName(obj *api.Object) string {
	if obj.Metadata.Name != "" {
		return obj.Metadata.Name
	}
	return obj.Metadata.GenerateName
}

// Kubernetes' alphabet for generated name suffixes: no vowels, so no words,
// and no look-alike characters.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

const (
	generatedSuffixLen     = 5
	maxGeneratedNameLength = 63 - generatedSuffixLen
)

// generatedName appends a random suffix to base, truncating base so the
// result stays within a DNS label.
func generatedName(base string) string {
	if len(base) > maxGeneratedNameLength {
		base = base[:maxGeneratedNameLength]
	}
	b := make([]byte, generatedSuffixLen)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(nameAlphabet))))
		if err != nil {
			panic(fmt.Sprintf("registry: crypto/rand failed: %v", err))
		}
		b[i] = nameAlphabet[n.Int64()]
	}
	return base + string(b)
}
