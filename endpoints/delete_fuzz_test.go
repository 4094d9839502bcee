package endpoints

import (
	"bytes"
	"net/url"
	"testing"
)

// FuzzDeleteOptions sends DeleteOptions, in any Content-Type, with a
// DELETE of object fz of a ConfigMap, a Deployment or a custom resource,
// with or without dryRun and a propagationPolicy in the query. A refused
// or dry-run delete leaves the object as it was; as on kube-apiserver,
// the query's options count only when there is no body.
//
// mode picks the Content-Type (low bits), then dry run and the query's
// propagationPolicy.
func FuzzDeleteOptions(f *testing.F) {
	s := newFuzzServer(f)
	for k := range fuzzObjects {
		f.Add(uint8(k), uint8(0), []byte(`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"}`))
		f.Add(uint8(k), uint8(0), []byte(`{"preconditions":{"uid":"x","resourceVersion":"1"}}`))
		f.Add(uint8(k), uint8(0), []byte(`{"gracePeriodSeconds":-1,"orphanDependents":true,"propagationPolicy":"Orphan"}`))
		f.Add(uint8(k), uint8(0), []byte(`{"dryRun":["All"]}`))
		f.Add(uint8(k), uint8(1), []byte("kind: DeleteOptions\napiVersion: meta.k8s.io/v1\npropagationPolicy: Background\n"))
		f.Add(uint8(k), uint8(0+len(fuzzBodyTypes)), []byte(`{}`))
		f.Add(uint8(k), uint8(3), []byte(`null`))
	}
	f.Add(uint8(0), uint8(2), protobufOf(f, `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}`))
	f.Fuzz(func(t *testing.T, kind, mode uint8, body []byte) {
		o := pick(kind, fuzzObjects)
		ct := pick(mode, fuzzBodyTypes)
		rest := mode / uint8(len(fuzzBodyTypes))
		dryRun := rest&1 == 1
		q := url.Values{}
		if dryRun {
			q.Set("dryRun", "All")
		}
		if p := pick(rest>>1, []string{"", "Orphan", "Background", "Foreground", "orphan"}); p != "" {
			q.Set("propagationPolicy", p)
		}
		var headers []string
		if ct != "" {
			headers = []string{"Content-Type", ct}
		}
		before := s.get(t, o.path())
		r := s.do(t, "DELETE", o.path()+"?"+q.Encode(), body, headers...)
		after := s.get(t, o.path())
		// An accepted delete may leave the object too: DeleteOptions in
		// the body may ask for a dry run.
		if bytes.Equal(after, before) {
			return
		}
		dryRun = dryRun && len(bytes.TrimSpace(body)) == 0
		if r.code >= 300 || dryRun {
			t.Fatalf("a DELETE answered %d (dry run in the query, no body: %v) changed the object\nfrom %s\nto   %s", r.code, dryRun, before, after)
		}
		s.restore(t, o)
	})
}
