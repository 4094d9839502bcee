package endpoints

import (
	"net/url"
	"testing"

	"github.com/miniapi/miniapi/registry"
)

// fuzzPatchTypes are the Content-Types a patch is sent with: the three
// patch types, apply in both of its spellings (the JSON one is a
// merge-patch alias kube refuses), and ones that are not patch types.
var fuzzPatchTypes = []string{
	registry.PatchJSON, registry.PatchMerge, registry.PatchStrategicMerge,
	"application/json-patch+json; charset=utf-8", "application/json", "", "application/apply-patch+cbor", "x/y;",
}

// FuzzPatch sends a JSON patch, merge patch or strategic merge patch
// (or a body with a Content-Type that is none) to a ConfigMap, a
// Deployment or a custom resource, or to the custom resource's /status,
// with any fieldValidation, with or without dryRun. A refused or dry-run
// patch leaves the object as it was; an accepted one stores what it
// answered.
//
// mode picks the Content-Type (low bits), then /status, dry run and
// fieldValidation.
func FuzzPatch(f *testing.F) {
	s := newFuzzServer(f)
	for k := range fuzzObjects {
		for _, p := range []struct {
			ct    uint8
			patch string
		}{
			{0, `[{"op":"replace","path":"/metadata/labels","value":{"x":"y"}},{"op":"add","path":"/metadata/annotations","value":{"a":"b"}}]`},
			{0, `[{"op":"test","path":"/metadata/name","value":"fz"},{"op":"remove","path":"/metadata/labels"}]`},
			{0, `[{"op":"copy","from":"/metadata/name","path":"/metadata/generateName"},{"op":"move","from":"/metadata/generateName","path":"/metadata/annotations"}]`},
			{0, `[{"op":"replace","path":"/spec/replicas","value":5}]`},
			{1, `{"metadata":{"labels":{"app":null,"b":"c"}},"data":{"k":"w"}}`},
			{1, `{"spec":{"replicas":"x"}}`},
			{1, `{"metadata":{"name":"other"}}`},
			{2, `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx"},{"name":"d","image":"x","$patch":"delete"}]}}}}`},
			{2, `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"c"}],"containers":[{"name":"c","env":[{"name":"B","value":"2"}]}]}}}}`},
			{2, `{"metadata":{"$retainKeys":["labels"],"labels":{"x":"y"}}}`},
			{2, `{"data":{"k":null},"$patch":"replace"}`},
			{0, `[{"op":"replace","path":"","value":null}]`},
			{0, `[{"op":"replace","path":"","value":[1]}]`},
		} {
			f.Add(uint8(k), p.ct, []byte(p.patch))
			f.Add(uint8(k), patchMode(p.ct, 0, 1, 0), []byte(p.patch))
		}
	}
	f.Add(uint8(2), patchMode(1, 1, 0, 0), []byte(`{"status":{"replicas":2,"selector":"app=fz"}}`))
	f.Add(uint8(2), patchMode(0, 1, 0, 0), []byte(`[{"op":"add","path":"/status","value":{"replicas":1}}]`))
	f.Add(uint8(1), patchMode(1, 0, 0, 1), []byte(`{"spec":{"bogus":1,"replicas":1,"replicas":2}}`))
	f.Fuzz(func(t *testing.T, kind, mode uint8, patch []byte) {
		o := pick(kind, fuzzObjects)
		ct := pick(mode, fuzzPatchTypes)
		rest := mode / uint8(len(fuzzPatchTypes))
		status, dryRun := rest&1 == 1, rest&2 == 2
		path := o.path()
		if status {
			path += "/status"
		}
		q := url.Values{}
		if dryRun {
			q.Set("dryRun", "All")
		}
		if v := pick(rest>>2, fuzzValidation); v != "" {
			q.Set("fieldValidation", v)
		}
		before := s.get(t, o.path())
		r := s.do(t, "PATCH", path+"?"+q.Encode(), patch, "Content-Type", ct)
		s.checkWrite(t, o.path(), before, r, dryRun)
		if r.code < 300 && !dryRun {
			s.restore(t, o)
		}
	})
}

// patchMode builds FuzzPatch's mode byte: the index of the Content-Type,
// /status, dry run, and the index of the fieldValidation value.
func patchMode(ct, status, dryRun, validation uint8) uint8 {
	return ct + uint8(len(fuzzPatchTypes))*(status|dryRun<<1|validation<<2)
}

// FuzzApply sends a server-side apply patch (YAML, or JSON, which is
// YAML) to object fz of a ConfigMap, a Deployment or a custom resource,
// or to a name that does not exist (which an apply creates), or to the
// custom resource's /status, as one of two managers, with or without
// force, dryRun and a fieldValidation. A refused or dry-run apply
// changes nothing; an accepted one stores what it answered.
//
// mode picks the target (fz, a new name, /status), then the manager,
// force, dry run and fieldValidation.
func FuzzApply(f *testing.F) {
	s := newFuzzServer(f)
	for k, o := range fuzzObjects {
		f.Add(uint8(k), uint8(0), []byte(o.original))
		f.Add(uint8(k), uint8(1), []byte(o.original))
		f.Add(uint8(k), applyMode(0, 1, 1, 0, 0), []byte(o.original))
		f.Add(uint8(k), applyMode(0, 0, 0, 1, 1), []byte(o.original))
	}
	f.Add(uint8(0), uint8(0), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fz\n  labels: {app: other}\ndata:\n  k: v2\n"))
	f.Add(uint8(0), applyMode(0, 1, 0, 0, 2), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fz\ndata:\n  k: a\n  k: b\n"))
	f.Add(uint8(1), uint8(0), []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: fz}\nspec:\n  replicas: 4\n  template:\n    spec:\n      containers:\n      - name: c\n        image: nginx\n"))
	f.Add(uint8(1), uint8(0), []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: fz}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n      - name: c\n"))
	f.Add(uint8(2), uint8(2), []byte(`{"apiVersion":"example.com/v1","kind":"Doohickey","metadata":{"name":"fz"},"status":{"replicas":1}}`))
	f.Add(uint8(2), uint8(0), []byte("&a [*a]"))
	f.Add(uint8(0), uint8(0), []byte("a: &a [x]\nb: &b [*a, *a]\nc: [*b, *b]\n"))
	f.Fuzz(func(t *testing.T, kind, mode uint8, patch []byte) {
		o := pick(kind, fuzzObjects)
		target := mode % 3
		rest := mode / 3
		path := o.path()
		switch target {
		case 1:
			path = o.collection + "/fz-new"
		case 2:
			path += "/status"
		}
		q := url.Values{"fieldManager": {pick(rest, []string{"fuzz", "other"})}}
		if rest&2 == 2 {
			q.Set("force", "true")
		}
		dryRun := rest&4 == 4
		if dryRun {
			q.Set("dryRun", "All")
		}
		if v := pick(rest>>3, fuzzValidation); v != "" {
			q.Set("fieldValidation", v)
		}
		objPath := o.path()
		if target == 1 {
			objPath = path
		}
		before := s.get(t, objPath)
		r := s.do(t, "PATCH", path+"?"+q.Encode(), patch, "Content-Type", registry.PatchApply)
		s.checkWrite(t, objPath, before, r, dryRun)
		if r.code >= 300 || dryRun {
			return
		}
		if target == 1 {
			s.remove(t, objPath)
			return
		}
		s.restore(t, o)
	})
}

// applyMode builds FuzzApply's mode byte: the target (0 fz, 1 a new
// name, 2 /status), the manager (0 or 1), force, dry run, and the index
// of the fieldValidation value.
func applyMode(target, manager, force, dryRun, validation uint8) uint8 {
	return target + 3*(manager|force<<1|dryRun<<2|validation<<3)
}
