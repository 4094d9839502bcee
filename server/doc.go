// Package server assembles a running miniapi from a Config: storage (an
// embedded etcd member or an external cluster), the registry with the
// built-in types, the CRD type and any from a resources file, a watch
// cache per type, the background work (compaction, the CRD controller,
// the namespace and garbage collector controllers, the resources file
// watcher, and the Service controllers kube-apiserver runs), and the HTTP
// server. The miniapi command, miniapitest and the end-to-end tests all
// start servers through it.
//
//	srv, err := server.Start(ctx, server.Config{DataDir: dir, Listen: "127.0.0.1:0"})
//	if err != nil { ... }
//	fmt.Println(srv.URL())
//	...
//	err = srv.Shutdown(ctx) // stops HTTP, ends watches, closes etcd
package server
