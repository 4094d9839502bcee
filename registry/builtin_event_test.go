package registry

import (
	"context"
	"strings"
	"testing"
)

// kubeletEvent is an event as a kubelet writes it through core/v1.
const kubeletEvent = `{"apiVersion":"v1","kind":"Event",
	"metadata":{"name":"web-7d4b9c6f5-x2x9k.17a2b3c4d5e6f7a8","namespace":"default"},
	"involvedObject":{"kind":"Pod","namespace":"default","name":"web-7d4b9c6f5-x2x9k","uid":"3e1417e9-68df-4b2a-947e-f8a37178429b","apiVersion":"v1","resourceVersion":"7019","fieldPath":"spec.containers{web}"},
	"reason":"Pulled","message":"Successfully pulled image \"nginx:1.27\"","source":{"component":"kubelet","host":"node-1"},
	"firstTimestamp":"2025-05-29T08:11:30Z","lastTimestamp":"2025-06-23T02:57:05Z","count":393,"type":"Normal",
	"eventTime":null,"reportingComponent":"kubelet","reportingInstance":"node-1"}`

// seriesEvent is an event as client-go's events.k8s.io recorder writes
// it, read back through core/v1.
const seriesEvent = `{"apiVersion":"v1","kind":"Event",
	"metadata":{"name":"sched.17a2b3c4d5e6f7a9","namespace":"default"},
	"involvedObject":{"kind":"Pod","namespace":"default","name":"web"},
	"reason":"Scheduled","message":"Successfully assigned default/web to node-1",
	"source":{},"eventTime":"2025-06-23T02:57:05.123456Z","action":"Binding",
	"reportingComponent":"default-scheduler","reportingInstance":"default-scheduler-node-1","type":"Normal"}`

func TestEventWrites(t *testing.T) {
	qualifiedEmpty := []string{
		`reportingController: Invalid value: "": name part must be non-empty`,
		`reportingController: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
	}
	runWriteCases(t, "Event", []writeCase{
		{name: "kubelet event", body: kubeletEvent, fields: map[string]string{"count": "393", "eventTime": "null"}},
		{name: "events.k8s.io style event", body: seriesEvent},
		{
			name: "cluster-scoped object's event lives in default",
			body: `{"metadata":{"name":"node-1.17a","namespace":"default"},"involvedObject":{"kind":"Node","name":"node-1"},"reason":"Starting"}`,
		},
		{
			name:    "namespace mismatch",
			body:    `{"metadata":{"name":"e","namespace":"default"},"involvedObject":{"kind":"Pod","namespace":"other","name":"web"}}`,
			invalid: []string{`involvedObject.namespace: Invalid value: "other": does not match event.namespace`},
		},
		{
			name:    "cluster-scoped object's event outside default",
			body:    `{"metadata":{"name":"e","namespace":"dev"},"involvedObject":{"kind":"Node","name":"node-1"}}`,
			invalid: []string{`involvedObject.namespace: Invalid value: "": does not match event.namespace`},
		},
		{
			name: "eventTime set: kube-system may hold cluster-scoped objects' events",
			body: `{"metadata":{"name":"e","namespace":"kube-system"},"involvedObject":{"kind":"Node","name":"n"},"eventTime":"2025-06-23T02:57:05.000000Z","reportingComponent":"kubelet","reportingInstance":"n","action":"Start","reason":"Starting"}`,
		},
		{
			name: "eventTime set: reporting fields required",
			body: `{"metadata":{"name":"e","namespace":"default"},"involvedObject":{"kind":"Pod","namespace":"default","name":"web"},"eventTime":"2025-06-23T02:57:05.000000Z"}`,
			invalid: append([]string{
				`reportingController: Required value`,
				`reportingInstance: Required value`,
				`action: Required value`,
				`reason: Required value`,
			}, qualifiedEmpty...),
		},
		{
			name: "eventTime set: lengths",
			body: `{"metadata":{"name":"e","namespace":"default"},"involvedObject":{"namespace":"default"},"eventTime":"2025-06-23T02:57:05.000000Z",
				"reportingComponent":"example.com/ctl","reportingInstance":"` + strings.Repeat("i", 129) + `","action":"` + strings.Repeat("a", 129) + `",
				"reason":"` + strings.Repeat("r", 129) + `","message":"` + strings.Repeat("m", 1025) + `"}`,
			invalid: []string{
				`reportingInstance: Invalid value: "": can have at most 128 characters`,
				`action: Invalid value: "": can have at most 128 characters`,
				`reason: Invalid value: "": can have at most 128 characters`,
				`message: Invalid value: "": can have at most 1024 characters`,
			},
		},
		{
			name: "without eventTime, lengths are not checked",
			body: `{"metadata":{"name":"e","namespace":"default"},"involvedObject":{"namespace":"default"},"reason":"` + strings.Repeat("r", 300) + `"}`,
		},
		{
			name:    "names are only checked as path segments",
			body:    `{"metadata":{"name":"a/b","namespace":"default"},"involvedObject":{"namespace":"default"}}`,
			invalid: []string{`metadata.name: Invalid value: "a/b": may not contain '/'`},
		},
		{
			name:       "count not a number",
			body:       `{"metadata":{"name":"e","namespace":"default"},"count":"3"}`,
			badRequest: `Event in version "v1" cannot be handled as a Event: json: cannot unmarshal string into Go struct field Event.count of type int32`,
		},
		{
			name:       "eventTime without microseconds",
			body:       `{"metadata":{"name":"e","namespace":"default"},"eventTime":"2025-06-23T02:57:05Z"}`,
			badRequest: `Event in version "v1" cannot be handled as a Event: parsing time "2025-06-23T02:57:05Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"`,
		},
		{
			name:   "unknown top-level fields dropped",
			body:   `{"metadata":{"name":"e","namespace":"default"},"involvedObject":{"namespace":"default"},"spec":{}}`,
			fields: map[string]string{"spec": ""},
		},
		{
			name:   "update: a recorder bumps count",
			old:    kubeletEvent,
			body:   strings.Replace(kubeletEvent, `"count":393`, `"count":394`, 1),
			fields: map[string]string{"count": "394"},
		},
	})
}

func TestEventSelectableFields(t *testing.T) {
	typ := builtin(t, "Event")
	cases := []struct {
		name string
		body string
		want map[string]string
	}{
		{
			name: "kubelet event",
			body: kubeletEvent,
			want: map[string]string{
				"metadata.name": "web-7d4b9c6f5-x2x9k.17a2b3c4d5e6f7a8", "metadata.namespace": "default",
				"involvedObject.kind": "Pod", "involvedObject.namespace": "default", "involvedObject.name": "web-7d4b9c6f5-x2x9k",
				"involvedObject.uid": "3e1417e9-68df-4b2a-947e-f8a37178429b", "involvedObject.apiVersion": "v1",
				"involvedObject.resourceVersion": "7019", "involvedObject.fieldPath": "spec.containers{web}",
				"reason": "Pulled", "reportingComponent": "kubelet", "source": "kubelet", "type": "Normal",
			},
		},
		{
			name: "source falls back to reportingComponent",
			body: seriesEvent,
			want: map[string]string{
				"metadata.name": "sched.17a2b3c4d5e6f7a9", "metadata.namespace": "default",
				"involvedObject.kind": "Pod", "involvedObject.namespace": "default", "involvedObject.name": "web",
				"involvedObject.uid": "", "involvedObject.apiVersion": "", "involvedObject.resourceVersion": "", "involvedObject.fieldPath": "",
				"reason": "Scheduled", "reportingComponent": "default-scheduler", "source": "default-scheduler", "type": "Normal",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := AttrFunc(&typ)([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if len(a.Fields) != len(tc.want) {
				t.Errorf("got %d fields, want %d: %v", len(a.Fields), len(tc.want), a.Fields)
			}
			for k, v := range tc.want {
				if a.Fields[k] != v {
					t.Errorf("%s = %q, want %q", k, a.Fields[k], v)
				}
			}
		})
	}
}

func TestBuiltinsHaveNoGeneration(t *testing.T) {
	for _, typ := range BuiltinTypes() {
		if _, ok := typ.Strategy.(Generationless); !ok {
			t.Errorf("%s has a generation; kube-apiserver gives it none", typ.Kind)
		}
	}
	reg := newEtcdRegistry(t, Config{})
	mustCreate(t, storeOf(t, reg, "namespaces"), "", `{"metadata":{"name":"default"}}`)
	events := storeOf(t, reg, "events")
	obj := mustCreate(t, events, "default", kubeletEvent)
	if obj.Metadata.Generation != 0 {
		t.Errorf("created event has generation %d", obj.Metadata.Generation)
	}
	next := mustObject(t, strings.Replace(kubeletEvent, `"Pulled"`, `"Failed"`, 1))
	out, err := events.Update(context.Background(), "default", obj.Metadata.Name, next, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := mustDecode(t, out).Metadata.Generation; g != 0 {
		t.Errorf("updated event has generation %d", g)
	}
}
