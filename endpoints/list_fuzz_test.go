package endpoints

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/internal/apitest"
)

// FuzzListParams sends a list (of a namespace's ConfigMaps, or of all
// namespaces') and a get of a ConfigMap with any selectors, limit,
// continue token, resourceVersion, resourceVersionMatch and Accept
// header. Beyond every answer's invariants: a JSON list holds no more
// items than the limit, and a list or get that succeeds without the
// conversions a client may ask for (as=Table...) answers the kind asked.
func FuzzListParams(f *testing.F) {
	s := newFuzzServer(f)
	c := &apitest.Client{T: f, URL: s.url}
	for i := range 5 {
		c.Must(201, "POST", cms, apitest.ConfigMap("page-"+strconv.Itoa(i), map[string]string{"n": strconv.Itoa(i)}, nil))
	}
	page := c.Must(200, "GET", cms+"?limit=2", nil)
	tok, _ := field(page, "metadata.continue").(string)
	rv, _ := field(page, "metadata.resourceVersion").(string)
	if tok == "" || rv == "" {
		f.Fatalf("a paged list without a continue token or a resourceVersion: %v", page)
	}
	type seed struct{ label, field, limit, cont, rv, rvm, accept string }
	for _, sd := range []seed{
		{"", "", "2", tok, "", "", ""},
		{"n in (1,2),!x", "metadata.name!=page-1", "1", "", rv, "NotOlderThan", "application/json"},
		{"n=1", "", "", "", "0", "", "application/json;as=Table;v=v1;g=meta.k8s.io, application/json"},
		{"", "metadata.namespace=ns1", "3", "", rv, "Exact", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"},
		{"", "", "1", tok, "0", "", protobufMedia + ", application/json"},
		{"a b", "spec.x=1", "-1", "bogus", "+1", "Latest", "application/yaml;q=0.5, */*;q=0.1"},
		{"", "", "", "", "18446744073709551616", "", "text/html"},
		{"", "", "1", tok + "x", "", "", "application/json;as=Table;v=v1beta1;g=meta.k8s.io"},
	} {
		f.Add(sd.label, sd.field, sd.limit, sd.cont, sd.rv, sd.rvm, sd.accept)
	}
	f.Fuzz(func(t *testing.T, label, fieldSel, limit, cont, rv, rvm, accept string) {
		if strings.ContainsFunc(accept, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return // no HTTP client sends it: net/http refuses control characters in a header
		}
		q := url.Values{}
		for k, v := range map[string]string{"labelSelector": label, "fieldSelector": fieldSel, "limit": limit, "continue": cont, "resourceVersion": rv, "resourceVersionMatch": rvm} {
			if v != "" {
				q.Set(k, v)
			}
		}
		for _, path := range []string{cms, "/api/v1/configmaps"} {
			r := s.do(t, "GET", path+"?"+q.Encode(), nil, "Accept", accept)
			if r.code != 200 || r.header.Get("Content-Type") != "application/json" {
				continue
			}
			var l struct {
				Kind  string            `json:"kind"`
				Items []json.RawMessage `json:"items"`
				Rows  []json.RawMessage `json:"rows"`
			}
			if err := json.Unmarshal(r.body, &l); err != nil {
				t.Fatalf("GET %s?%s answered %s: %v", path, q.Encode(), r.body, err)
			}
			if n, err := strconv.ParseInt(limit, 10, 64); err == nil && n > 0 && int64(len(l.Items)+len(l.Rows)) > n {
				t.Fatalf("GET %s?%s answered %d items", path, q.Encode(), len(l.Items)+len(l.Rows))
			}
			switch l.Kind {
			case "ConfigMapList", "PartialObjectMetadataList", "Table":
			default:
				t.Fatalf("GET %s?%s answered a %q", path, q.Encode(), l.Kind)
			}
		}
		g := url.Values{}
		if rv != "" {
			g.Set("resourceVersion", rv)
		}
		s.do(t, "GET", cms+"/page-1?"+g.Encode(), nil, "Accept", accept)
	})
}
