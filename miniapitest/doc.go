// Package miniapitest starts a private miniapi inside a Go test: the
// replacement for controller-runtime's envtest, with no binaries to
// download and a start-up measured in milliseconds.
//
// Start brings up a server, a logical cluster on the embedded etcd
// member the test process shares (fsync off; WithOwnEtcd for a member of
// its own), on a free loopback port, installs the CustomResourceDefinitions
// the options name and waits until they are Established, creates the
// namespaces asked for, and returns an Env. The Env's Config is a
// client-go *rest.Config, KubeconfigPath a kubeconfig file for kubectl.
// A cleanup registered on the test stops the server: its goroutines have
// exited and its port is closed when the test's cleanups are done, so
// goleak passes and many tests may run in parallel in one process.
//
//	func TestWidgets(t *testing.T) {
//		t.Parallel()
//		env := miniapitest.Start(t,
//			miniapitest.WithCRDs("config/crd/bases"),
//			miniapitest.WithNamespaces("team-a"),
//		)
//		cs := kubernetes.NewForConfigOrDie(env.Config)
//		// ... or a controller-runtime manager:
//		// mgr, err := ctrl.NewManager(env.Config, ctrl.Options{...})
//	}
package miniapitest
