package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKubectlBuiltinKinds runs the everyday kubectl commands that create
// and change built-in kinds, against the built binary, and checks what
// kube-apiserver answers them (the messages, the defaults kube's own code
// fills in, the refusals its validation gives): each line below was
// compared with kube-apiserver 1.37 for the same commands.
func TestKubectlBuiltinKinds(t *testing.T) {
	skipIfShort(t)
	srv := kubectlServer(t)
	run := func(args ...string) string {
		t.Helper()
		return kubectl(t, srv, append([]string{"-n", "kt"}, args...)...)
	}
	kubectl(t, srv, "create", "namespace", "kt")

	creates := []struct {
		args []string
		want string
	}{
		{[]string{"create", "deployment", "web", "--image=nginx", "--replicas=2"}, "deployment.apps/web created"},
		{[]string{"create", "job", "j", "--image=busybox", "--", "echo", "hi"}, "job.batch/j created"},
		{[]string{"create", "cronjob", "cj", "--image=busybox", "--schedule=*/5 * * * *"}, "cronjob.batch/cj created"},
		{[]string{"create", "service", "clusterip", "svc1", "--tcp=80:8080"}, "service/svc1 created"},
		{[]string{"create", "serviceaccount", "sa1"}, "serviceaccount/sa1 created"},
		{[]string{"create", "role", "r1", "--verb=get,list", "--resource=pods"}, "role.rbac.authorization.k8s.io/r1 created"},
		{[]string{"create", "rolebinding", "rb1", "--role=r1", "--serviceaccount=kt:sa1"}, "rolebinding.rbac.authorization.k8s.io/rb1 created"},
		{[]string{"create", "clusterrole", "cr1", "--verb=get", "--resource=nodes"}, "clusterrole.rbac.authorization.k8s.io/cr1 created"},
		{[]string{"create", "quota", "q1", "--hard=pods=10"}, "resourcequota/q1 created"},
		{[]string{"create", "priorityclass", "pc1", "--value=1000"}, "priorityclass.scheduling.k8s.io/pc1 created"},
		{[]string{"create", "poddisruptionbudget", "pdb1", "--selector=app=web", "--min-available=1"}, "poddisruptionbudget.policy/pdb1 created"},
		{[]string{"create", "ingress", "ing1", "--rule=foo.com/bar=svc1:80"}, "ingress.networking.k8s.io/ing1 created"},
		{[]string{"create", "secret", "docker-registry", "reg", "--docker-server=r.io", "--docker-username=u", "--docker-password=p"}, "secret/reg created"},
		{[]string{"run", "p1", "--image=busybox"}, "pod/p1 created"},
		{[]string{"expose", "deployment", "web", "--port=80"}, "service/web exposed"},
		{[]string{"scale", "deployment", "web", "--replicas=3"}, "deployment.apps/web scaled"},
		{[]string{"set", "image", "deployment/web", "nginx=nginx:1.27"}, "deployment.apps/web image updated"},
	}
	for _, c := range creates {
		if out := strings.TrimSpace(run(c.args...)); out != c.want {
			t.Errorf("kubectl %s: %q, want %q", strings.Join(c.args, " "), out, c.want)
		}
	}
	crt, key := tlsPair(t)
	if out := strings.TrimSpace(run("create", "secret", "tls", "tls1", "--cert="+crt, "--key="+key)); out != "secret/tls1 created" {
		t.Errorf("create secret tls: %q", out)
	}

	t.Run("defaults", func(t *testing.T) {
		// kube's defaulting of a Deployment and its pod template.
		for path, want := range map[string]string{
			"{.spec.replicas}":                                           "3",
			"{.spec.strategy.type}":                                      "RollingUpdate",
			"{.spec.strategy.rollingUpdate.maxSurge}":                    "25%",
			"{.spec.revisionHistoryLimit}":                               "10",
			"{.spec.progressDeadlineSeconds}":                            "600",
			"{.spec.template.spec.restartPolicy}":                        "Always",
			"{.spec.template.spec.dnsPolicy}":                            "ClusterFirst",
			"{.spec.template.spec.schedulerName}":                        "default-scheduler",
			"{.spec.template.spec.terminationGracePeriodSeconds}":        "30",
			"{.spec.template.spec.containers[0].image}":                  "nginx:1.27",
			"{.spec.template.spec.containers[0].imagePullPolicy}":        "Always", // defaulted for the untagged image at create, and kept
			"{.spec.template.spec.containers[0].terminationMessagePath}": "/dev/termination-log",
			"{.metadata.generation}":                                     "3",
		} {
			if got := run("get", "deployment", "web", "-o", "jsonpath="+path); got != want {
				t.Errorf("deployment %s = %q, want %q", path, got, want)
			}
		}
		// A new pod is Pending, with kube's QoS class.
		if got := run("get", "pod", "p1", "-o", "jsonpath={.status.phase} {.status.qosClass}"); got != "Pending BestEffort" {
			t.Errorf("pod status %q", got)
		}
		// Services get ClusterIPs from the service range.
		if got := run("get", "service", "web", "-o", "jsonpath={.spec.clusterIP}"); !strings.HasPrefix(got, "10.0.0.") {
			t.Errorf("service clusterIP %q, want one in 10.0.0.0/24", got)
		}
	})

	t.Run("get all", func(t *testing.T) {
		out := run("get", "all")
		for _, want := range []string{"pod/p1", "service/svc1", "service/web", "deployment.apps/web", "cronjob.batch/cj", "job.batch/j"} {
			if !strings.Contains(out, want) {
				t.Errorf("get all lacks %s:\n%s", want, out)
			}
		}
		for _, header := range []string{
			"NAME     READY   STATUS    RESTARTS   AGE",
			"NAME                  READY   UP-TO-DATE   AVAILABLE   AGE",
			"SCHEDULE      TIMEZONE   SUSPEND   ACTIVE   LAST SCHEDULE   AGE",
			"STATUS    COMPLETIONS   DURATION   AGE",
		} {
			if !strings.Contains(out, header) {
				t.Errorf("get all lacks kube's columns %q:\n%s", header, out)
			}
		}
	})

	t.Run("describe", func(t *testing.T) {
		// kubectl aligns the values by the longest label it prints:
		// compare with runs of spaces collapsed.
		for kind, wants := range map[string][]string{
			"pod/p1":         {"Name: p1", "Namespace: kt", "Status: Pending", "Image: busybox", "QoS Class: BestEffort"},
			"deployment/web": {"Name: web", "Replicas: 3 desired | 0 updated | 0 total | 0 available | 0 unavailable", "StrategyType: RollingUpdate", "RollingUpdateStrategy: 25% max unavailable, 25% max surge", "Image: nginx:1.27"},
			"service/web":    {"Name: web", "Type: ClusterIP", "IP Family Policy: SingleStack", "IP Families: IPv4", "Port: <unset> 80/TCP", "Session Affinity: None"},
		} {
			out := strings.Join(strings.Fields(run("describe", kind)), " ")
			for _, w := range wants {
				if !strings.Contains(out, w) {
					t.Errorf("describe %s lacks %q:\n%s", kind, w, out)
				}
			}
		}
	})

	t.Run("refusals", func(t *testing.T) {
		r := runKubectl(t, srv, "", nil, "-n", "kt", "create", "job", "bad", "--image=busybox", "--dry-run=server", "-o", "name")
		if r.err != nil {
			t.Fatalf("a server dry run of a good job failed: %s", r.stderr)
		}
		r = runKubectl(t, srv, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bad, namespace: kt}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: c}}\n    spec: {containers: [{name: c, image: x}]}\n", nil, "create", "-f", "-")
		want := `The Deployment "bad" is invalid: spec.template.metadata.labels: Invalid value: {"a":"c"}: ` + "`selector` does not match template `labels`"
		if r.err == nil || !strings.Contains(r.stderr, want) {
			t.Errorf("mismatched selector: %v %q, want %q", r.err, r.stderr, want)
		}
		r = runKubectl(t, srv, "", nil, "-n", "kt", "create", "cronjob", "badcron", "--image=busybox", "--schedule=not a schedule")
		if r.err == nil || !strings.Contains(r.stderr, `CronJob.batch "badcron" is invalid: spec.schedule: Invalid value: "not a schedule": expected exactly 5 fields, found 3: [not a schedule]`) {
			t.Errorf("bad schedule: %v %q", r.err, r.stderr)
		}
	})

	t.Run("cluster-info and explain", func(t *testing.T) {
		out := kubectl(t, srv, "cluster-info")
		if !strings.Contains(out, "Kubernetes control plane is running at "+srv.URL) {
			t.Errorf("cluster-info:\n%s", out)
		}
		out = kubectl(t, srv, "explain", "pod.spec.containers")
		for _, w := range []string{"KIND:       Pod", "FIELD: containers <[]Container>", "List of containers belonging to the pod."} {
			if !strings.Contains(out, w) {
				t.Errorf("explain lacks %q:\n%s", w, out)
			}
		}
	})
}

// tlsPair writes a self-signed ECDSA certificate and its key, PEM
// encoded, for kubectl create secret tls.
func tlsPair(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "example.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
