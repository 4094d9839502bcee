package apiextensions

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/miniapi/miniapi/registry"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/util/webhook"
)

// Printer column types and formats Kubernetes accepts, in the sorted
// order its messages list them.
var (
	columnTypes   = []string{"boolean", "date", "integer", "number", "string"}
	columnFormats = []string{"byte", "date", "date-time", "double", "float", "int32", "int64", "password"}
)

// ValidateCreate checks a new CRD as kube-apiserver does, with its field
// paths and messages. Metadata rules common to every object are the
// registry's; this adds the CRD's own name rule.
func ValidateCreate(crd *CRD) field.ErrorList {
	var errs field.ErrorList
	if want := crd.Spec.Names.Plural + "." + crd.Spec.Group; crd.Metadata.Name != want && crd.Metadata.Name != "" {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), crd.Metadata.Name, `must be spec.names.plural+"."+spec.group`))
	}
	// A new CRD may carry a caBundle that does not parse, as in kube: it
	// is not Established yet.
	errs = append(errs, validateSpec(&crd.Spec, field.NewPath("spec"), conversionRules{requireKnownReview: true, allowBadCABundle: true})...)
	errs = append(errs, validateStatus(crd, field.NewPath("status"))...)
	return errs
}

// ValidateUpdate checks a changed CRD: everything ValidateCreate checks
// but the name (immutable anyway), plus the fields that may not change.
func ValidateUpdate(crd, old *CRD) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateSpec(&crd.Spec, spec, conversionRulesFor(old))
	errs = append(errs, validateStatus(crd, field.NewPath("status"))...)
	if old.Status.IsTrue(Established) {
		errs = append(errs, immutable(crd.Spec.Scope, old.Spec.Scope, spec.Child("scope"))...)
		errs = append(errs, immutable(crd.Spec.Names.Kind, old.Spec.Names.Kind, spec.Child("names", "kind"))...)
	}
	errs = append(errs, immutable(crd.Spec.Group, old.Spec.Group, spec.Child("group"))...)
	errs = append(errs, immutable(crd.Spec.Names.Plural, old.Spec.Names.Plural, spec.Child("names", "plural"))...)
	return errs
}

func immutable(v, old string, p *field.Path) field.ErrorList {
	if v == old {
		return nil
	}
	return field.ErrorList{field.Invalid(p, v, "field is immutable")}
}

func validateSpec(spec *Spec, p *field.Path, conv conversionRules) field.ErrorList {
	var errs field.ErrorList
	switch {
	case spec.Group == "":
		errs = append(errs, field.Required(p.Child("group"), ""))
	case len(utilvalidation.IsDNS1123Subdomain(spec.Group)) > 0:
		errs = append(errs, field.Invalid(p.Child("group"), spec.Group, strings.Join(utilvalidation.IsDNS1123Subdomain(spec.Group), ",")))
	case !strings.Contains(spec.Group, "."):
		errs = append(errs, field.Invalid(p.Child("group"), spec.Group, "should be a domain with at least one dot"))
	}
	errs = append(errs, enum(p.Child("scope"), spec.Scope, []string{ClusterScoped, NamespaceScoped})...)

	storage := 0
	seen := map[string]bool{}
	unique := true
	versions := p.Child("versions")
	sh := sharedParts(spec.Versions)
	if len(spec.Versions) > 0 {
		v := &spec.Versions[0]
		if sh.schema {
			errs = append(errs, compileSchemaErrors(v.Schema.OpenAPIV3Schema, p.Child("validation", "openAPIV3Schema"), anyStatus(spec.Versions))...)
		}
		if sh.subresources {
			errs = append(errs, validateSubresources(v.Subresources, p.Child("subresources"))...)
		}
		if sh.columns {
			errs = append(errs, validateColumns(v.AdditionalPrinterColumns, p.Child("additionalPrinterColumns"))...)
		}
		if sh.selectable {
			errs = append(errs, validateSelectableFields(v, p.Child("selectableFields"))...)
		}
	}
	for i := range spec.Versions {
		v := &spec.Versions[i]
		vp := versions.Index(i)
		if v.Storage {
			storage++
		}
		if seen[v.Name] {
			unique = false
		}
		seen[v.Name] = true
		if e := utilvalidation.IsDNS1035Label(v.Name); len(e) > 0 {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, strings.Join(e, ",")))
		}
		errs = append(errs, validateVersion(v, vp, sh)...)
	}
	if len(spec.Versions) == 0 {
		errs = append(errs, field.Invalid(versions, spec.Versions, "must have exactly one version marked as storage version"))
	} else {
		if !unique {
			errs = append(errs, field.Invalid(versions, versionNames(spec.Versions), "must contain unique version names"))
		}
		if storage != 1 {
			errs = append(errs, field.Invalid(versions, versionNames(spec.Versions), "must have exactly one version marked as storage version"))
		}
	}

	names := p.Child("names")
	if spec.Names.Plural == "" {
		errs = append(errs, field.Required(names.Child("plural"), ""))
	}
	if spec.Names.Singular == "" {
		errs = append(errs, field.Required(names.Child("singular"), ""))
	}
	if spec.Names.Kind == "" {
		errs = append(errs, field.Required(names.Child("kind"), ""))
	}
	if spec.Names.ListKind == "" {
		errs = append(errs, field.Required(names.Child("listKind"), ""))
	}
	errs = append(errs, validateNames(&spec.Names, names)...)

	if c := spec.Conversion; c != nil && c.Strategy != NoneConverter && spec.PreserveUnknownFields {
		errs = append(errs, field.Invalid(p.Child("conversion", "strategy"), c.Strategy, "must be None if spec.preserveUnknownFields is true"))
	}
	return append(errs, validateConversion(spec.Conversion, p.Child("conversion"), conv)...)
}

// conversionRules are the checks of spec.conversion that depend on the
// CRD before an update, as kube-apiserver relaxes them so that a CRD
// stored under older rules can still be updated.
type conversionRules struct {
	// requireKnownReview: conversionReviewVersions must name one this
	// server speaks (unless the old CRD already named none).
	requireKnownReview bool
	// allowBadCABundle: a caBundle that does not parse is let through
	// (before the CRD is Established, or when the old one did not parse).
	allowBadCABundle bool
}

func conversionRulesFor(old *CRD) conversionRules {
	r := conversionRules{requireKnownReview: true, allowBadCABundle: !old.Status.IsTrue(Established)}
	c := old.Spec.Conversion
	if c == nil || c.Webhook == nil {
		return r
	}
	if vs := c.Webhook.ConversionReviewVersions; len(vs) > 0 && !slices.ContainsFunc(vs, knownReviewVersion) {
		r.requireKnownReview = false
	}
	if cc := c.Webhook.ClientConfig; !r.allowBadCABundle && cc != nil && len(cc.CABundle) > 0 {
		r.allowBadCABundle = len(webhook.ValidateCABundle(field.NewPath("caBundle"), cc.CABundle)) > 0
	}
	return r
}

// reviewVersions are the ConversionReview versions miniapi (kube's
// webhook converter) speaks, in the order kube's messages list them.
var reviewVersions = []string{"v1", "v1beta1"}

func knownReviewVersion(v string) bool { return slices.Contains(reviewVersions, v) }

// validateConversion checks spec.conversion with kube-apiserver's rules
// and field paths. kube reports the webhook's fields at the paths of its
// internal type (spec.conversion.webhookClientConfig,
// spec.conversion.conversionReviewVersions), and so does miniapi.
func validateConversion(c *Conversion, p *field.Path, rules conversionRules) field.ErrorList {
	if c == nil {
		return nil
	}
	errs := enum(p.Child("strategy"), string(c.Strategy), []string{NoneConverter, WebhookConverter})
	ccPath := p.Child("webhookClientConfig")
	var cc *apiextensionsv1.WebhookClientConfig
	var reviews []string
	if c.Webhook != nil {
		cc, reviews = c.Webhook.ClientConfig, c.Webhook.ConversionReviewVersions
	}
	if c.Strategy != WebhookConverter {
		if cc != nil {
			errs = append(errs, field.Forbidden(ccPath, "should not be set when strategy is not set to Webhook"))
		}
		if len(reviews) > 0 {
			errs = append(errs, field.Forbidden(p.Child("conversionReviewVersions"), "should not be set when strategy is not set to Webhook"))
		}
		return errs
	}
	switch {
	case cc == nil:
		errs = append(errs, field.Required(ccPath, "required when strategy is set to Webhook"))
	case (cc.URL == nil) == (cc.Service == nil):
		errs = append(errs, field.Required(ccPath, "exactly one of url or service is required"))
	case cc.URL != nil:
		errs = append(errs, webhook.ValidateWebhookURL(ccPath.Child("url"), *cc.URL, true)...)
	default:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		// kube-apiserver passes the name and namespace in this order
		// too, so a missing one is reported under the other's path.
		errs = append(errs, webhook.ValidateWebhookService(ccPath.Child("service"), cc.Service.Name, cc.Service.Namespace, cc.Service.Path, port)...)
	}
	if cc != nil && len(cc.CABundle) > 0 && !rules.allowBadCABundle {
		errs = append(errs, webhook.ValidateCABundle(ccPath.Child("caBundle"), cc.CABundle)...)
	}
	return append(errs, validateReviewVersions(reviews, rules.requireKnownReview, p.Child("conversionReviewVersions"))...)
}

func validateReviewVersions(vs []string, requireKnown bool, p *field.Path) field.ErrorList {
	if len(vs) == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, v := range vs {
		if seen[v] {
			errs = append(errs, field.Invalid(p.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, msg))
		}
	}
	if requireKnown && !slices.ContainsFunc(vs, knownReviewVersion) {
		errs = append(errs, field.Invalid(p, vs, "must include at least one of "+strings.Join(reviewVersions, ", ")))
	}
	return errs
}

// versionNames is how the versions are shown in a message about all of
// them.
func versionNames(vs []Version) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

// shared says which parts every version declares identically. kube-apiserver
// keeps such a part once, at the top of its internal spec, and reports
// errors in it at that path (spec.validation.openAPIV3Schema,
// spec.subresources, spec.additionalPrinterColumns, spec.selectableFields)
// rather than per version; miniapi reports them where kube does.
type shared struct {
	schema, subresources, columns, selectable bool
}

func sharedParts(vs []Version) shared {
	if len(vs) == 0 {
		return shared{}
	}
	sh := shared{
		schema:       hasSchema(&vs[0]),
		subresources: vs[0].Subresources != nil,
		columns:      len(vs[0].AdditionalPrinterColumns) > 0,
		selectable:   len(vs[0].SelectableFields) > 0,
	}
	first := vs[0]
	for _, v := range vs[1:] {
		sh.schema = sh.schema && hasSchema(&v) && jsonEqual(v.Schema.OpenAPIV3Schema, first.Schema.OpenAPIV3Schema)
		sh.subresources = sh.subresources && reflect.DeepEqual(normalized(v.Subresources), normalized(first.Subresources))
		sh.columns = sh.columns && reflect.DeepEqual(v.AdditionalPrinterColumns, first.AdditionalPrinterColumns)
		sh.selectable = sh.selectable && reflect.DeepEqual(v.SelectableFields, first.SelectableFields)
	}
	return sh
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// normalized is subresources in a form reflect.DeepEqual compares by
// value.
func normalized(s *Subresources) any {
	b, _ := json.Marshal(s)
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

func validateVersion(v *Version, p *field.Path, sh shared) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range deprecationWarningErrors(v.Deprecated, v.DeprecationWarning) {
		errs = append(errs, field.Invalid(p.Child("deprecationWarning"), v.DeprecationWarning, msg))
	}
	if !sh.schema {
		errs = append(errs, validateSchema(v, p.Child("schema"))...)
	}
	if !sh.subresources {
		errs = append(errs, validateSubresources(v.Subresources, p.Child("subresources"))...)
	}
	if !sh.columns {
		errs = append(errs, validateColumns(v.AdditionalPrinterColumns, p.Child("additionalPrinterColumns"))...)
	}
	if !sh.selectable {
		errs = append(errs, validateSelectableFields(v, p.Child("selectableFields"))...)
	}
	return errs
}

func validateSubresources(sub *Subresources, p *field.Path) field.ErrorList {
	if sub == nil || sub.Scale == nil {
		return nil
	}
	return validateScale(sub.Scale, p)
}

func validateColumns(cols []registry.PrinterColumn, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range cols {
		errs = append(errs, validateColumn(&cols[i], p.Index(i))...)
	}
	return errs
}

func validateSelectableFields(v *Version, p *field.Path) field.ErrorList {
	if len(v.SelectableFields) == 0 {
		return nil
	}
	var errs field.ErrorList
	if !hasSchema(v) {
		return field.ErrorList{field.Invalid(p, "", "may only be set when `version.schema.openAPIV3Schema` is not included")}
	}
	var root map[string]any
	_ = json.Unmarshal(v.Schema.OpenAPIV3Schema, &root) // a bad schema is reported on the schema
	seen := map[string]bool{}
	for i, f := range v.SelectableFields {
		fp := p.Index(i).Child("jsonPath")
		if f.JSONPath == "" {
			errs = append(errs, field.Required(fp, ""))
			continue
		}
		segs, typ, err := schemaField(root, f.JSONPath)
		if err != nil {
			errs = append(errs, field.Invalid(fp, f.JSONPath, "is an invalid path: "+err.Error()))
			continue
		}
		if segs[0] == "metadata" {
			errs = append(errs, field.Invalid(fp, f.JSONPath, "must not point to fields in metadata"))
		}
		if typ != "string" && typ != "boolean" && typ != "integer" {
			errs = append(errs, field.Invalid(fp, f.JSONPath, "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."))
		}
		key := strings.Join(segs, ".")
		if seen[key] {
			errs = append(errs, field.Duplicate(fp, f.JSONPath))
		}
		seen[key] = true
	}
	if len(seen) > maxSelectableFields {
		errs = append(errs, field.TooMany(p, len(seen), maxSelectableFields))
	}
	return errs
}

// schemaField follows a selectable field's path (".spec.color", in dot
// notation, without array indexes) through a schema's properties and
// additionalProperties, and returns its segments and the type of the
// field it names, as kube's field-path check for selectable fields.
func schemaField(root map[string]any, path string) ([]string, string, error) {
	if !strings.HasPrefix(path, ".") || len(path) == 1 {
		return nil, "", errors.New("expected [ or . at the start of the path")
	}
	segs := strings.Split(path[1:], ".")
	node := root
	for _, seg := range segs {
		if seg == "" || strings.ContainsAny(seg, "[]") {
			return nil, "", errors.New("does not refer to a valid field")
		}
		props, _ := node["properties"].(map[string]any)
		next, ok := props[seg].(map[string]any)
		if !ok {
			next, ok = node["additionalProperties"].(map[string]any)
		}
		if !ok {
			return nil, "", errors.New("does not refer to a valid field")
		}
		node = next
	}
	typ, _ := node["type"].(string)
	return segs, typ, nil
}

// maxSelectableFields is kube-apiserver's limit per version.
const maxSelectableFields = 8

func hasSchema(v *Version) bool {
	return v.Schema != nil && len(v.Schema.OpenAPIV3Schema) > 0 && string(v.Schema.OpenAPIV3Schema) != "null"
}

// validateSchema requires a schema object in every version. Checking that
// it is structural is the schema package's job; until it is wired in, the
// root must at least be an object schema.
func validateSchema(v *Version, p *field.Path) field.ErrorList {
	sp := p.Child("openAPIV3Schema")
	if !hasSchema(v) {
		return field.ErrorList{field.Required(sp, "")}
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(v.Schema.OpenAPIV3Schema, &root); err != nil {
		return field.ErrorList{field.Invalid(sp, "", "must be a JSON object")}
	}
	return compileSchemaErrors(v.Schema.OpenAPIV3Schema, sp, v.Subresources != nil && v.Subresources.Status != nil)
}

// anyStatus reports whether any version enables the status subresource:
// kube-apiserver restricts a schema shared by all versions if so.
func anyStatus(vs []Version) bool {
	for _, v := range vs {
		if v.Subresources != nil && v.Subresources.Status != nil {
			return true
		}
	}
	return false
}

func validateScale(s *Scale, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(path string, fp *field.Path, under ...string) {
		if path == "" {
			errs = append(errs, field.Required(fp, ""))
			return
		}
		if e := simpleJSONPath(path, fp); len(e) > 0 {
			errs = append(errs, e...)
			return
		}
		for _, u := range under {
			if strings.HasPrefix(path, u+".") {
				return
			}
		}
		if len(under) == 1 {
			errs = append(errs, field.Invalid(fp, path, "should be a json path under "+under[0]))
		} else {
			errs = append(errs, field.Invalid(fp, path, "should be a json path under either .spec or .status"))
		}
	}
	check(s.SpecReplicasPath, p.Child("scale.specReplicasPath"), ".spec")
	check(s.StatusReplicasPath, p.Child("scale.statusReplicasPath"), ".status")
	if s.LabelSelectorPath != nil && *s.LabelSelectorPath != "" {
		check(*s.LabelSelectorPath, p.Child("scale.labelSelectorPath"), ".spec", ".status")
	}
	return errs
}

func simpleJSONPath(s string, p *field.Path) field.ErrorList {
	switch {
	case s == "":
		return field.ErrorList{field.Invalid(p, s, "must not be empty")}
	case s[0] != '.':
		return field.ErrorList{field.Invalid(p, s, "must be a simple json path starting with .")}
	}
	return nil
}

func validateColumn(c *registry.PrinterColumn, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	types := "must be one of " + strings.Join(columnTypes, ",")
	switch {
	case c.Type == "":
		errs = append(errs, field.Required(p.Child("type"), types))
	case !slices.Contains(columnTypes, c.Type):
		errs = append(errs, field.Invalid(p.Child("type"), c.Type, types))
	}
	if c.Format != "" && !slices.Contains(columnFormats, c.Format) {
		errs = append(errs, field.Invalid(p.Child("format"), c.Format, "must be one of "+strings.Join(columnFormats, ",")))
	}
	if c.JSONPath == "" {
		errs = append(errs, field.Required(p.Child("JSONPath"), ""))
	} else {
		errs = append(errs, simpleJSONPath(c.JSONPath, p.Child("JSONPath"))...)
	}
	return errs
}

func validateNames(n *Names, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	label := func(v string, fp *field.Path, prefix string) {
		if v == "" {
			return
		}
		if e := utilvalidation.IsDNS1035Label(v); len(e) > 0 {
			errs = append(errs, field.Invalid(fp, v, prefix+strings.Join(e, ",")))
		}
	}
	label(n.Plural, p.Child("plural"), "")
	label(n.Singular, p.Child("singular"), "")
	if n.Kind != "" {
		if e := utilvalidation.IsDNS1035Label(strings.ToLower(n.Kind)); len(e) > 0 {
			errs = append(errs, field.Invalid(p.Child("kind"), n.Kind, "may have mixed case, but should otherwise match: "+strings.Join(e, ",")))
		}
	}
	if n.ListKind != "" {
		if e := utilvalidation.IsDNS1035Label(strings.ToLower(n.ListKind)); len(e) > 0 {
			errs = append(errs, field.Invalid(p.Child("listKind"), n.ListKind, "may have mixed case, but should otherwise match: "+strings.Join(e, ",")))
		}
	}
	for i, s := range n.ShortNames {
		if e := utilvalidation.IsDNS1035Label(s); len(e) > 0 {
			errs = append(errs, field.Invalid(p.Child("shortNames").Index(i), s, strings.Join(e, ",")))
		}
	}
	if n.Kind != "" && n.Kind == n.ListKind {
		errs = append(errs, field.Invalid(p.Child("listKind"), n.ListKind, "kind and listKind may not be the same"))
	}
	for i, c := range n.Categories {
		if e := utilvalidation.IsDNS1035Label(c); len(e) > 0 {
			errs = append(errs, field.Invalid(p.Child("categories").Index(i), c, strings.Join(e, ",")))
		}
	}
	return errs
}

func validateStatus(crd *CRD, p *field.Path) field.ErrorList {
	errs := validateNames(&crd.Status.AcceptedNames, p.Child("acceptedNames"))
	sv := p.Child("storedVersions")
	stored := crd.Status.StoredVersions
	if len(stored) == 0 {
		return append(errs, field.Invalid(sv, stored, "must have at least one stored version"))
	}
	left := map[string]int{}
	for i, v := range stored {
		left[v] = i
	}
	for _, v := range crd.Spec.Versions {
		_, ok := left[v.Name]
		if v.Storage && !ok {
			errs = append(errs, field.Invalid(sv, stored, "must have the storage version "+v.Name))
		}
		delete(left, v.Name)
	}
	for i, v := range stored {
		if _, ok := left[v]; ok {
			errs = append(errs, field.Invalid(sv.Index(i), v, fmt.Sprintf("missing from spec.versions; %[1]s was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in %[1]s and removes %[1]s from status.storedVersions", v)))
		}
	}
	return errs
}

func deprecationWarningErrors(deprecated bool, w *string) []string {
	if !deprecated && w != nil {
		return []string{"can only be set for deprecated versions"}
	}
	if w == nil {
		return nil
	}
	var out []string
	if len(*w) > 256 {
		out = append(out, "must be <= 256 characters long")
	}
	if len(*w) == 0 {
		out = append(out, "must not be an empty string")
	}
	for i, r := range *w {
		if !unicode.IsPrint(r) {
			out = append(out, fmt.Sprintf("must only contain printable UTF-8 characters; non-printable character found at index %d", i))
			break
		}
	}
	if !utf8.ValidString(*w) {
		out = append(out, "must only contain printable UTF-8 characters")
	}
	return out
}

func enum(p *field.Path, v string, accepted []string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if slices.Contains(accepted, v) {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, v, accepted)}
}
