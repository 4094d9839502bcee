package fieldmanager

import (
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// testBuiltin is the merge schema of a few built-in kinds (core/v1
// ConfigMap, Namespace, Secret, Lease, CustomResourceDefinition), built as package builtin builds the built-in kinds' (which this
// package cannot import): from Kubernetes' generated definitions.
var testBuiltin = sync.OnceValues(func() (TypeConverter, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	cfg := &common.OpenAPIV3Config{
		GetDefinitions:    generatedopenapi.GetOpenAPIDefinitions,
		GetDefinitionName: openapinamer.NewDefinitionNamer(s).GetDefinitionName,
	}
	specs, err := builder3.BuildOpenAPIDefinitionsForResources(cfg,
		"io.k8s.api.core.v1.ConfigMap", "io.k8s.api.core.v1.Namespace", "io.k8s.api.core.v1.Secret",
		"io.k8s.api.coordination.v1.Lease", "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition")
	if err != nil {
		return nil, err
	}
	return ForModels(specs, func(gvk schema.GroupVersionKind) (runtime.Object, error) {
		obj, err := s.New(gvk)
		if err == nil {
			obj.GetObjectKind().SetGroupVersionKind(gvk)
		}
		return obj, err
	})
})

func builtinForTest(tb testing.TB) TypeConverter {
	tb.Helper()
	tc, err := testBuiltin()
	if err != nil {
		tb.Fatal(err)
	}
	return tc
}
