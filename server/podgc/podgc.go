// Package podgc links kube-controller-manager's pod garbage collector
// (k8s.io/kubernetes/pkg/controller/podgc) into miniapi's servers when
// imported for its effect:
//
//	import _ "github.com/miniapi/miniapi/server/podgc"
//
// The miniapi command imports it. kube's podgc imports the kubelet's
// eviction package for one function, and with it the kubelet, the
// scheduler, cAdvisor and containerd's API, 192 packages; a test binary
// that starts servers with miniapitest links none of that unless it
// imports this package, and runs every other controller
// (server.LinkPodGC).
package podgc

import (
	"context"

	"github.com/miniapi/miniapi/server"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/controller/podgc"
)

func init() {
	server.LinkPodGC(func(ctx context.Context, client kubernetes.Interface, pods coreinformers.PodInformer, nodes coreinformers.NodeInformer, threshold int) func(context.Context) {
		return podgc.NewPodGC(ctx, client, pods, nodes, threshold).Run
	})
}
