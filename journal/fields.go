package journal

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Owner answers "which manager last wrote this field?" from the object's
// own record, its managedFields (kube's, kept by server-side apply for
// every write): the entry that owns the field at path (".spec.replicas",
// ".metadata.labels.app"; map keys only, not list items), the latest if
// several do. ok is false when no manager owns it.
func Owner(obj metav1.Object, path string) (owner metav1.ManagedFieldsEntry, ok bool, err error) {
	var p fieldpath.Path
	for _, name := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		if name == "" {
			return owner, false, fmt.Errorf("journal: bad field path %q", path)
		}
		p = append(p, fieldpath.PathElement{FieldName: &name})
	}
	for _, e := range obj.GetManagedFields() {
		if e.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
			return owner, false, err
		}
		if !set.Has(p) {
			continue
		}
		if !ok || owner.Time == nil || e.Time != nil && !e.Time.Before(owner.Time) {
			owner, ok = e, true
		}
	}
	return owner, ok, nil
}
