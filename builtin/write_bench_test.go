package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	sigsjson "sigs.k8s.io/json"
)

// benchPod and benchDeployment are what `kubectl run` and `kubectl
// create deployment` send, with a few labels and an env var, so the
// kinds' defaulting and validation have something to walk.
const benchPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"default","labels":{"run":"web","tier":"front"}},
"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80}],"env":[{"name":"MODE","value":"prod"}],
"resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}}`

const benchDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},
"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
"spec":{"containers":[{"name":"nginx","image":"nginx:1.27","ports":[{"containerPort":80}],"env":[{"name":"MODE","value":"prod"}],
"resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}}}}`

// benchConfigMap is the bench program's create body, about 1 KiB.
var benchConfigMap = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"default"},"data":{"seq":"000000000000","payload":"` +
	strings.Repeat("x", 950) + `"}}`

// BenchmarkCreateRules measures what kube's rules cost a create of a Pod
// and of a Deployment, against the baseline any server pays for the same
// body: decoding it into the kind's Go type and encoding it for storage.
// "rules" is the kind's part of a create (decode with defaults, kube's
// BeforeCreate, encode); "store" is the registry's whole dry-run create
// (rules, metadata and managedFields, no etcd write). Report the ratios
// rules/baseline and store/baseline.
func BenchmarkCreateRules(b *testing.B) {
	for _, c := range []struct{ name, group, version, plural, body string }{
		{"ConfigMap", "", "v1", "configmaps", benchConfigMap},
		{"Pod", "", "v1", "pods", benchPod},
		{"Deployment", "apps", "v1", "deployments", benchDeployment},
	} {
		b.Run(c.name, func(b *testing.B) {
			var k *kind
			for _, r := range resources(Config{}) {
				if r.group == c.group && r.version == c.version && r.plural == c.plural {
					k = newKind(r)
				}
			}
			if k == nil {
				b.Fatalf("%s not served", c.plural)
			}
			body := []byte(c.body)
			b.Run("baseline=decode+encode", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					obj := k.newVersioned()
					if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, obj); err != nil {
						b.Fatal(err)
					}
					if _, err := json.Marshal(obj); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("rules", func(b *testing.B) {
				b.ReportAllocs()
				ctx := context.Background()
				for b.Loop() {
					obj, _, err := k.Decode(body)
					if err != nil {
						b.Fatal(err)
					}
					// What the Store sets before the rules run.
					obj.Metadata.UID = "4b0e0a6e-4c1e-4c1a-9f0e-000000000000"
					obj.Metadata.CreationTimestamp = api.Now()
					if err := k.BeforeCreate(ctx, obj); err != nil {
						b.Fatal(err)
					}
					// As the Store encodes it (registry's encode):
					// json.Marshal would validate and compact the
					// output again.
					if _, err := obj.MarshalJSON(); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("store", func(b *testing.B) {
				reg := newRegistry(b)
				ns := storeFor(b, reg, "", "v1", "namespaces")
				if _, err := ns.Create(context.Background(), "", []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}`), registry.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				s := storeFor(b, reg, c.group, c.version, c.plural)
				b.ReportAllocs()
				ctx := context.Background()
				for b.Loop() {
					if _, err := s.Create(ctx, "default", body, registry.CreateOptions{DryRun: true, FieldManager: "kubectl-create"}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
