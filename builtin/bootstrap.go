package builtin

import (
	"encoding/json"
	"fmt"

	schedulingapiv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
)

// SystemObject is an object kube-apiserver creates at start when it is
// missing, with the resource it belongs to.
type SystemObject struct {
	Group, Version, Resource string
	Name                     string
	// Body is the object as its JSON create body.
	Body []byte
}

// SystemObjects returns the objects kube-apiserver's post-start hooks
// create for the kinds miniapi serves: the system PriorityClasses
// (system-cluster-critical, system-node-critical), from kube's own list.
// The bootstrap RBAC policy and the API Priority and Fairness defaults
// come with authorization and flow control.
func SystemObjects() ([]SystemObject, error) {
	var out []SystemObject
	for _, pc := range schedulingapiv1.SystemPriorityClasses() {
		pc.APIVersion, pc.Kind = "scheduling.k8s.io/v1", "PriorityClass"
		body, err := json.Marshal(pc)
		if err != nil {
			return nil, fmt.Errorf("builtin: encode PriorityClass %s: %w", pc.Name, err)
		}
		out = append(out, SystemObject{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses", Name: pc.Name, Body: body})
	}
	return out, nil
}
