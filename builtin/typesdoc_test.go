package builtin_test

import (
	"cmp"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/registry"
	"k8s.io/kubernetes/pkg/serviceaccount"
)

// update is the -update flag the package's internal tests define
// (apiservicepriorities_test.go): one flag rewrites every generated file.
func update() bool { return flag.Lookup("update").Value.(flag.Getter).Get().(bool) }

// typesDoc is the page that holds the generated table, from this
// package's directory, and typesSection names the generated part.
const (
	typesDoc     = "../docs/resource-types.md"
	typesSection = "builtin-types"
)

// TestBuiltinTypesDoc keeps the built-in types table of
// docs/resource-types.md true: it builds the table from the types the
// server serves (builtin.Types and the CRD type, as server.Start adds
// them) and fails with a diff when the page differs. With -update it
// rewrites the page instead:
//
//	go test ./builtin -run TestBuiltinTypesDoc -update
func TestBuiltinTypesDoc(t *testing.T) {
	data, err := os.ReadFile(filepath.FromSlash(typesDoc))
	if err != nil {
		t.Fatal(err)
	}
	// The server's types: with authentication and a token issuer, so the
	// review resources and serviceaccounts/token are served.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	issuer, err := serviceaccount.JWTTokenGenerator("https://issuer.example", key)
	if err != nil {
		t.Fatal(err)
	}
	types := builtin.Types(builtin.Config{Auth: &builtin.Auth{Issuer: issuer}})
	table, err := typesTable(types, typeNotes)
	if err != nil {
		t.Fatal(err)
	}
	want, err := replaceGenerated(string(data), typesSection, table)
	if err != nil {
		t.Fatal(err)
	}
	if update() {
		if want != string(data) {
			if err := os.WriteFile(filepath.FromSlash(typesDoc), []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if want != string(data) {
		t.Errorf("docs/resource-types.md's built-in types table is not what the registry serves; rewrite it with\n"+
			"\tgo test ./builtin -run TestBuiltinTypesDoc -update\n(- the page, + the registry):\n%s",
			lineDiff(string(data), want))
	}
}

// typeNotes are the notes no Type field says, by "group/resource" (the
// core group as "core") or "group/*" for every resource of a group. Each
// must name a served resource: TestBuiltinTypesDoc fails on one that
// names none, so a note cannot outlive its row.
var typeNotes = map[string]string{
	"core/componentstatuses":                         "probes etcd, and the controller manager and scheduler on their default ports: `Unhealthy`, as they do not run",
	"core/namespaces":                                "the label `kubernetes.io/metadata.name` kept; emptied by the namespace controller on delete",
	"core/pods":                                      "graceful deletion as kube's pod rules decide; `binding` and `eviction` as kube serves them",
	"core/services":                                  "ClusterIPs and NodePorts from kube's allocators; the `kubernetes` Service kept by its controller",
	"apiregistration.k8s.io/apiservices":             "one per served group-version, kept by kube-aggregator's controllers; `spec.service` ones are stored, not proxied",
	"admissionregistration.k8s.io/*":                 "in effect for the requests after their write, through kube's plugins: [admission](admission.md)",
	"apiextensions.k8s.io/customresourcedefinitions": "each CRD served at once: [below](#customresourcedefinitions)",
	"networking.k8s.io/ipaddresses":                  "one per allocated ClusterIP, written by the allocator",
	"networking.k8s.io/servicecidrs":                 "the `kubernetes` ServiceCIDR kept by its controller",
	"rbac.authorization.k8s.io/*":                    "enforced by kube's RBAC authorizer; kube's default roles and bindings made at start: [authorization](security.md#authorization)",
}

// typesTable renders one Markdown row per type: the core group first,
// then groups by name, each group's types in the order given.
func typesTable(types []registry.Type, notes map[string]string) (string, error) {
	types = slices.Clone(types)
	slices.SortStableFunc(types, func(a, b registry.Type) int { return cmp.Compare(a.Group, b.Group) })
	used := map[string]bool{}
	var b strings.Builder
	b.WriteString("| group | version | resource | kind | namespaced | short names | subresources | notes |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for i := range types {
		t := &types[i]
		group := cmp.Or(t.Group, "core")
		var served, connect, notYet []string
		for _, sr := range registry.Subresources(t) {
			switch sr.Serve {
			case registry.ServeNotYet:
				notYet = append(notYet, code(sr.Name))
				continue
			case registry.ServeConnect:
				connect = append(connect, code(sr.Name))
			}
			served = append(served, code(sr.Name))
		}
		var short []string
		for _, s := range t.ShortNames {
			short = append(short, code(s))
		}
		var rowNotes []string
		if v, ok := t.Strategy.(registry.Virtual); ok {
			rowNotes = append(rowNotes, "not stored: serves "+strings.Join(v.Verbs(), ", ")+" only")
		} else if !registry.SupportsDeleteCollection(t) {
			rowNotes = append(rowNotes, "no `deletecollection`, as in kube")
		}
		if sv := t.StorageAPIVersion(); sv != "" {
			rowNotes = append(rowNotes, fmt.Sprintf("the objects of %s, stored in that version", code(sv+" "+t.Plural)))
		}
		if t.DeprecationWarning != "" {
			rowNotes = append(rowNotes, "deprecated: every request warns "+code(t.DeprecationWarning))
		}
		for _, key := range []string{group + "/" + t.Plural, group + "/*"} {
			if n, ok := notes[key]; ok {
				rowNotes = append(rowNotes, n)
				used[key] = true
			}
		}
		if len(connect) > 0 {
			rowNotes = append(rowNotes, strings.Join(connect, ", ")+plural(connect, " answers", " answer")+" what kube-apiserver answers when the backend cannot be reached: [no kubelet](differences.md#no-kubelet-no-nodes)")
		}
		if len(notYet) > 0 {
			rowNotes = append(rowNotes, strings.Join(notYet, ", ")+plural(notYet, " is", " are")+" not served yet: [what differs](differences.md)")
		}
		cells := []string{group, t.Version, code(t.Plural), t.Kind, fmt.Sprint(t.Namespaced),
			strings.Join(short, ", "), strings.Join(served, ", "), strings.Join(rowNotes, "; ")}
		for i, c := range cells {
			cells[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	for key := range notes {
		if !used[key] {
			return "", fmt.Errorf("the note for %s names no served resource", key)
		}
	}
	return b.String(), nil
}

// plural returns one when list has one item, many otherwise.
func plural(list []string, one, many string) string {
	if len(list) == 1 {
		return one
	}
	return many
}

// code formats s as inline code.
func code(s string) string { return "`" + s + "`" }

// replaceGenerated returns doc with the text between the BEGIN and END
// GENERATED markers of section replaced by body.
func replaceGenerated(doc, section, body string) (string, error) {
	begin := "<!-- BEGIN GENERATED: " + section + " -->\n"
	end := "<!-- END GENERATED: " + section + " -->"
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("%s has no %q ... %q markers", typesDoc, strings.TrimSpace(begin), end)
	}
	return doc[:i+len(begin)] + body + doc[j:], nil
}

// lineDiff lists the lines only in have (-) and only in want (+), in
// order: enough to see which rows changed.
func lineDiff(have, want string) string {
	haveLines, wantLines := strings.Split(have, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for _, l := range haveLines {
		if !slices.Contains(wantLines, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range wantLines {
		if !slices.Contains(haveLines, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}
