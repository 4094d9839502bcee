package builtin

import (
	"context"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/registry"
)

// APIServices follow kube-aggregator's strategies: a local one is
// Available (Local) from its create, status is kept by updates of the
// main resource and spec by updates of /status, and validation is the
// aggregator's. Each answer was compared with kube-apiserver 1.37.
func TestAPIServiceStrategy(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry(t)
	s := storeFor(t, reg, "apiregistration.k8s.io", "v1", "apiservices")

	local := create(t, s, "", `{"metadata":{"name":"v1.local.example.com"},"spec":{"group":"local.example.com","version":"v1",
		"groupPriorityMinimum":100,"versionPriority":10},"status":{"conditions":[{"type":"Available","status":"False"}]}}`)
	cond := topField(local, "status")
	if !strings.Contains(cond, `"reason":"Local","message":"Local APIServices are always available"`) || !strings.Contains(cond, `"status":"True"`) {
		t.Errorf("local APIService status %s", cond)
	}
	remote := create(t, s, "", `{"metadata":{"name":"v1.remote.example.com"},"spec":{"group":"remote.example.com","version":"v1",
		"groupPriorityMinimum":100,"versionPriority":10,"service":{"namespace":"ns","name":"svc"}}}`)
	if got := topField(remote, "status"); got != `{}` {
		t.Errorf("remote APIService status %s, want none", got)
	}
	if got := topField(remote, "spec"); !strings.Contains(got, `"port":443`) {
		t.Errorf("spec %s: want the default port 443", got)
	}

	// The main resource keeps status; /status keeps spec.
	body := `{"metadata":{"name":"v1.remote.example.com","resourceVersion":"` + remote.Metadata.ResourceVersion + `"},
		"spec":{"group":"remote.example.com","version":"v1","groupPriorityMinimum":200,"versionPriority":10,"service":{"namespace":"ns","name":"svc"}},
		"status":{"conditions":[{"type":"Available","status":"False","reason":"Mine"}]}}`
	out, err := s.Update(ctx, "", "v1.remote.example.com", []byte(body), registry.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	updated := decodeObject(t, out)
	if got := topField(updated, "status"); got != `{}` || !strings.Contains(topField(updated, "spec"), `"groupPriorityMinimum":200`) {
		t.Errorf("after update: spec %s status %s", topField(updated, "spec"), got)
	}
	body = strings.Replace(body, remote.Metadata.ResourceVersion, updated.Metadata.ResourceVersion, 1)
	body = strings.Replace(body, `"groupPriorityMinimum":200`, `"groupPriorityMinimum":300`, 1)
	out, err = s.Update(ctx, "", "v1.remote.example.com", []byte(body), registry.UpdateOptions{Subresource: "status"})
	if err != nil {
		t.Fatal(err)
	}
	status := decodeObject(t, out)
	if !strings.Contains(topField(status, "status"), `"reason":"Mine"`) || !strings.Contains(topField(status, "spec"), `"groupPriorityMinimum":200`) {
		t.Errorf("after status update: spec %s status %s", topField(status, "spec"), topField(status, "status"))
	}

	_, err = s.Create(ctx, "", []byte(`{"metadata":{"name":"wrongname"},"spec":{"group":"x.example.com","version":"v1",
		"groupPriorityMinimum":0,"versionPriority":0,"service":{"namespace":"","name":"x","port":70000}}}`), registry.CreateOptions{})
	wantStatus(t, err, 422, "APIService.apiregistration.k8s.io \"wrongname\" is invalid: [metadata.name: Invalid value: \"wrongname\": "+
		"must be `spec.version+\".\"+spec.group`: \"v1.x.example.com\", spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000, "+
		"spec.versionPriority: Invalid value: 0: must be positive and less than 1000, spec.service.namespace: Required value, "+
		"spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive]")

	// kubectl get apiservices: NAME SERVICE AVAILABLE AGE.
	printer := s.Type().Strategy.(registry.TablePrinter)
	var names []string
	for _, c := range printer.TableColumns() {
		names = append(names, c.Name)
	}
	if strings.Join(names, " ") != "Name Service Available Age" {
		t.Errorf("columns %v", names)
	}
	list, err := s.List(ctx, "", registry.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	items := make([][]byte, len(list.Items))
	for i, it := range list.Items {
		items[i] = it.Data
	}
	rows, err := printer.TableRows(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Cells[0].(string)+" "+r.Cells[1].(string)+" "+r.Cells[2].(string))
	}
	want := "v1.local.example.com Local True|v1.remote.example.com ns/svc False (Mine)"
	if strings.Join(got, "|") != want {
		t.Errorf("rows %q, want %q", strings.Join(got, "|"), want)
	}
}
