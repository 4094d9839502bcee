package builtin

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
)

// FuzzDecode feeds any JSON body to the decoder of any built-in kind:
// kube's strict JSON decoding, defaulting and conversion through the
// internal version, which every create, update, patch and apply of a
// built-in kind goes through (YAML and protobuf bodies arrive here as
// JSON). A refusal must be a 4xx Status; a decoded object must decode
// again to itself, with nothing for a strict decoder to report.
func FuzzDecode(f *testing.F) {
	type decoderType struct {
		typ registry.Type
		d   registry.Decoder
	}
	var kinds []decoderType
	for _, t := range Types(Config{}) {
		if d, ok := t.Strategy.(registry.Decoder); ok {
			kinds = append(kinds, decoderType{t, d})
		}
	}
	index := map[string]uint8{}
	for i, k := range kinds {
		index[k.typ.Kind] = uint8(i)
		f.Add(uint8(i), []byte(`{"apiVersion":"`+k.typ.APIVersion()+`","kind":"`+k.typ.Kind+`","metadata":{"name":"x","labels":{"a":"b"}}}`))
	}
	for kind, body := range map[string]string{
		"Pod": `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x","ports":[{"containerPort":80}],` +
			`"resources":{"limits":{"cpu":"1","memory":"1Gi"}},"env":[{"name":"A","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]}],` +
			`"volumes":[{"name":"v","emptyDir":{}},{"name":"s","secret":{"secretName":"s"}}],"initContainers":[{"name":"i","image":"y","restartPolicy":"Always"}]}}`,
		"Deployment": `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},` +
			`"strategy":{"rollingUpdate":{"maxSurge":"50%","maxUnavailable":0}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}`,
		"Service":   `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"type":"NodePort","ports":[{"port":80,"targetPort":"http"}],"ipFamilyPolicy":"PreferDualStack"}}`,
		"Secret":    `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"u":"a"},"data":{"p":"YQ=="}}`,
		"CronJob":   `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}}}}`,
		"Role":      `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"a..b"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["*"]}]}`,
		"ConfigMap": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","name":"d","bogus":1},"data":{"a":1}}`,
	} {
		if i, ok := index[kind]; ok {
			f.Add(i, []byte(body))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		k := kinds[int(which)%len(kinds)]
		obj, _, err := k.d.Decode(data)
		if err != nil {
			var se *api.StatusError
			if !errors.As(err, &se) || se.ErrStatus.Code < 400 || se.ErrStatus.Code > 499 {
				t.Fatalf("%s: Decode(%s) = %v: not a client error (a 500)", k.typ.Kind, data, err)
			}
			return
		}
		out, err := json.Marshal(obj)
		if err != nil {
			t.Fatalf("%s: Decode(%s) gave an object that does not encode: %v", k.typ.Kind, data, err)
		}
		again, strict, err := k.d.Decode(out)
		if err != nil || len(strict) > 0 {
			t.Fatalf("%s: decoding %s again: %v %v", k.typ.Kind, out, err, strict)
		}
		if b, _ := json.Marshal(again); string(b) != string(out) {
			t.Fatalf("%s: decoding again changed\n%s\nto\n%s", k.typ.Kind, out, b)
		}
	})
}
