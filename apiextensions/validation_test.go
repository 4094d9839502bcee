package apiextensions_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// mutate returns widgetCRD(versions...) changed by f.
func mutate(f func(crd map[string]any, spec map[string]any, versions []any), versions ...string) map[string]any {
	crd := widgetCRD(versions...)
	spec := crd["spec"].(map[string]any)
	f(crd, spec, spec["versions"].([]any))
	return crd
}

func version(vs []any, i int) map[string]any { return vs[i].(map[string]any) }

func TestInvalidCRDs(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	cases := []struct {
		name string
		crd  map[string]any
		want []string // substrings of the Status message
	}{
		{"name not plural.group", mutate(func(c, _ map[string]any, _ []any) {
			c["metadata"] = map[string]any{"name": "gadgets.example.com"}
		}, "v1"), []string{`metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group`}},
		{"group without dot", mutate(func(c, s map[string]any, _ []any) {
			s["group"] = "example"
			c["metadata"] = map[string]any{"name": "widgets.example"}
		}, "v1"), []string{`spec.group: Invalid value: "example": should be a domain with at least one dot`}},
		{"bad scope", mutate(func(_, s map[string]any, _ []any) { s["scope"] = "Global" }, "v1"),
			[]string{`spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"`}},
		{"no storage version", mutate(func(_, _ map[string]any, vs []any) { version(vs, 0)["storage"] = false }, "v1"),
			[]string{`must have exactly one version marked as storage version`}},
		{"two storage versions", mutate(func(_, _ map[string]any, vs []any) { version(vs, 1)["storage"] = true }, "v1", "v2"),
			[]string{`must have exactly one version marked as storage version`}},
		{"duplicate versions", widgetCRD("v1", "v1"), []string{`must contain unique version names`}},
		{"bad version name", widgetCRD("V1"), []string{`spec.versions[0].name: Invalid value: "V1": a DNS-1035 label must consist of lower case alphanumeric characters`}},
		{"no schema", mutate(func(_, _ map[string]any, vs []any) { delete(version(vs, 0), "schema") }, "v1"),
			[]string{`spec.versions[0].schema.openAPIV3Schema: Required value`}},
		{"schema not structural", mutate(func(_, _ map[string]any, vs []any) {
			version(vs, 0)["schema"] = map[string]any{"openAPIV3Schema": json.RawMessage(`{"type":"object","properties":{"spec":{"properties":{"a":{"type":"string"}}}}}`)}
		}, "v1"), []string{`spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields`}},
		{"webhook conversion without webhook", mutate(func(_, s map[string]any, _ []any) {
			s["conversion"] = map[string]any{"strategy": "Webhook"}
		}, "v1"), []string{`[spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook, spec.conversion.conversionReviewVersions: Required value]`}},
		{"webhook url and review versions", mutate(func(_, s map[string]any, _ []any) {
			s["conversion"] = webhookConversion(map[string]any{"url": "http://x/y?a=b"}, "v3", "v3", "V_1")
		}, "v1"), []string{`spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
			`spec.conversion.webhookClientConfig.url: Invalid value: "a=b": query parameters are not permitted in the URL`,
			`spec.conversion.conversionReviewVersions[1]: Invalid value: "v3": duplicate version`,
			`spec.conversion.conversionReviewVersions[2]: Invalid value: "V_1": a DNS-1035 label must consist of lower case alphanumeric characters`,
			`spec.conversion.conversionReviewVersions: Invalid value: ["v3","v3","V_1"]: must include at least one of v1, v1beta1`}},
		{"webhook url and service", mutate(func(_, s map[string]any, _ []any) {
			s["conversion"] = webhookConversion(map[string]any{"url": "https://x/y", "service": map[string]any{"name": "a", "namespace": "b"}}, "v1")
		}, "v1"), []string{`spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required`}},
		// kube reports a missing service name at the namespace's path.
		{"webhook service", mutate(func(_, s map[string]any, _ []any) {
			s["conversion"] = webhookConversion(map[string]any{"service": map[string]any{"namespace": "b", "port": 0, "path": "x"}}, "v1")
		}, "v1"), []string{`[spec.conversion.webhookClientConfig.service.namespace: Required value, spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive, spec.conversion.webhookClientConfig.service.path: Invalid value: "x": must start with a '/', spec.conversion.webhookClientConfig.service.path: Invalid value: "x": segment[0] may not be empty]`}},
		{"webhook with preserveUnknownFields", mutate(func(_, s map[string]any, _ []any) {
			s["preserveUnknownFields"] = true
			s["conversion"] = webhookConversion(map[string]any{"url": "https://x/y"}, "v1")
		}, "v1"), []string{`spec.conversion.strategy: Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true`}},
		{"webhook without strategy Webhook", mutate(func(_, s map[string]any, _ []any) {
			s["conversion"] = webhookConversion(map[string]any{"url": "https://x/y"}, "v1")
			s["conversion"].(map[string]any)["strategy"] = "None"
		}, "v1"), []string{`[spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook, spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook]`}},
		{"bad plural", mutate(func(c, s map[string]any, _ []any) {
			s["names"].(map[string]any)["plural"] = "Widgets"
			c["metadata"] = map[string]any{"name": "Widgets.example.com"}
		}, "v1"), []string{`spec.names.plural: Invalid value: "Widgets"`}},
		{"kind equals listKind", mutate(func(_, s map[string]any, _ []any) {
			s["names"].(map[string]any)["listKind"] = "Widget"
		}, "v1"), []string{`spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same`}},
		{"missing kind", mutate(func(_, s map[string]any, _ []any) {
			delete(s["names"].(map[string]any), "kind")
		}, "v1"), []string{`spec.names.kind: Required value`}},
		{"bad short name", mutate(func(_, s map[string]any, _ []any) {
			s["names"].(map[string]any)["shortNames"] = []any{"w_d"}
		}, "v1"), []string{`spec.names.shortNames[0]: Invalid value: "w_d"`}},
		{"bad printer column type", mutate(func(_, _ map[string]any, vs []any) {
			version(vs, 0)["additionalPrinterColumns"] = []any{map[string]any{"name": "X", "type": "text", "jsonPath": ".spec.x"}}
		}, "v1"), []string{`spec.additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string`}},
		{"per-version printer column", mutate(func(_, _ map[string]any, vs []any) {
			version(vs, 1)["additionalPrinterColumns"] = []any{map[string]any{"name": "X", "type": "string", "jsonPath": "spec.x"}}
		}, "v1", "v2"), []string{`spec.versions[1].additionalPrinterColumns[0].JSONPath: Invalid value: "spec.x": must be a simple json path starting with .`}},
		{"selectable field not in schema", mutate(func(_, _ map[string]any, vs []any) {
			version(vs, 0)["selectableFields"] = []any{map[string]any{"jsonPath": ".spec.shape"}}
		}, "v1"), []string{`spec.selectableFields[0].jsonPath: Invalid value: ".spec.shape": is an invalid path: does not refer to a valid field`}},
		{"selectable field not scalar", mutate(func(_, _ map[string]any, vs []any) {
			version(vs, 0)["selectableFields"] = []any{map[string]any{"jsonPath": ".spec"}}
		}, "v1"), []string{`spec.selectableFields[0].jsonPath: Invalid value: ".spec": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.`}},
		{"scale path outside spec", mutate(func(_, _ map[string]any, vs []any) {
			version(vs, 0)["subresources"] = map[string]any{"scale": map[string]any{"specReplicasPath": ".status.replicas", "statusReplicasPath": ".status.replicas"}}
		}, "v1"), []string{`spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec`}},
		{"status root keyword", mutate(func(_, _ map[string]any, vs []any) {
			version(vs, 0)["schema"] = map[string]any{"openAPIV3Schema": json.RawMessage(`{"type":"object","minProperties":1,"properties":{"spec":{"type":"object"}}}`)}
		}, "v1"), []string{`spec.validation.openAPIV3Schema: Invalid value: {"ID":"","Schema":"","Ref":null,"Description":"","Type":"object",`,
			`: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled`}},
		{"status root keyword, shared schema", mutate(func(_, _ map[string]any, vs []any) {
			for i := range vs {
				version(vs, i)["schema"] = map[string]any{"openAPIV3Schema": json.RawMessage(`{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}`)}
			}
			delete(version(vs, 0), "subresources")
		}, "v1", "v2"), []string{`spec.validation.openAPIV3Schema: Invalid value: {"ID":""`,
			`: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled`}},
		{"status root type", mutate(func(_, _ map[string]any, vs []any) {
			version(vs, 1)["schema"] = map[string]any{"openAPIV3Schema": json.RawMessage(`{"type":"string"}`)}
		}, "v1", "v2"), []string{`spec.versions[1].schema.openAPIV3Schema.type: Invalid value: "string": only "object" is allowed as the type at the root of the schema if the status subresource is enabled`}},
		{"rule inside anyOf", mutate(func(_, _ map[string]any, vs []any) {
			version(vs, 0)["schema"] = map[string]any{"openAPIV3Schema": json.RawMessage(`{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"integer"}},"anyOf":[{"x-kubernetes-validations":[{"rule":"self.a > 0"}]}]}}}`)}
		}, "v1"), []string{`spec.validation.openAPIV3Schema.properties[spec].anyOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural`}},
		{"oldSelf in list items", mutate(func(_, _ map[string]any, vs []any) {
			version(vs, 0)["schema"] = map[string]any{"openAPIV3Schema": json.RawMessage(`{"type":"object","properties":{"spec":{"type":"array","maxItems":5,"items":{"type":"string","maxLength":5,"x-kubernetes-validations":[{"rule":"self == oldSelf"}]}}}}`)}
		}, "v1"), []string{`spec.validation.openAPIV3Schema.properties[spec].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[spec]`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(t, "POST", base+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", tc.crd)
			if code != http.StatusUnprocessableEntity {
				t.Fatalf("create = %d, want 422: %s", code, body)
			}
			var st struct {
				Reason  string `json:"reason"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal(body, &st); err != nil {
				t.Fatal(err)
			}
			if st.Reason != "Invalid" {
				t.Errorf("reason = %q", st.Reason)
			}
			for _, w := range tc.want {
				if !strings.Contains(st.Message, w) {
					t.Errorf("message %q\nlacks %q", st.Message, w)
				}
			}
		})
	}
}

// webhookConversion is a spec.conversion calling a webhook at
// clientConfig, speaking the given ConversionReview versions.
func webhookConversion(clientConfig map[string]any, reviews ...string) map[string]any {
	rv := []any{}
	for _, v := range reviews {
		rv = append(rv, v)
	}
	return map[string]any{"strategy": "Webhook", "webhook": map[string]any{"clientConfig": clientConfig, "conversionReviewVersions": rv}}
}
