package miniapitest_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miniapi/miniapi/miniapitest"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// contentTypes records the Content-Type of every request and response a
// client sends and receives, to show what went over the wire.
type contentTypes struct {
	next http.RoundTripper

	mu   sync.Mutex
	seen []string
}

func (c *contentTypes) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// A patch's body is a patch document, never protobuf.
	if ct := r.Header.Get("Content-Type"); ct != "" && r.Method != http.MethodPatch {
		c.seen = append(c.seen, r.Method+" "+r.URL.Path+" sent "+ct)
	}
	c.seen = append(c.seen, r.Method+" "+r.URL.Path+" got "+resp.Header.Get("Content-Type"))
	return resp, nil
}

// notProtobuf returns what was exchanged in another encoding.
func (c *contentTypes) notProtobuf() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, s := range c.seen {
		if !strings.Contains(s, "application/vnd.kubernetes.protobuf") {
			out = append(out, s)
		}
	}
	return out
}

// TestCRDClientsetProtobuf drives CustomResourceDefinitions with
// apiextensions-apiserver's generated clientset in its default
// configuration, which speaks protobuf, as controllers and envtest do:
// create, get, list, watch, update and the status subresource.
func TestCRDClientsetProtobuf(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()

	cfg := rest.CopyConfig(env.Config)
	rec := &contentTypes{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { rec.next = rt; return rec })
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	crds := cs.ApiextensionsV1().CustomResourceDefinitions()

	w, err := crds.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "gadgets.example.com").String()})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()

	created, err := crds.Create(ctx, gadgetCRD(), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Spec.Conversion == nil || created.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
		t.Errorf("created spec.conversion = %+v, want the default strategy None", created.Spec.Conversion)
	}
	if got := created.Status.StoredVersions; len(got) != 1 || got[0] != "v1" {
		t.Errorf("created status.storedVersions = %v, want [v1]", got)
	}
	select {
	case ev := <-w.ResultChan():
		crd, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition)
		if ev.Type != watch.Added || !ok || crd.Name != "gadgets.example.com" {
			t.Errorf("first watch event: %s %T, want ADDED of the CRD", ev.Type, ev.Object)
		}
	case <-time.After(testTimeout):
		t.Fatal("no watch event for the created CRD")
	}

	got, err := crds.Get(ctx, "gadgets.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	list, err := crds.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != got.Name {
		t.Errorf("list holds %d CRDs, want the one created", len(list.Items))
	}

	// The CRD controller writes the status (Established) meanwhile:
	// each write starts from a fresh read, as controllers do.
	var updated *apiextensionsv1.CustomResourceDefinition
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := crds.Get(ctx, got.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Labels = map[string]string{"tier": "gold"}
		updated, err = crds.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if updated.Labels["tier"] != "gold" {
		t.Errorf("updated labels = %v", updated.Labels)
	}

	var st *apiextensionsv1.CustomResourceDefinition
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := crds.Get(ctx, got.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.Conditions = append(cur.Status.Conditions, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: "Example", Status: apiextensionsv1.ConditionTrue, Reason: "Testing", Message: "set through /status",
			LastTransitionTime: metav1.Now(),
		})
		st, err = crds.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	found := false
	for _, c := range st.Status.Conditions {
		found = found || c.Type == "Example"
	}
	if !found {
		t.Errorf("status conditions after UpdateStatus: %+v, want the Example condition", st.Status.Conditions)
	}

	patched, err := crds.Patch(ctx, got.Name, types.MergePatchType, []byte(`{"metadata":{"annotations":{"a":"b"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch: %v", err)
	}
	if patched.Annotations["a"] != "b" {
		t.Errorf("patched annotations = %v", patched.Annotations)
	}

	// A refusal comes back as a Status the clientset decodes.
	bad := gadgetCRD()
	bad.Name = "wrong.example.com"
	if _, err := crds.Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a CRD whose name is not <plural>.<group>: %v, want 422 Invalid", err)
	}

	if err := crds.Delete(ctx, "gadgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if other := rec.notProtobuf(); len(other) > 0 {
		t.Errorf("exchanged in another encoding than protobuf:\n%s", strings.Join(other, "\n"))
	}
}
