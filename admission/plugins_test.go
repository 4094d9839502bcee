package admission_test

import (
	"slices"
	"testing"

	"github.com/miniapi/miniapi/admission"
	"k8s.io/kubernetes/pkg/kubeapiserver/options"
)

// TestPluginsAsKube holds miniapi's plugins to kube-apiserver 1.37's
// order and default set. It imports kube-apiserver's option package,
// which the binary does not link (it would bring every plugin and
// their flags).
func TestPluginsAsKube(t *testing.T) {
	// The plugins kube-apiserver enables by default that miniapi does
	// not link, each with its reason: none now.
	notLinked := map[string]string{}
	ours := admission.PluginNames()
	var kubeOrder []string
	for _, n := range options.AllOrderedPlugins {
		if slices.Contains(ours, n) {
			kubeOrder = append(kubeOrder, n)
		}
	}
	if !slices.Equal(ours, kubeOrder) {
		t.Errorf("plugins out of kube-apiserver's order or unknown to it:\n got %v\nwant %v", ours, kubeOrder)
	}
	off := options.DefaultOffAdmissionPlugins()
	var kubeDefault []string
	for _, n := range options.AllOrderedPlugins {
		if off.Has(n) {
			continue
		}
		if _, ok := notLinked[n]; ok {
			continue
		}
		kubeDefault = append(kubeDefault, n)
	}
	if got := admission.DefaultPlugins(); !slices.Equal(got, kubeDefault) {
		t.Errorf("default plugins:\n got %v\nwant %v (kube-apiserver's, less %v)", got, kubeDefault, notLinked)
	}
	for n := range notLinked {
		if !slices.Contains(options.AllOrderedPlugins, n) {
			t.Errorf("%s is no longer a kube-apiserver plugin", n)
		}
	}
}
