package builtin

import (
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	apiregistrationinstall "k8s.io/kube-aggregator/pkg/apis/apiregistration/install"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	// The API groups miniapi serves: each install registers the group's
	// versioned and internal Go types, conversions, defaults and field
	// label conversions into legacyscheme.Scheme, which kube's
	// strategies and printers use.
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/authentication/install"
	_ "k8s.io/kubernetes/pkg/apis/authorization/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	_ "k8s.io/kubernetes/pkg/apis/storagemigration/install"
)

func init() {
	// The kinds kube-apiserver serves from its embedded
	// apiextensions-apiserver and kube-aggregator join the scheme too:
	// CustomResourceDefinitions and APIServices are served in protobuf
	// as the others are.
	apiextensionsinstall.Install(legacyscheme.Scheme)
	apiregistrationinstall.Install(legacyscheme.Scheme)
	// meta.k8s.io/v1's kinds (Table, PartialObjectMetadata), as
	// kube-apiserver registers them for its responses.
	utilruntime.Must(metav1.AddMetaToScheme(legacyscheme.Scheme))
}

// scheme is kube-apiserver's own scheme of its built-in kinds. It is
// kube's package-level value because kube's strategies read it there
// (declarative validation); nothing here writes to it after init.
var scheme = legacyscheme.Scheme

// Scheme returns the scheme of the built-in kinds: their versioned and
// internal Go types, with conversions and defaults. The HTTP edge uses it
// to encode and decode protobuf.
func Scheme() *runtime.Scheme { return scheme }

// Codecs returns the serializers of Scheme, which kube-apiserver
// negotiates for its answers: its filters write their Status errors
// (a malformed ?timeout=) with them.
func Codecs() serializer.CodecFactory { return legacyscheme.Codecs }
