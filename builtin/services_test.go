package builtin

import (
	"context"
	"errors"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
)

// TestAllocatorReadyWaitsForTheRange: kube's cluster IP allocator builds
// a range's allocator from its informers on a goroutine of its own, and
// refuses every allocation "range is full" until then; allocatorReady
// returns only once it can allocate. The API behind the informers is
// client-go's in-memory clientset: what is tested is kube's allocator.
func TestAllocatorReadyWaitsForTheRange(t *testing.T) {
	cs := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(cs, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	cidrs, addresses := factory.Networking().V1().ServiceCIDRs(), factory.Networking().V1().IPAddresses()
	cidrs.Informer()
	addresses.Informer()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer cancel() // before Shutdown, which waits for the informers to stop
	alloc, err := ipallocator.NewMetaAllocator(cs.NetworkingV1(), cidrs, addresses, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer alloc.Destroy()
	if _, err := alloc.AllocateNext(); !errors.Is(err, ipallocator.ErrFull) {
		t.Fatalf("allocation before any ServiceCIDR: %v, want kube's %v", err, ipallocator.ErrFull)
	}

	ready := make(chan error, 1)
	go func() { ready <- allocatorReady(ctx, alloc) }()
	select {
	case err := <-ready:
		t.Fatalf("allocatorReady returned %v before there was a ServiceCIDR", err)
	default:
	}
	cidr := &networkingv1.ServiceCIDR{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"},
		Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/24"}},
	}
	if _, err := cs.NetworkingV1().ServiceCIDRs().Create(ctx, cidr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-ready; err != nil {
		t.Fatal(err)
	}
	ip, err := alloc.AllocateNext()
	if err != nil {
		t.Fatalf("allocation once ready: %v", err)
	}
	if _, err := cs.NetworkingV1().IPAddresses().Get(ctx, ip.String(), metav1.GetOptions{}); err != nil {
		t.Fatalf("the allocated address %s has no IPAddress: %v", ip, err)
	}
}
