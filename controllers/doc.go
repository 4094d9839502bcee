// Package controllers names the controllers miniapi runs where
// kube-controller-manager would run them beside kube-apiserver (Names,
// Select: kube-controller-manager's --controllers), and runs the one
// still of miniapi's own:
//
//   - GarbageCollector follows metadata.ownerReferences across all types:
//     it deletes objects whose owners are gone, deletes the dependents of
//     an owner deleted in the foreground before letting it go
//     (foregroundDeletion finalizer), and strips the ownerReference from
//     the dependents of an owner deleted with propagationPolicy Orphan
//     (orphan finalizer).
//
// The others, the namespace controller among them, are
// kube-controller-manager's own code, which package server builds over
// its loopback client.
//
// The registry's Delete sets those finalizers and deletionTimestamps; the
// garbage collector removes them. They work on the registry's Stores
// in-process, not over HTTP: informers built on Store.Watch (with
// sendInitialEvents, resuming from the last resourceVersion and listing
// again after a 410) keep what they need in memory, and writes go through
// Store.Update and Store.Delete, so validation and watch events are the
// same as for any client. Types added to or removed from the registry
// while serving are followed.
//
// Each controller is owned by whoever calls Run: Run works until its
// context ends and returns only after its goroutines have exited.
//
//	sel, err := controllers.Select([]string{"*", "-garbage-collector-controller"})
//	...
//	ctx, cancel := context.WithCancel(context.Background())
//	var wg sync.WaitGroup
//	for _, c := range controllers.New(controllers.Config{Registry: reg, Selection: sel}) {
//		wg.Go(func() { c.Run(ctx) })
//	}
//	...
//	cancel()
//	wg.Wait() // before the registry and storage close
package controllers
