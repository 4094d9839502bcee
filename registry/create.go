package registry

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"

	"github.com/google/uuid"
	"github.com/miniapi/miniapi/api"
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

	// fieldsRecorded marks an object whose managedFields the caller has
	// computed (an apply that creates): Create records nothing more.
	fieldsRecorded bool
}

// generateNameAttempts bounds retries when a generated name collides.
const generateNameAttempts = 8

// Create stores a new object in namespace ns (ignored for cluster-scoped
// types) and returns it as stored.
func (s *Store) Create(ctx context.Context, ns string, obj *api.Object, opts CreateOptions) (*storage.Object, error) {
	if s.t.CreatesRefused {
		gr := s.t.GroupResource()
		return nil, &api.StatusError{ErrStatus: api.Status{
			Status: api.StatusFailure, Code: http.StatusMethodNotAllowed, Reason: api.ReasonMethodNotAllowed,
			Message: "create not allowed while custom resource definition is terminating",
			Details: &api.StatusDetails{Group: gr.Group, Kind: gr.Resource},
		}}
	}
	ns = s.namespaceOf(ns)
	if err := s.checkTypeMeta(obj); err != nil {
		return nil, err
	}
	if err := s.checkNamespace(obj, ns); err != nil {
		return nil, err
	}
	if obj.Metadata.ResourceVersion != "" {
		return nil, api.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	s.prepareForCreate(obj)
	if err := s.normalize(obj); err != nil {
		return nil, err
	}
	if !opts.fieldsRecorded {
		var err error
		if obj, err = s.recordUpdate(nil, obj, opts.FieldManager, ""); err != nil {
			return nil, err
		}
	}
	if p, ok := s.t.Strategy.(CreatePreparer); ok {
		p.PrepareForCreate(obj)
	}
	// Validate with a placeholder name when one will be generated, so a bad
	// generateName is reported once, on generateName.
	if errs := s.validateCreate(obj); len(errs) > 0 {
		return nil, api.NewInvalid(s.t.GroupKind(), displayName(obj), errs)
	}
	if s.t.Namespaced {
		if err := s.checkNamespaceWritable(ctx, ns); err != nil {
			return nil, err
		}
	}
	generate := obj.Metadata.Name == ""
	for attempt := 0; ; attempt++ {
		if generate {
			obj.Metadata.Name = generatedName(obj.Metadata.GenerateName)
			if c, ok := s.t.Strategy.(Canonicalizer); ok {
				c.Canonicalize(obj)
			}
		}
		data, err := encode(obj)
		if err != nil {
			return nil, err
		}
		if opts.DryRun {
			return &storage.Object{Key: s.keys.Key(ns, obj.Metadata.Name), Data: data}, nil
		}
		out, err := s.storage.Create(ctx, s.keys.Key(ns, obj.Metadata.Name), data)
		if generate && storage.IsExists(err) && attempt+1 < generateNameAttempts {
			continue
		}
		if generate && storage.IsExists(err) {
			return nil, api.NewTimeout(fmt.Sprintf("could not generate a unique name for %s with generateName %q", s.t.GroupResource(), obj.Metadata.GenerateName), 1)
		}
		return out, s.statusErr(err, obj.Metadata.Name)
	}
}

// prepareForCreate sets the metadata the server owns on a new object.
func (s *Store) prepareForCreate(obj *api.Object) {
	m := &obj.Metadata
	m.UID = uuid.NewString()
	m.CreationTimestamp = api.Now()
	m.Generation = 1
	if _, ok := s.t.Strategy.(Generationless); ok {
		m.Generation = 0
	}
	m.SelfLink = ""
	m.DeletionTimestamp = nil
	m.DeletionGracePeriodSeconds = nil
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
	if v, ok := s.t.Strategy.(CreateValidator); ok {
		errs = append(errs, v.ValidateCreate(obj)...)
	}
	// As kube-apiserver for custom resources with a scale subresource:
	// the replica paths are checked on every write, not only via /scale.
	return append(errs, ValidateScale(s.t, obj)...)
}

// checkNamespaceWritable refuses writes into a namespace that does not
// exist or is being deleted, as kube-apiserver's admission does.
func (s *Store) checkNamespaceWritable(ctx context.Context, ns string) error {
	nsStore, ok := s.reg.namespaceStore()
	if !ok || nsStore == s {
		return nil
	}
	// As kube-apiserver's NamespaceLifecycle admission: look in the cache
	// first ("0" accepts any cached state) and only on a miss ask etcd, so
	// a namespace created a moment ago is found while most creates cost no
	// etcd read.
	data, err := nsStore.Get(ctx, "", ns, "0")
	if api.IsNotFound(err) {
		data, err = nsStore.Get(ctx, "", ns, "")
	}
	if err != nil {
		return err
	}
	var meta struct {
		Metadata struct {
			DeletionTimestamp *api.Time `json:"deletionTimestamp"`
		} `json:"metadata"`
		Status struct {
			Phase string `json:"phase"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data.Data, &meta); err != nil {
		return fmt.Errorf("registry: decode namespace %q: %w", ns, err)
	}
	if meta.Metadata.DeletionTimestamp != nil || meta.Status.Phase == "Terminating" {
		return api.NewForbidden(s.t.GroupResource(), "",
			fmt.Sprintf("unable to create new content in namespace %s because it is being terminated", ns))
	}
	return nil
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
