package endpoints

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/internal/apitest"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"sigs.k8s.io/yaml"
)

// The fuzz targets of this package send requests built from fuzz input
// to the complete HTTP handler (endpoints.New) over a real registry and
// embedded etcd, one server per target (per fuzzing process), and check
// what must hold whatever a client sends:
//   - no 5xx (but the 504 for a resourceVersion newer than etcd's, as
//     kube-apiserver's) and nothing logged at ERROR (a panic, an
//     internal error);
//   - every answer that is not 2xx is a Kubernetes Status in JSON whose
//     code is the HTTP code;
//   - answers are bounded in size and time;
//   - a refused write leaves the stored object exactly as it was, and an
//     accepted one stores what it answered.
//
// Each input starts from the same objects: after an accepted write the
// target object is deleted and created again.

// Bounds on one answer: far above anything a small fuzz input can
// legitimately produce.
const (
	fuzzMaxResponse = 4 << 20
	fuzzTimeout     = 20 * time.Second
)

// fuzzObject is an object each input writes to, and how to restore it.
type fuzzObject struct {
	// collection is the path of its collection in namespace ns1.
	collection string
	// original is its JSON as created before each input.
	original string
}

// path is the object's URL path.
func (o fuzzObject) path() string { return o.collection + "/fz" }

// The objects the write targets act on: a built-in kind with protobuf
// and simple rules, a built-in kind with defaulting, strategic merge
// keys and a /scale, and a custom type with a /status and a /scale.
var (
	fuzzConfigMap = fuzzObject{"/api/v1/namespaces/ns1/configmaps",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fz","labels":{"app":"fz"}},"data":{"k":"v","j":"{\"a\":1}"}}`}
	fuzzDeployment = fuzzObject{"/apis/apps/v1/namespaces/ns1/deployments",
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"fz"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"fz"}},` +
			`"template":{"metadata":{"labels":{"app":"fz"}},"spec":{"containers":[{"name":"c","image":"busybox","ports":[{"containerPort":80}],"env":[{"name":"A","value":"1"}]}]}}}}`}
	fuzzDoohickey = fuzzObject{doohickeys,
		`{"apiVersion":"example.com/v1","kind":"Doohickey","metadata":{"name":"fz"},"spec":{"replicas":3,"color":"red","list":[1,"a",{"b":null}]}}`}
	fuzzObjects = []fuzzObject{fuzzConfigMap, fuzzDeployment, fuzzDoohickey}
)

// fuzzServer is the server of one fuzz target.
type fuzzServer struct {
	url    string
	client *http.Client
	errs   *errorLog
}

// newFuzzServer starts the complete handler over a fresh registry and
// etcd (serving the doohickeys of scaledType too) with namespace ns1 and
// the fuzz objects created.
func newFuzzServer(f *testing.F) *fuzzServer {
	f.Helper()
	reg, _ := apitest.Registry(f)
	if err := reg.Add(scaledType); err != nil {
		f.Fatal(err)
	}
	errs := &errorLog{}
	log := slog.New(errs)
	srv := httptest.NewServer(New(Config{Registry: reg, OpenAPI: &builtin.OpenAPI{}, Logger: log}))
	f.Cleanup(srv.Close)
	s := &fuzzServer{url: srv.URL, client: &http.Client{Timeout: fuzzTimeout}, errs: errs}
	c := &apitest.Client{T: f, URL: srv.URL}
	c.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	for _, o := range fuzzObjects {
		c.Must(201, "POST", o.collection, o.original)
	}
	return s
}

// fuzzResponse is one answer.
type fuzzResponse struct {
	code   int
	header http.Header
	body   []byte
}

// do sends one request with a JSON Accept header unless headers set
// another, and checks the invariants every answer keeps.
func (s *fuzzServer) do(t *testing.T, method, path string, body []byte, headers ...string) fuzzResponse {
	t.Helper()
	s.errs.reset()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, fuzzMaxResponse+1))
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	if len(data) > fuzzMaxResponse {
		t.Fatalf("%s %s: the answer is over %d bytes", method, path, fuzzMaxResponse)
	}
	r := fuzzResponse{code: resp.StatusCode, header: resp.Header, body: data}
	if logged := s.errs.take(); logged != "" {
		t.Fatalf("%s %s = %d: the server logged an error:\n%s", method, path, r.code, logged)
	}
	if r.code >= 500 && !tooNewResourceVersion(req, r) {
		t.Fatalf("%s %s = %d for client input: %s", method, path, r.code, data)
	}
	if r.code < 200 || r.code > 299 {
		checkStatus(t, method+" "+path, r)
	}
	return r
}

// tooNewResourceVersion reports whether r is the one 5xx a client may
// cause, as with kube-apiserver: 504 Timeout with a Retry-After for a
// resourceVersion newer than the server's revision.
func tooNewResourceVersion(req *http.Request, r fuzzResponse) bool {
	var st struct{ Reason string }
	return r.code == http.StatusGatewayTimeout && req.URL.Query().Get("resourceVersion") != "" &&
		r.header.Get("Retry-After") != "" && yaml.Unmarshal(r.body, &st) == nil && st.Reason == "Timeout"
}

// checkStatus checks that a failure answer is a Status in JSON (or, when
// the client negotiated it, YAML or protobuf) carrying the HTTP code.
func checkStatus(t *testing.T, what string, r fuzzResponse) {
	t.Helper()
	ct := r.header.Get("Content-Type")
	switch ct {
	case "application/json":
	case "application/yaml":
		return // its conversion from JSON is checked by the JSON answers
	case protobufMedia:
		if !bytes.HasPrefix(r.body, []byte("k8s\x00")) {
			t.Fatalf("%s = %d: a protobuf Status without the magic: %q", what, r.code, r.body)
		}
		return
	default:
		t.Fatalf("%s = %d with Content-Type %q: %s", what, r.code, ct, r.body)
	}
	var st struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Status     string         `json:"status"`
		Message    string         `json:"message"`
		Reason     string         `json:"reason"`
		Code       int            `json:"code"`
		Metadata   map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Fatalf("%s = %d: not a JSON Status: %v: %s", what, r.code, err, r.body)
	}
	if st.APIVersion != "v1" || st.Kind != "Status" || st.Status != "Failure" || st.Code != r.code || st.Message == "" || st.Metadata == nil {
		t.Fatalf("%s = %d: not a failure Status with that code and a message: %s", what, r.code, r.body)
	}
}

// get returns the object at path as stored now, or nil when it does not
// exist.
func (s *fuzzServer) get(t *testing.T, path string) []byte {
	t.Helper()
	r := s.do(t, "GET", path, nil)
	switch r.code {
	case 200:
		return r.body
	case 404:
		return nil
	}
	t.Fatalf("GET %s = %d: %s", path, r.code, r.body)
	return nil
}

// checkWrite checks a write to the object at path against the object
// as it was before (nil: absent): refused, it is unchanged; accepted
// (and not a dry run), it is what the write answered.
func (s *fuzzServer) checkWrite(t *testing.T, path string, before []byte, r fuzzResponse, dryRun bool) {
	t.Helper()
	after := s.get(t, path)
	switch {
	case r.code >= 300 || dryRun:
		if !bytes.Equal(after, before) {
			t.Fatalf("a write answered %d (dry run %v) changed %s\nfrom %s\nto   %s", r.code, dryRun, path, before, after)
		}
	case r.header.Get("Content-Type") == "application/json" && !sameJSON(r.body, after):
		t.Fatalf("a write answered %d with\n%s\nbut %s is stored as\n%s", r.code, r.body, path, after)
	}
}

// restore puts o back as it was created, whatever an input did to it:
// deleted (without the finalizers an input may have added), created
// again.
func (s *fuzzServer) restore(t *testing.T, o fuzzObject) {
	t.Helper()
	s.remove(t, o.path())
	if r := s.do(t, "POST", o.collection, []byte(o.original)); r.code != 201 {
		t.Fatalf("restoring %s: %d: %s", o.path(), r.code, r.body)
	}
}

// remove deletes the object at path, clearing its finalizers when the
// delete leaves it in place.
func (s *fuzzServer) remove(t *testing.T, path string) {
	t.Helper()
	for range 3 {
		if r := s.do(t, "DELETE", path, nil); r.code == 404 {
			return
		}
		if s.get(t, path) == nil {
			return
		}
		s.do(t, "PATCH", path, []byte(`{"metadata":{"finalizers":null}}`), "Content-Type", "application/merge-patch+json")
	}
	t.Fatalf("%s cannot be deleted: %s", path, s.get(t, path))
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// errorLog is a slog.Handler that keeps the records at ERROR and above.
type errorLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *errorLog) Enabled(_ context.Context, level slog.Level) bool { return level >= slog.LevelError }

func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.buf, "%s", r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&l.buf, " %s=%v", a.Key, a.Value)
		return true
	})
	l.buf.WriteByte('\n')
	return nil
}

func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *errorLog) WithGroup(string) slog.Handler      { return l }

func (l *errorLog) reset() {
	l.mu.Lock()
	l.buf.Reset()
	l.mu.Unlock()
}

// take returns what was logged since the last reset.
func (l *errorLog) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// pick chooses one of xs by a fuzzed byte.
func pick[T any](b uint8, xs []T) T { return xs[int(b)%len(xs)] }

// protobufOf encodes the JSON of a built-in object in Kubernetes'
// protobuf, for seeds.
func protobufOf(f *testing.F, data string) []byte {
	f.Helper()
	var tm runtime.TypeMeta
	if err := json.Unmarshal([]byte(data), &tm); err != nil {
		f.Fatal(err)
	}
	s := builtin.Scheme()
	obj, err := s.New(tm.GroupVersionKind())
	if err != nil {
		f.Fatal(err)
	}
	if err := json.Unmarshal([]byte(data), obj); err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(s, s).Encode(obj, &buf); err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}
