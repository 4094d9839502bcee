package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	pdbhelper "k8s.io/component-helpers/apps/poddisruptionbudget"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/policy"
	"k8s.io/utils/ptr"
)

// An eviction is a delete of a pod that respects its PodDisruptionBudget.
// kube-apiserver's eviction storage (pkg/registry/core/pod/storage) works
// on its own generic store through an unexported constructor, so it
// cannot sit on ours; this follows it step for step, with kube's helpers
// (podutil, pdbhelper), errors and messages, over the registry's pod and
// PodDisruptionBudget stores.

// maxDisruptedPods bounds a budget's record of evictions its controller
// has not confirmed yet (kube's MaxDisruptedPodSize).
const maxDisruptedPods = 2000

// evictionsRetry is kube's backoff for an eviction that conflicts with a
// write to its pod or budget.
var evictionsRetry = wait.Backoff{Steps: 20, Duration: 500 * time.Millisecond, Factor: 1.0, Jitter: 0.1}

var evictionKind = schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}

// evict serves POST pods/<name>/eviction.
func evict(ctx context.Context, pods podKind, store *registry.Store, ns, name string, body []byte, dryRun bool) ([]byte, error) {
	in, err := decodeBody(evictionKind, body)
	if err != nil {
		return nil, err
	}
	eviction := in.(*policy.Eviction)
	if name != eviction.Name {
		return nil, api.NewBadRequest("name in URL does not match name in Eviction object")
	}
	if eviction.DeleteOptions != nil && ptr.Deref(eviction.DeleteOptions.IgnoreStoreReadErrorWithClusterBreakingPotential, false) {
		errs := field.ErrorList{field.Invalid(field.NewPath("deleteOptions").Child("ignoreStoreReadErrorWithClusterBreakingPotential"), true,
			"can not be set for pod eviction, try after removing the option")}
		return nil, statusError(apierrors.NewInvalid(evictionKind.GroupKind(), name, errs))
	}
	var reqDryRun []string
	if dryRun {
		reqDryRun = []string{metav1.DryRunAll}
	}
	opts, err := propagateDryRun(eviction, reqDryRun)
	if err != nil {
		return nil, api.NewInternalError(err)
	}
	ev := &evictor{pods: pods, store: store, ns: ns, name: name}

	// A pod the budget does not protect (not running, or going already)
	// is deleted as it is.
	var pod *core.Pod
	deleted := false
	shouldRetry := apierrors.IsConflict
	if !rvUnset(opts) {
		shouldRetry = func(error) bool { return false }
	}
	err = retry.OnError(evictionsRetry, shouldRetry, func() error {
		if pod, err = ev.getPod(ctx); err != nil {
			return err
		}
		if !canIgnorePDB(pod) {
			return nil
		}
		del := opts
		if shouldEnforceResourceVersion(pod) && rvUnset(opts) {
			del = withResourceVersion(opts, pod.ResourceVersion)
		}
		if err := ev.markAndDelete(ctx, del); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	switch {
	case err != nil:
		return nil, statusError(err)
	case deleted:
		return successStatus()
	}

	var failure *api.Status
	var pdbName string
	updateDeleteOptions := false
	err = func() error {
		pdbs, err := ev.budgets(ctx, pod)
		if err != nil {
			return err
		}
		if len(pdbs) > 1 {
			failure = &api.Status{Status: api.StatusFailure, Code: 500,
				Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}
			return nil
		}
		if len(pdbs) == 0 {
			return nil
		}
		pdb := &pdbs[0]
		pdbName = pdb.Name
		// An unhealthy pod may go when the budget says so, or when the
		// healthy ones suffice.
		if !podutil.IsPodReady(pod) {
			if pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow {
				updateDeleteOptions = true
				return nil
			}
			if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
				updateDeleteOptions = true
				return nil
			}
		}
		refresh := false
		return retry.RetryOnConflict(evictionsRetry, func() error {
			if refresh {
				if pdb, err = ev.budget(ctx, pdbName); err != nil {
					return err
				}
			}
			if err := ev.checkAndDecrement(ctx, pod.Name, *pdb, dryRunSet(opts.DryRun)); err != nil {
				refresh = true
				return err
			}
			return nil
		})
	}()
	if wait.Interrupted(err) {
		err = apierrors.NewTimeoutError(fmt.Sprintf("couldn't update PodDisruptionBudget %q due to conflicts", pdbName), 10)
	}
	if err != nil {
		return nil, statusError(err)
	}
	if failure != nil {
		failure.TypeMeta = api.TypeMeta{APIVersion: "v1", Kind: "Status"}
		return json.Marshal(failure)
	}
	del := opts
	if updateDeleteOptions {
		del = withResourceVersion(opts, pod.ResourceVersion)
	}
	if err := ev.markAndDelete(ctx, del); err != nil {
		if apierrors.IsConflict(err) && updateDeleteOptions && rvUnset(opts) {
			return nil, statusError(tooManyRequests(pdbName))
		}
		return nil, statusError(err)
	}
	return successStatus()
}

// evictor carries one eviction through the registry's stores.
type evictor struct {
	pods     podKind
	store    *registry.Store
	ns, name string
}

func (e *evictor) getPod(ctx context.Context) (*core.Pod, error) {
	out, err := e.store.Get(ctx, e.ns, e.name, "")
	if err != nil {
		return nil, api.ToKubeError(err)
	}
	v, err := e.pods.decodeVersioned(out.Data)
	if err != nil {
		return nil, err
	}
	in, err := e.pods.internalOf(v)
	if err != nil {
		return nil, err
	}
	return in.(*core.Pod), nil
}

// markAndDelete records the DisruptionTarget condition on the pod (not
// on a dry run) and deletes it with opts, as kube's eviction does.
func (e *evictor) markAndDelete(ctx context.Context, opts *metav1.DeleteOptions) error {
	if !dryRunSet(opts.DryRun) {
		out, err := e.store.Get(ctx, e.ns, e.name, "")
		if err != nil {
			return api.ToKubeError(err)
		}
		obj, err := decodeStored(out.Data)
		if err != nil {
			return err
		}
		if p := opts.Preconditions; p != nil {
			if uid := p.UID; uid != nil && *uid != "" && string(*uid) != obj.Metadata.UID {
				return apierrors.NewConflict(schema.GroupResource{Resource: "Pod"}, e.name,
					fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *uid, obj.Metadata.UID))
			}
			if rv := p.ResourceVersion; rv != nil && *rv != "" && *rv != obj.Metadata.ResourceVersion {
				return apierrors.NewConflict(schema.GroupResource{Resource: "Pod"}, e.name,
					fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *rv, obj.Metadata.ResourceVersion))
			}
		}
		in, err := e.pods.toInternal(obj)
		if err != nil {
			return err
		}
		pod := in.(*core.Pod)
		podutil.UpdatePodCondition(&pod.Status, &core.PodCondition{
			Type: core.DisruptionTarget, Status: core.ConditionTrue, Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting",
		})
		next, err := e.pods.fromInternal(pod)
		if err != nil {
			return err
		}
		next.Metadata.ResourceVersion = obj.Metadata.ResourceVersion
		// As kube's eviction, which writes its pod below the request
		// handlers, this update records no managedFields.
		next.Metadata.ManagedFields = obj.Metadata.ManagedFields
		updated, err := e.store.UpdateObject(ctx, e.ns, e.name, next, registry.UpdateOptions{KeepManagedFields: true})
		if err != nil {
			return api.ToKubeError(err)
		}
		if !rvUnset(opts) {
			u, err := decodeStored(updated.Data)
			if err != nil {
				return err
			}
			opts = withResourceVersion(opts, u.Metadata.ResourceVersion)
		}
	}
	del := registry.DeleteOptions{DryRun: dryRunSet(opts.DryRun), GracePeriodSeconds: opts.GracePeriodSeconds}
	if p := opts.Preconditions; p != nil {
		del.Preconditions = &api.Preconditions{ResourceVersion: p.ResourceVersion}
		if p.UID != nil {
			uid := string(*p.UID)
			del.Preconditions.UID = &uid
		}
	}
	switch {
	case opts.PropagationPolicy != nil:
		del.PropagationPolicy = string(*opts.PropagationPolicy)
	//lint:ignore SA1019 clients still send it; kube honours it
	case opts.OrphanDependents != nil && *opts.OrphanDependents:
		del.PropagationPolicy = api.DeletePropagationOrphan
	}
	_, _, err := e.store.Delete(ctx, e.ns, e.name, del)
	return api.ToKubeError(err)
}

// pdbStore is the registry's store of policy/v1 PodDisruptionBudgets.
func (e *evictor) pdbStore() (*registry.Store, error) {
	res, ok := e.store.Registry().Snapshot().Lookup("policy", "v1", "poddisruptionbudgets")
	if !ok {
		return nil, api.NewInternalError(errors.New("poddisruptionbudgets are not served"))
	}
	return res.Store, nil
}

// budgets returns the budgets in the pod's namespace that select it.
func (e *evictor) budgets(ctx context.Context, pod *core.Pod) ([]policyv1.PodDisruptionBudget, error) {
	st, err := e.pdbStore()
	if err != nil {
		return nil, err
	}
	list, err := st.List(ctx, pod.Namespace, registry.ListOptions{})
	if err != nil {
		return nil, api.ToKubeError(err)
	}
	var out []policyv1.PodDisruptionBudget
	for _, item := range list.Items {
		var pdb policyv1.PodDisruptionBudget
		if err := json.Unmarshal(item.Data, &pdb); err != nil {
			return nil, err
		}
		if pdb.Namespace != pod.Namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out, nil
}

func (e *evictor) budget(ctx context.Context, name string) (*policyv1.PodDisruptionBudget, error) {
	st, err := e.pdbStore()
	if err != nil {
		return nil, err
	}
	out, err := st.Get(ctx, e.ns, name, "")
	if err != nil {
		return nil, api.ToKubeError(err)
	}
	var pdb policyv1.PodDisruptionBudget
	if err := json.Unmarshal(out.Data, &pdb); err != nil {
		return nil, err
	}
	return &pdb, nil
}

// checkAndDecrement allows the eviction if the budget has a disruption to
// spare, and takes it, recording the pod in status.disruptedPods.
func (e *evictor) checkAndDecrement(ctx context.Context, podName string, pdb policyv1.PodDisruptionBudget, dryRun bool) error {
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return tooManyRequests(pdb.Name)
	}
	if pdb.Status.DisruptionsAllowed < 0 {
		err := apierrors.NewForbidden(policy.Resource("poddisruptionbudget"), pdb.Name, errors.New("pdb disruptions allowed is negative"))
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
			Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: pdb disruptions allowed is negative", pdb.Name)})
		return err
	}
	if len(pdb.Status.DisruptedPods) > maxDisruptedPods {
		err := apierrors.NewForbidden(policy.Resource("poddisruptionbudget"), pdb.Name, errors.New("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
			Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller", pdb.Name)})
		return err
	}
	if pdb.Status.DisruptionsAllowed == 0 {
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		cond := meta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
		var msg string
		switch {
		case cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != "" && cond.Reason == policyv1.SyncFailedReason:
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, cond.Message)
		case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
			msg = fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
		case cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != "":
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, cond.Reason, cond.Message)
		default:
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
		}
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: msg})
		return err
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptionsAllowed == 0 {
		pdbhelper.UpdateDisruptionAllowedCondition(&pdb)
	}
	if dryRun {
		return nil
	}
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[podName] = metav1.Time{Time: time.Now()}
	st, err := e.pdbStore()
	if err != nil {
		return err
	}
	data, err := json.Marshal(&pdb)
	if err != nil {
		return err
	}
	_, err = st.Update(ctx, pdb.Namespace, pdb.Name, data, registry.UpdateOptions{Subresource: registry.SubresourceStatus, FieldManager: "kube-apiserver"})
	return api.ToKubeError(err)
}

// propagateDryRun merges the request's dryRun into the Eviction's
// DeleteOptions, refusing two that differ, as kube's eviction does.
func propagateDryRun(eviction *policy.Eviction, dryRun []string) (*metav1.DeleteOptions, error) {
	if eviction.DeleteOptions == nil {
		return &metav1.DeleteOptions{DryRun: dryRun}, nil
	}
	if len(eviction.DeleteOptions.DryRun) == 0 {
		eviction.DeleteOptions.DryRun = dryRun
		return eviction.DeleteOptions, nil
	}
	if len(dryRun) == 0 {
		return eviction.DeleteOptions, nil
	}
	if !reflect.DeepEqual(dryRun, eviction.DeleteOptions.DryRun) {
		//lint:ignore ST1005 kube-apiserver's message, word for word
		return nil, fmt.Errorf("Non-matching dry-run options in request and content: %v and %v", dryRun, eviction.DeleteOptions.DryRun)
	}
	return eviction.DeleteOptions, nil
}

// canIgnorePDB reports whether a pod's budget has no say: it is not
// running yet, has finished, or is going already.
func canIgnorePDB(pod *core.Pod) bool {
	return pod.Status.Phase == core.PodSucceeded || pod.Status.Phase == core.PodFailed ||
		pod.Status.Phase == core.PodPending || !pod.DeletionTimestamp.IsZero()
}

func shouldEnforceResourceVersion(pod *core.Pod) bool {
	return !(pod.Status.Phase == core.PodSucceeded || pod.Status.Phase == core.PodFailed || !pod.DeletionTimestamp.IsZero())
}

func rvUnset(o *metav1.DeleteOptions) bool {
	return o.Preconditions == nil || o.Preconditions.ResourceVersion == nil
}

func withResourceVersion(o *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	o = o.DeepCopy()
	if o.Preconditions == nil {
		o.Preconditions = &metav1.Preconditions{}
	}
	o.Preconditions.ResourceVersion = &rv
	return o
}

func dryRunSet(d []string) bool { return len(d) > 0 }

func tooManyRequests(pdbName string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdbName)})
	return err
}

// decodeStored decodes an object as the Store holds it.
func decodeStored(data []byte) (*api.Object, error) {
	var obj api.Object
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("builtin: decode stored object: %w", err)
	}
	return &obj, nil
}
