package registry

import (
	"testing"

	"github.com/miniapi/miniapi/schema"
)

// Every built-in type's schema compiles. They are not structural (they
// describe kube's built-in types, not CRDs), so only the plain keywords
// of Validate apply to them.
func TestBuiltinSchemasCompile(t *testing.T) {
	for _, typ := range BuiltinTypes() {
		if len(typ.Schema) == 0 {
			continue
		}
		if _, err := schema.Compile(typ.Schema); err != nil {
			t.Errorf("%s: %v", typ.Kind, err)
		}
	}
}
