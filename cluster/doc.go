// Package cluster simulates the part of a Kubernetes cluster that is not
// the control plane, so that workloads written to miniapi behave as on a
// real cluster without a container in sight: nodes, a scheduler and the
// nodes' kubelets, all in the server's process and talking to it as
// clients do (through a kubernetes.Interface and shared informers).
//
//   - Nodes registers Config.NodeCount Nodes (node-0, node-1, ...) with
//     kube's labels, capacity, allocatable, the conditions of a healthy
//     kubelet, addresses and a podCIDR, and renews each one's Lease in
//     kube-node-lease as kubelet does. A Node anyone adds with the
//     SimulatedLabel is adopted the same way.
//   - Scheduler binds pending pods through pods/binding with a small rule
//     set of its own (see Scheduler for the rules and why not
//     kube-scheduler's framework).
//   - Kubelet moves the pods bound to simulated nodes through stages:
//     Running with IPs and conditions, Ready (or not, by annotation),
//     Succeeded or Failed for a Job's pods, and removal after a deleted
//     pod's grace period. See Kubelet for the stages and the annotations
//     that change them.
//
// A Cluster is built with New (which registers its informer handlers),
// started with Start once the server serves (which registers the nodes,
// so they are listed at once), and run with Run until its context ends;
// Run returns after every goroutine it started has exited. Each part has
// WaitIdle, which returns once it has caught up with the server.
//
//	c, err := cluster.New(cluster.Config{Client: client, Pods: pods, Nodes: nodes,
//		NodeCount: 1, Scheduler: true, Kubelet: true})
//	...
//	factory.Start(ctx.Done())
//	if err := c.Start(ctx); err != nil { ... }
//	go c.Run(ctx)
//	...
//	err = c.Kubelet().WaitIdle(ctx) // every pod that can run is Running
package cluster
