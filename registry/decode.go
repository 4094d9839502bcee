package registry

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/runtime"
)

// decodeBody turns the JSON of an object a client sent into the object
// to write, applying the fieldValidation directive to the fields it does
// not know and to duplicates: the kind's own decoder (Decoder) for the
// built-in kinds, else the type's schema. bodyErrs are problems of the
// body's original encoding (duplicate keys in YAML) that a strict
// decoder reports with the others.
func (s *Store) decodeBody(ctx context.Context, data []byte, directive string, bodyErrs []string) (*api.Object, error) {
	if d, ok := s.t.Strategy.(Decoder); ok {
		obj, strict, err := d.Decode(data)
		if err != nil {
			return nil, err
		}
		if err := s.applyDirective(ctx, directive, append(bodyErrs, strict...)); err != nil {
			return nil, err
		}
		return obj, nil
	}
	if err := s.bodyTypeMeta(data); err != nil {
		return nil, err
	}
	pruned, err := s.CheckFields(ctx, data, directive, bodyErrs)
	if err != nil {
		return nil, err
	}
	if pruned != nil {
		data = pruned
	}
	return decodeJSONObject(data)
}

// bodyTypeMeta refuses a body without kind or apiVersion when the type's
// rules judge them (TypeMetaValidator: custom resources), as
// kube-apiserver's decoder of custom resources (unstructured JSON) and
// its handler word it; other types take the URL's.
func (s *Store) bodyTypeMeta(data []byte) error {
	if _, ok := s.t.Strategy.(TypeMetaValidator); !ok {
		return nil
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if json.Unmarshal(data, &tm) != nil {
		return nil // decodeJSONObject says what is wrong with it
	}
	switch {
	case tm.Kind == "":
		return api.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)",
			s.t.Kind, runtime.NewMissingKindErr(string(data)), api.SummarizeBody(data)))
	case tm.APIVersion == "":
		return api.NewBadRequest(fmt.Sprintf("the API version in the data () does not match the expected API version (%s)", s.t.APIVersion()))
	}
	return nil
}

// applyDirective acts on what a strict decoder found in a body as the
// fieldValidation directive asks: Strict refuses the body with
// kube-apiserver's 400, Warn turns each problem into a warning, Ignore
// drops them.
func (s *Store) applyDirective(ctx context.Context, directive string, strict []string) error {
	if len(strict) == 0 {
		return nil
	}
	switch directive {
	case FieldValidationStrict:
		return api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s",
			s.t.Kind, s.t.Version, s.t.Kind, strictDecodingError(strict)))
	case FieldValidationIgnore:
	default:
		warnAll(ctx, strict)
	}
	return nil
}

// decodeJSONObject decodes a request's object generically; a body that is
// not one is 400 with a readable reason.
func decodeJSONObject(data []byte) (*api.Object, error) {
	var obj api.Object
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, api.NewBadRequest(fmt.Sprintf("the body is not a valid object: %v", api.DescribeJSONError(err)))
	}
	return &obj, nil
}

// CreateObject creates obj as a client sending it would: encoded, then
// decoded as every request body is, so a built-in kind gets its defaults.
// It serves writers inside the server (system namespaces, controllers).
func (s *Store) CreateObject(ctx context.Context, ns string, obj *api.Object, opts CreateOptions) (*storage.Object, error) {
	data, err := encode(obj)
	if err != nil {
		return nil, err
	}
	return s.Create(ctx, ns, data, opts)
}

// UpdateObject is CreateObject's counterpart for Update.
func (s *Store) UpdateObject(ctx context.Context, ns, name string, obj *api.Object, opts UpdateOptions) (*storage.Object, error) {
	data, err := encode(obj)
	if err != nil {
		return nil, err
	}
	return s.Update(ctx, ns, name, data, opts)
}
