package builtin

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// apiServicePriority is an APIService's spec.groupPriorityMinimum and
// spec.versionPriority: how discovery orders groups, and versions in a
// group.
type apiServicePriority struct{ group, version int32 }

// LocalAPIService returns the APIService kube-apiserver registers at
// start for gv, one of the group-versions it serves itself, as its
// aggregator builds them: named "<version>.<group>", served locally (no
// spec.service), with kube-apiserver's priorities for gv. It returns nil
// for a group-version kube-apiserver has no priority for, for which it
// registers none.
func LocalAPIService(gv schema.GroupVersion) *apiregistrationv1.APIService {
	p, ok := apiServicePriorities[gv]
	if !ok {
		return nil
	}
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: gv.Version + "." + gv.Group},
		Spec: apiregistrationv1.APIServiceSpec{
			Group: gv.Group, Version: gv.Version,
			GroupPriorityMinimum: p.group, VersionPriority: p.version,
		},
	}
}

// DiscoveryAPIService returns the APIService kube-apiserver's aggregator
// orders gv's group and version by in discovery: LocalAPIService's for
// its own group-versions, and for any other (a CRD's, a resources file's)
// the one its CRD registration controller registers, with a group
// priority of 1000 and a version priority of 100.
func DiscoveryAPIService(gv schema.GroupVersion) *apiregistrationv1.APIService {
	if s := LocalAPIService(gv); s != nil {
		return s
	}
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: gv.Version + "." + gv.Group},
		Spec: apiregistrationv1.APIServiceSpec{
			Group: gv.Group, Version: gv.Version,
			GroupPriorityMinimum: 1000, VersionPriority: 100,
		},
	}
}
