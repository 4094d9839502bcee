package miniapitest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/miniapi/miniapi/miniapitest"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// widgetCRD is a namespaced example.com/v1 Widget with a status
// subresource and a schema.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {type: string, enum: [red, green, blue]}
          status:
            type: object
            properties:
              observed: {type: string}
`

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// gadgetCRD is a typed CRD value without TypeMeta, as Go code builds them.
func gadgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr(true),
				}},
			}},
		},
	}
}

func ptr[T any](v T) *T { return &v }

func TestWithCRDObjects(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithCRDObjects(widgetCRD, gadgetCRD()), miniapitest.WithNamespaces("ns"))
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	dyn := dynamic.NewForConfigOrDie(env.Config)
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"},
		"spec":     map[string]any{"color": "red"},
	}}
	// Served at once: no wait between Start and the first request.
	if _, err := dyn.Resource(widgets).Namespace("ns").Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The CRD's schema is enforced.
	w.SetName("w2")
	w.Object["spec"] = map[string]any{"color": "purple"}
	if _, err := dyn.Resource(widgets).Namespace("ns").Create(ctx, w, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a Widget with color purple: %v, want 422 Invalid (the schema allows red, green, blue)", err)
	}
	g := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g1"},
	}}
	gadgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	if _, err := dyn.Resource(gadgets).Create(ctx, g, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestWithCRDsFromDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Beside the CRD, what a kustomize config/crd directory holds: envtest
	// skips what is not a CRD, and so does WithCRDs.
	files := map[string]string{
		"widgets.yaml":        "# the Widget CRD\n---\n" + widgetCRD + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
		"kustomization.yaml":  "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- widgets.yaml\n",
		"kustomizeconfig.yml": "nameReference:\n- kind: Service\n  version: v1\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := miniapitest.Start(t, miniapitest.WithCRDs(dir))
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	list, err := dynamic.NewForConfigOrDie(env.Config).Resource(widgets).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d Widgets in a new environment", len(list.Items))
	}
}
