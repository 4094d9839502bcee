package server

import (
	"context"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestUnsafeDeleteIsAuthorized: a delete asking to ignore store read
// errors needs, beyond delete, the verb unsafe-delete-ignore-read-errors,
// as kube-apiserver 1.37 checks it: a user whom kube's edit role lets
// delete the ConfigMap is refused with kube's 403, the admin reaches
// the store (which refuses it for an object it can read), and a role
// granting the verb lets the user through to the same answer.
func TestUnsafeDeleteIsAuthorized(t *testing.T) {
	ctx := context.Background()
	srv := startSecure(t, t.TempDir())
	admin := clientsetFor(t, srv.AdminConfig())
	if _, err := admin.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "alice"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	as := srv.AdminConfig()
	as.Impersonate.UserName = "alice"
	alice := clientsetFor(t, as)
	unsafe := metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: ptr.To(true)}
	// The RBAC informers take the binding (and the aggregated edit
	// role) in within moments: until then alice may not delete at all.
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		review, err := alice.AuthorizationV1().SelfSubjectAccessReviews().Create(wait, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "default", Verb: "delete", Resource: "configmaps", Name: "a"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	err := alice.CoreV1().ConfigMaps("default").Delete(ctx, "a", unsafe)
	if want := `configmaps "a" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", reason: `; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("alice's unsafe delete: %v, want 403 %s", err, want)
	}
	err = admin.CoreV1().ConfigMaps("default").Delete(ctx, "a", unsafe)
	if !apierrors.IsConflict(err) {
		t.Errorf("the admin's unsafe delete of a readable object: %v, want kube's 409", err)
	}

	if _, err := admin.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "unsafe-delete"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"unsafe-delete-ignore-read-errors"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-unsafe-delete"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "unsafe-delete"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "alice"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The new binding too; the deadline ends the wait with an error
	// that is not 403.
	for {
		err = alice.CoreV1().ConfigMaps("default").Delete(wait, "a", unsafe)
		if !apierrors.IsForbidden(err) {
			break
		}
	}
	if !apierrors.IsConflict(err) {
		t.Errorf("alice's unsafe delete with the verb granted: %v, want the store's 409", err)
	}
	if _, err := admin.CoreV1().ConfigMaps("default").Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap after refused deletes: %v", err)
	}
}
