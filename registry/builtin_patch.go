package registry

// The built-in types accept strategic merge patches (see
// Store.SupportsStrategicMerge); these markers say which strategies are
// built in. Their lists carry no merge keys miniapi honours, so a
// strategic merge patch is applied as a merge patch.
func (namespaceStrategy) isBuiltin() {}
func (configMapStrategy) isBuiltin() {}
func (secretStrategy) isBuiltin()    {}
func (eventStrategy) isBuiltin()     {}
func (leaseStrategy) isBuiltin()     {}
