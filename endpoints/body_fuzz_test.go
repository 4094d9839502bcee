package endpoints

import (
	"net/url"
	"testing"

	"sigs.k8s.io/yaml"
)

// The Content-Types a body is sent with: the three miniapi reads, the
// YAML aliases, none (read as JSON), a parameter, and ones it refuses.
var fuzzBodyTypes = []string{
	"application/json", "application/yaml", protobufMedia, "application/x-yaml", "text/yaml", "",
	"application/json; charset=utf-8", "text/plain", "application/cbor", "application/json;;",
}

// fuzzValidation are the fieldValidation values: kube's three, none, and
// a wrong one.
var fuzzValidation = []string{"Strict", "Warn", "Ignore", "", "strict"}

// FuzzWriteBody sends a request body, in any Content-Type, as a create
// (POST to the collection) or an update (PUT to object fz) of a
// ConfigMap, a Deployment or a custom resource, with any fieldValidation
// and with or without dryRun. Beyond every answer's invariants: a
// refused or dry-run write leaves fz as it was and stores nothing, an
// accepted one stores what it answered.
//
// mode picks the Content-Type (low bits), then create or update, dry
// run, and fieldValidation.
func FuzzWriteBody(f *testing.F) {
	s := newFuzzServer(f)
	for k, o := range fuzzObjects {
		y, err := yaml.JSONToYAML([]byte(o.original))
		if err != nil {
			f.Fatal(err)
		}
		for _, update := range []uint8{0, 1} {
			f.Add(uint8(k), bodyMode(0, update, 0, 0), []byte(o.original)) // JSON
			f.Add(uint8(k), bodyMode(1, update, 0, 1), y)                  // YAML, Warn
			f.Add(uint8(k), bodyMode(0, update, 1, 0), []byte(o.original)) // dry run
		}
		f.Add(uint8(k), bodyMode(0, 0, 0, 0), []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"g-"},"data":{"a":1}}`))
		f.Add(uint8(k), bodyMode(1, 1, 0, 0), []byte("metadata:\n  name: fz\n  name: fz\nkind: ConfigMap\n"))
	}
	f.Add(uint8(0), bodyMode(2, 0, 0, 0), protobufOf(f, fuzzConfigMap.original))
	f.Add(uint8(0), bodyMode(2, 1, 0, 0), protobufOf(f, fuzzConfigMap.original))
	f.Add(uint8(1), bodyMode(2, 1, 0, 0), protobufOf(f, fuzzDeployment.original))
	f.Add(uint8(1), bodyMode(2, 0, 0, 0), []byte("k8s\x00\x0a\x02\x0a\x00"))
	f.Add(uint8(2), bodyMode(2, 0, 0, 0), protobufOf(f, fuzzConfigMap.original))
	f.Add(uint8(2), bodyMode(0, 0, 0, 0), []byte(`null`))
	f.Add(uint8(2), bodyMode(0, 1, 0, 0), []byte(`{"metadata":{"name":"fz"},"a":[}`))
	f.Fuzz(func(t *testing.T, kind, mode uint8, body []byte) {
		o := pick(kind, fuzzObjects)
		ct := pick(mode, fuzzBodyTypes)
		rest := mode / uint8(len(fuzzBodyTypes))
		update, dryRun := rest&1 == 1, rest&2 == 2
		q := url.Values{}
		if dryRun {
			q.Set("dryRun", "All")
		}
		if v := pick(rest>>2, fuzzValidation); v != "" {
			q.Set("fieldValidation", v)
		}
		var headers []string
		if ct != "" {
			headers = []string{"Content-Type", ct}
		}
		before := s.get(t, o.path())
		if update {
			r := s.do(t, "PUT", o.path()+"?"+q.Encode(), body, headers...)
			s.checkWrite(t, o.path(), before, r, dryRun)
			if r.code < 300 && !dryRun {
				s.restore(t, o)
			}
			return
		}
		r := s.do(t, "POST", o.collection+"?"+q.Encode(), body, headers...)
		if !sameJSON(s.get(t, o.path()), before) {
			t.Fatalf("a create (%d) changed the existing %s", r.code, o.path())
		}
		if r.code >= 300 {
			return
		}
		var created struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		if err := yaml.Unmarshal(r.body, &created); err != nil || created.Metadata.Name == "" {
			t.Fatalf("a create answered %d with %s: %v", r.code, r.body, err)
		}
		path := o.collection + "/" + url.PathEscape(created.Metadata.Name)
		s.checkWrite(t, path, nil, r, dryRun) // dry run: nothing stored
		if !dryRun {
			s.remove(t, path)
		}
	})
}

// bodyMode builds FuzzWriteBody's mode byte: the index of the
// Content-Type, update (1) or create (0), dry run, and the index of the
// fieldValidation value.
func bodyMode(ct, update, dryRun, validation uint8) uint8 {
	return ct + uint8(len(fuzzBodyTypes))*(update|dryRun<<1|validation<<2)
}
