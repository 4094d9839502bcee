package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Field validation directives: the values of the fieldValidation query
// parameter of create, update and patch. kube-apiserver treats an absent
// parameter as Warn, and so does miniapi.
const (
	// FieldValidationIgnore drops unknown fields silently and keeps the
	// last of duplicate fields.
	FieldValidationIgnore = "Ignore"
	// FieldValidationWarn does what Ignore does and reports each unknown
	// or duplicate field in a Warning header.
	FieldValidationWarn = "Warn"
	// FieldValidationStrict refuses a request with any unknown or
	// duplicate field.
	FieldValidationStrict = "Strict"
)

// CheckFields applies a fieldValidation directive to data, the JSON of an
// object of this type as a client sent it in a create or an update. A
// field is unknown when the type's schema does not declare it (types
// without a schema declare every field); a duplicate is a key repeated in
// one JSON object. strictErrs are problems the caller found in the body's
// original encoding (duplicate keys in YAML), reported with the others.
//
// Strict refuses any of them with 400 BadRequest worded as
// kube-apiserver's strict decoder words it; Warn reports each as a
// warning on ctx (api.AddWarning). Unless it refuses, CheckFields returns
// the JSON as kube-apiserver would store it, without the unknown fields
// and with the last of any duplicates, or nil when that is data itself.
func (s *Store) CheckFields(ctx context.Context, data []byte, directive string, strictErrs []string) ([]byte, error) {
	root := s.fieldSchema()
	if directive == FieldValidationIgnore && root == nil {
		// Nothing can be unknown, and readers of the stored JSON keep the
		// last of duplicate fields, as kube-apiserver stores them.
		return nil, nil
	}
	r, err := scanFields(data, root, true)
	if err != nil {
		_, derr := decodeJSONObject(data)
		return nil, unscannable(data, err, derr, api.NewBadRequest("the body is not a valid object: null"))
	}
	errs := append(append([]string(nil), strictErrs...), r.errs...)
	if len(errs) == 0 {
		return nil, nil
	}
	// The scanner reads only what the schema leads it to and may pass
	// over a syntax error after the fields it reports: a body that does
	// not decode is answered as kube's decoder answers it (400), before
	// any field is judged or pruned.
	if _, derr := decodeJSONObject(data); derr != nil {
		return nil, derr
	}
	switch directive {
	case FieldValidationStrict:
		return nil, api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s",
			s.t.Kind, s.t.Version, s.t.Kind, strictDecodingError(errs)))
	case FieldValidationIgnore:
	default:
		warnAll(ctx, errs)
	}
	if !r.needsRewrite() {
		return nil, nil
	}
	return r.rewrite(data)
}

// unscannable is the answer to a document the field scanner could not
// read. The scanner reads JSON objects, but a client may send anything:
// what decoding the document reports (decodeErr, a 400) when that fails
// too, else nullErr for null, the one other value that decodes into a
// struct. Any other failure is the scanner's own, scanErr (a 500).
func unscannable(data []byte, scanErr, decodeErr, nullErr error) error {
	switch {
	case decodeErr != nil:
		return decodeErr
	case string(bytes.TrimSpace(data)) == "null":
		return nullErr
	}
	return scanErr
}

// patchFieldCheck returns the field check Patch applies to each patched
// object, as kube-apiserver does: the patch itself must have no duplicate
// fields (nor unknown fields in the operations of a JSON patch), the
// patched object no unknown fields. The check returns the patched object
// as it should be stored (nil: unchanged). Problems with the patch are
// found once, here; rejection is a 422 naming the patch, as kube-apiserver
// answers it.
func (s *Store) patchFieldCheck(patchType string, patch []byte, directive string) func(ctx context.Context, patched []byte) ([]byte, error) {
	if directive == FieldValidationIgnore && s.fieldSchema() == nil {
		return func(context.Context, []byte) ([]byte, error) { return nil, nil }
	}
	patchErrs := patchStrictErrors(patchType, patch, directive)
	return func(ctx context.Context, patched []byte) ([]byte, error) {
		r, err := scanFields(patched, s.fieldSchema(), true)
		if err != nil {
			// A JSON patch may replace the whole document with what is
			// not an object.
			var derr error
			if jerr := json.Unmarshal(patched, new(api.Object)); jerr != nil {
				derr = api.NewBadRequest(fmt.Sprintf("the patched object is not valid: %v", jerr))
			}
			return nil, unscannable(patched, err, derr, api.NewBadRequest("the patched object is not valid: null"))
		}
		errs := append(append([]string(nil), patchErrs...), r.errs...)
		switch {
		case len(errs) == 0:
			return nil, nil
		case directive == FieldValidationStrict:
			value := string(patched)
			if patchType == PatchStrategicMerge {
				value = patchMapString(patch)
			}
			return nil, api.NewInvalid(api.GroupKind{}, "", field.ErrorList{
				field.Invalid(field.NewPath("patch"), value, strictDecodingError(errs)),
			})
		case directive != FieldValidationIgnore:
			warnAll(ctx, errs)
		}
		if !r.needsRewrite() {
			return nil, nil
		}
		return r.rewrite(patched)
	}
}

// patchStrictErrors returns what a strict decoder finds in a patch
// itself: duplicate fields, and unknown fields in the operations of a
// JSON patch. With FieldValidationIgnore nothing is looked for.
func patchStrictErrors(patchType string, patch []byte, directive string) []string {
	if directive == FieldValidationIgnore {
		return nil
	}
	node, prefix := anything, ""
	if patchType == PatchJSON {
		node, prefix = jsonPatchOps, "json patch "
	}
	// A patch that does not scan fails later, when it is applied, with a
	// better message.
	r, err := scanFields(patch, node, false)
	if err != nil {
		return nil
	}
	errs := make([]string, 0, len(r.errs))
	for _, e := range r.errs {
		errs = append(errs, prefix+e)
	}
	return errs
}

// strictDecodingError joins strict errors as apimachinery's
// runtime.NewStrictDecodingError words them.
func strictDecodingError(errs []string) string {
	return "strict decoding error: " + strings.Join(errs, ", ")
}

func warnAll(ctx context.Context, msgs []string) {
	for _, m := range msgs {
		api.AddWarning(ctx, m)
	}
}

// patchMapString renders a strategic merge patch the way kube-apiserver
// puts it in its error: the decoded map in Go's %+v form.
func patchMapString(patch []byte) string {
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return string(patch)
	}
	return fmt.Sprintf("%+v", m)
}

// fieldSchemaCache compiles a Store's schema once, on first use.
type fieldSchemaCache struct {
	once sync.Once
	root *fieldSchema
}

// fieldSchema returns the compiled schema of the Store's type, nil when
// the type has none (every field is known).
func (s *Store) fieldSchema() *fieldSchema {
	c := &s.fields
	c.once.Do(func() {
		if len(bytes.TrimSpace(s.t.Schema)) == 0 {
			return
		}
		root, err := compileFieldSchema(s.t.Schema)
		if err != nil {
			// A type with a broken schema is served as one without: its
			// writes keep working and every field is accepted.
			if s.reg != nil {
				s.reg.cfg.Logger.Error("registry: schema unusable for field validation; every field is accepted",
					"resource", s.t.GVR().String(), "err", err)
			}
			return
		}
		c.root = root
	})
	return c.root
}

// fieldSchema is an OpenAPI v3 schema reduced to what field validation
// needs: which fields an object may have, and the schemas of their values.
type fieldSchema struct {
	// props are the declared properties of an object.
	props map[string]*fieldSchema
	// additional is the schema of the values of a map
	// (additionalProperties with a schema).
	additional *fieldSchema
	// items is the schema of an array's elements; nil accepts anything.
	items *fieldSchema
	// open accepts fields that are not declared
	// (x-kubernetes-preserve-unknown-fields, additionalProperties: true,
	// or an object schema that declares no fields at all).
	open bool
	// embedded marks an embedded resource (x-kubernetes-embedded-resource):
	// apiVersion and kind are implicitly declared, and metadata is
	// ObjectMeta.
	embedded bool
}

// anything accepts every field, at every depth.
var anything = &fieldSchema{open: true}

// skipped marks a value the scanner only moves past: the value of an
// unknown field, whose contents are neither checked nor reported.
var skipped = &fieldSchema{open: true}

// child returns the schema of the field key of an object with schema n,
// or false when the field is unknown.
func (n *fieldSchema) child(key []byte) (*fieldSchema, bool) {
	if n.embedded {
		// As at the root, kube-apiserver decodes an embedded resource's
		// metadata as ObjectMeta whatever the schema declares for it, and
		// reports (or drops) the fields ObjectMeta does not have.
		switch string(key) {
		case "apiVersion", "kind":
			return anything, true
		case "metadata":
			return objectMetaSchema(), true
		}
	}
	if c, ok := n.props[string(key)]; ok {
		return c, true
	}
	if n.additional != nil {
		return n.additional, true
	}
	if n.open {
		return anything, true
	}
	return nil, false
}

// element returns the schema of an array's elements.
func (n *fieldSchema) element() *fieldSchema {
	if n == skipped {
		return skipped
	}
	if n.items == nil {
		return anything
	}
	return n.items
}

// maxSchemaDepth bounds schema nesting, so a malicious or broken schema
// cannot exhaust the stack.
const maxSchemaDepth = 64

// compileFieldSchema compiles a type's OpenAPI v3 schema. Local $refs
// ("#/components/schemas/X", "#/definitions/X", or any JSON pointer into
// the document) are followed; allOf, anyOf and oneOf contribute the
// fields of every branch. Anything it cannot interpret accepts every field,
// so an imperfect schema never rejects valid objects.
func compileFieldSchema(raw []byte) (*fieldSchema, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("registry: schema is not JSON: %w", err)
	}
	c := &schemaCompiler{doc: doc, refs: map[string]*fieldSchema{}}
	return c.compile(doc, 0), nil
}

type schemaCompiler struct {
	doc  any
	refs map[string]*fieldSchema
}

func (c *schemaCompiler) compile(v any, depth int) *fieldSchema {
	m, ok := v.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return anything
	}
	if ref, ok := m["$ref"].(string); ok {
		return c.ref(ref, depth)
	}
	n := &fieldSchema{}
	c.fill(n, m, depth)
	return n
}

// fill adds what schema m declares to n.
func (c *schemaCompiler) fill(n *fieldSchema, m map[string]any, depth int) {
	declares := false
	if b, _ := m["x-kubernetes-preserve-unknown-fields"].(bool); b {
		n.open = true
	}
	if b, _ := m["x-kubernetes-embedded-resource"].(bool); b {
		n.embedded = true
	}
	if props, ok := m["properties"].(map[string]any); ok {
		declares = true
		if n.props == nil {
			n.props = make(map[string]*fieldSchema, len(props))
		}
		for k, p := range props {
			if _, dup := n.props[k]; !dup {
				n.props[k] = c.compile(p, depth+1)
			}
		}
	}
	switch ap := m["additionalProperties"].(type) {
	case bool:
		declares = true
		n.open = n.open || ap
	case map[string]any:
		declares = true
		if n.additional == nil {
			n.additional = c.compile(ap, depth+1)
		}
	}
	if items, ok := m["items"].(map[string]any); ok && n.items == nil {
		n.items = c.compile(items, depth+1)
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		subs, _ := m[kw].([]any)
		for _, sub := range subs {
			s := c.compile(sub, depth+1)
			if s == anything {
				n.open = true
			}
			declares = declares || s.props != nil || s.additional != nil
			mergeSchema(n, s)
		}
	}
	if !declares && n.props == nil && n.additional == nil {
		// An object schema that declares no fields ({type: object}) is
		// how Kubernetes' OpenAPI describes free-form values
		// (RawExtension, FieldsV1); accept what they hold.
		n.open = true
	}
}

// ref compiles the schema a local $ref points to, once per ref, so that
// recursive schemas terminate.
func (c *schemaCompiler) ref(ref string, depth int) *fieldSchema {
	if n, ok := c.refs[ref]; ok {
		return n
	}
	target, ok := c.resolve(ref)
	if !ok {
		c.refs[ref] = anything
		return anything
	}
	n := &fieldSchema{}
	c.refs[ref] = n
	if tm, ok := target.(map[string]any); ok && depth <= maxSchemaDepth {
		if inner, ok := tm["$ref"].(string); ok {
			mergeSchema(n, c.ref(inner, depth+1))
		} else {
			c.fill(n, tm, depth)
		}
	} else {
		n.open = true
	}
	return n
}

// resolve follows a local JSON pointer ("#/a/b") within the document.
func (c *schemaCompiler) resolve(ref string) (any, bool) {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	cur := c.doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// mergeSchema adds the fields s declares to n.
func mergeSchema(n, s *fieldSchema) {
	if s == n {
		return
	}
	n.open = n.open || s.open
	n.embedded = n.embedded || s.embedded
	for k, v := range s.props {
		if n.props == nil {
			n.props = make(map[string]*fieldSchema, len(s.props))
		}
		if _, ok := n.props[k]; !ok {
			n.props[k] = v
		}
	}
	if n.additional == nil {
		n.additional = s.additional
	}
	if n.items == nil {
		n.items = s.items
	}
}

// objectMetaSchema is the schema of metadata, which every object has
// whatever its type's schema says: kube-apiserver always decodes metadata
// as ObjectMeta and reports its unknown fields.
var objectMetaSchema = sync.OnceValue(func() *fieldSchema {
	return schemaOfGoType(reflect.TypeFor[api.ObjectMeta]())
})

// schemaOfGoType derives the fields of a Go type from its JSON tags.
func schemaOfGoType(t reflect.Type) *fieldSchema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(reflect.TypeFor[json.Marshaler]()) || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return anything // a value with its own encoding (a timestamp, raw JSON)
	}
	switch t.Kind() {
	case reflect.Struct:
		n := &fieldSchema{props: map[string]*fieldSchema{}}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" || name == "" {
				continue
			}
			n.props[name] = schemaOfGoType(f.Type)
		}
		return n
	case reflect.Map:
		return &fieldSchema{additional: schemaOfGoType(t.Elem())}
	case reflect.Slice, reflect.Array:
		return &fieldSchema{items: schemaOfGoType(t.Elem())}
	}
	return anything
}

// jsonPatchOps is the schema of a JSON patch: operations with op, path,
// from and value, as kube-apiserver decodes them.
var jsonPatchOps = &fieldSchema{items: &fieldSchema{props: map[string]*fieldSchema{
	"op": anything, "path": anything, "from": anything, "value": anything,
}}}

// fieldScan is what scanFields found in one JSON document.
type fieldScan struct {
	// errs are strict errors in document order: `unknown field "a.b"`,
	// `duplicate field "a"`.
	errs []string
	// unknown are the paths of the unknown fields, to remove.
	unknown [][]pathSeg
	// duplicates is true when some object repeats a key.
	duplicates bool
}

// pathSeg is one step of a path into a JSON document: an array index
// when index >= 0, otherwise an object key.
type pathSeg struct {
	key   []byte
	index int
}

func (r *fieldScan) needsRewrite() bool { return len(r.unknown) > 0 || r.duplicates }

// rewrite re-encodes data without the unknown fields, keeping the last of
// duplicate keys as Go's decoder does. It runs only for documents that
// had either, so it may be slow.
func (r *fieldScan) rewrite(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers come out as they went in
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("registry: re-decode for field pruning: %w", err)
	}
	for _, p := range r.unknown {
		removePath(doc, p)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("registry: re-encode after field pruning: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// removePath deletes the member at path p from doc, if it is there.
func removePath(doc any, p []pathSeg) {
	cur := doc
	for i, s := range p {
		last := i == len(p)-1
		switch c := cur.(type) {
		case map[string]any:
			if s.index >= 0 {
				return
			}
			if last {
				delete(c, string(s.key))
				return
			}
			cur = c[string(s.key)]
		case []any:
			if s.index < 0 || s.index >= len(c) {
				return
			}
			cur = c[s.index]
		default:
			return
		}
	}
}

// scanFields walks the JSON document data with schema root (nil: every
// field is known) and reports unknown and duplicate fields. isObject says
// data is a whole object: apiVersion and kind are then always known and
// metadata is ObjectMeta.
func scanFields(data []byte, root *fieldSchema, isObject bool) (*fieldScan, error) {
	if root == nil {
		root = anything
	}
	s := &fieldScanner{data: data, res: &fieldScan{}}
	s.skipSpace()
	if isObject {
		s.object(root, true)
	} else {
		s.value(root)
	}
	if s.err != nil {
		return nil, fmt.Errorf("registry: scan fields: %w", s.err)
	}
	return s.res, nil
}

// fieldScanner is a small JSON reader that follows a schema. It trusts
// that data is valid JSON (it was decoded before) but stops at the first
// surprise rather than misreport.
type fieldScanner struct {
	data []byte
	pos  int
	path []pathSeg
	// depth counts the values being read, to bound recursion.
	depth int
	res   *fieldScan
	err   error
}

// maxScanDepth matches the nesting limit of the body decoders, as a
// backstop against stack exhaustion.
const maxScanDepth = 10000

func (s *fieldScanner) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf(format+" at byte %d", append(args, s.pos)...)
	}
}

func (s *fieldScanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

// value reads one value with schema n, starting at a non-space byte.
func (s *fieldScanner) value(n *fieldSchema) {
	if s.err != nil {
		return
	}
	if s.depth >= maxScanDepth {
		s.fail("nesting too deep")
		return
	}
	if s.pos >= len(s.data) {
		s.fail("unexpected end")
		return
	}
	s.depth++
	switch s.data[s.pos] {
	case '{':
		s.object(n, false)
	case '[':
		s.array(n)
	case '"':
		s.skipString()
	default: // a number, true, false or null
		s.skipLiteral()
	}
	s.depth--
}

// skipLiteral moves past a number, true, false or null.
func (s *fieldScanner) skipLiteral() {
	for ; s.pos < len(s.data); s.pos++ {
		switch s.data[s.pos] {
		case ',', ']', '}', ' ', '\t', '\r', '\n':
			return
		}
	}
}

// object reads an object with schema n; root marks the whole object.
func (s *fieldScanner) object(n *fieldSchema, root bool) {
	if s.pos >= len(s.data) || s.data[s.pos] != '{' {
		s.fail("expected an object")
		return
	}
	s.pos++
	var seen keySet
	for s.err == nil {
		s.skipSpace()
		if s.pos < len(s.data) && s.data[s.pos] == '}' {
			s.pos++
			return
		}
		key := s.key()
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			s.fail("expected a colon")
			return
		}
		s.pos++
		s.skipSpace()
		if n == skipped {
			s.value(skipped)
		} else {
			s.path = append(s.path, pathSeg{key: key, index: -1})
			s.member(n, key, root, seen.add(key))
			s.path = s.path[:len(s.path)-1]
		}
		s.skipSpace()
		if s.pos < len(s.data) && s.data[s.pos] == ',' {
			s.pos++
			continue
		}
		if s.pos < len(s.data) && s.data[s.pos] == '}' {
			s.pos++
			return
		}
		s.fail("expected a comma or }")
	}
}

// member reads the value of the member key (at s.path) of an object with
// schema n; first is false when the object repeated key.
func (s *fieldScanner) member(n *fieldSchema, key []byte, root, first bool) {
	if !first {
		s.res.duplicates = true
		s.report("duplicate field")
	}
	child, known := n.child(key)
	if root {
		switch string(key) {
		case "apiVersion", "kind":
			child, known = anything, true
		case "metadata":
			child, known = objectMetaSchema(), true
		}
	}
	switch {
	case known:
		s.value(child)
	case first:
		// As kube-apiserver's decoder: skip an unknown field's value
		// without looking inside it, and report the field once.
		s.report("unknown field")
		s.res.unknown = append(s.res.unknown, append([]pathSeg(nil), s.path...))
		s.value(skipped)
	default:
		s.value(skipped)
	}
}

// array reads an array whose elements have schema n.element().
func (s *fieldScanner) array(n *fieldSchema) {
	s.pos++
	elem := n.element()
	for i := 0; s.err == nil; i++ {
		s.skipSpace()
		if s.pos < len(s.data) && s.data[s.pos] == ']' {
			s.pos++
			return
		}
		s.path = append(s.path, pathSeg{index: i})
		s.value(elem)
		s.path = s.path[:len(s.path)-1]
		s.skipSpace()
		if s.pos < len(s.data) && s.data[s.pos] == ',' {
			s.pos++
			continue
		}
		if s.pos < len(s.data) && s.data[s.pos] == ']' {
			s.pos++
			return
		}
		s.fail("expected a comma or ]")
	}
}

// key reads an object key. An unescaped key (almost all) is a slice of
// data: reading keys allocates nothing.
func (s *fieldScanner) key() []byte {
	start := s.pos
	if !s.skipString() {
		return nil
	}
	raw := s.data[start:s.pos]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1]
	}
	var k string
	if err := json.Unmarshal(raw, &k); err != nil {
		s.fail("bad key")
	}
	return []byte(k)
}

// skipString moves past a JSON string starting at s.pos.
func (s *fieldScanner) skipString() bool {
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		s.fail("expected a string")
		return false
	}
	for i := s.pos + 1; i < len(s.data); i++ {
		switch s.data[i] {
		case '\\':
			i++
		case '"':
			s.pos = i + 1
			return true
		}
	}
	s.fail("unterminated string")
	return false
}

// report records a strict error at the current path, formatted as
// sigs.k8s.io/json formats them: keys joined by dots, indexes in brackets.
func (s *fieldScanner) report(kind string) {
	var b strings.Builder
	for i, p := range s.path {
		if p.index >= 0 {
			b.WriteString("[" + strconv.Itoa(p.index) + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.Write(p.key)
	}
	s.res.errs = append(s.res.errs, kind+" "+strconv.Quote(b.String()))
}

// keySet holds the keys seen in one object: a slice while there are few
// (most objects), a map once there are many (a large ConfigMap).
type keySet struct {
	n    int
	few  [8][]byte
	many map[string]struct{}
}

// add records k and reports whether it was new.
func (ks *keySet) add(k []byte) bool {
	if ks.many != nil {
		if _, ok := ks.many[string(k)]; ok {
			return false
		}
		ks.many[string(k)] = struct{}{}
		return true
	}
	for _, v := range ks.few[:ks.n] {
		if bytes.Equal(v, k) {
			return false
		}
	}
	if ks.n < len(ks.few) {
		ks.few[ks.n] = k
		ks.n++
		return true
	}
	ks.many = make(map[string]struct{}, 4*len(ks.few))
	for _, v := range ks.few {
		ks.many[string(v)] = struct{}{}
	}
	ks.many[string(k)] = struct{}{}
	return true
}
