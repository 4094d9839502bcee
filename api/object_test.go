package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestObjectRoundTrip(t *testing.T) {
	in := `{"kind":"Widget","spec":{"b":2,"a":{"big":12345678901234567890}},"apiVersion":"example.com/v1",` +
		`"metadata":{"name":"w","labels":{"x":"y"},"creationTimestamp":"2026-01-02T03:04:05Z"},"status":null}`
	var o Object
	if err := json.Unmarshal([]byte(in), &o); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(&o)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","creationTimestamp":"2026-01-02T03:04:05Z","labels":{"x":"y"}},` +
		`"spec":{"b":2,"a":{"big":12345678901234567890}},"status":null}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
}

func TestObjectDecodeErrors(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"not an object", `[1]`, "must be a JSON object, got an array"},
		{"labels not an object", `{"metadata":{"labels":[]}}`, "metadata.labels must be an object, got array"},
		{"null", `null`, "not null"},
		{"kind not a string", `{"kind":5}`, "kind must be a string, got a number"},
		{"apiVersion not a string", `{"apiVersion":{}}`, "apiVersion must be a string, got an object"},
		{"name not a string", `{"metadata":{"name":5}}`, "metadata.name must be a string, got number"},
		{"bad time", `{"metadata":{"creationTimestamp":"yesterday"}}`, "metadata"},
		{"truncated", `{"metadata":{"name":"a"`, "unexpected end"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var o Object
			err := json.Unmarshal([]byte(tc.in), &o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestJSONEqual(t *testing.T) {
	cases := []struct {
		a, b string
		eq   bool
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, true},
		{`{"a":1.0}`, `{"a":1}`, false}, // number text differs; kept exact
		{`{"a":[1,2]}`, `{"a":[2,1]}`, false},
		{``, `null`, true},
		{`{"a":1}`, `{"a":2}`, false},
	}
	for _, tc := range cases {
		if got := JSONEqual(json.RawMessage(tc.a), json.RawMessage(tc.b)); got != tc.eq {
			t.Errorf("JSONEqual(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.eq)
		}
	}
}

func TestTimeWireForm(t *testing.T) {
	ts := Time{time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))}
	b, _ := json.Marshal(ts)
	if string(b) != `"2026-01-02T02:04:05Z"` {
		t.Fatalf("got %s", b)
	}
	b, _ = json.Marshal(Time{})
	if string(b) != "null" {
		t.Fatalf("zero time: %s", b)
	}
}

func TestStatusErrors(t *testing.T) {
	cm := GroupResource{Resource: "configmaps"}
	lease := GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	cases := []struct {
		name   string
		err    *StatusError
		code   int32
		reason StatusReason
		msg    string
	}{
		{"not found", NewNotFound(cm, "a"), 404, ReasonNotFound, `configmaps "a" not found`},
		{"not found in group", NewNotFound(lease, "l"), 404, ReasonNotFound, `leases.coordination.k8s.io "l" not found`},
		{"exists", NewAlreadyExists(cm, "a"), 409, ReasonAlreadyExists, `configmaps "a" already exists`},
		{"conflict", NewConflict(cm, "a", ConflictModified), 409, ReasonConflict,
			`Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again`},
		{"invalid", NewInvalid(GroupKind{Kind: "ConfigMap"}, "A", field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), "A", "bad")}), 422, ReasonInvalid,
			`ConfigMap "A" is invalid: metadata.name: Invalid value: "A": bad`},
		{"too large", NewRequestEntityTooLarge(3 << 20), 413, ReasonRequestEntityTooLarge, "Request entity too large: limit is 3145728"},
		{"timeout", NewTimeout("slow", 1), 504, ReasonTimeout, "Timeout: slow"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.err.Status()
			if st.Kind != "Status" || st.APIVersion != "v1" || st.Status != StatusFailure {
				t.Fatalf("envelope %+v", st)
			}
			if st.Code != tc.code || st.Reason != tc.reason || st.Message != tc.msg {
				t.Fatalf("got %d %s %q", st.Code, st.Reason, st.Message)
			}
		})
	}
	inv := NewInvalid(GroupKind{Kind: "ConfigMap"}, "A", field.ErrorList{field.Required(field.NewPath("data"), "")}).Status()
	if c := inv.Details.Causes; len(c) != 1 || c[0].Field != "data" || c[0].Type != "FieldValueRequired" {
		t.Fatalf("causes %+v", c)
	}
	if !IsNotFound(NewNotFound(cm, "x")) || IsNotFound(NewAlreadyExists(cm, "x")) {
		t.Fatal("IsNotFound")
	}
}

func TestDeepCopySharesNothing(t *testing.T) {
	yes := true
	grace := int64(5)
	now := Now()
	o := &Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"}, Annotations: map[string]string{"a": "b"},
			Finalizers: []string{"f"}, DeletionTimestamp: &now, DeletionGracePeriodSeconds: &grace,
			OwnerReferences: []OwnerReference{{Name: "o", Controller: &yes}},
			ManagedFields:   []ManagedFieldsEntry{{Manager: "m", Time: &now, FieldsV1: json.RawMessage(`{"f:data":{}}`)}}},
		Fields: map[string]json.RawMessage{"data": json.RawMessage(`{"x":"1"}`)}}
	before, _ := json.Marshal(o)
	c := o.DeepCopy()
	if got, _ := json.Marshal(c); string(got) != string(before) {
		t.Fatalf("copy differs:\n%s\n%s", got, before)
	}
	c.Metadata.Labels["k"] = "changed"
	c.Metadata.Annotations["a"] = "changed"
	c.Metadata.Finalizers[0] = "changed"
	*c.Metadata.DeletionGracePeriodSeconds = 9
	*c.Metadata.OwnerReferences[0].Controller = false
	c.Metadata.ManagedFields[0].FieldsV1[0] = '['
	c.Fields["data"][0] = '['
	if after, _ := json.Marshal(o); string(after) != string(before) {
		t.Fatalf("changing the copy changed the original:\n%s\n%s", after, before)
	}
}

// TestTakeDecoded checks a remembered decoded form is handed back only
// while the object's fields are the ones it was decoded from, and once.
func TestTakeDecoded(t *testing.T) {
	fresh := func() *Object {
		return &Object{Fields: map[string]json.RawMessage{"spec": json.RawMessage(`{"a":1}`), "status": json.RawMessage(`{}`)}}
	}
	for name, c := range map[string]struct {
		change func(*Object)
		want   bool
	}{
		"unchanged":        {func(*Object) {}, true},
		"metadata changed": {func(o *Object) { o.Metadata.Name = "x" }, true},
		"struct copied":    {func(o *Object) { c := *o; *o = c }, true},
		"field replaced":   {func(o *Object) { o.Fields["spec"] = json.RawMessage(`{"a":1}`) }, false},
		"field removed":    {func(o *Object) { delete(o.Fields, "status") }, false},
		"field added":      {func(o *Object) { o.Fields["data"] = json.RawMessage(`1`) }, false},
		"deep copied":      {func(o *Object) { *o = *o.DeepCopy() }, false},
	} {
		t.Run(name, func(t *testing.T) {
			o := fresh()
			o.SetDecoded("typed")
			c.change(o)
			if got := o.TakeDecoded() != nil; got != c.want {
				t.Fatalf("TakeDecoded returned a value: %v, want %v", got, c.want)
			}
			if o.TakeDecoded() != nil {
				t.Fatal("a second TakeDecoded returned the value again")
			}
		})
	}
}
