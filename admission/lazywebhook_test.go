package admission

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	kadmission "k8s.io/apiserver/pkg/admission"
)

// countingPlugin is a mutating plugin that counts its calls.
type countingPlugin struct {
	*kadmission.Handler
	admits atomic.Int32
}

func (p *countingPlugin) Admit(context.Context, kadmission.Attributes, kadmission.ObjectInterfaces) error {
	p.admits.Add(1)
	return nil
}

// TestLazyWebhook: the plugin is built on the first call only, once
// for concurrent callers, again after a failed build; only operations
// the built plugin handles reach it, and a mutating plugin is not asked
// to validate.
func TestLazyWebhook(t *testing.T) {
	plugin := &countingPlugin{Handler: kadmission.NewHandler(kadmission.Create)}
	var builds atomic.Int32
	fail := true
	l := &lazyWebhook{build: func() (kadmission.Interface, error) {
		builds.Add(1)
		if fail {
			return nil, errors.New("no")
		}
		return plugin, nil
	}}
	gvk, gvr := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	create := kadmission.NewAttributesRecord(nil, nil, gvk, "ns", "cm", gvr, "", kadmission.Create, nil, false, nil)
	update := kadmission.NewAttributesRecord(nil, nil, gvk, "ns", "cm", gvr, "", kadmission.Update, nil, false, nil)
	if builds.Load() != 0 {
		t.Fatal("built before any call")
	}
	if err := l.Admit(t.Context(), create, nil); err == nil {
		t.Fatal("a failed build admitted the request")
	}
	fail = false
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := l.Admit(t.Context(), create, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := l.Admit(t.Context(), update, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Validate(t.Context(), create, nil); err != nil {
		t.Fatal(err)
	}
	if b, a := builds.Load(), plugin.admits.Load(); b != 2 || a != 8 {
		t.Fatalf("%d builds and %d admits, want 2 (one failed) and 8 (creates only)", b, a)
	}
}
