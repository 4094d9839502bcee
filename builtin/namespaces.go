package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/miniapi/miniapi/api"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// NamespaceGetter returns the NamespaceInterface Config.Namespaces wants,
// answering Get with get (the encoded namespace, or a StatusError such as
// NotFound). It serves Get alone: kube's rules that read namespaces call
// nothing else, and any other method panics.
func NamespaceGetter(get func(ctx context.Context, name string) ([]byte, error)) corev1client.NamespaceInterface {
	return namespaceGetter{get: get}
}

type namespaceGetter struct {
	// The embedded interface is nil: only Get is implemented.
	corev1client.NamespaceInterface
	get func(ctx context.Context, name string) ([]byte, error)
}

// Get reads one namespace.
func (n namespaceGetter) Get(ctx context.Context, name string, _ metav1.GetOptions) (*corev1.Namespace, error) {
	data, err := n.get(ctx, name)
	if err != nil {
		var se *api.StatusError
		if errors.As(err, &se) && se.ErrStatus.Reason == api.ReasonNotFound {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
		}
		return nil, err
	}
	var ns corev1.Namespace
	if err := json.Unmarshal(data, &ns); err != nil {
		return nil, fmt.Errorf("builtin: decode namespace %q: %w", name, err)
	}
	return &ns, nil
}
