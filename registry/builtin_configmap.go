package registry

import (
	"bytes"
	"encoding/json"
	"maps"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxDataSize is Kubernetes' limit on the summed size of a ConfigMap's or
// Secret's values (core.MaxSecretSize), in bytes.
const maxDataSize = 1 << 20

// immutableMsg is kube-apiserver's detail for changes to an object whose
// `immutable` is set.
const immutableMsg = "field is immutable when `immutable` is set"

func configMapType() Type {
	return Type{
		Version:        "v1",
		Kind:           "ConfigMap",
		Plural:         "configmaps",
		Singular:       "configmap",
		ShortNames:     []string{"cm"},
		Namespaced:     true,
		PrinterColumns: []PrinterColumn{dataColumn, ageColumn},
		Schema:         configMapSchema(),
		Description:    configMapDescription,
		Strategy:       configMapStrategy{},
	}
}

// configMapFields is the part of a v1 ConfigMap beyond metadata.
type configMapFields struct {
	Data       map[string]string `json:"data"`
	BinaryData map[string][]byte `json:"binaryData"`
	Immutable  *bool             `json:"immutable"`
}

// configMapStrategy gives ConfigMaps kube-apiserver's decoding,
// validation and immutability rules.
type configMapStrategy struct{}

// Normalize refuses a body kube-apiserver could not decode (a non-string
// data value, bad base64 in binaryData) with its 400, drops unknown
// top-level fields, and stores binaryData as canonical base64 and empty
// maps and a null immutable as absent, as a round trip through the
// Kubernetes Go type does.
func (configMapStrategy) Normalize(obj *api.Object) error {
	var f configMapFields
	if err := decodeBuiltin(obj, "ConfigMap", "v1", &f); err != nil {
		return err
	}
	keepFields(obj, "data", "binaryData", "immutable")
	if err := setField(obj, "data", f.Data, len(f.Data) == 0); err != nil {
		return err
	}
	if err := setField(obj, "binaryData", f.BinaryData, len(f.BinaryData) == 0); err != nil {
		return err
	}
	return setField(obj, "immutable", f.Immutable, f.Immutable == nil)
}

// ValidateCreate checks keys and the total size.
func (configMapStrategy) ValidateCreate(obj *api.Object) field.ErrorList {
	var f configMapFields
	if errs := decodeForValidation(obj, &f); errs != nil {
		return errs
	}
	return validateConfigMap(&f)
}

// ValidateUpdate adds the immutability rules to ValidateCreate's.
func (s configMapStrategy) ValidateUpdate(obj, old *api.Object) field.ErrorList {
	var f, o configMapFields
	if errs := decodeForValidation(obj, &f); errs != nil {
		return errs
	}
	if errs := decodeForValidation(old, &o); errs != nil {
		return errs
	}
	var errs field.ErrorList
	if isTrue(o.Immutable) {
		if !isTrue(f.Immutable) {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableMsg))
		}
		// nil and empty compare equal: both are stored as absent.
		if !maps.Equal(f.Data, o.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableMsg))
		}
		if !maps.EqualFunc(f.BinaryData, o.BinaryData, bytes.Equal) {
			errs = append(errs, field.Forbidden(field.NewPath("binaryData"), immutableMsg))
		}
	}
	return append(errs, validateConfigMap(&f)...)
}

func validateConfigMap(f *configMapFields) field.ErrorList {
	var errs field.ErrorList
	total := 0
	dataPath, binPath := field.NewPath("data"), field.NewPath("binaryData")
	for k, v := range f.Data {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(dataPath.Key(k), k, msg))
		}
		if _, dup := f.BinaryData[k]; dup {
			errs = append(errs, field.Invalid(dataPath.Key(k), k, "duplicate of key present in binaryData"))
		}
		total += len(v)
	}
	for k, v := range f.BinaryData {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(binPath.Key(k), k, msg))
		}
		total += len(v)
	}
	if total > maxDataSize {
		// kube-apiserver reports the size against the whole object, a path
		// with an empty name that renders as "[]".
		errs = append(errs, field.TooLong(field.NewPath(""), "", maxDataSize))
	}
	return errs
}

// Secret types with server-side checks, and their well-known keys.
const (
	secretTypeOpaque              = "Opaque"
	secretTypeServiceAccountToken = "kubernetes.io/service-account-token"
	secretTypeDockercfg           = "kubernetes.io/dockercfg"
	secretTypeDockerConfigJSON    = "kubernetes.io/dockerconfigjson"
	secretTypeBasicAuth           = "kubernetes.io/basic-auth"
	secretTypeSSHAuth             = "kubernetes.io/ssh-auth"
	secretTypeTLS                 = "kubernetes.io/tls"

	serviceAccountNameKey = "kubernetes.io/service-account.name"
	dockercfgKey          = ".dockercfg"
	dockerConfigJSONKey   = ".dockerconfigjson"
	basicAuthUsernameKey  = "username"
	basicAuthPasswordKey  = "password"
	sshAuthPrivateKey     = "ssh-privatekey"
	tlsCertKey            = "tls.crt"
	tlsPrivateKeyKey      = "tls.key"
)

func secretType() Type {
	return Type{
		Version:          "v1",
		Kind:             "Secret",
		Plural:           "secrets",
		Singular:         "secret",
		Namespaced:       true,
		SelectableFields: []string{"type"},
		PrinterColumns: []PrinterColumn{
			{Name: "Type", Type: "string", JSONPath: ".type", Description: "The type of the secret"},
			dataColumn,
			ageColumn,
		},
		Schema:      secretSchema(),
		Description: secretDescription,
		Strategy:    secretStrategy{},
	}
}

// secretFields is the part of a v1 Secret beyond metadata. Data holds
// decoded bytes: the wire form is base64.
type secretFields struct {
	Data       map[string][]byte `json:"data"`
	StringData map[string]string `json:"stringData"`
	Type       *string           `json:"type"`
	Immutable  *bool             `json:"immutable"`
}

// typeOrDefault is the Secret's type with Kubernetes' default applied.
func (f *secretFields) typeOrDefault() string {
	if f.Type == nil || *f.Type == "" {
		return secretTypeOpaque
	}
	return *f.Type
}

// secretStrategy gives Secrets kube-apiserver's defaulting, stringData
// folding, validation and immutability rules.
type secretStrategy struct{}

// Default sets type to Opaque when it is unset or empty.
func (secretStrategy) Default(obj *api.Object) {
	if raw, ok := obj.Fields["type"]; ok && string(raw) != "null" && string(raw) != `""` {
		return
	}
	_ = setField(obj, "type", secretTypeOpaque, false)
}

// Normalize refuses a body kube-apiserver could not decode (data values
// that are not base64 strings, non-string stringData) with its 400,
// merges stringData into data as kube-apiserver's conversion does
// (stringData wins) and drops it, and stores data as canonical base64.
// Unknown top-level fields are dropped.
func (secretStrategy) Normalize(obj *api.Object) error {
	var f secretFields
	if err := decodeBuiltin(obj, "Secret", "v1", &f); err != nil {
		return err
	}
	keepFields(obj, "data", "type", "immutable")
	if len(f.StringData) > 0 && f.Data == nil {
		f.Data = make(map[string][]byte, len(f.StringData))
	}
	for k, v := range f.StringData {
		f.Data[k] = []byte(v)
	}
	if err := setField(obj, "data", f.Data, len(f.Data) == 0); err != nil {
		return err
	}
	if err := setField(obj, "type", f.Type, f.Type == nil || *f.Type == ""); err != nil {
		return err
	}
	return setField(obj, "immutable", f.Immutable, f.Immutable == nil)
}

// SelectableFieldValue reports "type" with its default, so type=Opaque
// also selects Secrets stored without a type.
func (secretStrategy) SelectableFieldValue(obj *api.Object, path string) (string, bool) {
	if path != "type" {
		return "", false
	}
	if t := stringField(obj, "type"); t != "" {
		return t, true
	}
	return secretTypeOpaque, true
}

// ValidateCreate checks keys, size and the keys each type requires.
func (secretStrategy) ValidateCreate(obj *api.Object) field.ErrorList {
	var f secretFields
	if errs := decodeForValidation(obj, &f); errs != nil {
		return errs
	}
	return validateSecret(obj, &f)
}

// ValidateUpdate adds the immutability of type and of an immutable
// Secret's data to ValidateCreate's checks.
func (secretStrategy) ValidateUpdate(obj, old *api.Object) field.ErrorList {
	var f, o secretFields
	if errs := decodeForValidation(obj, &f); errs != nil {
		return errs
	}
	if errs := decodeForValidation(old, &o); errs != nil {
		return errs
	}
	var errs field.ErrorList
	if t, ot := f.typeOrDefault(), o.typeOrDefault(); t != ot {
		errs = append(errs, field.Invalid(field.NewPath("type"), t, "field is immutable"))
	}
	if isTrue(o.Immutable) {
		if !isTrue(f.Immutable) {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableMsg))
		}
		if !maps.EqualFunc(f.Data, o.Data, bytes.Equal) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableMsg))
		}
	}
	return append(errs, validateSecret(obj, &f)...)
}

func validateSecret(obj *api.Object, f *secretFields) field.ErrorList {
	var errs field.ErrorList
	dataPath := field.NewPath("data")
	total := 0
	for k, v := range f.Data {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(dataPath.Key(k), k, msg))
		}
		total += len(v)
	}
	if total > maxDataSize {
		errs = append(errs, field.TooLong(dataPath, "", maxDataSize))
	}
	switch f.typeOrDefault() {
	case secretTypeServiceAccountToken:
		// Only the name is required: the uid and token are filled in
		// later by a controller.
		if obj.Metadata.Annotations[serviceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(serviceAccountNameKey), ""))
		}
	case secretTypeDockercfg:
		errs = append(errs, requireJSONKey(f.Data, dockercfgKey, dataPath)...)
	case secretTypeDockerConfigJSON:
		errs = append(errs, requireJSONKey(f.Data, dockerConfigJSONKey, dataPath)...)
	case secretTypeBasicAuth:
		// Either may be empty, but one must be present.
		_, hasUser := f.Data[basicAuthUsernameKey]
		_, hasPassword := f.Data[basicAuthPasswordKey]
		if !hasUser && !hasPassword {
			errs = append(errs,
				field.Required(dataPath.Key(basicAuthUsernameKey), ""),
				field.Required(dataPath.Key(basicAuthPasswordKey), ""))
		}
	case secretTypeSSHAuth:
		if len(f.Data[sshAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(dataPath.Key(sshAuthPrivateKey), ""))
		}
	case secretTypeTLS:
		if _, ok := f.Data[tlsCertKey]; !ok {
			errs = append(errs, field.Required(dataPath.Key(tlsCertKey), ""))
		}
		if _, ok := f.Data[tlsPrivateKeyKey]; !ok {
			errs = append(errs, field.Required(dataPath.Key(tlsPrivateKeyKey), ""))
		}
	}
	return errs
}

// requireJSONKey checks that data[key] exists and holds a JSON object, as
// the docker config Secret types require.
func requireJSONKey(data map[string][]byte, key string, dataPath *field.Path) field.ErrorList {
	v, ok := data[key]
	if !ok {
		return field.ErrorList{field.Required(dataPath.Key(key), "")}
	}
	if err := json.Unmarshal(v, &map[string]any{}); err != nil {
		return field.ErrorList{field.Invalid(dataPath.Key(key), "<secret contents redacted>", err.Error())}
	}
	return nil
}

func isTrue(b *bool) bool { return b != nil && *b }

// dataColumn counts a ConfigMap's or Secret's keys, as kubectl shows them
// (DATA); a JSONPath cannot count, so the strategies compute it.
var dataColumn = PrinterColumn{Name: "Data", Type: "integer", Description: "The number of keys in data (and binaryData)"}

// ComputeColumn counts data and binaryData keys for the Data column.
func (configMapStrategy) ComputeColumn(column string, obj map[string]any) (any, bool) {
	return countKeys(column, obj, "data", "binaryData")
}

// ComputeColumn counts data keys for the Data column.
func (secretStrategy) ComputeColumn(column string, obj map[string]any) (any, bool) {
	return countKeys(column, obj, "data")
}

// countKeys answers the Data column: the number of keys in the named
// top-level maps of obj.
func countKeys(column string, obj map[string]any, fields ...string) (any, bool) {
	if column != dataColumn.Name {
		return nil, false
	}
	n := 0
	for _, f := range fields {
		if m, ok := obj[f].(map[string]any); ok {
			n += len(m)
		}
	}
	return int64(n), true
}
