package builtin

import (
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/kubernetes/pkg/registry/resource/deviceclass"
	"k8s.io/kubernetes/pkg/registry/resource/devicetaintrule"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaim"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaimtemplate"
	"k8s.io/kubernetes/pkg/registry/resource/resourceslice"
)

// resourceResources are resource.k8s.io/v1's resources (dynamic resource
// allocation). Claims that ask for admin access are checked against
// their namespace's labels through namespaces.
func resourceResources(namespaces corev1client.NamespaceInterface) []*resource {
	res := func(r resource) *resource {
		r.group, r.version = "resource.k8s.io", "v1"
		return &r
	}
	claims := resourceclaim.NewStrategy(namespaces, nil)
	return []*resource{
		res(resource{kind: "DeviceClass", plural: "deviceclasses", strategy: deviceclass.Strategy}),
		res(resource{kind: "DeviceTaintRule", plural: "devicetaintrules", strategy: devicetaintrule.Strategy, status: devicetaintrule.StatusStrategy}),
		res(resource{kind: "ResourceClaim", plural: "resourceclaims", namespaced: true,
			strategy: claims, status: resourceclaim.NewStatusStrategy(claims), attrs: resourceclaim.GetAttrs}),
		res(resource{kind: "ResourceClaimTemplate", plural: "resourceclaimtemplates", namespaced: true,
			strategy: resourceclaimtemplate.NewStrategy(namespaces), attrs: resourceclaimtemplate.GetAttrs}),
		res(resource{kind: "ResourceSlice", plural: "resourceslices", strategy: resourceslice.Strategy, attrs: resourceslice.GetAttrs}),
	}
}
