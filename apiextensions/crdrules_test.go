package apiextensions_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCRDRulesAsKube sends CRDs whose answers kube-apiserver's own CRD
// strategy and validation decide, and checks kube-apiserver 1.37's
// answers to the same requests: the approval annotation of a *.k8s.io
// group, the warnings about formats and set lists of objects, updates
// that must name a resourceVersion, storedVersions, and the messages of
// a CEL rule that does not compile.
func TestCRDRulesAsKube(t *testing.T) {
	srv, _ := start(t, "")
	crds := srv.URL() + crdURL
	crd := func(name, group, versions string) string {
		plural := strings.Split(name, ".")[0]
		return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"` + name + `"},
			"spec":{"group":"` + group + `","scope":"Namespaced","names":{"plural":"` + plural + `","kind":"K` + plural + `"},"versions":[` + versions + `]}}`
	}
	const jsonType = "application/json"

	code, msg, _ := request(t, "POST", crds, jsonType, crd("ones.k8s.io", "k8s.io",
		`{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}`))
	if want := `CustomResourceDefinition.apiextensions.k8s.io "ones.k8s.io" is invalid: metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111`; code != 422 || msg != want {
		t.Errorf("CRD in k8s.io without approval: %d %q\nwant 422 %q", code, msg, want)
	}

	code, msg, _ = request(t, "POST", crds, jsonType, crd("threes.c4.example.com", "c4.example.com",
		`{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.nope +"}]}}}}}`))
	if want := `CustomResourceDefinition.apiextensions.k8s.io "threes.c4.example.com" is invalid: spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.nope +","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:12: Syntax error:`; code != 422 || !strings.HasPrefix(msg, want) {
		t.Errorf("CEL rule that does not compile: %d %q\nwant 422 %q...", code, msg, want)
	}

	schema := `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"string","format":"bogus"},
		"l":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"object","x-kubernetes-map-type":"atomic","properties":{"x":{"type":"string"}}}}}}}}`
	code, msg, warnings := request(t, "POST", crds, jsonType, crd("twos.c4.example.com", "c4.example.com",
		`{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":`+schema+`}}`))
	wantWarnings := []string{
		`299 - "unrecognized format \"bogus\""`,
		`299 - "x-kubernetes-list-type: set for items of type \"object\" is not supported by server-side apply or CEL validation rules"`,
	}
	if code != 201 || !slices.Equal(warnings, wantWarnings) {
		t.Fatalf("CRD with an unknown format and a set of objects: %d %q, warnings %q\nwant 201, %q", code, msg, warnings, wantWarnings)
	}

	two := crd("twos.c4.example.com", "c4.example.com",
		`{"name":"v1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object"}}},{"name":"v2","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}`)
	code, msg, _ = request(t, "PUT", crds+"/twos.c4.example.com", jsonType, two)
	if want := `customresourcedefinitions.apiextensions.k8s.io "twos.c4.example.com" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`; code != 422 || msg != want {
		t.Errorf("update without resourceVersion: %d %q\nwant 422 %q", code, msg, want)
	}
	// The controller writes the CRD's status meanwhile: a conflict is
	// tried again from the latest resourceVersion.
	eventually(t, 5*time.Second, func() error {
		cur := getCRD(t, srv.URL(), "twos.c4.example.com")
		body := strings.Replace(two, `"metadata":{"name":"twos.c4.example.com"}`, `"metadata":{"name":"twos.c4.example.com","resourceVersion":"`+cur.Metadata.ResourceVersion+`"}`, 1)
		if code, msg, _ := request(t, "PUT", crds+"/twos.c4.example.com", jsonType, body); code != 200 {
			return fmt.Errorf("update to storage version v2: %d %s", code, msg)
		}
		return nil
	})
	got := getCRD(t, srv.URL(), "twos.c4.example.com")
	if !slices.Equal(got.Status.StoredVersions, []string{"v1", "v2"}) || got.Metadata.Generation != 2 {
		t.Errorf("after the update: storedVersions %q, generation %d; want [v1 v2], 2", got.Status.StoredVersions, got.Metadata.Generation)
	}
}
