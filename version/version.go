package version

import "runtime"

// Miniapi is miniapi's own version. It is a variable so that a build can
// set it with -ldflags -X.
var Miniapi = "0.1.0"

// Kubernetes is the Kubernetes API version miniapi serves, the one
// kubectl compares itself with.
const Kubernetes = "v1.37.0"

// Info is the /version document: Kubernetes' version.Info, with
// miniapi's own version beside it.
type Info struct {
	Major string `json:"major"`
	Minor string `json:"minor"`
	// The emulated version and the oldest version it is compatible with,
	// as kube-apiserver 1.37 reports them (KEP-4330): miniapi serves 1.37
	// only, so it emulates itself and, as kube, is compatible back to the
	// minor version before.
	EmulationMajor        string `json:"emulationMajor,omitempty"`
	EmulationMinor        string `json:"emulationMinor,omitempty"`
	MinCompatibilityMajor string `json:"minCompatibilityMajor,omitempty"`
	MinCompatibilityMinor string `json:"minCompatibilityMinor,omitempty"`
	GitVersion            string `json:"gitVersion"`
	GitCommit             string `json:"gitCommit"`
	GitTreeState          string `json:"gitTreeState"`
	BuildDate             string `json:"buildDate"`
	GoVersion             string `json:"goVersion"`
	Compiler              string `json:"compiler"`
	Platform              string `json:"platform"`
	MiniapiVersion        string `json:"miniapiVersion"`
}

// Get returns the /version document of this build. GitVersion names the
// Kubernetes version with miniapi's as build metadata, so that clients
// comparing Kubernetes versions read the one served.
func Get() Info {
	return Info{
		Major: "1", Minor: "37",
		EmulationMajor: "1", EmulationMinor: "37",
		MinCompatibilityMajor: "1", MinCompatibilityMinor: "36",
		GitVersion:     Kubernetes + "+miniapi-" + Miniapi,
		GitTreeState:   "clean",
		BuildDate:      "1970-01-01T00:00:00Z",
		GoVersion:      runtime.Version(),
		Compiler:       runtime.Compiler,
		Platform:       runtime.GOOS + "/" + runtime.GOARCH,
		MiniapiVersion: Miniapi,
	}
}
