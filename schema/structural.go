package schema

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Cost limits kube-apiserver applies to a CRD's rules when it is written
// (k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation).
const (
	// StaticEstimatedCostLimit is the largest estimated cost of one rule
	// or messageExpression, multiplied by how often it can run.
	StaticEstimatedCostLimit = 10000000
	// StaticEstimatedCRDCostLimit is the largest estimated cost of all the
	// rules of one schema together.
	StaticEstimatedCRDCostLimit = 100000000
)

// openAPIV3Types are the values of type a CRD schema may use.
var openAPIV3Types = []string{"array", "boolean", "integer", "number", "object", "string"}

// ValidateStructural reports what kube-apiserver refuses in a CRD
// version's schema, with paths under base (for a CRD,
// spec.versions[i].schema.openAPIV3Schema): keywords a CRD schema may
// not use ($ref, uniqueItems, additionalProperties beside properties,
// ...), the structural-schema rules (every field typed, no type or
// properties only inside allOf/anyOf/oneOf/not, metadata only name and
// generateName, ...), defaults that do not validate against their own
// schema, and CEL rules that do not compile or whose estimated cost is
// over kube's limits. An empty list means a CRD may use the schema.
func (s *Schema) ValidateStructural(base *field.Path) field.ErrorList {
	errs := specStandard(s.props, base, true)
	if len(errs) > 0 {
		// As kube-apiserver: structural errors overlap with these, so they
		// are shown only once these are fixed.
		return errs
	}
	ss, err := structuralschema.NewStructural(s.props)
	if err != nil {
		return field.ErrorList{field.Invalid(base, "", err.Error())}
	}
	if errs := structuralschema.ValidateStructural(base, ss); len(errs) > 0 {
		return errs
	}
	if derrs, err := defaulting.ValidateDefaults(context.Background(), base, ss, true, true); err != nil {
		errs = append(errs, field.InternalError(base, err))
	} else {
		errs = append(errs, derrs...)
	}
	c := &celCheck{}
	one := uint64(1)
	c.walk(ss, base, true, nil, &one, nil)
	errs = append(errs, c.errs...)
	if c.total > StaticEstimatedCRDCostLimit {
		for _, e := range c.expensive {
			errs = append(errs, field.Forbidden(e.path, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"))
		}
		errs = append(errs, field.Forbidden(base, costErrorMessage("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", c.total, StaticEstimatedCRDCostLimit)))
	}
	return errs
}

// specStandard checks the keywords kube-apiserver forbids or restricts
// in CRD schemas, before the structural rules.
func specStandard(p *apiextensions.JSONSchemaProps, pth *field.Path, root bool) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	if root && p.Nullable {
		errs = append(errs, field.Forbidden(pth.Child("nullable"), "nullable cannot be true at the root"))
	}
	if p.Type == "null" {
		errs = append(errs, field.Forbidden(pth.Child("type"), "type cannot be set to null, use nullable as an alternative"))
	} else if p.Type != "" && !slices.Contains(openAPIV3Types, p.Type) {
		errs = append(errs, field.NotSupported(pth.Child("type"), p.Type, openAPIV3Types))
	}
	if p.UniqueItems {
		errs = append(errs, field.Forbidden(pth.Child("uniqueItems"), "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
	}
	if p.AdditionalProperties != nil && len(p.Properties) != 0 && (!p.AdditionalProperties.Allows || p.AdditionalProperties.Schema != nil) {
		errs = append(errs, field.Forbidden(pth.Child("additionalProperties"), "additionalProperties and properties are mutual exclusive"))
	}
	forbidden := []struct {
		set  bool
		name string
	}{
		{p.ID != "", "id"},
		{p.AdditionalItems != nil, "additionalItems"},
		{len(p.PatternProperties) != 0, "patternProperties"},
		{len(p.Definitions) != 0, "definitions"},
		{len(p.Dependencies) != 0, "dependencies"},
		{p.Ref != nil, "$ref"},
	}
	for _, f := range forbidden {
		if f.set {
			errs = append(errs, field.Forbidden(pth.Child(f.name), f.name+" is not supported"))
		}
	}
	if p.Items != nil && len(p.Items.JSONSchemas) != 0 {
		errs = append(errs, field.Forbidden(pth.Child("items"), "items must be a schema object and not an array"))
	}
	if p.XListType != nil && (*p.XListType == "set" || *p.XListType == "map") && p.Items != nil && p.Items.Schema != nil {
		if p.Items.Schema.Nullable {
			errs = append(errs, field.Forbidden(pth.Child("items", "nullable"), "cannot be nullable when x-kubernetes-list-type is "+*p.XListType))
		}
		if *p.XListType == "map" {
			required := map[string]bool{}
			for _, r := range p.Items.Schema.Required {
				required[r] = true
			}
			for _, k := range p.XListMapKeys {
				kp, ok := p.Items.Schema.Properties[k]
				if !ok {
					continue
				}
				if !required[k] && kp.Default == nil {
					errs = append(errs, field.Required(pth.Child("items", "properties").Key(k).Child("default"), "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"))
				}
				if kp.Nullable {
					errs = append(errs, field.Forbidden(pth.Child("items", "properties").Key(k).Child("nullable"), "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Properties)) {
		v := p.Properties[k]
		errs = append(errs, specStandard(&v, pth.Child("properties").Key(k), false)...)
	}
	if p.AdditionalProperties != nil {
		errs = append(errs, specStandard(p.AdditionalProperties.Schema, pth.Child("additionalProperties"), false)...)
	}
	if p.Items != nil {
		errs = append(errs, specStandard(p.Items.Schema, pth.Child("items"), false)...)
	}
	for kw, list := range map[string][]apiextensions.JSONSchemaProps{"allOf": p.AllOf, "anyOf": p.AnyOf, "oneOf": p.OneOf} {
		for i := range list {
			errs = append(errs, specStandard(&list[i], pth.Child(kw).Index(i), false)...)
		}
	}
	if p.Not != nil {
		errs = append(errs, specStandard(p.Not, pth.Child("not"), false)...)
	}
	return errs
}

// celCheck compiles every x-kubernetes-validations rule of a schema and
// estimates its cost, as kube-apiserver does when a CRD is written.
type celCheck struct {
	errs      field.ErrorList
	total     uint64
	expensive []ruleCost
	envSet    *environment.EnvSet
}

type ruleCost struct {
	path *field.Path
	cost uint64
}

// walk checks node s at pth. declType is the CEL type of s when a rule
// above s gave it one (nil otherwise); cardinality is how many times s
// can occur in one object, nil when unbounded. uncorrelatable is the
// highest ancestor whose old and new values cannot be paired up (a list
// that is not x-kubernetes-list-type map), nil when none: rules below it
// may not use oldSelf.
func (c *celCheck) walk(s *structuralschema.Structural, pth *field.Path, root bool, declType *apiservercel.DeclType, cardinality *uint64, uncorrelatable *field.Path) {
	if s == nil {
		return
	}
	if declType == nil && len(s.XValidations) > 0 {
		declType = model.SchemaDeclType(s, root || s.XEmbeddedResource)
	}
	if len(s.XValidations) > 0 {
		c.compile(s, pth, declType, cardinality, uncorrelatable)
	}
	propsUncorrelatable := uncorrelatable
	if propsUncorrelatable == nil && !cel.MapIsCorrelatable(s.XMapType) {
		propsUncorrelatable = pth
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		prop := s.Properties[k]
		var child *apiservercel.DeclType
		if declType != nil {
			if name, ok := apiservercel.Escape(k); ok {
				if f, ok := declType.Fields[name]; ok {
					child = f.Type
				}
			}
		}
		c.walk(&prop, pth.Child("properties").Key(k), false, child, childCardinality(s, cardinality), propsUncorrelatable)
	}
	var elem *apiservercel.DeclType
	if declType != nil {
		elem = declType.ElemType
	}
	if s.Items != nil {
		// Only map lists pair old and new items (by key); kube does not
		// correlate set or atomic list items for rules.
		itemsUncorrelatable := uncorrelatable
		if itemsUncorrelatable == nil && (s.XListType == nil || *s.XListType != "map") {
			itemsUncorrelatable = pth
		}
		c.walk(s.Items, pth.Child("items"), false, elem, childCardinality(s, cardinality), itemsUncorrelatable)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		c.walk(s.AdditionalProperties.Structural, pth.Child("additionalProperties"), false, elem, childCardinality(s, cardinality), uncorrelatable)
	}
}

// compile compiles the rules of s and reports errors and costs.
func (c *celCheck) compile(s *structuralschema.Structural, pth *field.Path, declType *apiservercel.DeclType, cardinality *uint64, uncorrelatable *field.Path) {
	rules := pth.Child("x-kubernetes-validations")
	if declType == nil {
		c.errs = append(c.errs, field.InternalError(rules, fmt.Errorf("internal error: failed to retrieve type information for x-kubernetes-validations")))
		return
	}
	if c.envSet == nil {
		c.envSet = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	}
	results, err := cel.Compile(s, declType, celconfig.PerCallLimit, c.envSet, cel.NewExpressionsEnvLoader())
	if err != nil {
		c.errs = append(c.errs, field.InternalError(rules, err))
		return
	}
	for i, cr := range results {
		rule := rules.Index(i)
		cost := mulGuard(cr.MaxCost, cr.MaxCardinality)
		if cardinality != nil {
			cost = mulGuard(cr.MaxCost, *cardinality)
		}
		if cost > StaticEstimatedCostLimit {
			c.errs = append(c.errs, field.Forbidden(rule.Child("rule"), costErrorMessage("estimated rule cost", cost, StaticEstimatedCostLimit)))
		}
		c.observe(rule.Child("rule"), cost)
		if cr.Error != nil {
			if cr.Error.Type == apiservercel.ErrorTypeRequired {
				c.errs = append(c.errs, field.Required(rule.Child("rule"), cr.Error.Detail))
			} else {
				c.errs = append(c.errs, field.Invalid(rule.Child("rule"), s.XValidations[i], cr.Error.Detail))
			}
		}
		if cr.MessageExpressionError != nil {
			c.errs = append(c.errs, field.Invalid(rule.Child("messageExpression"), s.XValidations[i], cr.MessageExpressionError.Detail))
		} else if cr.MessageExpression != nil {
			if cr.MessageExpressionMaxCost > StaticEstimatedCostLimit {
				c.errs = append(c.errs, field.Forbidden(rule.Child("messageExpression"), costErrorMessage("estimated messageExpression cost", cr.MessageExpressionMaxCost, StaticEstimatedCostLimit)))
			}
			c.observe(rule.Child("messageExpression"), cr.MessageExpressionMaxCost)
		}
		if cr.UsesOldSelf && uncorrelatable != nil {
			c.errs = append(c.errs, field.Invalid(rule.Child("rule"), s.XValidations[i].Rule, fmt.Sprintf("oldSelf cannot be used on the uncorrelatable portion of the schema within %v", uncorrelatable)))
		}
		if !cr.UsesOldSelf && s.XValidations[i].OptionalOldSelf != nil {
			c.errs = append(c.errs, field.Invalid(rule.Child("optionalOldSelf"), *s.XValidations[i].OptionalOldSelf, "may not be set if oldSelf is not used in rule"))
		}
	}
}

// observe adds a rule's cost to the schema's total, remembering the four
// most expensive rules (those over 1% of the limit) to name them.
func (c *celCheck) observe(pth *field.Path, cost uint64) {
	if math.MaxUint64-c.total < cost {
		c.total = math.MaxUint64
	} else {
		c.total += cost
	}
	if cost < StaticEstimatedCRDCostLimit/100 {
		return
	}
	c.expensive = append(c.expensive, ruleCost{pth, cost})
	sort.SliceStable(c.expensive, func(i, j int) bool { return c.expensive[i].cost > c.expensive[j].cost })
	if len(c.expensive) > 4 {
		c.expensive = c.expensive[:4]
	}
}

// childCardinality is how often a child of s can occur, given that s
// occurs at most parent times (nil: unbounded).
func childCardinality(s *structuralschema.Structural, parent *uint64) *uint64 {
	if parent == nil {
		return nil
	}
	n := uint64(1)
	switch {
	case s.Type == "array":
		if s.ValueValidation == nil || s.ValueValidation.MaxItems == nil {
			return nil
		}
		n = uint64(max(*s.ValueValidation.MaxItems, 0))
	case s.Type == "object" && s.AdditionalProperties != nil:
		if s.ValueValidation == nil || s.ValueValidation.MaxProperties == nil {
			return nil
		}
		n = uint64(max(*s.ValueValidation.MaxProperties, 0))
	}
	r := mulGuard(*parent, n)
	return &r
}

// mulGuard multiplies, saturating at math.MaxUint64.
func mulGuard(a, b uint64) uint64 {
	if a == 0 {
		return 0
	}
	if math.MaxUint64/a < b {
		return math.MaxUint64
	}
	return a * b
}

// costErrorMessage words a cost over its limit as kube-apiserver does.
func costErrorMessage(name string, cost, limit uint64) string {
	f := float64(cost) / float64(limit)
	var factor string
	switch {
	case f > 100:
		factor = "more than 100x"
	case f < 1.5:
		factor = fmt.Sprintf("%fx", f)
	default:
		factor = fmt.Sprintf("%.1fx", f)
	}
	return fmt.Sprintf("%s exceeds budget by factor of %s (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)", name, factor)
}
