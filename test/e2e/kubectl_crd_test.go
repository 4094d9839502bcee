package e2e

import (
	"strings"
	"testing"
)

const widgetCRDYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - name: Color
      type: string
      jsonPath: .spec.color
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {type: string}
              size: {type: integer, minimum: 1}
`

// TestKubectlCRD is the CRD walkthrough: kubectl apply a CRD, then at
// once a custom resource of it; kubectl get shows the printer columns,
// the short name and the all category; schema errors read as
// kube-apiserver's; deleting the CRD takes its objects.
func TestKubectlCRD(t *testing.T) {
	srv := startServer(t, t.TempDir())
	r := runKubectl(t, srv, widgetCRDYAML, nil, "apply", "-f", "-")
	if r.err != nil {
		t.Fatalf("apply CRD: %v\n%s", r.err, r.stderr)
	}
	r = runKubectl(t, srv, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\nspec:\n  color: red\n  size: 2\n", nil, "apply", "-f", "-")
	if r.err != nil {
		t.Fatalf("apply widget right after the CRD: %v\n%s", r.err, r.stderr)
	}
	if !strings.Contains(r.stdout, "widget.example.com/w1 created") {
		t.Errorf("apply widget printed %q", r.stdout)
	}

	out := kubectl(t, srv, "get", "wd")
	if !strings.Contains(out, "COLOR") || !strings.Contains(out, "red") {
		t.Errorf("kubectl get wd:\n%s", out)
	}
	if out := kubectl(t, srv, "get", "all"); !strings.Contains(out, "w1") {
		t.Errorf("kubectl get all lacks the widget:\n%s", out)
	}

	r = runKubectl(t, srv, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: bad\n  namespace: default\nspec:\n  size: 0\n", nil, "apply", "-f", "-")
	want := `The Widget "bad" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1`
	if r.err == nil || !strings.Contains(r.stderr, want) {
		t.Errorf("invalid widget: err %v\nstderr %q\nwant %q", r.err, r.stderr, want)
	}

	// kubectl wait sees the condition; a re-applied CRD (merge patch)
	// changes the columns at once.
	kubectl(t, srv, "wait", "--for=condition=Established", "--timeout=5s", "crd/widgets.example.com")
	r = runKubectl(t, srv, strings.Replace(widgetCRDYAML, "name: Color", "name: Paint", 1), nil, "apply", "-f", "-")
	if r.err != nil || !strings.Contains(r.stdout, "configured") {
		t.Fatalf("re-apply CRD: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	if out := kubectl(t, srv, "get", "widgets"); !strings.Contains(out, "PAINT") {
		t.Errorf("kubectl get widgets after the column was renamed:\n%s", out)
	}

	kubectl(t, srv, "delete", "crd", "widgets.example.com")
	r = runKubectl(t, srv, "", nil, "get", "widgets")
	if r.err == nil {
		t.Errorf("kubectl get widgets after deleting the CRD succeeded:\n%s", r.stdout)
	}
}
