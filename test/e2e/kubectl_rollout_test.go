package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// The tests in this file run the everyday workload commands against the
// binary with everything on (kube-controller-manager's controllers, the
// simulated nodes, scheduler and kubelet), and check that the cluster
// acts as a kube user expects: rollouts finish, Jobs complete or fail,
// StatefulSets become ready in order, Services get endpoints, and drain
// evicts pods within their disruption budget. docs/cluster.md walks
// through the same commands.

// The commands of docs/cluster.md's walkthrough. The tests below run
// them as written there (adding a --timeout at most), and
// TestClusterDocShowsTheTestedCommands checks that the page shows each
// one, so the page cannot drift from what is tested.
const (
	cmdCreateDeployment = "kubectl create deployment web --image=nginx --replicas=3"
	cmdRolloutStatus    = "kubectl rollout status deployment/web"
	cmdGetPods          = "kubectl get pods"
	cmdExpose           = "kubectl expose deployment web --port=80"
	cmdGetSlices        = "kubectl get endpointslices -l kubernetes.io/service-name=web"
	cmdGetEndpoints     = "kubectl get endpoints web"
	cmdSetImage         = "kubectl set image deployment/web nginx=nginx:1.27"
	cmdGetReplicaSets   = "kubectl get replicasets"
	cmdRolloutHistory   = "kubectl rollout history deployment/web"
	cmdRolloutUndo      = "kubectl rollout undo deployment/web"
	cmdScale            = "kubectl scale deployment/web --replicas=1"
	cmdCreateJob        = "kubectl create job hello --image=busybox -- echo hello"
	cmdWaitJob          = "kubectl wait --for=condition=Complete job/hello"
	cmdCreateCronJob    = "kubectl create cronjob tick --image=busybox --schedule='* * * * *'"
	cmdJobFromCronJob   = "kubectl create job tick-now --from=cronjob/tick"
	cmdApplyDB          = "kubectl apply -f db.yaml"
	cmdRolloutDB        = "kubectl rollout status statefulset/db"
	cmdGetPVCs          = "kubectl get pvc"
	cmdDrain            = "kubectl drain node-0 --ignore-daemonsets --delete-emptydir-data"
	cmdGetNodes         = "kubectl get nodes"
	cmdCreatePDB        = "kubectl create poddisruptionbudget web --selector=app=web --min-available=3"
	cmdDrainRefused     = "kubectl drain node-1 --ignore-daemonsets --delete-emptydir-data --timeout=10s"
	cmdUncordon         = "kubectl uncordon node-0 node-1"
)

// clusterWalkthrough is every command above, for the docs check.
var clusterWalkthrough = []string{
	cmdCreateDeployment, cmdRolloutStatus, cmdGetPods, cmdExpose, cmdGetSlices, cmdGetEndpoints,
	cmdSetImage, cmdGetReplicaSets, cmdRolloutHistory, cmdRolloutUndo, cmdScale,
	cmdCreateJob, cmdWaitJob, cmdCreateCronJob, cmdJobFromCronJob, cmdApplyDB, cmdRolloutDB, cmdGetPVCs,
	cmdDrain, cmdGetNodes, cmdCreatePDB, cmdDrainRefused, cmdUncordon,
}

// shellWords splits a command line as sh would for the little quoting
// the walkthrough uses: words are separated by spaces, and '...' quotes.
func shellWords(line string) []string {
	var words []string
	var word strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

// runLine runs a walkthrough command line with extra arguments after
// it, and returns what it printed and how it exited; stdin feeds it.
func runLine(t *testing.T, srv *serverProc, stdin, line string, extra ...string) kubectlResult {
	t.Helper()
	words := shellWords(line)
	if len(words) == 0 || words[0] != "kubectl" {
		t.Fatalf("%q is not a kubectl command", line)
	}
	return runKubectl(t, srv, stdin, nil, append(words[1:], extra...)...)
}

// kubectlLine is runLine for a command that must succeed; it returns
// stdout.
func kubectlLine(t *testing.T, srv *serverProc, line string, extra ...string) string {
	t.Helper()
	r := runLine(t, srv, "", line, extra...)
	if r.err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", line, strings.Join(extra, " "), r.err, r.stdout, r.stderr)
	}
	return r.stdout
}

// TestClusterDocShowsTheTestedCommands keeps docs/cluster.md's
// walkthrough honest: it shows the commands the tests of this file run,
// and the db.yaml TestKubectlStatefulSet applies.
func TestClusterDocShowsTheTestedCommands(t *testing.T) {
	doc := readDoc(t, "docs/cluster.md")
	for _, cmd := range clusterWalkthrough {
		if !strings.Contains(doc, "\n$ "+cmd+"\n") {
			t.Errorf("docs/cluster.md does not show the command the tests run:\n$ %s", cmd)
		}
	}
	if !strings.Contains(doc, "\n$ cat db.yaml\n"+dbStatefulSet) {
		t.Errorf("docs/cluster.md does not show the db.yaml the tests apply:\n%s", dbStatefulSet)
	}
}

// clusterServer starts the binary with every controller and the
// simulated cluster on (the binary's defaults, which the harness turns
// off unless asked), with extra flags.
func clusterServer(t *testing.T, extra ...string) *serverProc {
	t.Helper()
	kubectlPath(t)
	return startServer(t, t.TempDir(), append([]string{"--controllers=*"}, extra...)...)
}

// livePods returns, for each pod matching selector that is not being
// deleted, the values of columns (kubectl custom-columns specs, e.g.
// ".spec.nodeName"). Pods being deleted are left out: a pod scaled
// down or evicted stays Terminating for its grace period, as on a
// cluster, and kubectl lists it.
func livePods(t *testing.T, srv *serverProc, selector string, columns ...string) [][]string {
	t.Helper()
	spec := "NAME:.metadata.name,DELETING:.metadata.deletionTimestamp"
	for i, c := range columns {
		spec += ",C" + string(rune('0'+i)) + ":" + c
	}
	out := kubectl(t, srv, "get", "pods", "-l", selector, "--no-headers", "-o", "custom-columns="+spec)
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 2+len(columns) && f[1] == "<none>" {
			rows = append(rows, append(f[:1:1], f[2:]...))
		}
	}
	return rows
}

// TestKubectlRollout creates a Deployment, waits for its rollout, rolls
// out a new image, lists and undoes the rollout, and scales it down, all
// with kubectl, as on a cluster.
func TestKubectlRollout(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := clusterServer(t)

	kubectlLine(t, srv, cmdCreateDeployment)
	kubectlLine(t, srv, cmdRolloutStatus, "--timeout=60s")
	if st := column(t, kubectlLine(t, srv, cmdGetPods), "STATUS"); len(st) != 3 || slices.ContainsFunc(st, func(s string) bool { return s != "Running" }) {
		t.Fatalf("kubectl get pods STATUS %q, want 3 Running", st)
	}

	// images returns the image of each live pod, and how many run the
	// wanted one.
	images := func(want string) ([][]string, int) {
		pods := livePods(t, srv, "app=web", ".spec.containers[0].image", ".status.phase")
		n := 0
		for _, p := range pods {
			if p[1] == want && p[2] == "Running" {
				n++
			}
		}
		return pods, n
	}

	// A new image is a new ReplicaSet; the old one is scaled to 0 once
	// the new pods are available. rollout status returns then, without
	// waiting for the old pods' grace period.
	kubectlLine(t, srv, cmdSetImage)
	kubectlLine(t, srv, cmdRolloutStatus, "--timeout=60s")
	if pods, n := images("nginx:1.27"); len(pods) != 3 || n != 3 {
		t.Errorf("after set image, live pods %q, want 3 Running nginx:1.27", pods)
	}
	rs := tableRows(kubectlLine(t, srv, cmdGetReplicaSets, "--no-headers",
		"-o", "custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas,IMAGE:.spec.template.spec.containers[0].image,REVISION:.metadata.annotations.deployment\\.kubernetes\\.io/revision"))
	slices.SortFunc(rs, func(a, b []string) int { return strings.Compare(a[3], b[3]) })
	if len(rs) != 2 || rs[0][1] != "0" || rs[0][2] != "nginx" || rs[1][1] != "3" || rs[1][2] != "nginx:1.27" {
		t.Errorf("ReplicaSets (name, replicas, image, revision) %q, want nginx scaled to 0 and nginx:1.27 at 3", rs)
	}

	// revisions lists the revisions kubectl rollout history shows.
	revisions := func() []string {
		history := kubectlLine(t, srv, cmdRolloutHistory)
		_, table, _ := strings.Cut(history, "\n") // below "deployment.apps/web"
		return column(t, table, "REVISION")
	}
	if revs := revisions(); !slices.Equal(revs, []string{"1", "2"}) {
		t.Errorf("kubectl rollout history revisions %q, want 1 2", revs)
	}

	// Undo rolls back to revision 1's template, which becomes revision 3,
	// as on kube.
	kubectlLine(t, srv, cmdRolloutUndo)
	kubectlLine(t, srv, cmdRolloutStatus, "--timeout=60s")
	if got := kubectl(t, srv, "get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); got != "nginx" {
		t.Errorf("after undo, the Deployment's image is %q, want nginx", got)
	}
	waitUntil(t, "3 Running pods of image nginx after undo", func() bool {
		pods, n := images("nginx")
		return len(pods) == 3 && n == 3
	})
	if revs := revisions(); !slices.Equal(revs, []string{"2", "3"}) {
		t.Errorf("after undo, kubectl rollout history revisions %q, want 2 3", revs)
	}

	kubectlLine(t, srv, cmdScale)
	waitUntil(t, "web scaled to 1 live pod", func() bool { return len(livePods(t, srv, "app=web")) == 1 })
	kubectlLine(t, srv, cmdRolloutStatus, "--timeout=60s")
}

// failingJob is a Job whose pod exits 1 on the simulated kubelet
// (miniapi.dev/exit-code), with one retry allowed.
const failingJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: fail
spec:
  backoffLimit: 1
  template:
    metadata:
      annotations:
        miniapi.dev/exit-code: "1"
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
`

// TestKubectlJobs runs a Job that completes, one that fails after its
// backoffLimit, and a Job made from a CronJob.
func TestKubectlJobs(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := clusterServer(t, "--pod-complete-after=1s")

	kubectlLine(t, srv, cmdCreateJob)
	kubectlLine(t, srv, cmdWaitJob, "--timeout=60s")
	if got := kubectl(t, srv, "get", "job", "hello", "-o", "jsonpath={.status.succeeded}"); got != "1" {
		t.Errorf("job hello status.succeeded %q, want 1", got)
	}
	if got := column(t, kubectl(t, srv, "get", "pods", "-l", "job-name=hello"), "STATUS"); !slices.Equal(got, []string{"Completed"}) {
		t.Errorf("pods of job hello STATUS %q, want Completed", got)
	}

	// backoffLimit 1: the first failure is retried (after the Job
	// controller's 10 s back-off), the second ends the Job.
	r := runKubectl(t, srv, failingJob, nil, "apply", "-f", "-")
	if r.err != nil {
		t.Fatalf("kubectl apply: %v\n%s", r.err, r.stderr)
	}
	kubectl(t, srv, "wait", "--for=condition=Failed", "job/fail", "--timeout=90s")
	got := kubectl(t, srv, "get", "job", "fail", "-o", `jsonpath={.status.failed} {.status.conditions[?(@.type=="Failed")].reason}`)
	if got != "2 BackoffLimitExceeded" {
		t.Errorf("job fail (status.failed, Failed reason) %q, want 2 BackoffLimitExceeded", got)
	}
	if st := column(t, kubectl(t, srv, "get", "pods", "-l", "job-name=fail"), "STATUS"); !slices.Equal(st, []string{"Error", "Error"}) {
		t.Errorf("pods of job fail STATUS %q, want Error Error", st)
	}

	// A CronJob's Jobs come at its schedule's minute ticks; waiting for
	// one would make the test last up to a minute, so the Job is made
	// from it by hand, as users do to try one.
	kubectlLine(t, srv, cmdCreateCronJob)
	kubectlLine(t, srv, cmdJobFromCronJob)
	kubectl(t, srv, "wait", "--for=condition=Complete", "job/tick-now", "--timeout=60s")
	if got := kubectl(t, srv, "get", "job", "tick-now", "-o", "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}"); got != "CronJob/tick" {
		t.Errorf("job tick-now owned by %q, want CronJob/tick", got)
	}
}

// webStatefulSet is a StatefulSet of 2 pods without volumes, with the
// headless Service that gives its pods their DNS names.
const webStatefulSet = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  clusterIP: None
  selector:
    app: web
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: web
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx
`

// dbStatefulSet is the db.yaml of the walkthrough: a StatefulSet of 2
// pods, each with a PersistentVolumeClaim made from its template.
const dbStatefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 2
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
      - name: postgres
        image: postgres
        volumeMounts:
        - name: data
          mountPath: /var/lib/postgresql
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 1Gi
`

// TestKubectlStatefulSet checks that a StatefulSet's pods are created in
// order, each once the one before is Ready, and that one with a
// volumeClaimTemplate gets its claims from kube's statefulset controller.
func TestKubectlStatefulSet(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := clusterServer(t)
	cs, err := kubernetes.NewForConfig(clientConfig(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()

	// kubectl shows the end state only; the order the pods come in is
	// seen on a watch, started before the StatefulSet exists.
	w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if r := runKubectl(t, srv, webStatefulSet, nil, "apply", "-f", "-"); r.err != nil {
		t.Fatalf("kubectl apply: %v\n%s", r.err, r.stderr)
	}
	var created []string
	web0Ready := false
	for !slices.Contains(created, "web-1") {
		e := nextEvent(t, w)
		pod := e.Object.(*corev1.Pod)
		if e.Type == watch.Added {
			if pod.Name == "web-1" && !web0Ready {
				t.Errorf("web-1 created before web-0 was Ready")
			}
			created = append(created, pod.Name)
		}
		if pod.Name == "web-0" && podReady(pod) {
			web0Ready = true
		}
	}
	if !slices.Equal(created, []string{"web-0", "web-1"}) {
		t.Errorf("pods created in order %q, want web-0 web-1", created)
	}
	kubectl(t, srv, "rollout", "status", "statefulset/web", "--timeout=60s")
	if got := kubectl(t, srv, "get", "statefulset", "web", "-o", "jsonpath={.status.readyReplicas}"); got != "2" {
		t.Errorf("statefulset web readyReplicas %q, want 2", got)
	}

	// No PersistentVolume, provisioner or volume binding runs, so the
	// claims stay Pending, as in a cluster without a provisioner. Unlike
	// kube-scheduler, miniapi's scheduler does not wait for claims to be
	// bound (docs/cluster.md), so the pods run and the StatefulSet
	// becomes ready all the same.
	dbFile := filepath.Join(t.TempDir(), "db.yaml")
	if err := os.WriteFile(dbFile, []byte(dbStatefulSet), 0o644); err != nil {
		t.Fatal(err)
	}
	kubectlLine(t, srv, strings.Replace(cmdApplyDB, "db.yaml", dbFile, 1))
	kubectlLine(t, srv, cmdRolloutDB, "--timeout=60s")
	pvcs := tableRows(kubectlLine(t, srv, cmdGetPVCs, "--no-headers", "-o", "custom-columns=NAME:.metadata.name,PHASE:.status.phase"))
	if want := [][]string{{"data-db-0", "Pending"}, {"data-db-1", "Pending"}}; !slices.EqualFunc(pvcs, want, slices.Equal) {
		t.Errorf("PersistentVolumeClaims %q, want %q", pvcs, want)
	}
	if got := kubectl(t, srv, "get", "pod", "db-0", "-o", `jsonpath={.spec.volumes[?(@.name=="data")].persistentVolumeClaim.claimName}`); got != "data-db-0" {
		t.Errorf("pod db-0 mounts claim %q, want data-db-0", got)
	}
}

// podReady reports whether pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestKubectlExpose exposes a Deployment and checks that its Service
// gets a cluster IP and endpoints listing its ready pods.
func TestKubectlExpose(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := clusterServer(t)

	kubectlLine(t, srv, cmdCreateDeployment)
	kubectlLine(t, srv, cmdRolloutStatus, "--timeout=60s")
	kubectlLine(t, srv, cmdExpose)
	if ip := kubectl(t, srv, "get", "service", "web", "-o", "jsonpath={.spec.clusterIP}"); ip == "" || ip == "None" {
		t.Errorf("service web clusterIP %q, want an address", ip)
	}
	podIPs := strings.Fields(kubectl(t, srv, "get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].status.podIP}"))
	slices.Sort(podIPs)
	if len(podIPs) != 3 {
		t.Fatalf("pod IPs %q, want 3", podIPs)
	}

	// The endpointslice controller writes the slice a moment after the
	// Service is created.
	var slice string
	waitUntil(t, "an EndpointSlice of web with the 3 pods ready", func() bool {
		slice = kubectlLine(t, srv, cmdGetSlices, "-o", `jsonpath={range .items[*].endpoints[?(@.conditions.ready==true)]}{.addresses[0]}{"\n"}{end}`)
		got := strings.Fields(slice)
		slices.Sort(got)
		return slices.Equal(got, podIPs)
	})
	if got := kubectlLine(t, srv, cmdGetSlices, "-o", "jsonpath={.items[*].ports[0].port}"); got != "80" {
		t.Errorf("EndpointSlice port %q, want 80", got)
	}

	// The legacy Endpoints, which kubectl still lists (with a deprecation
	// warning on stderr), from the endpoints controller.
	waitUntil(t, "Endpoints web with the 3 pods", func() bool {
		got := strings.Fields(kubectlLine(t, srv, cmdGetEndpoints, "-o", "jsonpath={.subsets[*].addresses[*].ip}"))
		slices.Sort(got)
		return slices.Equal(got, podIPs)
	})
	eps := column(t, kubectlLine(t, srv, cmdGetEndpoints), "ENDPOINTS")
	if len(eps) != 1 || strings.Count(eps[0], ":80") != 3 {
		t.Errorf("kubectl get endpoints web ENDPOINTS %q, want the 3 pod IPs with port 80", eps)
	}
}

// TestKubectlDrain drains a node: its pods are evicted and come back on
// the other node, and the node is cordoned. Then a PodDisruptionBudget
// that allows no disruption makes the eviction fail, as kube refuses it.
func TestKubectlDrain(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := clusterServer(t, "--nodes=2")

	kubectlLine(t, srv, cmdCreateDeployment)
	kubectlLine(t, srv, cmdRolloutStatus, "--timeout=60s")
	onNode := func(node string) int {
		n := 0
		for _, p := range livePods(t, srv, "app=web", ".spec.nodeName") {
			if p[1] == node {
				n++
			}
		}
		return n
	}
	// The scheduler spreads pods over the least allocated nodes.
	if onNode("node-0") == 0 {
		t.Fatalf("no pod of web on node-0: %q", livePods(t, srv, "app=web", ".spec.nodeName"))
	}

	// A short grace period, so the evicted pods' simulated containers
	// stop at once rather than after the pods' 30 s; drain waits for them.
	out := kubectlLine(t, srv, cmdDrain, "--grace-period=1", "--timeout=60s")
	if !strings.Contains(out, "evicted") || !strings.Contains(out, "node/node-0 drained") {
		t.Errorf("kubectl drain printed:\n%s\nwant pods evicted and the node drained", out)
	}
	if got := kubectl(t, srv, "get", "node", "node-0", "-o", "jsonpath={.spec.unschedulable}"); got != "true" {
		t.Errorf("node-0 spec.unschedulable %q after drain, want true", got)
	}
	if st := column(t, kubectlLine(t, srv, cmdGetNodes), "STATUS"); !slices.Equal(st, []string{"Ready,SchedulingDisabled", "Ready"}) {
		t.Errorf("kubectl get nodes STATUS %q, want node-0 Ready,SchedulingDisabled and node-1 Ready", st)
	}
	kubectlLine(t, srv, cmdRolloutStatus, "--timeout=60s")
	if n0, n1 := onNode("node-0"), onNode("node-1"); n0 != 0 || n1 != 3 {
		t.Errorf("after drain, pods of web on node-0 %d, node-1 %d; want 0 and 3", n0, n1)
	}

	// minAvailable = replicas: no pod may go. The disruption controller
	// computes the budget's status first; until then eviction refuses
	// for another reason.
	kubectlLine(t, srv, cmdCreatePDB)
	waitUntil(t, "the budget's status", func() bool {
		got := kubectl(t, srv, "get", "pdb", "web", "-o", "jsonpath={.status.observedGeneration} {.status.currentHealthy} {.status.disruptionsAllowed}")
		return got == "1 3 0"
	})
	r := runLine(t, srv, "", cmdDrainRefused)
	const refused = "Cannot evict pod as it would violate the pod's disruption budget."
	if r.err == nil || !strings.Contains(r.stderr, refused) {
		t.Errorf("kubectl drain node-1 with a budget of 3: %v\nstdout:\n%s\nstderr:\n%s\nwant a failure saying %q", r.err, r.stdout, r.stderr, refused)
	}
	if n := onNode("node-1"); n != 3 {
		t.Errorf("%d pods of web left on node-1, want all 3", n)
	}

	if out := kubectlLine(t, srv, cmdUncordon); out != "node/node-0 uncordoned\nnode/node-1 uncordoned\n" {
		t.Errorf("kubectl uncordon printed %q", out)
	}
	if st := column(t, kubectlLine(t, srv, cmdGetNodes), "STATUS"); !slices.Equal(st, []string{"Ready", "Ready"}) {
		t.Errorf("after uncordon, kubectl get nodes STATUS %q, want Ready Ready", st)
	}
}
