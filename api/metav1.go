package api

import (
	"errors"
	"maps"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Metadata crosses between our ObjectMeta and apimachinery's where
// Kubernetes' own code (validation, strategies) reads or writes it:
// field by field, times as their JSON keeps them (the second, in UTC).

// FromMetaV1 copies apimachinery's ObjectMeta into ours. Times keep what their
// JSON keeps: the second, in UTC.
func FromMetaV1(m *metav1.ObjectMeta) ObjectMeta {
	out := ObjectMeta{
		Name: m.Name, GenerateName: m.GenerateName, Namespace: m.Namespace,
		//lint:ignore SA1019 a wire field, carried as clients send it
		SelfLink: m.SelfLink,
		UID:      string(m.UID), ResourceVersion: m.ResourceVersion, Generation: m.Generation,
		CreationTimestamp:          apiTime(m.CreationTimestamp),
		DeletionGracePeriodSeconds: clone(m.DeletionGracePeriodSeconds),
		Labels:                     maps.Clone(m.Labels), Annotations: maps.Clone(m.Annotations),
		Finalizers: slices.Clone(m.Finalizers),
	}
	if m.DeletionTimestamp != nil {
		t := apiTime(*m.DeletionTimestamp)
		out.DeletionTimestamp = &t
	}
	if m.OwnerReferences != nil {
		out.OwnerReferences = make([]OwnerReference, len(m.OwnerReferences))
		for i, r := range m.OwnerReferences {
			out.OwnerReferences[i] = OwnerReference{
				APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: string(r.UID),
				Controller: clone(r.Controller), BlockOwnerDeletion: clone(r.BlockOwnerDeletion),
			}
		}
	}
	if m.ManagedFields != nil {
		out.ManagedFields = make([]ManagedFieldsEntry, len(m.ManagedFields))
		for i, f := range m.ManagedFields {
			e := ManagedFieldsEntry{
				Manager: f.Manager, Operation: string(f.Operation), APIVersion: f.APIVersion,
				FieldsType: f.FieldsType, Subresource: f.Subresource,
			}
			if f.Time != nil {
				t := apiTime(*f.Time)
				e.Time = &t
			}
			if f.FieldsV1 != nil {
				e.FieldsV1 = slices.Clone(f.FieldsV1.GetRawBytes())
			}
			out.ManagedFields[i] = e
		}
	}
	return out
}

// ToMetaV1 copies our ObjectMeta into apimachinery's, so its
// validators and Kubernetes' strategies can work on it.
func ToMetaV1(m *ObjectMeta) metav1.ObjectMeta {
	out := metav1.ObjectMeta{
		Name: m.Name, GenerateName: m.GenerateName, Namespace: m.Namespace,
		//lint:ignore SA1019 a wire field, carried as clients send it
		SelfLink: m.SelfLink,
		UID:      types.UID(m.UID), ResourceVersion: m.ResourceVersion, Generation: m.Generation,
		CreationTimestamp:          metaTime(m.CreationTimestamp),
		DeletionGracePeriodSeconds: clone(m.DeletionGracePeriodSeconds),
		Labels:                     maps.Clone(m.Labels), Annotations: maps.Clone(m.Annotations),
		Finalizers: slices.Clone(m.Finalizers),
	}
	if m.DeletionTimestamp != nil {
		t := metaTime(*m.DeletionTimestamp)
		out.DeletionTimestamp = &t
	}
	if m.OwnerReferences != nil {
		out.OwnerReferences = make([]metav1.OwnerReference, len(m.OwnerReferences))
		for i, r := range m.OwnerReferences {
			out.OwnerReferences[i] = metav1.OwnerReference{
				APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: types.UID(r.UID),
				Controller: clone(r.Controller), BlockOwnerDeletion: clone(r.BlockOwnerDeletion),
			}
		}
	}
	if m.ManagedFields != nil {
		out.ManagedFields = make([]metav1.ManagedFieldsEntry, len(m.ManagedFields))
		for i, f := range m.ManagedFields {
			e := metav1.ManagedFieldsEntry{
				Manager: f.Manager, Operation: metav1.ManagedFieldsOperationType(f.Operation), APIVersion: f.APIVersion,
				FieldsType: f.FieldsType, Subresource: f.Subresource,
			}
			if f.Time != nil {
				t := metaTime(*f.Time)
				e.Time = &t
			}
			if f.FieldsV1 != nil {
				e.FieldsV1 = &metav1.FieldsV1{}
				e.FieldsV1.SetRawBytes(slices.Clone(f.FieldsV1))
			}
			out.ManagedFields[i] = e
		}
	}
	return out
}

// apiTime is t as its JSON keeps it: to the second, or zero.
func apiTime(t metav1.Time) Time {
	if t.IsZero() {
		return Time{}
	}
	return Time{Time: t.UTC().Truncate(time.Second)}
}

// metaTime is t as kube's Go type holds one decoded from JSON.
func metaTime(t Time) metav1.Time {
	if t.IsZero() {
		return metav1.Time{}
	}
	return metav1.Time{Time: t.Truncate(time.Second).Local()}
}

func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// FromKubeError turns an error built by apimachinery's constructors
// (k8s.io/apimachinery/pkg/api/errors), or any error carrying a
// metav1.Status, into a *StatusError with the same Status, so code that
// answers with kube's own errors answers exactly as kube does. Any other
// error is returned as it is.
func FromKubeError(err error) error {
	var ks interface{ Status() metav1.Status }
	if !errors.As(err, &ks) {
		return err
	}
	return &StatusError{ErrStatus: FromMetaStatus(ks.Status())}
}

// ToKubeError turns one of our *StatusError into apimachinery's, so
// kube's helpers (apierrors.IsNotFound, IsConflict, retry.RetryOnConflict)
// recognise it. Any other error, nil included, is returned as it is.
func ToKubeError(err error) error {
	var se *StatusError
	if !errors.As(err, &se) {
		return err
	}
	st := se.ErrStatus
	out := &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: st.Status, Message: st.Message, Reason: metav1.StatusReason(st.Reason), Code: st.Code,
	}}
	if d := st.Details; d != nil {
		out.ErrStatus.Details = &metav1.StatusDetails{
			Name: d.Name, Group: d.Group, Kind: d.Kind, UID: types.UID(d.UID), RetryAfterSeconds: d.RetryAfterSeconds,
		}
		for _, c := range d.Causes {
			out.ErrStatus.Details.Causes = append(out.ErrStatus.Details.Causes, metav1.StatusCause{Type: metav1.CauseType(c.Type), Message: c.Message, Field: c.Field})
		}
	}
	return out
}

// FromMetaStatus copies apimachinery's Status into ours.
func FromMetaStatus(st metav1.Status) Status {
	out := Status{Status: st.Status, Message: st.Message, Reason: StatusReason(st.Reason), Code: st.Code}
	if d := st.Details; d != nil {
		out.Details = &StatusDetails{
			Name: d.Name, Group: d.Group, Kind: d.Kind, UID: string(d.UID), RetryAfterSeconds: d.RetryAfterSeconds,
		}
		for _, c := range d.Causes {
			out.Details.Causes = append(out.Details.Causes, StatusCause{Type: string(c.Type), Message: c.Message, Field: c.Field})
		}
	}
	return out
}
