package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// goldenKubectlFile holds kube's answers to kubectl on the sample, under
// goldenDir.
const goldenKubectlFile = "kubectl" + goldenAnswersSuffix

// goldenKubectlSample are the cases run through kubectl: in each API
// group, one kube accepts (apply, get -o yaml, delete) and one it refuses
// (apply). The accepted ones are kinds whose objects no controller of
// kube-apiserver's own changes after their creation, so that get reads
// what apply created.
var goldenKubectlSample = []string{
	"core/services/svc-nodeport",
	"core/pods/bad-pod-no-containers",
	"admissionregistration.k8s.io/validatingwebhookconfigurations/golden-vwc",
	"admissionregistration.k8s.io/validatingadmissionpolicies/bad-vap",
	"apiextensions.k8s.io/customresourcedefinitions/bad-crd.crd.golden.example.com",
	"apps/deployments/deploy-minimal",
	"apps/deployments/bad-deploy-selector",
	"autoscaling/horizontalpodautoscalers/hpa-v2",
	"autoscaling/horizontalpodautoscalers/bad-hpa-v1",
	"batch/cronjobs/cj-minimal",
	"batch/jobs/bad-job-restart-always",
	"certificates.k8s.io/clustertrustbundles/golden-ctb",
	"certificates.k8s.io/certificatesigningrequests/bad-csr",
	"coordination.k8s.io/leases/lease-held",
	"coordination.k8s.io/leases/bad-lease",
	"discovery.k8s.io/endpointslices/eps-basic",
	"discovery.k8s.io/endpointslices/bad-eps",
	"events.k8s.io/events/evk-pod",
	"events.k8s.io/events/bad-evk",
	"flowcontrol.apiserver.k8s.io/prioritylevelconfigurations/golden-plc",
	"flowcontrol.apiserver.k8s.io/flowschemas/bad-fs",
	"networking.k8s.io/ingresses/ing-basic",
	"networking.k8s.io/networkpolicies/bad-np",
	"node.k8s.io/runtimeclasses/golden-runtime",
	"node.k8s.io/runtimeclasses/bad-runtime",
	"policy/poddisruptionbudgets/pdb-min",
	"policy/poddisruptionbudgets/bad-pdb-both",
	"rbac.authorization.k8s.io/roles/role-basic",
	"rbac.authorization.k8s.io/rolebindings/bad-rb",
	"resource.k8s.io/resourceclaims/claim-gpu",
	"resource.k8s.io/resourceclaims/bad-claim",
	"scheduling.k8s.io/priorityclasses/golden-priority",
	"scheduling.k8s.io/priorityclasses/bad-priority",
	"storage.k8s.io/storageclasses/golden-sc",
	"storage.k8s.io/storageclasses/bad-sc",
	"storagemigration.k8s.io/storageversionmigrations/golden-svm",
	"storagemigration.k8s.io/storageversionmigrations/bad-svm",
}

// kubectlOutcome is how one kubectl command ended.
type kubectlOutcome struct {
	Exit   int    `json:"exit"`
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
}

// goldenKubectlAnswer is what kubectl printed for one case of the
// sample: apply's outcome and, when apply created the object, what get -o
// yaml showed of it (normalized) and delete's outcome.
type goldenKubectlAnswer struct {
	Case   string          `json:"case"`
	Apply  kubectlOutcome  `json:"apply"`
	Get    map[string]any  `json:"get,omitempty"`
	Delete *kubectlOutcome `json:"delete,omitempty"`
}

// runGoldenKubectl runs kubectl apply -f, get -f -o yaml and delete -f
// for each case of the sample, the manifest given on stdin, against the
// server of kubeconfig, and returns what it printed.
func runGoldenKubectl(t *testing.T, kubeconfig string, cases []goldenCase) []goldenKubectlAnswer {
	t.Helper()
	byID := map[string]goldenCase{}
	for _, c := range cases {
		byID[c.id()] = c
	}
	var out []goldenKubectlAnswer
	for _, id := range goldenKubectlSample {
		c, ok := byID[id]
		if !ok {
			t.Fatalf("kubectl sample %s is not a case of the corpus", id)
		}
		ns := goldenNamespace
		if c.obj.GetNamespace() != "" {
			ns = c.obj.GetNamespace()
		}
		run := func(args ...string) kubectlOutcome {
			t.Helper()
			return kubectlAt(t, kubeconfig, string(c.manifest), append(args, "-f", "-", "-n", ns)...)
		}
		a := goldenKubectlAnswer{Case: id, Apply: run("apply")}
		if a.Apply.Exit == 0 {
			get := run("get", "-o", "yaml")
			if get.Exit != 0 {
				t.Fatalf("%s: kubectl get: %s", id, get.Stderr)
			}
			if err := yaml.Unmarshal([]byte(get.Stdout), &a.Get); err != nil {
				t.Fatalf("%s: kubectl get -o yaml: %v", id, err)
			}
			a.Get = normalizeGolden(a.Get)
			del := run("delete")
			a.Delete = &del
		}
		if a.Apply.Exit == 0 == c.refused() {
			t.Errorf("%s: kubectl apply exited %d: %s", id, a.Apply.Exit, a.Apply.Stderr)
		}
		out = append(out, a)
	}
	return out
}

// kubectlAt runs the test kubectl against the server of kubeconfig, with
// stdin, bounded by kubectlTimeout.
func kubectlAt(t *testing.T, kubeconfig, stdin string, args ...string) kubectlOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath(t), args...)
	cmd.Env = []string{"KUBECONFIG=" + kubeconfig, "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("kubectl %s did not finish within %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), kubectlTimeout, &stdout, &stderr)
	}
	r := kubectlResult{stdout: stdout.String(), stderr: stderr.String(), err: err}
	return kubectlOutcome{Exit: exitCode(t, r), Stdout: r.stdout, Stderr: r.stderr}
}
