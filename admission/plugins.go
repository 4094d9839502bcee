package admission

import (
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	mutatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	mutatingwebhook "k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	validatingwebhook "k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	"k8s.io/kubernetes/plugin/pkg/admission/admit"
	"k8s.io/kubernetes/plugin/pkg/admission/alwayspullimages"
	certapproval "k8s.io/kubernetes/plugin/pkg/admission/certificates/approval"
	"k8s.io/kubernetes/plugin/pkg/admission/certificates/ctbattest"
	certsigning "k8s.io/kubernetes/plugin/pkg/admission/certificates/signing"
	certsubjectrestriction "k8s.io/kubernetes/plugin/pkg/admission/certificates/subjectrestriction"
	"k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds"
	"k8s.io/kubernetes/plugin/pkg/admission/deny"
	"k8s.io/kubernetes/plugin/pkg/admission/limitranger"
	"k8s.io/kubernetes/plugin/pkg/admission/network/defaultingressclass"
	"k8s.io/kubernetes/plugin/pkg/admission/network/denyserviceexternalips"
	"k8s.io/kubernetes/plugin/pkg/admission/nodedeclaredfeatures"
	"k8s.io/kubernetes/plugin/pkg/admission/nodetaint"
	"k8s.io/kubernetes/plugin/pkg/admission/podnodeselector"
	"k8s.io/kubernetes/plugin/pkg/admission/podresize"
	"k8s.io/kubernetes/plugin/pkg/admission/podtolerationrestriction"
	"k8s.io/kubernetes/plugin/pkg/admission/podtopologylabels"
	podpriority "k8s.io/kubernetes/plugin/pkg/admission/priority"
	"k8s.io/kubernetes/plugin/pkg/admission/runtimeclass"
	"k8s.io/kubernetes/plugin/pkg/admission/scheduling/podgroupprotection"
	"k8s.io/kubernetes/plugin/pkg/admission/security/podsecurity"
	"k8s.io/kubernetes/plugin/pkg/admission/serviceaccount"
	"k8s.io/kubernetes/plugin/pkg/admission/storage/persistentvolume/resize"
	"k8s.io/kubernetes/plugin/pkg/admission/storage/storageclass/setdefault"
	"k8s.io/kubernetes/plugin/pkg/admission/storage/storageobjectinuseprotection"
)

// plugin is one admission plugin miniapi links: kube's name and
// registration, and whether kube-apiserver 1.37 enables it by default.
type plugin struct {
	name      string
	register  func(*kadmission.Plugins)
	defaultOn bool
}

// plugins are the plugins miniapi links, in kube-apiserver's order
// (its AllOrderedPlugins; a test holds the two to the same order and
// the same defaults).
var plugins = []plugin{
	{admit.PluginName, admit.Register, false},
	{lifecycle.PluginName, lifecycle.Register, true},
	{limitranger.PluginName, limitranger.Register, true},
	{serviceaccount.PluginName, serviceaccount.Register, true},
	{nodetaint.PluginName, nodetaint.Register, true},
	{alwayspullimages.PluginName, alwayspullimages.Register, false},
	{podsecurity.PluginName, podsecurity.Register, true},
	{podnodeselector.PluginName, podnodeselector.Register, false},
	{podpriority.PluginName, podpriority.Register, true},
	{defaulttolerationseconds.PluginName, defaulttolerationseconds.Register, true},
	{podtolerationrestriction.PluginName, podtolerationrestriction.Register, false},
	{setdefault.PluginName, setdefault.Register, true},
	{storageobjectinuseprotection.PluginName, storageobjectinuseprotection.Register, true},
	{podgroupprotection.PluginName, podgroupprotection.Register, true},
	{resize.PluginName, resize.Register, true},
	{runtimeclass.PluginName, runtimeclass.Register, true},
	{certapproval.PluginName, certapproval.Register, true},
	{certsigning.PluginName, certsigning.Register, true},
	{ctbattest.PluginName, ctbattest.Register, true},
	{certsubjectrestriction.PluginName, certsubjectrestriction.Register, true},
	{defaultingressclass.PluginName, defaultingressclass.Register, true},
	{denyserviceexternalips.PluginName, denyserviceexternalips.Register, false},
	{podtopologylabels.PluginName, podtopologylabels.Register, true},
	{nodedeclaredfeatures.PluginName, nodedeclaredfeatures.Register, true},
	{podresize.PluginName, podresize.Register, true},
	{mutatingpolicy.PluginName, mutatingpolicy.Register, true},
	{mutatingwebhook.PluginName, mutatingwebhook.Register, true},
	{validatingpolicy.PluginName, validatingpolicy.Register, true},
	{validatingwebhook.PluginName, validatingwebhook.Register, true},
	{resourcequota.PluginName, resourcequota.Register, true},
	{deny.PluginName, deny.Register, false},
}

// PluginNames returns the names of the plugins miniapi serves, in the
// order they run.
func PluginNames() []string {
	out := make([]string, len(plugins))
	for i, p := range plugins {
		out[i] = p.name
	}
	return out
}

// DefaultPlugins returns the plugins enabled without
// --enable-admission-plugins or --disable-admission-plugins.
func DefaultPlugins() []string {
	var out []string
	for _, p := range plugins {
		if p.defaultOn {
			out = append(out, p.name)
		}
	}
	return out
}
