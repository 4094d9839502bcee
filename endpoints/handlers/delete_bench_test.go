package handlers

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/api"
)

// BenchmarkDecodeDeleteOptions measures what reading a delete's body
// with kube-apiserver's codecs costs, against the baseline of decoding
// the same JSON into our DeleteOptions with encoding/json (what miniapi
// did before). Report the ratio kube/baseline.
func BenchmarkDecodeDeleteOptions(b *testing.B) {
	body := []byte(`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background","preconditions":{"uid":"4b0e0a6e-4c1e-4c1a-9f0e-000000000000","resourceVersion":"42"}}`)
	b.Run("baseline=encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var do api.DeleteOptions
			if err := json.Unmarshal(body, &do); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kube", func(b *testing.B) {
		r := httptest.NewRequest("DELETE", "/api/v1/namespaces/ns/configmaps/a", strings.NewReader(string(body)))
		r.Header.Set("Content-Type", "application/json")
		b.ReportAllocs()
		for b.Loop() {
			var do api.DeleteOptions
			if err := decodeDeleteOptions(r, body, &do); err != nil {
				b.Fatal(err)
			}
		}
	})
}
