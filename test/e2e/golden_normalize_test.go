package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// Placeholders for the values a server picks on its own.
const (
	placeholderUID             = "<uid>"
	placeholderResourceVersion = "<resourceVersion>"
	placeholderTime            = "<timestamp>"
	placeholderGenerated       = "<generated>"
	placeholderClusterIP       = "<clusterIP>"
	placeholderNodePort        = "<nodePort>"
)

// normalizeGolden returns a copy of a created object with the values a
// server picks on its own replaced by placeholders: uid (wherever it is
// repeated, as in a Job's generated selector), resourceVersion, times of
// creation and of managed fields, the random suffix of a generated name,
// the stampedTimes, a Service's ClusterIPs and node ports.
func normalizeGolden(obj map[string]any) map[string]any {
	obj = runtime.DeepCopyJSON(obj)
	if items, ok := obj["items"].([]any); ok { // a list, as kubectl get -f shows one object
		for i, it := range items {
			if it, ok := it.(map[string]any); ok {
				items[i] = normalizeGolden(it)
			}
		}
		return obj
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		return obj
	}
	if uid, _ := md["uid"].(string); uid != "" {
		replaceInStrings(obj, uid, placeholderUID)
	}
	setIfPresent(md, "resourceVersion", placeholderResourceVersion)
	setIfPresent(md, "creationTimestamp", placeholderTime)
	if mf, ok := md["managedFields"].([]any); ok {
		for _, e := range mf {
			if e, ok := e.(map[string]any); ok {
				setIfPresent(e, "time", placeholderTime)
			}
		}
	}
	replaceTimes(obj)
	if gen, _ := md["generateName"].(string); gen != "" {
		if name, _ := md["name"].(string); strings.HasPrefix(name, gen) {
			md["name"] = gen + placeholderGenerated
		}
	}
	if obj["apiVersion"] == "v1" && obj["kind"] == "Service" {
		spec, _ := obj["spec"].(map[string]any)
		if ip, _ := spec["clusterIP"].(string); ip != "" && ip != "None" {
			spec["clusterIP"] = placeholderClusterIP
		}
		if ips, ok := spec["clusterIPs"].([]any); ok {
			for i, ip := range ips {
				if ip != "None" {
					ips[i] = placeholderClusterIP
				}
			}
		}
		setIfPresent(spec, "healthCheckNodePort", placeholderNodePort)
		if ports, ok := spec["ports"].([]any); ok {
			for _, p := range ports {
				if p, ok := p.(map[string]any); ok {
					setIfPresent(p, "nodePort", placeholderNodePort)
				}
			}
		}
	}
	return obj
}

// stampedTimes are the fields, in any kind, holding a time the server
// stamps on an object it creates: when a PersistentVolume entered its
// phase, when a DeviceTaintRule's taint was added, when a condition last
// changed.
var stampedTimes = []string{"lastPhaseTransitionTime", "timeAdded", "lastTransitionTime"}

// replaceTimes replaces the stampedTimes under v by placeholderTime.
func replaceTimes(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if _, ok := e.(string); ok && slices.Contains(stampedTimes, k) {
				v[k] = placeholderTime
				continue
			}
			replaceTimes(e)
		}
	case []any:
		for _, e := range v {
			replaceTimes(e)
		}
	}
}

// setIfPresent sets m[key] to v when m has the key.
func setIfPresent(m map[string]any, key string, v any) {
	if _, ok := m[key]; ok {
		m[key] = v
	}
}

// replaceInStrings replaces old with new in every string value under v.
func replaceInStrings(v any, old, new string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok {
				v[k] = strings.ReplaceAll(s, old, new)
			} else {
				replaceInStrings(e, old, new)
			}
		}
	case []any:
		for i, e := range v {
			if s, ok := e.(string); ok {
				v[i] = strings.ReplaceAll(s, old, new)
			} else {
				replaceInStrings(e, old, new)
			}
		}
	}
}

// goldenDiff lists where got differs from want, one line per differing
// value ("spec.x: kube <json>, miniapi <json>"), in path order.
func goldenDiff(want, got any) []string {
	var out []string
	diffValues("", want, got, &out)
	return out
}

func diffValues(path string, want, got any, out *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := slices.Sorted(maps.Keys(w))
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			wv, wok := w[k]
			gv, gok := g[k]
			switch {
			case !wok:
				*out = append(*out, fmt.Sprintf("%s: kube <absent>, miniapi %s", p, compactJSON(gv)))
			case !gok:
				*out = append(*out, fmt.Sprintf("%s: kube %s, miniapi <absent>", p, compactJSON(wv)))
			default:
				diffValues(p, wv, gv, out)
			}
		}
		return
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			break
		}
		for i := range w {
			diffValues(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], out)
		}
		return
	default:
		if reflect.DeepEqual(want, got) {
			return
		}
	}
	*out = append(*out, fmt.Sprintf("%s: kube %s, miniapi %s", path, compactJSON(want), compactJSON(got)))
}

// compactJSON encodes v as one line of JSON.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// answerDiff compares a server's answer with kube's recorded one.
func answerDiff(want, got goldenAnswer) []string {
	var w, g map[string]any
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	_ = json.Unmarshal(wb, &w)
	_ = json.Unmarshal(gb, &g)
	return goldenDiff(w, g)
}

func TestNormalizeGolden(t *testing.T) {
	in := map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{
			"generateName": "svc-", "name": "svc-x7k2p", "uid": "u-1", "resourceVersion": "42",
			"creationTimestamp": "2026-11-25T06:00:00Z", "labels": map[string]any{"owner": "u-1"},
			"managedFields": []any{map[string]any{"manager": "m", "time": "2026-11-25T06:00:00Z"}},
		},
		"spec": map[string]any{
			"clusterIP": "10.0.0.7", "clusterIPs": []any{"10.0.0.7"}, "healthCheckNodePort": float64(31000),
			"ports": []any{map[string]any{"port": float64(80), "nodePort": float64(30001)}},
		},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "lastTransitionTime": "2026-11-25T06:00:00Z"}}},
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{
			"generateName": "svc-", "name": "svc-" + placeholderGenerated, "uid": placeholderUID, "resourceVersion": placeholderResourceVersion,
			"creationTimestamp": placeholderTime, "labels": map[string]any{"owner": placeholderUID},
			"managedFields": []any{map[string]any{"manager": "m", "time": placeholderTime}},
		},
		"spec": map[string]any{
			"clusterIP": placeholderClusterIP, "clusterIPs": []any{placeholderClusterIP}, "healthCheckNodePort": placeholderNodePort,
			"ports": []any{map[string]any{"port": float64(80), "nodePort": placeholderNodePort}},
		},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "lastTransitionTime": placeholderTime}}},
	}
	if diff := goldenDiff(want, normalizeGolden(in)); len(diff) > 0 {
		t.Errorf("normalized differently:\n%s", strings.Join(diff, "\n"))
	}
	if in["metadata"].(map[string]any)["uid"] != "u-1" {
		t.Error("normalizeGolden changed its argument")
	}
	headless := map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{}, "spec": map[string]any{"clusterIP": "None", "clusterIPs": []any{"None"}}}
	if diff := goldenDiff(headless, normalizeGolden(headless)); len(diff) > 0 {
		t.Errorf("a headless service's None changed:\n%s", strings.Join(diff, "\n"))
	}
}

func TestGoldenDiff(t *testing.T) {
	for _, tc := range []struct {
		name      string
		want, got any
		diff      []string
	}{
		{"equal", map[string]any{"a": []any{1.0, "x"}}, map[string]any{"a": []any{1.0, "x"}}, nil},
		{"value", map[string]any{"a": map[string]any{"b": 1.0}}, map[string]any{"a": map[string]any{"b": 2.0}}, []string{"a.b: kube 1, miniapi 2"}},
		{"missing and extra", map[string]any{"a": 1.0}, map[string]any{"b": true}, []string{"a: kube 1, miniapi <absent>", "b: kube <absent>, miniapi true"}},
		{"list element", map[string]any{"l": []any{"x", "y"}}, map[string]any{"l": []any{"x", "z"}}, []string{`l[1]: kube "y", miniapi "z"`}},
		{"list length", map[string]any{"l": []any{"x"}}, map[string]any{"l": []any{"x", "y"}}, []string{`l: kube ["x"], miniapi ["x","y"]`}},
		{"null and absent", map[string]any{"c": nil}, map[string]any{}, []string{"c: kube null, miniapi <absent>"}},
		{"type", map[string]any{"a": map[string]any{}}, map[string]any{"a": "s"}, []string{`a: kube {}, miniapi "s"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := goldenDiff(tc.want, tc.got); !slices.Equal(got, tc.diff) {
				t.Errorf("goldenDiff = %q, want %q", got, tc.diff)
			}
		})
	}
}
