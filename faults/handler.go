package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Path is where the admin endpoint serves the rules: GET lists them,
// POST adds one (a Rule in JSON), DELETE removes them all; Path + "/"
// + name reads (GET) or removes (DELETE) one. The server's
// authorization guards it as any non-resource path: cluster-admin and
// system:masters may use it.
const Path = "/miniapi/v1/faults"

// List is the admin endpoint's answer to GET Path.
type List struct {
	Kind string `json:"kind"`
	// Seed is the seed of the injector's random draws.
	Seed uint64 `json:"seed"`
	// Injected counts every fault injected so far.
	Injected int64  `json:"injected"`
	Rules    []Rule `json:"rules"`
}

// maxRuleBytes bounds a POSTed rule.
const maxRuleBytes = 1 << 20

var faultsResource = schema.GroupResource{Resource: "faults"}

// Handler serves the admin endpoint at Path.
func (i *Injector) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, one := strings.CutPrefix(r.URL.Path, Path+"/")
		if !one && r.URL.Path != Path {
			writeJSON(w, apierrors.NewNotFound(faultsResource, r.URL.Path).Status())
			return
		}
		switch {
		case !one && r.Method == http.MethodGet:
			rules := i.Rules()
			writeJSON(w, List{Kind: "FaultList", Seed: i.seed, Injected: i.Injected(), Rules: rules})
		case !one && r.Method == http.MethodPost:
			var rule Rule
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRuleBytes))
			if err == nil {
				dec := json.NewDecoder(bytes.NewReader(body))
				dec.DisallowUnknownFields()
				err = dec.Decode(&rule)
			}
			if err == nil {
				rule, err = i.Add(rule)
			}
			if err != nil {
				writeJSON(w, apierrors.NewBadRequest(fmt.Sprintf("fault rule: %v", err)).Status())
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			json.NewEncoder(w).Encode(rule)
		case !one && r.Method == http.MethodDelete:
			i.Clear()
			writeJSON(w, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess})
		case one && r.Method == http.MethodGet:
			for _, rule := range i.Rules() {
				if rule.Name == name {
					writeJSON(w, rule)
					return
				}
			}
			writeJSON(w, apierrors.NewNotFound(faultsResource, name).Status())
		case one && r.Method == http.MethodDelete:
			if !i.Remove(name) {
				writeJSON(w, apierrors.NewNotFound(faultsResource, name).Status())
				return
			}
			writeJSON(w, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess})
		default:
			writeJSON(w, apierrors.NewMethodNotSupported(faultsResource, r.Method).Status())
		}
	})
}

// writeJSON writes v; a failure Status goes out with its code.
func writeJSON(w http.ResponseWriter, v any) {
	code := http.StatusOK
	if st, ok := v.(metav1.Status); ok {
		st.Kind, st.APIVersion = "Status", "v1"
		if st.Code != 0 {
			code = int(st.Code)
		}
		v = st
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
