// Package version holds miniapi's own version and the Kubernetes release
// whose API it serves: the /version document, the version the OpenAPI
// documents carry, and what the miniapi command prints. It imports
// nothing of miniapi, so the command reads its version without the HTTP
// layer.
//
//	fmt.Println("miniapi", version.Miniapi)   // 0.1.0
//	info := version.Get()                     // /version's document
//	_ = info.GitVersion                       // v1.37.0+miniapi-0.1.0
//
// A build may set Miniapi:
//
//	go build -ldflags "-X github.com/miniapi/miniapi/version.Miniapi=1.2.3" ./cmd/miniapi
package version
