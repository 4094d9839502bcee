package builtin

import (
	"k8s.io/kubernetes/pkg/registry/certificates/certificates"
	"k8s.io/kubernetes/pkg/registry/certificates/clustertrustbundle"
	"k8s.io/kubernetes/pkg/registry/certificates/podcertificaterequest"
	"k8s.io/utils/clock"
)

// certificatesResources are certificates.k8s.io/v1's resources. The
// PodCertificateRequest status strategy's signer authorization comes with
// authorization; until then it is not checked.
func certificatesResources() []*resource {
	pcr := podcertificaterequest.NewStrategy()
	return []*resource{
		{group: "certificates.k8s.io", version: "v1", kind: "CertificateSigningRequest", plural: "certificatesigningrequests", shortNames: []string{"csr"},
			strategy: certificates.Strategy, status: certificates.StatusStrategy, attrs: certificates.GetAttrs,
			updates: map[string]updateSub{"approval": {certificates.ApprovalStrategy, viewVerbs}}},
		// kube's field selectors for these two live in unexported
		// functions of their storage packages; the fields they select
		// on are read by path (selectable).
		{group: "certificates.k8s.io", version: "v1", kind: "ClusterTrustBundle", plural: "clustertrustbundles",
			strategy: clustertrustbundle.Strategy, selectable: []string{"spec.signerName"}},
		{group: "certificates.k8s.io", version: "v1", kind: "PodCertificateRequest", plural: "podcertificaterequests", namespaced: true,
			strategy: pcr, status: podcertificaterequest.NewStatusStrategy(pcr, nil, clock.RealClock{}),
			selectable: []string{"spec.signerName", "spec.podName", "spec.nodeName"}},
	}
}
