package builtin

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/miniapi/miniapi/registry"
	"k8s.io/apimachinery/pkg/runtime/schema"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	utilopenapi "k8s.io/apiserver/pkg/util/openapi"
	aggregatoropenapi "k8s.io/kube-aggregator/pkg/generated/openapi"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// OpenAPI serves kube-apiserver's own OpenAPI definitions of the built-in
// kinds and of the meta types every document refers to (ObjectMeta,
// Status, DeleteOptions...): kube's generated definitions
// (pkg/generated/openapi), without the fields of disabled features, named
// and tagged with their group-version-kinds by kube's namer, and turned
// into Swagger 2.0 or OpenAPI v3 schemas by kube-openapi's builders, as
// kube-apiserver builds its documents. The zero value is ready to use.
//
// Building is costly (every definition is constructed) and done only
// when a document is built; unless Keep is set, nothing is kept between
// builds.
type OpenAPI struct {
	// Keep keeps the last definitions built of each version for the
	// next build naming the same models: the servers of one process
	// (logical clusters, see server.SharedEtcd) share an OpenAPI and
	// build the same documents, each ~100 ms of CPU. A lone server
	// builds them once a type change, and keeps nothing.
	Keep bool

	// mu serialises builds: kube-openapi's builders add extensions to
	// the definitions they are given.
	mu sync.Mutex
	// v2, v3 are the definitions kept (with Keep), by the models named.
	v2, v3 keptDefinitions
}

// keptDefinitions are definitions built for the models key names. They
// are shared between callers, who only read them.
type keptDefinitions struct {
	key  string
	defs map[string]any
}

// build returns the definitions of names from kept, or from construct,
// keeping them there with Keep.
func (o *OpenAPI) build(kept *keptDefinitions, names []string, construct func() (map[string]any, error)) (map[string]any, error) {
	key := strings.Join(names, "\x00")
	if o.Keep && kept.defs != nil && kept.key == key {
		return kept.defs, nil
	}
	defs, err := construct()
	if err == nil && o.Keep {
		*kept = keptDefinitions{key: key, defs: defs}
	}
	return defs, err
}

// The model names of the meta types kube-apiserver's documents refer to.
const (
	ModelObjectMeta    = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	ModelListMeta      = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
	ModelStatus        = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
	ModelDeleteOptions = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
	ModelWatchEvent    = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"
	ModelPatch         = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
	ModelScale         = "io.k8s.api.autoscaling.v1.Scale"
)

// V2 returns the Swagger 2.0 definitions of the named models and of
// every model they refer to, by name, as decoded JSON, which callers
// must not modify (with Keep, later callers get the same maps).
func (o *OpenAPI) V2(names ...string) (map[string]any, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.build(&o.v2, names, func() (map[string]any, error) {
		cfg := &common.Config{GetDefinitions: definitions(), GetDefinitionName: namer().GetDefinitionName}
		sw, err := builder.BuildOpenAPIDefinitionsForResources(cfg, names...)
		if err != nil {
			return nil, fmt.Errorf("builtin: openapi v2: %w", err)
		}
		return toJSONMap(sw.Definitions)
	})
}

// V3 returns the OpenAPI v3 schemas of the named models and of every
// model they refer to, by name, as decoded JSON, which callers must not
// modify (with Keep, later callers get the same maps).
func (o *OpenAPI) V3(names ...string) (map[string]any, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.build(&o.v3, names, func() (map[string]any, error) {
		cfg := &common.OpenAPIV3Config{GetDefinitions: definitions(), GetDefinitionName: namer().GetDefinitionName}
		schemas, err := builder3.BuildOpenAPIDefinitionsForResources(cfg, names...)
		if err != nil {
			return nil, fmt.Errorf("builtin: openapi v3: %w", err)
		}
		return toJSONMap(schemas)
	})
}

// v3Specs returns kube-openapi's v3 schemas of the named models and
// every model they refer to.
func v3Specs(names ...string) (map[string]*spec.Schema, error) {
	cfg := &common.OpenAPIV3Config{GetDefinitions: definitions(), GetDefinitionName: namer().GetDefinitionName}
	return builder3.BuildOpenAPIDefinitionsForResources(cfg, names...)
}

// definitions are kube's generated definitions as kube-apiserver serves
// them: without the fields of features that are off. kube-aggregator's
// own (APIService) join kube-apiserver's.
func definitions() common.GetOpenAPIDefinitions {
	return utilopenapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		defs := generatedopenapi.GetOpenAPIDefinitions(ref)
		for name, def := range aggregatoropenapi.GetOpenAPIDefinitions(ref) {
			if _, ok := defs[name]; !ok {
				defs[name] = def
			}
		}
		return defs
	})
}

// namer names definitions and tags each with the group-version-kinds the
// scheme serves it as, once per process.
var namer = sync.OnceValue(func() *openapinamer.DefinitionNamer {
	return openapinamer.NewDefinitionNamer(scheme)
})

func toJSONMap[S any](defs map[string]S) (map[string]any, error) {
	data, err := json.Marshal(defs)
	if err != nil {
		return nil, fmt.Errorf("builtin: encode openapi: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("builtin: decode openapi: %w", err)
	}
	return out, nil
}

// OpenAPIModels returns the names of the definitions of the kind and its
// list, as kube-apiserver names them (io.k8s.api.apps.v1.Deployment).
// The list is "" for a kind that has none (Binding).
func (k *kind) OpenAPIModels() (kind, list string) {
	kind, _ = scheme.ToOpenAPIDefinitionName(k.gvk)
	list, _ = scheme.ToOpenAPIDefinitionName(schema.GroupVersionKind{Group: k.r.group, Version: k.r.version, Kind: k.r.kind + "List"})
	return kind, list
}

var _ registry.OpenAPIModeler = (*kind)(nil)
