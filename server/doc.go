// Package server assembles a running miniapi from a Config: storage (an
// embedded etcd member or an external cluster), the registry with the
// built-in types and any from a resources file, and the HTTP server. The
// miniapi command and the end-to-end tests both start servers through it.
//
//	srv, err := server.Start(ctx, server.Config{DataDir: dir, Listen: "127.0.0.1:0"})
//	if err != nil { ... }
//	fmt.Println(srv.URL())
//	...
//	err = srv.Shutdown(ctx) // stops HTTP, ends watches, closes etcd
package server
