package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"sigs.k8s.io/yaml"
)

// Resources is what a --resources path declares: CustomResourceDefinitions
// (apiextensions.k8s.io/v1), and types in the older resources-file format
// (registry.ResourceFile), which keeps working.
type Resources struct {
	// CRDs are the CustomResourceDefinition objects, in file order.
	CRDs []*api.Object
	// Types are the types declared in the resources-file format.
	Types []registry.Type
}

// crdAPIVersion and crdKind identify a CustomResourceDefinition document.
const (
	crdGroup      = "apiextensions.k8s.io"
	crdAPIVersion = crdGroup + "/v1"
	crdKind       = "CustomResourceDefinition"
	crdPlural     = "customresourcedefinitions"
)

// ErrNoCRDSupport is returned by ApplyCRDs when the server does not serve
// apiextensions.k8s.io/v1 CustomResourceDefinitions.
var ErrNoCRDSupport = errors.New("server: this server does not serve apiextensions.k8s.io/v1 customresourcedefinitions")

// ReadResources reads path, a file or a directory. A directory contributes
// its files ending in .yaml, .yml or .json (not its subdirectories, not
// hidden files), in name order. Each file holds one or more YAML documents
// separated by "---" lines (or one JSON document): CustomResourceDefinitions,
// Lists of them, or a resources-file document ("resources: [...]").
func ReadResources(path string) (Resources, error) {
	files, err := resourceFiles(path)
	if err != nil {
		return Resources{}, err
	}
	var all Resources
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return Resources{}, fmt.Errorf("server: read resources: %w", err)
		}
		r, err := ParseResources(data)
		if err != nil {
			return Resources{}, fmt.Errorf("%s: %w", f, err)
		}
		all.CRDs = append(all.CRDs, r.CRDs...)
		all.Types = append(all.Types, r.Types...)
	}
	return all, nil
}

// resourceFiles lists the files ReadResources reads for path.
func resourceFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("server: resources: %w", err)
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("server: resources: %w", err)
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		switch filepath.Ext(name) {
		case ".yaml", ".yml", ".json":
			files = append(files, filepath.Join(path, name))
		}
	}
	slices.Sort(files)
	return files, nil
}

// ParseResources parses the documents of one resources file; see
// ReadResources.
func ParseResources(data []byte) (Resources, error) {
	var out Resources
	for i, doc := range splitYAML(data) {
		if err := out.addDocument(doc); err != nil {
			return Resources{}, fmt.Errorf("server: resources document %d: %w", i+1, err)
		}
	}
	return out, nil
}

// addDocument adds what one YAML or JSON document declares.
func (r *Resources) addDocument(doc []byte) error {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	var head struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Resources  json.RawMessage   `json:"resources"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(j, &head); err != nil {
		return fmt.Errorf("not an object: %w", err)
	}
	switch {
	case head.APIVersion == "" && head.Kind == "" && head.Resources != nil:
		types, err := registry.ParseResourceFile(doc)
		if err != nil {
			return err
		}
		r.Types = append(r.Types, types...)
	case head.Kind == "List" || head.Kind == crdKind+"List":
		for _, item := range head.Items {
			if err := r.addDocument(item); err != nil {
				return err
			}
		}
	case head.APIVersion == crdAPIVersion && head.Kind == crdKind:
		obj := new(api.Object)
		if err := json.Unmarshal(j, obj); err != nil {
			return err
		}
		if obj.Metadata.Name == "" {
			return errors.New("a CustomResourceDefinition without metadata.name")
		}
		r.CRDs = append(r.CRDs, obj)
	case head.APIVersion == "" && head.Kind == "":
		return errors.New("neither a Kubernetes object nor a resources-file document (resources: [...])")
	default:
		return fmt.Errorf("%s %s is not a CustomResourceDefinition (%s)", head.APIVersion, head.Kind, crdAPIVersion)
	}
	return nil
}

// splitYAML splits a multi-document YAML stream at its "---" lines and
// drops documents that hold nothing but comments and blank lines.
func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	flush := func() {
		if hasContent(cur.Bytes()) {
			docs = append(docs, bytes.Clone(cur.Bytes()))
		}
		cur.Reset()
	}
	for line := range bytes.Lines(data) {
		t := bytes.TrimRight(line, " \t\r\n")
		if bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) || bytes.HasPrefix(t, []byte("---\t")) {
			flush()
			continue
		}
		cur.Write(line)
	}
	flush()
	return docs
}

// hasContent reports whether a YAML document has any line that is not
// blank or a comment.
func hasContent(doc []byte) bool {
	for line := range bytes.Lines(doc) {
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] != '#' && !bytes.Equal(t, []byte("...")) {
			return true
		}
	}
	return false
}

// ApplyCRDs creates the CustomResourceDefinitions that do not exist and
// updates those that do (their spec; status is the server's), then waits
// until each is Established and every served version is in the registry,
// so that requests for the new types succeed once it returns. ctx bounds
// the whole call, the wait included.
func (s *Server) ApplyCRDs(ctx context.Context, crds []*api.Object) error {
	if len(crds) == 0 {
		return nil
	}
	res, ok := s.reg.Snapshot().Lookup(crdGroup, "v1", crdPlural)
	if !ok {
		return ErrNoCRDSupport
	}
	for _, crd := range crds {
		obj := crd.DeepCopy()
		name := obj.Metadata.Name
		obj.Metadata.ResourceVersion = ""
		_, err := res.Store.Create(ctx, "", obj, registry.CreateOptions{})
		if api.ReasonForError(err) == api.ReasonAlreadyExists {
			_, err = res.Store.Update(ctx, "", name, obj, registry.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("server: apply customresourcedefinition %s: %w", name, err)
		}
	}
	return s.waitEstablished(ctx, res, crds)
}

// crdEstablishPoll is how often waitEstablished looks again.
const crdEstablishPoll = 5 * time.Millisecond

// waitEstablished polls until every CRD in crds has condition Established
// True and its served versions are in the registry, or ctx ends.
func (s *Server) waitEstablished(ctx context.Context, res *registry.Resource, crds []*api.Object) error {
	pending := slices.Clone(crds)
	for {
		var err error
		pending = slices.DeleteFunc(pending, func(crd *api.Object) bool {
			if err != nil {
				return false
			}
			var ready bool
			ready, err = s.crdReady(ctx, res, crd.Metadata.Name)
			return ready
		})
		if err != nil {
			return err
		}
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server: customresourcedefinition %s not established: %w", pending[0].Metadata.Name, context.Cause(ctx))
		case <-time.After(crdEstablishPoll):
		}
	}
}

// crdState is the part of a stored CRD that crdReady reads.
type crdState struct {
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Plural string `json:"plural"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
		} `json:"versions"`
	} `json:"spec"`
	Status struct {
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

// crdReady reports whether the stored CRD name is Established with its
// served versions registered.
func (s *Server) crdReady(ctx context.Context, res *registry.Resource, name string) (bool, error) {
	cur, err := res.Store.Get(ctx, "", name, "")
	if err != nil {
		return false, fmt.Errorf("server: read customresourcedefinition %s: %w", name, err)
	}
	var st crdState
	if err := json.Unmarshal(cur.Data, &st); err != nil {
		return false, fmt.Errorf("server: decode customresourcedefinition %s: %w", name, err)
	}
	established := false
	for _, c := range st.Status.Conditions {
		if c.Type == "Established" && c.Status == "True" {
			established = true
		}
	}
	if !established {
		return false, nil
	}
	snap := s.reg.Snapshot()
	for _, v := range st.Spec.Versions {
		if _, ok := snap.Lookup(st.Spec.Group, v.Name, st.Spec.Names.Plural); v.Served && !ok {
			return false, nil
		}
	}
	return true, nil
}
