package fieldmanager

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/miniapi/miniapi/api"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// SubresourceScale is the subresource whose writes own a Scale's
// spec.replicas, recorded on the parent object at its replicas path.
const SubresourceScale = "scale"

// NewScale returns the Manager of autoscaling/v1 Scale objects served
// at /scale: its entries carry subresource "scale".
func NewScale() (*Manager, error) {
	tc, err := ForScale()
	if err != nil {
		return nil, err
	}
	return New(Config{
		Kind:          schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"},
		TypeConverter: tc,
		Subresource:   SubresourceScale,
	})
}

// ScaleEntries returns the managedFields of the Scale of an object
// served as gv with managedFields parent and spec replicas at
// replicasPath (".spec.replicas"): the entries that own the replicas,
// as owners of the Scale's spec.replicas — what kube-apiserver hands the
// Scale's field manager.
func ScaleEntries(parent []api.ManagedFieldsEntry, gv schema.GroupVersion, replicasPath string) ([]api.ManagedFieldsEntry, error) {
	in, mappings, err := scaleInputs(parent, gv, replicasPath)
	if err != nil {
		return nil, err
	}
	out, err := managedfields.NewScaleHandler(in, gv, mappings).ToSubresource()
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: scale entries: %w", err)
	}
	return fromMeta(out)
}

// ParentEntries merges the managedFields of a written Scale back into
// the parent's, as kube-apiserver does: a manager of the Scale's
// spec.replicas owns the parent's replicas path (with subresource
// "scale"), and managers that lost it through /scale no longer own it.
func ParentEntries(parent, scale []api.ManagedFieldsEntry, gv schema.GroupVersion, replicasPath string) ([]api.ManagedFieldsEntry, error) {
	in, mappings, err := scaleInputs(parent, gv, replicasPath)
	if err != nil {
		return nil, err
	}
	sc, err := toMeta(scale)
	if err != nil {
		return nil, err
	}
	out, err := managedfields.NewScaleHandler(in, gv, mappings).ToParent(sc)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: parent entries: %w", err)
	}
	return fromMeta(out)
}

// scaleInputs converts parent entries and builds the replicas path
// mapping. Entries recorded through other versions of the type keep
// their fields: their replicas path is not known here, and the scale
// handler would otherwise drop them.
func scaleInputs(parent []api.ManagedFieldsEntry, gv schema.GroupVersion, replicasPath string) ([]metav1.ManagedFieldsEntry, managedfields.ResourcePathMappings, error) {
	in, err := toMeta(parent)
	if err != nil {
		return nil, nil, err
	}
	var elems []any
	for _, p := range strings.Split(strings.TrimPrefix(replicasPath, "."), ".") {
		elems = append(elems, p)
	}
	path, err := fieldpath.MakePath(elems...)
	if err != nil {
		return nil, nil, fmt.Errorf("fieldmanager: replicas path %q: %w", replicasPath, err)
	}
	mappings := managedfields.ResourcePathMappings{gv.String(): path}
	for _, e := range parent {
		if _, ok := mappings[e.APIVersion]; !ok {
			mappings[e.APIVersion] = nil
		}
	}
	return in, mappings, nil
}

func toMeta(entries []api.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, error) {
	var out []metav1.ManagedFieldsEntry
	if err := convertJSON(entries, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func fromMeta(entries []metav1.ManagedFieldsEntry) ([]api.ManagedFieldsEntry, error) {
	var out []api.ManagedFieldsEntry
	if err := convertJSON(entries, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// convertJSON moves a value between two types with the same JSON form.
func convertJSON(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("fieldmanager: encode managedFields: %w", err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("fieldmanager: decode managedFields: %w", err)
	}
	return nil
}
