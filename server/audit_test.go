package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// auditPolicy logs Secrets at Metadata (never their data), ConfigMaps
// with their objects, and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  resources: [{group: "", resources: ["secrets"]}]
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}]
- level: None
`

// auditEvent is what the test reads of kube's audit.k8s.io/v1 Event.
type auditEvent struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Level      string `json:"level"`
	AuditID    string `json:"auditID"`
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string   `json:"username"`
		Groups   []string `json:"groups"`
	} `json:"user"`
	ObjectRef *struct {
		Resource, Namespace, Name, APIVersion, UID string
	} `json:"objectRef"`
	ResponseStatus struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
	RequestObject  map[string]any    `json:"requestObject"`
	ResponseObject map[string]any    `json:"responseObject"`
	Annotations    map[string]string `json:"annotations"`
}

func readAuditLog(t *testing.T, path string) []auditEvent {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []auditEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line is not JSON: %v: %s", err, sc.Text())
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestAuditLog writes a Secret and a ConfigMap as a user under a policy
// that logs Secrets at Metadata and ConfigMaps at RequestResponse, and
// reads kube's JSON lines: one Event per audited request at ResponseComplete
// (RequestReceived omitted), with the user, verb and objectRef; the
// ConfigMap's objects in them, the Secret's not; a request with a bad
// token audited by kube's failed-authentication filter; nothing else.
func TestAuditLog(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "audit", "audit.log")
	srv := startWithUsers(t, Config{Audit: AuditConfig{PolicyFile: policy, LogPath: logPath}}, "alice")
	u := newUserClient(srv, "alice")
	defer u.c.CloseIdleConnections()
	ctx := context.Background()
	if fi, err := os.Stat(logPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("audit log: %v, %v; want a 0600 file", fi, err)
	}

	for _, r := range []struct{ method, path, body string }{
		{"POST", "/api/v1/namespaces/default/secrets", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1"},"stringData":{"password":"hunter2"}}`},
		{"GET", "/api/v1/namespaces/default/secrets/s1", ""},
		{"POST", "/api/v1/namespaces/default/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":{"k":"v"}}`},
		{"GET", "/api/v1/namespaces/default/configmaps/nosuch", ""},
		{"GET", "/api/v1/namespaces", ""},
	} {
		if _, _, err := u.do(ctx, r.method, r.path, r.body); err != nil {
			t.Fatal(err)
		}
	}
	bad := &userClient{c: u.c, url: u.url, token: "wrong"}
	if resp, _, err := bad.do(ctx, "GET", "/api/v1/namespaces/default/secrets", ""); err != nil || resp.StatusCode != 401 {
		t.Fatalf("bad token: %v %v", resp, err)
	}

	// The server's own controllers write ConfigMaps too (kube-root-ca.crt),
	// audited as in kube; the test looks at alice's requests and the
	// unauthenticated one.
	var evs []auditEvent
	waitFor(t, "five audit events", func() bool {
		evs = nil
		for _, ev := range readAuditLog(t, logPath) {
			if ev.User.Username == "alice" || ev.ResponseStatus.Code == 401 {
				evs = append(evs, ev)
			}
		}
		return len(evs) >= 5
	})
	if len(evs) != 5 {
		t.Fatalf("%d events, want 5: %+v", len(evs), evs)
	}
	for i, ev := range evs {
		if ev.Kind != "Event" || ev.APIVersion != "audit.k8s.io/v1" || ev.AuditID == "" {
			t.Errorf("event %d: kind %q apiVersion %q auditID %q, want kube's Event", i, ev.Kind, ev.APIVersion, ev.AuditID)
		}
	}
	want := []struct {
		level, stage, user, verb, resource, name string
		code                                     int
		objects                                  bool
	}{
		{"Metadata", "ResponseComplete", "alice", "create", "secrets", "s1", 201, false},
		{"Metadata", "ResponseComplete", "alice", "get", "secrets", "s1", 200, false},
		{"RequestResponse", "ResponseComplete", "alice", "create", "configmaps", "c1", 201, true},
		{"RequestResponse", "ResponseComplete", "alice", "get", "configmaps", "nosuch", 404, false},
		{"Metadata", "ResponseStarted", "", "list", "secrets", "", 401, false},
	}
	for i, w := range want {
		ev := evs[i] // the namespaces' list is not audited
		if ev.Level != w.level || ev.Stage != w.stage || ev.User.Username != w.user || ev.Verb != w.verb ||
			ev.ObjectRef == nil || ev.ObjectRef.Resource != w.resource || ev.ObjectRef.Name != w.name || ev.ResponseStatus.Code != w.code {
			t.Errorf("event %d: %+v\nwant %+v", i, ev, w)
			continue
		}
		if ev.ObjectRef.APIVersion != "v1" || (w.name != "" && ev.ObjectRef.Namespace != "default") {
			t.Errorf("event %d: objectRef %+v", i, *ev.ObjectRef)
		}
		if got := ev.RequestObject != nil || ev.ResponseObject != nil; got != w.objects {
			t.Errorf("event %d: requestObject %v responseObject %v, want objects: %v", i, ev.RequestObject, ev.ResponseObject, w.objects)
		}
	}
	cm := evs[2]
	if d, _ := cm.RequestObject["data"].(map[string]any); d["k"] != "v" {
		t.Errorf("ConfigMap requestObject %v, want the ConfigMap sent", cm.RequestObject)
	}
	if md, _ := cm.ResponseObject["metadata"].(map[string]any); md["uid"] == nil || md["name"] != "c1" {
		t.Errorf("ConfigMap responseObject %v, want the ConfigMap created", cm.ResponseObject)
	}
	if msg := evs[3].ResponseStatus.Message; msg != `configmaps "nosuch" not found` {
		t.Errorf("404's responseStatus message %q, want kube's Status", msg)
	}
	if b, _ := os.ReadFile(logPath); bytes.Contains(b, []byte("hunter2")) || bytes.Contains(b, []byte("aHVudGVyMg")) {
		t.Error("the Secret's data is in the audit log")
	}
}
