package registry

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// errorStrings renders errs as kube-apiserver prints causes: "field: body".
func errorStrings(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func assertErrors(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	got := errorStrings(errs)
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n got  %q\n want %q", got, want)
	}
}

const (
	subdomainMsg = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
)

func TestValidateObjectMeta(t *testing.T) {
	long := strings.Repeat("a", 254)
	cases := []struct {
		name       string
		meta       api.ObjectMeta
		namespaced bool
		rule       NameRule
		want       []string
	}{
		{
			name:       "valid",
			meta:       api.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app.kubernetes.io/name": "web"}, Annotations: map[string]string{"example.com/a": "x"}},
			namespaced: true,
		},
		{
			name:       "uppercase name",
			meta:       api.ObjectMeta{Name: "Web", Namespace: "default"},
			namespaced: true,
			want:       []string{`metadata.name: Invalid value: "Web": ` + subdomainMsg},
		},
		{
			name:       "name too long",
			meta:       api.ObjectMeta{Name: long, Namespace: "default"},
			namespaced: true,
			want:       []string{`metadata.name: Invalid value: "` + long + `": must be no more than 253 characters`},
		},
		{
			name: "dns label rule rejects dots",
			meta: api.ObjectMeta{Name: "a.b"},
			rule: NameLabel,
			want: []string{`metadata.name: Invalid value: "a.b": must not contain dots`},
		},
		{
			name: "path segment rule allows uppercase and dots",
			meta: api.ObjectMeta{Name: "Pod.17a2b3c4d5e6f7"},
			rule: NamePathSegment,
		},
		{
			name: "path segment rule rejects a slash",
			meta: api.ObjectMeta{Name: "a/b"},
			rule: NamePathSegment,
			want: []string{`metadata.name: Invalid value: "a/b": may not contain '/'`},
		},
		{
			name:       "name missing without generateName",
			meta:       api.ObjectMeta{Namespace: "default"},
			namespaced: true,
			want:       []string{`metadata.name: Required value: name or generateName is required`},
		},
		{
			name:       "generateName alone is enough",
			meta:       api.ObjectMeta{GenerateName: "web-", Namespace: "default"},
			namespaced: true,
		},
		{
			name:       "bad generateName",
			meta:       api.ObjectMeta{GenerateName: "Web-", Namespace: "default"},
			namespaced: true,
			want:       []string{`metadata.generateName: Invalid value: "Web-": ` + subdomainMsg},
		},
		{
			name:       "label key invalid",
			meta:       api.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"bad key": "v"}},
			namespaced: true,
			want:       []string{`metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		},
		{
			name:       "label value invalid",
			meta:       api.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "-web"}},
			namespaced: true,
			want:       []string{`metadata.labels: Invalid value: "-web": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		},
		{
			name:       "annotation key invalid",
			meta:       api.ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{"a/b/c": "v"}},
			namespaced: true,
			want:       []string{`metadata.annotations: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`},
		},
		{
			name:       "annotations too large",
			meta:       api.ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{"big": strings.Repeat("x", 256*1024)}},
			namespaced: true,
			want:       []string{`metadata.annotations: Too long: may not be more than 262144 bytes`},
		},
		{
			name:       "namespace missing on a namespaced type",
			meta:       api.ObjectMeta{Name: "web"},
			namespaced: true,
			want:       []string{`metadata.namespace: Required value`},
		},
		{
			name: "namespace set on a cluster-scoped type",
			meta: api.ObjectMeta{Name: "web", Namespace: "default"},
			want: []string{`metadata.namespace: Forbidden: not allowed on this type`},
		},
		{
			name: "finalizer not a qualified name",
			meta: api.ObjectMeta{Name: "web", Finalizers: []string{"a/b/c"}},
			want: []string{`metadata.finalizers: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`},
		},
		{
			name: "ownerReference missing uid",
			meta: api.ObjectMeta{Name: "web", OwnerReferences: []api.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x"}}},
			want: []string{`metadata.ownerReferences[0].uid: Required value: must not be empty`},
		},
		{
			name: "managedFields operation unsupported",
			meta: api.ObjectMeta{Name: "web", ManagedFields: []api.ManagedFieldsEntry{{Manager: "kubectl", Operation: "Patch"}}},
			want: []string{`metadata.managedFields[0].operation: Unsupported value: "Patch": supported values: "Apply", "Update"`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, ValidateObjectMeta(&tc.meta, tc.namespaced, tc.rule), tc.want)
		})
	}
}

func TestValidateObjectMetaUpdate(t *testing.T) {
	created := api.Time{Time: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}
	deleting := api.Time{Time: created.Add(time.Hour)}
	old := api.ObjectMeta{Name: "web", Namespace: "default", UID: "u1", ResourceVersion: "5", Generation: 2, CreationTimestamp: created}
	cases := []struct {
		name   string
		old    api.ObjectMeta
		change func(m *api.ObjectMeta)
		want   []string
	}{
		{name: "unchanged", change: func(*api.ObjectMeta) {}},
		{
			name:   "no resourceVersion is an unconditional update",
			change: func(m *api.ObjectMeta) { m.ResourceVersion = "" },
		},
		{
			name:   "name changed",
			change: func(m *api.ObjectMeta) { m.Name = "other" },
			want:   []string{`metadata.name: Invalid value: "other": field is immutable`},
		},
		{
			name:   "uid changed",
			change: func(m *api.ObjectMeta) { m.UID = "u2" },
			want:   []string{`metadata.uid: Invalid value: "u2": field is immutable`},
		},
		{
			name:   "creationTimestamp changed",
			change: func(m *api.ObjectMeta) { m.CreationTimestamp = api.Time{Time: created.Add(time.Second)} },
			want:   []string{`metadata.creationTimestamp: Invalid value: "2024-01-02T03:04:06Z": field is immutable`},
		},
		{
			name:   "creationTimestamp in another zone is the same instant",
			change: func(m *api.ObjectMeta) { m.CreationTimestamp = api.Time{Time: created.In(time.FixedZone("X", 3600))} },
		},
		{
			name:   "generation decremented",
			change: func(m *api.ObjectMeta) { m.Generation = 1 },
			want:   []string{`metadata.generation: Invalid value: 1: must not be decremented`},
		},
		{
			name:   "label value invalid",
			change: func(m *api.ObjectMeta) { m.Labels = map[string]string{"app": "a b"} },
			want:   []string{`metadata.labels: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		},
		{
			name: "new finalizer while deleting",
			old: func() api.ObjectMeta {
				m := old
				m.DeletionTimestamp = &deleting
				m.Finalizers = []string{"example.com/a"}
				return m
			}(),
			change: func(m *api.ObjectMeta) { m.Finalizers = []string{"example.com/a", "example.com/b"} },
			want:   []string{`metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b"}`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.old
			if o.Name == "" {
				o = old
			}
			n := o
			tc.change(&n)
			assertErrors(t, ValidateObjectMetaUpdate(&n, &o), tc.want)
		})
	}
}

func TestNameValidator(t *testing.T) {
	cases := []struct {
		rule   NameRule
		name   string
		prefix bool
		ok     bool
	}{
		{NameSubdomain, "a.b-c", false, true},
		{NameSubdomain, "A", false, false},
		{NameSubdomain, "web-", true, true},
		{NameSubdomain, "web-", false, false},
		{NameLabel, "a-b", false, true},
		{NameLabel, "a.b", false, false},
		{NameLabel, strings.Repeat("a", 64), false, false},
		{NamePathSegment, "Any_Thing.1", false, true},
		{NamePathSegment, "..", false, false},
		{NamePathSegment, "a%b", false, false},
	}
	for _, tc := range cases {
		msgs := NameValidator(tc.rule)(tc.name, tc.prefix)
		if ok := len(msgs) == 0; ok != tc.ok {
			t.Errorf("rule %d name %q prefix %v: ok = %v (%q), want %v", tc.rule, tc.name, tc.prefix, ok, msgs, tc.ok)
		}
	}
}
