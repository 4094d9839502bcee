package registry

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
)

// scaledWidgets is a type with /status and /scale, as a CRD declaring
// both subresources.
var scaledWidgets = Type{
	Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true,
	Strategy: GenericStrategy{Status: true},
	Scale:    &ScaleSubresource{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ".status.selector"},
}

// scaleFixture serves scaledWidgets and a type without /scale over etcd.
func scaleFixture(t *testing.T) (widgets, gadgets *Store) {
	t.Helper()
	reg := newEtcdRegistry(t, Config{})
	gadgetType := Type{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true}
	for _, typ := range []Type{scaledWidgets, gadgetType} {
		if err := reg.Add(typ); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate(t, storeOf(t, reg, "namespaces"), "", `{"metadata":{"name":"ns1"}}`)
	w, _ := reg.Snapshot().Lookup("example.com", "v1", "widgets")
	g, _ := reg.Snapshot().Lookup("example.com", "v1", "gadgets")
	return w.Store, g.Store
}

// createWithStatus creates a widget and, when status is set, writes it
// through /status, and returns the stored object.
func createWithStatus(t *testing.T, s *Store, name, spec, status string) *api.Object {
	t.Helper()
	body := `{"metadata":{"name":"` + name + `"}`
	if spec != "" {
		body += `,"spec":` + spec
	}
	obj := mustCreate(t, s, "ns1", body+`}`)
	if status == "" {
		return obj
	}
	obj.Fields["status"] = json.RawMessage(status)
	out, err := s.UpdateObject(context.Background(), "ns1", name, obj, UpdateOptions{Subresource: SubresourceStatus})
	if err != nil {
		t.Fatal(err)
	}
	obj, err = decodeWithRV(out)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// wantStatus checks err is a StatusError with the code and, if msg is
// set, a message containing it.
func wantStatus(t *testing.T, err error, code int32, msg string) {
	t.Helper()
	se, ok := err.(*api.StatusError)
	if !ok {
		t.Fatalf("error %v (%T), want a %d Status", err, err, code)
	}
	if se.ErrStatus.Code != code || !strings.Contains(se.ErrStatus.Message, msg) {
		t.Fatalf("error %d %q, want %d containing %q", se.ErrStatus.Code, se.ErrStatus.Message, code, msg)
	}
}

func TestGetScale(t *testing.T) {
	ctx := context.Background()
	widgets, gadgets := scaleFixture(t)
	for _, tc := range []struct {
		name, spec, status string
		// raw objects are refused by validation on every write, as
		// kube's are; they are written to storage directly to test reads.
		raw        bool
		want       ScaleSpec
		wantStatus ScaleStatus
		errCode    int32
		errMsg     string
	}{
		{name: "all-paths", spec: `{"replicas":3}`, status: `{"replicas":2,"selector":"app=web"}`,
			want: ScaleSpec{3}, wantStatus: ScaleStatus{Replicas: 2, Selector: "app=web"}},
		{name: "no-status", spec: `{"replicas":1}`, want: ScaleSpec{1}},
		{name: "zero", spec: `{"replicas":0}`},
		{name: "no-spec-replicas", spec: `{"color":"red"}`, errCode: 500, errMsg: `the spec replicas field ".spec.replicas" does not exist`},
		{name: "no-spec", errCode: 500, errMsg: `the spec replicas field ".spec.replicas" does not exist`},
		{name: "not-an-integer", raw: true, spec: `{"replicas":1.5}`, errCode: 500, errMsg: `.spec.replicas accessor error: 1.5 is of the type float64, expected int64`},
		{name: "spec-not-object", raw: true, spec: `"big"`, errCode: 500, errMsg: `.spec accessor error: big is of the type string, expected map[string]interface{}`},
		{name: "selector-not-string", raw: true, spec: `{"replicas":1}`, status: `{"selector":{"app":"web"}}`, errCode: 500, errMsg: `.status.selector accessor error`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.raw {
				data := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + tc.name + `","namespace":"ns1"},"spec":` + tc.spec
				if tc.status != "" {
					data += `,"status":` + tc.status
				}
				data += `}`
				key := storage.ResourceKeys{Group: "example.com", Resource: "widgets", Namespaced: true}.Key("ns1", tc.name)
				if _, err := widgets.Storage().Create(ctx, key, []byte(data)); err != nil {
					t.Fatal(err)
				}
				_, err := widgets.GetScale(ctx, "ns1", tc.name, "")
				wantStatus(t, err, tc.errCode, tc.errMsg)
				return
			}
			obj := createWithStatus(t, widgets, tc.name, tc.spec, tc.status)
			sc, err := widgets.GetScale(ctx, "ns1", tc.name, "")
			if tc.errCode != 0 {
				wantStatus(t, err, tc.errCode, tc.errMsg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sc.APIVersion != "autoscaling/v1" || sc.Kind != "Scale" {
				t.Errorf("type %s/%s", sc.APIVersion, sc.Kind)
			}
			m := sc.Metadata
			if m.Name != tc.name || m.Namespace != "ns1" || m.UID != obj.Metadata.UID || m.ResourceVersion != obj.Metadata.ResourceVersion ||
				!m.CreationTimestamp.Equal(obj.Metadata.CreationTimestamp.Time) {
				t.Errorf("metadata %+v, want the object's %+v", m, obj.Metadata)
			}
			if sc.Spec != tc.want || sc.Status != tc.wantStatus {
				t.Errorf("spec %+v status %+v, want %+v %+v", sc.Spec, sc.Status, tc.want, tc.wantStatus)
			}
		})
	}
	t.Run("not-found", func(t *testing.T) {
		_, err := widgets.GetScale(ctx, "ns1", "nope", "")
		wantStatus(t, err, 404, `widgets.example.com "nope" not found`)
	})
	t.Run("type-without-scale", func(t *testing.T) {
		mustCreate(t, gadgets, "ns1", `{"metadata":{"name":"g"},"spec":{"replicas":1}}`)
		_, err := gadgets.GetScale(ctx, "ns1", "g", "")
		wantStatus(t, err, 404, "not found")
	})
}

func TestWriteScale(t *testing.T) {
	ctx := context.Background()
	widgets, gadgets := scaleFixture(t)
	for _, tc := range []struct {
		name    string
		spec    string // the object's spec before the write
		write   func(s *Store, name string, cur *api.Object) (*Scale, error)
		want    string // the object's spec after, when the write succeeds
		errCode int32
		errMsg  string
	}{
		{name: "update", spec: `{"replicas":1,"color":"red"}`, want: `{"color":"red","replicas":5}`,
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				return s.UpdateScale(ctx, "ns1", name, &Scale{Spec: ScaleSpec{Replicas: 5}}, UpdateOptions{})
			}},
		{name: "update-current-rv", spec: `{"replicas":1}`, want: `{"replicas":2}`,
			write: func(s *Store, name string, cur *api.Object) (*Scale, error) {
				sc := &Scale{APIVersion: "autoscaling/v1", Kind: "Scale", Spec: ScaleSpec{Replicas: 2}}
				sc.Metadata.Name, sc.Metadata.ResourceVersion = name, cur.Metadata.ResourceVersion
				return s.UpdateScale(ctx, "ns1", name, sc, UpdateOptions{})
			}},
		{name: "update-stale-rv", spec: `{"replicas":1}`, errCode: 409, errMsg: "the object has been modified",
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				sc := &Scale{Spec: ScaleSpec{Replicas: 2}}
				sc.Metadata.ResourceVersion = "1"
				return s.UpdateScale(ctx, "ns1", name, sc, UpdateOptions{})
			}},
		{name: "update-negative", spec: `{"replicas":1}`, errCode: 422,
			errMsg: `Widget.example.com "update-negative" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer`,
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				return s.UpdateScale(ctx, "ns1", name, &Scale{Spec: ScaleSpec{Replicas: -1}}, UpdateOptions{})
			}},
		{name: "update-creates-path", want: `{"replicas":3}`,
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				return s.UpdateScale(ctx, "ns1", name, &Scale{Spec: ScaleSpec{Replicas: 3}}, UpdateOptions{})
			}},
		{name: "update-other-name", spec: `{"replicas":1}`, errCode: 400, errMsg: "does not match the name on the URL",
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				sc := &Scale{Spec: ScaleSpec{Replicas: 3}}
				sc.Metadata.Name = "other"
				return s.UpdateScale(ctx, "ns1", name, sc, UpdateOptions{})
			}},
		{name: "update-wrong-kind", spec: `{"replicas":1}`, errCode: 400, errMsg: "the kind in the data (Deployment)",
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				return s.UpdateScale(ctx, "ns1", name, &Scale{Kind: "Deployment"}, UpdateOptions{})
			}},
		{name: "update-dry-run", spec: `{"replicas":1}`, want: `{"replicas":1}`,
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				sc, err := s.UpdateScale(ctx, "ns1", name, &Scale{Spec: ScaleSpec{Replicas: 7}}, UpdateOptions{DryRun: true})
				if err == nil && sc.Spec.Replicas != 7 {
					t.Errorf("dry run answered %d replicas, want 7", sc.Spec.Replicas)
				}
				return sc, err
			}},
		{name: "merge-patch", spec: `{"replicas":1}`, want: `{"replicas":4}`,
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				return s.PatchScale(ctx, "ns1", name, PatchMerge, []byte(`{"spec":{"replicas":4}}`), UpdateOptions{})
			}},
		{name: "json-patch", spec: `{"replicas":1}`, want: `{"replicas":6}`,
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				return s.PatchScale(ctx, "ns1", name, PatchJSON, []byte(`[{"op":"replace","path":"/spec/replicas","value":6}]`), UpdateOptions{})
			}},
		{name: "merge-patch-stale-rv", spec: `{"replicas":1}`, errCode: 409, errMsg: "the object has been modified",
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				return s.PatchScale(ctx, "ns1", name, PatchMerge, []byte(`{"metadata":{"resourceVersion":"1"},"spec":{"replicas":4}}`), UpdateOptions{})
			}},
		{name: "patch-negative", spec: `{"replicas":1}`, errCode: 422, errMsg: "should be a non-negative integer",
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				return s.PatchScale(ctx, "ns1", name, PatchMerge, []byte(`{"spec":{"replicas":-1}}`), UpdateOptions{})
			}},
		{name: "patch-leaves-missing-replicas", spec: `{"color":"red"}`, errCode: 400,
			errMsg: `the spec replicas field ".spec.replicas" cannot be empty`,
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				return s.PatchScale(ctx, "ns1", name, PatchMerge, []byte(`{"metadata":{"labels":{"a":"b"}}}`), UpdateOptions{})
			}},
		{name: "strategic-merge-patch", spec: `{"replicas":1}`, errCode: http.StatusUnsupportedMediaType,
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				return s.PatchScale(ctx, "ns1", name, PatchStrategicMerge, []byte(`{"spec":{"replicas":4}}`), UpdateOptions{})
			}},
		{name: "patch-unknown-field-strict", spec: `{"replicas":1}`, errCode: 422, errMsg: `strict decoding error: unknown field "spec.size"`,
			write: func(s *Store, name string, _ *api.Object) (*Scale, error) {
				return s.PatchScale(ctx, "ns1", name, PatchMerge, []byte(`{"spec":{"replicas":4,"size":1}}`), UpdateOptions{FieldValidation: FieldValidationStrict})
			}},
		{name: "type-without-scale", errCode: 404,
			write: func(_ *Store, _ string, _ *api.Object) (*Scale, error) {
				return gadgets.UpdateScale(ctx, "ns1", "g", &Scale{Spec: ScaleSpec{Replicas: 1}}, UpdateOptions{})
			}},
		{name: "missing-object", errCode: 404, errMsg: `widgets.example.com "nope" not found`,
			write: func(s *Store, _ string, _ *api.Object) (*Scale, error) {
				return s.UpdateScale(ctx, "ns1", "nope", &Scale{Spec: ScaleSpec{Replicas: 1}}, UpdateOptions{})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := createWithStatus(t, widgets, tc.name, tc.spec, `{"replicas":1,"selector":"app=x"}`)
			sc, err := tc.write(widgets, tc.name, before)
			if tc.errCode != 0 {
				wantStatus(t, err, tc.errCode, tc.errMsg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			after, err := widgets.Get(ctx, "ns1", tc.name, "")
			if err != nil {
				t.Fatal(err)
			}
			obj := mustDecode(t, after)
			if got := string(obj.Fields["spec"]); got != tc.want {
				t.Errorf("spec %s, want %s", got, tc.want)
			}
			if got := string(obj.Fields["status"]); got != `{"replicas":1,"selector":"app=x"}` {
				t.Errorf("status changed: %s", got)
			}
			wantGen := before.Metadata.Generation
			if tc.want != tc.spec {
				wantGen++ // a spec change moves generation, as kube-apiserver
			}
			if obj.Metadata.Generation != wantGen {
				t.Errorf("generation %d, want %d", obj.Metadata.Generation, wantGen)
			}
			if sc.Status != (ScaleStatus{Replicas: 1, Selector: "app=x"}) || sc.Metadata.UID != before.Metadata.UID {
				t.Errorf("answered %+v", sc)
			}
			if rv := storageRV(after); sc.Metadata.ResourceVersion != rv && !strings.Contains(tc.name, "dry-run") {
				t.Errorf("answered resourceVersion %s, object is at %s", sc.Metadata.ResourceVersion, rv)
			}
		})
	}
}

func TestScalePaths(t *testing.T) {
	for _, tc := range []struct {
		name, fields, path string
		n                  int32
		want               string // the object's fields after setPath, or the error
	}{
		{"existing", `{"spec":{"replicas":1,"a":"b"}}`, ".spec.replicas", 3, `{"spec":{"a":"b","replicas":3}}`},
		{"missing-parent", `{}`, ".spec.replicas", 2, `{"spec":{"replicas":2}}`},
		{"deep", `{"spec":{"x":{}}}`, ".spec.x.y.count", 1, `{"spec":{"x":{"y":{"count":1}}}}`},
		{"null-parent", `{"spec":null}`, ".spec.replicas", 0, `{"spec":{"replicas":0}}`},
		{"not-a-map", `{"spec":"big"}`, ".spec.replicas", 1, "value cannot be set because .spec is not a map"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &api.Object{}
			if err := json.Unmarshal([]byte(tc.fields), &obj.Fields); err != nil {
				t.Fatal(err)
			}
			if err := setPath(obj, tc.path, tc.n); err != nil {
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want %s", err, tc.want)
				}
				return
			}
			got, _ := json.Marshal(obj.Fields)
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestResourceFileScale(t *testing.T) {
	for _, tc := range []struct {
		name, scale string
		err         string
	}{
		{"valid", `{specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}`, ""},
		{"selector-under-spec", `{specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .spec.selector}`, ""},
		{"no-selector", `{specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}`, ""},
		{"spec-path-required", `{statusReplicasPath: .status.replicas}`, "scale.specReplicasPath: Required value"},
		{"spec-path-under-status", `{specReplicasPath: .status.replicas, statusReplicasPath: .status.replicas}`, "should be a json path under .spec"},
		{"no-leading-dot", `{specReplicasPath: spec.replicas, statusReplicasPath: .status.replicas}`, "must be a valid JSON path"},
		{"selector-elsewhere", `{specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .metadata.labels}`,
			"should be a json path under either .spec or .status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			types, err := ParseResourceFile([]byte("resources:\n- {group: example.com, version: v1, kind: Widget, plural: widgets, namespaced: true, scale: " + tc.scale + "}\n"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !HasScale(&types[0]) || types[0].Scale.SpecReplicasPath != ".spec.replicas" {
				t.Errorf("scale %+v", types[0].Scale)
			}
		})
	}
}

// storageRV is the resourceVersion of a stored object.
func storageRV(o *storage.Object) string { return storage.FormatResourceVersion(o.Revision) }

func TestValidateScale(t *testing.T) {
	for _, tc := range []struct {
		name, fields string
		want         []string // the errors, in order
	}{
		{"valid", `{"spec":{"replicas":2},"status":{"replicas":1,"selector":"a=b"}}`, nil},
		{"absent", `{}`, nil},
		{"negative-spec", `{"spec":{"replicas":-1}}`, []string{".spec.replicas: Invalid value: -1: should be a non-negative integer"}},
		{"negative-status", `{"status":{"replicas":-2}}`, []string{".status.replicas: Invalid value: -2: should be a non-negative integer"}},
		{"too-large", `{"spec":{"replicas":2147483648}}`, []string{".spec.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647"}},
		{"not-an-integer", `{"spec":{"replicas":"3"}}`, []string{".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 3 is of the type string, expected int64"}},
		{"selector-not-string", `{"status":{"selector":{"a":"b"}}}`, []string{`.status.selector: Invalid value: "": .status.selector accessor error: map[a:b] is of the type map[string]interface {}, expected string`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &api.Object{}
			if err := json.Unmarshal([]byte(tc.fields), &obj.Fields); err != nil {
				t.Fatal(err)
			}
			errs := ValidateScale(&scaledWidgets, obj)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	if errs := ValidateScale(&Type{}, &api.Object{}); errs != nil {
		t.Errorf("a type without scale: %v", errs)
	}
}

func TestScalePathsCheckedOnEveryWrite(t *testing.T) {
	widgets, _ := scaleFixture(t)
	ctx := context.Background()
	bad := &api.Object{Metadata: api.ObjectMeta{Name: "neg"}, Fields: map[string]json.RawMessage{"spec": json.RawMessage(`{"replicas":-1}`)}}
	if _, err := widgets.CreateObject(ctx, "ns1", bad, CreateOptions{}); api.ReasonForError(err) != api.ReasonInvalid {
		t.Fatalf("create with negative replicas: %v, want Invalid", err)
	}
	good := createWithStatus(t, widgets, "ok", `{"replicas":1}`, "")
	good.Fields["spec"] = json.RawMessage(`{"replicas":-2}`)
	good.Metadata.ResourceVersion = ""
	if _, err := widgets.UpdateObject(ctx, "ns1", "ok", good, UpdateOptions{}); api.ReasonForError(err) != api.ReasonInvalid {
		t.Fatalf("update to negative replicas: %v, want Invalid", err)
	}
}
