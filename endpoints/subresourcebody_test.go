package endpoints

import (
	"strings"
	"testing"
)

// TestSubresourceBodies: a body sent to a pod's binding or eviction, or
// a built-in kind's scale, is read as kube-apiserver's handlers read
// it: another kind, a version kube does not serve, something not an
// object, and another namespace are each refused with 400 in kube's
// words (the texts are kube-apiserver 1.37.1's answers to the same
// requests), and nothing is bound, evicted or scaled.
func TestSubresourceBodies(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"ns"}}`)
	pods := "/api/v1/namespaces/ns/pods"
	f.Must(201, "POST", pods, `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)
	deploy := "/apis/apps/v1/namespaces/ns/deployments"
	f.Must(201, "POST", deploy, `{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	const notMine = "the namespace of the provided object does not match the namespace sent on the request"
	cases := []struct {
		name, method, path, body, want string
	}{
		{"binding of another kind", "POST", pods + "/p/binding", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"target":{"name":"n1"}}`,
			`Pod in version "v1" cannot be handled as a Binding: converting (v1.Pod) to (core.Binding): unknown conversion`},
		{"binding in a version kube lacks", "POST", pods + "/p/binding", `{"apiVersion":"v2","kind":"Binding","metadata":{"name":"p"},"target":{"name":"n1"}}`,
			`Binding in version "v2" cannot be handled as a Binding: no kind "Binding" is registered for version "v2" in scheme`},
		{"binding not an object", "POST", pods + "/p/binding", `[1,2]`,
			`the object provided is unrecognized (must be of type Binding): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" } (5b312c325d)`},
		{"binding in another namespace", "POST", pods + "/p/binding", `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p","namespace":"other"},"target":{"name":"n1"}}`, notMine},
		{"eviction of another kind", "POST", pods + "/p/eviction", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`,
			`Pod in version "v1" cannot be handled as a Eviction: converting (v1.Pod) to (policy.Eviction): unknown conversion`},
		{"eviction in a version kube lacks", "POST", pods + "/p/eviction", `{"apiVersion":"policy/v2","kind":"Eviction","metadata":{"name":"p"}}`,
			`Eviction in version "v2" cannot be handled as a Eviction: no kind "Eviction" is registered for version "policy/v2" in scheme`},
		{"eviction in another namespace", "POST", pods + "/p/eviction", `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p","namespace":"other"}}`, notMine},
		{"scale of another kind", "PUT", deploy + "/d/scale", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":2}}`,
			`Deployment in version "v1" cannot be handled as a Scale: converting (v1.Deployment) to (autoscaling.Scale): unknown conversion`},
		{"scale in a version kube lacks", "PUT", deploy + "/d/scale", `{"apiVersion":"autoscaling/v2","kind":"Scale","metadata":{"name":"d"},"spec":{"replicas":2}}`,
			`Scale in version "v2" cannot be handled as a Scale: no kind "Scale" is registered for version "autoscaling/v2" in scheme`},
		{"scale not an object", "PUT", deploy + "/d/scale", `[1]`,
			`the object provided is unrecognized (must be of type Scale): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" } (5b315d)`},
	}
	for _, c := range cases {
		st := f.Status(f.Do(c.method, c.path, c.body), 400, "BadRequest")
		if msg := st["message"].(string); !strings.HasPrefix(msg, c.want) {
			t.Errorf("%s: %q, want %q", c.name, msg, c.want)
		}
	}
	// Nothing acted: the pod is unbound and still there, the
	// Deployment unscaled.
	pod := f.Must(200, "GET", pods+"/p", nil)
	if node := field(pod, "spec.nodeName"); node != nil {
		t.Errorf("pod bound to %v", node)
	}
	if r := field(f.Must(200, "GET", deploy+"/d", nil), "spec.replicas"); r != float64(1) {
		t.Errorf("replicas = %v, want 1", r)
	}
	// kube's decoder reads field names case-sensitively: "Target" is
	// not the binding's target.
	f.Must(201, "POST", pods+"/p/binding", `{"metadata":{"name":"p"},"target":{"name":"n1"},"Target":{"name":"n2"}}`)
	if node := field(f.Must(200, "GET", pods+"/p", nil), "spec.nodeName"); node != "n1" {
		t.Errorf("bound to %v, want n1", node)
	}
}

// TestScalePatchTypeMeta: a JSON or merge patch that changes a built-in
// kind's Scale's kind or apiVersion is refused as kube-apiserver's patch
// handler refuses it, 422 naming the patched Scale with its decoder's
// words; a strategic merge patch loses what it says of the kind, as
// kube's conversion of it into the Scale type does.
func TestScalePatchTypeMeta(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"ns"}}`)
	deploy := "/apis/apps/v1/namespaces/ns/deployments"
	f.Must(201, "POST", deploy, `{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	scale := deploy + "/d/scale"
	st := f.Status(f.Do("PATCH", scale, `{"kind":"Deployment"}`, "Content-Type", "application/merge-patch+json"), 422, "Invalid")
	msg := st["message"].(string)
	if !strings.HasPrefix(msg, ` "" is invalid: patch: Invalid value: "{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\",`) ||
		!strings.HasSuffix(msg, `: no kind "Deployment" is registered for version "autoscaling/v1" in scheme "pkg/runtime/scheme.go:111"`) {
		t.Errorf("merge patch of the kind: %q", msg)
	}
	st = f.Status(f.Do("PATCH", scale, `[{"op":"replace","path":"/apiVersion","value":"autoscaling/v2"}]`, "Content-Type", "application/json-patch+json"), 422, "Invalid")
	if msg := st["message"].(string); !strings.HasSuffix(msg, `: no kind "Scale" is registered for version "autoscaling/v2" in scheme "pkg/runtime/scheme.go:111"`) {
		t.Errorf("JSON patch of the apiVersion: %q", msg)
	}
	got := f.Must(200, "PATCH", scale, `{"kind":"Pod","apiVersion":"v1","spec":{"replicas":3}}`, "Content-Type", "application/strategic-merge-patch+json")
	if got["kind"] != "Scale" || got["apiVersion"] != "autoscaling/v1" || field(got, "spec.replicas") != float64(3) {
		t.Errorf("strategic merge patch answered %v", got)
	}
}
