package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
)

// TestReplicasOnOneCluster runs two servers on one external etcd
// (--etcd-servers): each has its own caches, fed only by etcd's watch, so
// a client can list from one replica and watch from the other at the
// list's resourceVersion, and see every later write made through either.
func TestReplicasOnOneCluster(t *testing.T) {
	etcd := etcd3test.StartEmbedded(t)
	var replicas [2]*Server
	for i := range replicas {
		srv, err := Start(context.Background(), Config{Listen: "127.0.0.1:0", UnsafePlainHTTP: true, EtcdServers: []string{etcd.Endpoint()}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				t.Errorf("shutdown: %v", err)
			}
		})
		replicas[i] = srv
	}
	a, b := replicas[0].URL(), replicas[1].URL()
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	post(t, c, a+"/api/v1/namespaces", `{"metadata":{"name":"ns1"}}`)
	createCM(t, c, a, "one", "")

	// List from A (consistent), watch from B at the list's resourceVersion.
	resp, err := c.Get(a + "/api/v1/namespaces/ns1/configmaps")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
		Items    []json.RawMessage                `json:"items"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list.Items) != 1 {
		t.Fatalf("list from A has %d items", len(list.Items))
	}
	w := openWatch(t, c, b+"/api/v1/namespaces/ns1/configmaps?watch=true&resourceVersion="+list.Metadata.ResourceVersion)
	sc := bufio.NewScanner(w.Body)
	for i := 0; i < 4; i++ {
		base := a
		if i%2 == 1 {
			base = b
		}
		createCM(t, c, base, fmt.Sprintf("w%d", i), "")
	}
	evs := readEvents(t, sc, 4)
	for i, ev := range evs {
		if want := fmt.Sprintf("w%d", i); ev.Type != "ADDED" || ev.Object.Metadata.Name != want {
			t.Fatalf("event %d from replica B = %s %s, want ADDED %s", i, ev.Type, ev.Object.Metadata.Name, want)
		}
	}
	// Shutting a replica down does not close the shared cluster.
	if err := replicas[0].Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	createCM(t, c, b, "after", "")
}

func TestSystemNamespacesExist(t *testing.T) {
	srv := start(t, Config{})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	for _, ns := range SystemNamespaces {
		resp, err := c.Get(srv.URL() + "/api/v1/namespaces/" + ns)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("namespace %s: %d", ns, resp.StatusCode)
		}
	}
	// Objects go into "default" without creating it first.
	post(t, c, srv.URL()+"/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"x"}}`)
}

// TestSystemPriorityClassesExist checks the PriorityClasses
// kube-apiserver creates at start are there, with kube's values,
// recorded as its own writes.
func TestSystemPriorityClassesExist(t *testing.T) {
	srv := start(t, Config{})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	get := func(url string) map[string]any {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
		}
		return m
	}
	base := srv.URL() + "/apis/scheduling.k8s.io/v1/priorityclasses/"
	for name, value := range map[string]float64{"system-cluster-critical": 2000000000, "system-node-critical": 2000001000} {
		pc := get(base + name)
		mf := pc["metadata"].(map[string]any)["managedFields"].([]any)
		if pc["value"] != value || mf[0].(map[string]any)["manager"] != "kube-apiserver" {
			t.Errorf("%s: value %v, managedFields %v", name, pc["value"], mf)
		}
	}
}
