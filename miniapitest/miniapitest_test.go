package miniapitest_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/miniapitest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// testTimeout bounds every wait in these tests.
const testTimeout = 10 * time.Second

func TestStartServesClientGo(t *testing.T) {
	env := miniapitest.Start(t, miniapitest.WithNamespaces("team-a", "team-b"))
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	for _, ns := range []string{"default", "team-a", "team-b"} {
		if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Errorf("namespace %s: %v", ns, err)
		}
	}
	roundTrip(t, ctx, cs, "team-a")
}

func TestKubeconfigLoads(t *testing.T) {
	env := miniapitest.Start(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", env.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != env.URL {
		t.Errorf("kubeconfig server %q, want %q", cfg.Host, env.URL)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(cfg)
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestStopClosesPort checks that after Stop nothing answers on the port
// and a second Stop is harmless.
func TestStopClosesPort(t *testing.T) {
	env := miniapitest.Start(t)
	u, err := url.Parse(env.URL)
	if err != nil {
		t.Fatal(err)
	}
	env.Stop()
	env.Stop()
	if c, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after Stop", u.Host)
	}
}

// TestParallel runs eight environments at once in one process; each sees
// only its own objects.
func TestParallel(t *testing.T) {
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			env := miniapitest.Start(t, miniapitest.WithNamespaces("ns"))
			ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
			defer cancel()
			cs := kubernetes.NewForConfigOrDie(env.Config)
			roundTrip(t, ctx, cs, "ns")
			list, err := cs.CoreV1().ConfigMaps("ns").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 1 {
				t.Errorf("%d ConfigMaps in a fresh environment after one create, want 1", len(list.Items))
			}
		})
	}
}

func TestBadCRDFileFailsFast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: xs.example.com}\nspec: {group: example.com, names: {plural: xs, kind: X}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ft := &fatalRecorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		miniapitest.Start(ft, miniapitest.WithCRDs(path))
	}()
	if !strings.Contains(ft.msg, "only apiextensions.k8s.io/v1 is served") {
		t.Errorf("Start with a v1beta1 CRD failed with %q, want it to say only apiextensions.k8s.io/v1 is served", ft.msg)
	}
}

// fatalRecorder records the message of Fatalf and stops the caller with
// a panic instead of ending the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f.msg)
}

// roundTrip watches ConfigMaps in ns, creates one, and waits for its
// ADDED event.
func roundTrip(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) {
	t.Helper()
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hello"}, Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev, ok := <-w.ResultChan():
		if !ok || ev.Type != watch.Added {
			t.Fatalf("first watch event %v (open %v), want ADDED", ev.Type, ok)
		}
		if got := ev.Object.(*corev1.ConfigMap).Name; got != "hello" {
			t.Errorf("ADDED %s, want hello", got)
		}
	case <-ctx.Done():
		t.Fatal("no watch event before the deadline")
	}
}

// BenchmarkStart measures Start (server, etcd, kubeconfig, one namespace,
// one CRD Established) and Stop; the start-up scenario of test/bench
// measures Start alone to /readyz.
func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		env := miniapitest.Start(b, miniapitest.WithNamespaces("ns"), miniapitest.WithCRDObjects(widgetCRD))
		env.Stop()
	}
}
