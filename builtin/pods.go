package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	kubefeatures "k8s.io/kubernetes/pkg/features"
)

// podKind is the Pod kind: a kind plus graceful deletion (kube's pod
// strategy decides it) and the subresources kube's pod storage serves
// with code of its own: binding, eviction, and the streaming ones.
type podKind struct{ *kind }

var (
	_ registry.GracefulDeleter    = podKind{}
	_ registry.SubresourceCreater = podKind{}
)

// BeforeDelete runs kube's rest.BeforeDelete with the pod strategy: a pod
// on a node is deleted gracefully (its grace period from the request or
// spec.terminationGracePeriodSeconds), a pod on no node, or finished, at
// once.
func (k podKind) BeforeDelete(ctx context.Context, obj *api.Object, gracePeriodSeconds *int64) (graceful, pending bool, err error) {
	in, err := k.toInternal(obj)
	if err != nil {
		return false, false, err
	}
	kctx := k.requestContext(ctx, "delete", obj.Metadata.Namespace, obj.Metadata.Name, "")
	graceful, pending, err = rest.BeforeDelete(k.r.strategy, kctx, in, &metav1.DeleteOptions{GracePeriodSeconds: gracePeriodSeconds})
	if err != nil {
		return false, false, statusError(err)
	}
	pod := in.(*core.Pod)
	m := &obj.Metadata
	m.Generation = pod.Generation
	m.DeletionGracePeriodSeconds = pod.DeletionGracePeriodSeconds
	if pod.DeletionTimestamp != nil {
		t := api.Time{Time: pod.DeletionTimestamp.Time}
		m.DeletionTimestamp = &t
	}
	return graceful, pending, nil
}

// bindingKind is pods/binding's kind.
var bindingKind = schema.GroupVersionKind{Version: "v1", Kind: "Binding"}

// CheckSubresource refuses a binding or eviction body of another kind,
// in kube-apiserver's words.
func (k podKind) CheckSubresource(subresource string, body []byte) error {
	var err error
	switch subresource {
	case "binding":
		_, err = decodeBody(bindingKind, body)
	case "eviction":
		_, err = decodeBody(evictionKind, body)
	}
	return err
}

// CreateSubresource serves POST to a pod's binding and eviction.
func (k podKind) CreateSubresource(ctx context.Context, store *registry.Store, subresource, ns, name string, body []byte, opts registry.CreateOptions) ([]byte, error) {
	switch subresource {
	case "binding":
		return bind(ctx, store, ns, name, body, opts.DryRun)
	case "eviction":
		return evict(ctx, k, store, ns, name, body, opts.DryRun)
	}
	return nil, api.NewGenericNotFound()
}

// bind assigns a pod to a node, as kube's pod binding storage does: the
// Binding is validated with kube's validation, then the pod is written
// directly, with no strategy and no managedFields, refusing a pod that is
// being deleted, already bound or held by scheduling gates. It answers a
// Success Status.
func bind(ctx context.Context, store *registry.Store, ns, name string, body []byte, dryRun bool) ([]byte, error) {
	in, err := decodeBody(bindingKind, body)
	if err != nil {
		return nil, err
	}
	binding := in.(*core.Binding)
	if name != "" && binding.Name != name {
		return nil, api.NewBadRequest("name in URL does not match name in Binding object")
	}
	if errs := corevalidation.ValidatePodBinding(binding); len(errs) != 0 {
		// kube-apiserver hands back the aggregate itself, a 500.
		return nil, api.NewInternalError(errs.ToAggregate())
	}
	var pre *api.Preconditions
	if binding.UID != "" || binding.ResourceVersion != "" {
		pre = &api.Preconditions{}
		if binding.UID != "" {
			uid := string(binding.UID)
			pre.UID = &uid
		}
		if binding.ResourceVersion != "" {
			pre.ResourceVersion = &binding.ResourceVersion
		}
	}
	pods, ok := store.Type().Strategy.(podKind)
	if !ok {
		return nil, api.NewGenericNotFound()
	}
	_, err = store.UpdateStored(ctx, ns, binding.Name, pre, dryRun, func(obj *api.Object) error {
		in, err := pods.toInternal(obj)
		if err != nil {
			return err
		}
		pod := in.(*core.Pod)
		switch {
		case pod.DeletionTimestamp != nil:
			return fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name)
		case pod.Spec.NodeName != "":
			return fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName)
		case len(pod.Spec.SchedulingGates) != 0:
			return fmt.Errorf("pod %v has non-empty .spec.schedulingGates", pod.Name)
		}
		pod.Spec.NodeName = binding.Target.Name
		if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.ClearingNominatedNodeNameAfterBinding) {
			pod.Status.NominatedNodeName = ""
		}
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		for k, v := range binding.Annotations {
			pod.Annotations[k] = v
		}
		podutil.DropInitContainerAnnotations(pod.Annotations)
		if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.PodTopologyLabelsAdmission) && len(binding.Labels) > 0 {
			if pod.Labels == nil {
				pod.Labels = map[string]string{}
			}
			for k, v := range binding.Labels {
				pod.Labels[k] = v
			}
		}
		podutil.UpdatePodCondition(&pod.Status, &core.PodCondition{Type: core.PodScheduled, Status: core.ConditionTrue})
		out, err := pods.fromInternal(pod)
		if err != nil {
			return err
		}
		*obj = *out
		return nil
	})
	if err != nil {
		var se *api.StatusError
		if !errors.As(err, &se) {
			// As kube-apiserver: a refusal is a conflict on pods/binding.
			return nil, statusError(apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, binding.Name, err))
		}
		return nil, err
	}
	return successStatus()
}

// successStatus is the Status kube-apiserver answers a create that
// returns no object with (a binding, an eviction): its create handler
// gives the Status the create's code, 201.
func successStatus() ([]byte, error) {
	return json.Marshal(api.Status{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: api.StatusSuccess, Code: http.StatusCreated})
}
