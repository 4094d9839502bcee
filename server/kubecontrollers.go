package server

import (
	"context"
	"fmt"

	"github.com/miniapi/miniapi/controllers"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/serviceaccount"
)

// startKubeControllers runs, until ctx ends, the controllers of
// kube-controller-manager that miniapi takes as they are, over the
// server's loopback client and shared informers (started after).
func (s *Server) startKubeControllers(ctx context.Context, sel controllers.Selection) error {
	if !sel.Enabled(controllers.ServiceAccountControllerName) {
		return nil
	}
	core := s.informers.Core().V1()
	sa, err := serviceaccount.NewServiceAccountsController(klog.Background(), core.ServiceAccounts(), core.Namespaces(),
		s.sec.client, serviceaccount.DefaultServiceAccountsControllerOptions())
	if err != nil {
		return fmt.Errorf("server: %s: %w", controllers.ServiceAccountControllerName, err)
	}
	s.background.Go(func() { sa.Run(ctx, 1) })
	return nil
}
