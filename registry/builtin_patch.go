package registry

import "github.com/miniapi/miniapi/fieldmanager"

// The built-in types accept strategic merge patches (see
// Store.SupportsStrategicMerge); these markers say which strategies are
// built in. Their lists carry no merge keys miniapi honours, so a
// strategic merge patch is applied as a merge patch.
func (namespaceStrategy) isBuiltin() {}
func (configMapStrategy) isBuiltin() {}
func (secretStrategy) isBuiltin()    {}
func (eventStrategy) isBuiltin()     {}
func (leaseStrategy) isBuiltin()     {}

// The built-in types merge by Kubernetes' own schemas of them.
func (namespaceStrategy) TypeConverter() (fieldmanager.TypeConverter, error) {
	return fieldmanager.Builtin()
}
func (configMapStrategy) TypeConverter() (fieldmanager.TypeConverter, error) {
	return fieldmanager.Builtin()
}
func (secretStrategy) TypeConverter() (fieldmanager.TypeConverter, error) {
	return fieldmanager.Builtin()
}
func (eventStrategy) TypeConverter() (fieldmanager.TypeConverter, error) {
	return fieldmanager.Builtin()
}
func (leaseStrategy) TypeConverter() (fieldmanager.TypeConverter, error) {
	return fieldmanager.Builtin()
}

// As in kube-apiserver, the built-in types have no metadata.generation.
func (namespaceStrategy) Generationless() {}
func (configMapStrategy) Generationless() {}
func (secretStrategy) Generationless()    {}
func (eventStrategy) Generationless()     {}
func (leaseStrategy) Generationless()     {}
