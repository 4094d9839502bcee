package server

import (
	"context"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/builtin"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/resolver"
)

// admissionPolicies is what the admission policy kinds' rules read: the
// stored policies and the served kinds, straight from the registry where
// kube-apiserver reads its storage and its discovery.
func (s *Server) admissionPolicies() *builtin.AdmissionPolicies {
	return &builtin.AdmissionPolicies{
		Get: func(ctx context.Context, plural, name string) ([]byte, error) {
			res, ok := s.reg.Snapshot().Lookup("admissionregistration.k8s.io", "v1", plural)
			if !ok {
				return nil, api.NewNotFound(api.GroupResource{Group: "admissionregistration.k8s.io", Resource: plural}, name)
			}
			out, err := res.Store.Get(ctx, "", name, "")
			if err != nil {
				return nil, err
			}
			return out.Data, nil
		},
		Resources: resolver.ResourceResolverFunc(func(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
			for _, res := range s.reg.Snapshot().Resources() {
				t := res.Type
				if t.Group == gvk.Group && t.Version == gvk.Version && t.Kind == gvk.Kind {
					return gvk.GroupVersion().WithResource(t.Plural), nil
				}
			}
			return schema.GroupVersionResource{}, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
		}),
	}
}
