package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gizmoCRDYAML declares a custom resource with /status and /scale.
const gizmoCRDYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.selector
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
`

// TestKubectlScale scales a custom resource whose CRD declares
// subresources.scale with kubectl scale, which finds /scale through
// discovery and patches (or, with --current-replicas, reads and
// replaces) the Scale.
func TestKubectlScale(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := startServer(t, t.TempDir())
	if r := runKubectl(t, srv, gizmoCRDYAML, nil, "apply", "-f", "-"); r.err != nil {
		t.Fatalf("apply CRD: %v\n%s", r.err, r.stderr)
	}
	if r := runKubectl(t, srv, "apiVersion: example.com/v1\nkind: Gizmo\nmetadata:\n  name: g1\n  namespace: default\nspec:\n  replicas: 1\n", nil, "apply", "-f", "-"); r.err != nil {
		t.Fatalf("apply gizmo: %v\n%s", r.err, r.stderr)
	}
	replicas := func() string {
		return kubectl(t, srv, "get", "gizmo", "g1", "-o", "jsonpath={.spec.replicas}")
	}

	if out := kubectl(t, srv, "scale", "gizmo/g1", "--replicas=3"); !strings.Contains(out, "gizmo.example.com/g1 scaled") {
		t.Errorf("kubectl scale printed %q", out)
	}
	if got := replicas(); got != "3" {
		t.Errorf("after scale --replicas=3: spec.replicas %q", got)
	}
	kubectl(t, srv, "scale", "gizmo/g1", "--current-replicas=3", "--replicas=5")
	if got := replicas(); got != "5" {
		t.Errorf("after scale --current-replicas=3 --replicas=5: spec.replicas %q", got)
	}
	r := runKubectl(t, srv, "", nil, "scale", "gizmo/g1", "--current-replicas=3", "--replicas=7")
	if r.err == nil || !strings.Contains(r.stderr, "Expected replicas to be 3, was 5") {
		t.Errorf("scale with a wrong --current-replicas: err %v, stderr %q", r.err, r.stderr)
	}
	raw := kubectl(t, srv, "get", "--raw", "/apis/example.com/v1/namespaces/default/gizmos/g1/scale")
	if !strings.Contains(raw, `"kind":"Scale"`) || !strings.Contains(raw, `"replicas":5`) {
		t.Errorf("kubectl get --raw .../scale: %s", raw)
	}
}

// TestKubectlScaleResourcesFile scales a type declared with scale: in a
// resources file.
func TestKubectlScaleResourcesFile(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	file := filepath.Join(t.TempDir(), "resources.yaml")
	const decl = `resources:
- group: example.com
  version: v1
  kind: Sprocket
  plural: sprockets
  namespaced: true
  statusSubresource: true
  scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
`
	if err := os.WriteFile(file, []byte(decl), 0o644); err != nil {
		t.Fatal(err)
	}
	kubectlPath(t)
	srv := startServer(t, t.TempDir(), "--resources", file)
	if r := runKubectl(t, srv, "apiVersion: example.com/v1\nkind: Sprocket\nmetadata:\n  name: s1\n  namespace: default\nspec:\n  replicas: 2\n", nil, "apply", "-f", "-"); r.err != nil {
		t.Fatalf("apply sprocket: %v\n%s", r.err, r.stderr)
	}
	kubectl(t, srv, "scale", "sprocket/s1", "--replicas=4")
	if got := kubectl(t, srv, "get", "sprocket", "s1", "-o", "jsonpath={.spec.replicas} {.metadata.generation}"); got != "4 2" {
		t.Errorf("after scale: replicas and generation %q, want \"4 2\"", got)
	}
}
