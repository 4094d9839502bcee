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
		if err := applyCRD(ctx, res.Store, crd); err != nil {
			return fmt.Errorf("server: apply customresourcedefinition %s: %w", crd.Metadata.Name, err)
		}
	}
	return s.waitEstablished(ctx, res, crds)
}

// applyCRD creates crd, or replaces the spec, labels and annotations of
// the stored one. The update is conditional on the resourceVersion read
// (the controller writes status meanwhile) and retried on conflict.
func applyCRD(ctx context.Context, store *registry.Store, crd *api.Object) error {
	obj := crd.DeepCopy()
	obj.Metadata.ResourceVersion, obj.Metadata.UID = "", ""
	_, err := store.CreateObject(ctx, "", obj, registry.CreateOptions{})
	if api.ReasonForError(err) != api.ReasonAlreadyExists {
		return err
	}
	name := crd.Metadata.Name
	for range 10 {
		cur, err := store.Get(ctx, "", name, "")
		if err != nil {
			return err
		}
		var curObj api.Object
		if err := json.Unmarshal(cur.Data, &curObj); err != nil {
			return err
		}
		next := curObj.DeepCopy()
		next.Metadata.Labels, next.Metadata.Annotations = crd.Metadata.Labels, crd.Metadata.Annotations
		next.Fields["spec"] = crd.Fields["spec"]
		_, err = store.UpdateObject(ctx, "", name, next, registry.UpdateOptions{})
		if api.ReasonForError(err) != api.ReasonConflict {
			return err
		}
	}
	return fmt.Errorf("still conflicting after 10 tries")
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

// resourcesPollInterval is how often the --resources path is checked for
// changes.
const resourcesPollInterval = time.Second

// resourcesApplyTimeout bounds applying the CRDs of one change (the wait
// for Established included).
const resourcesApplyTimeout = 30 * time.Second

// readResources reads the --resources path; "" declares nothing.
func readResources(path string) (Resources, error) {
	if path == "" {
		return Resources{}, nil
	}
	return ReadResources(path)
}

// startResources installs the CRDs read at start and, when there is a
// --resources path, starts the goroutine that applies later changes to
// it until bg ends. ctx bounds the first installation.
func (s *Server) startResources(ctx, bg context.Context, path string, r Resources) error {
	if path == "" {
		return nil
	}
	w := &resourceWatcher{s: s, path: path, types: typeNames(r.Types), applied: map[string][]byte{}}
	w.stamp, _ = resourcesStamp(path)
	if err := w.apply(ctx, r.CRDs); err != nil {
		return err
	}
	s.background.Go(func() { w.run(bg) })
	return nil
}

// resourceWatcher re-reads the --resources path when a file in it
// changes, and applies what changed:
//
//   - a new or changed CRD is created or updated (and waited for until
//     Established);
//   - a CRD no longer in the files is left installed, with its objects:
//     deleting a CRD deletes every object of its type, which a removed or
//     half-written file must not do on its own; delete it with kubectl;
//   - the resources-file format's types are read at start only; a change
//     to them is logged and takes effect at the next start;
//   - a file that does not parse is logged and ignored until it changes
//     again: the last good state stays served.
//
// Its one goroutine is owned by the server: started by startResources,
// stopped with the background context, and waited for by Shutdown.
type resourceWatcher struct {
	s     *Server
	path  string
	stamp string
	// types are the names of the resources-file types served since start.
	types string
	// applied is the JSON of each CRD as last applied, by name.
	applied map[string][]byte
}

// run polls the path until ctx ends.
func (w *resourceWatcher) run(ctx context.Context) {
	tick := time.NewTicker(resourcesPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		stamp, err := resourcesStamp(w.path)
		if err != nil || stamp == w.stamp {
			continue
		}
		w.stamp = stamp
		r, err := ReadResources(w.path)
		if err != nil {
			w.s.log.Warn("resources: not applied; the last good state stays served", "path", w.path, "err", err)
			continue
		}
		if names := typeNames(r.Types); names != w.types {
			w.s.log.Warn("resources: resources-file types changed; they take effect at the next start", "path", w.path)
		}
		actx, cancel := context.WithTimeout(ctx, resourcesApplyTimeout)
		err = w.apply(actx, r.CRDs)
		cancel()
		if err != nil && ctx.Err() == nil {
			w.s.log.Warn("resources: applying CRDs failed", "path", w.path, "err", err)
		}
	}
}

// apply applies the CRDs that differ from what was last applied, and
// logs those that are gone from the files.
func (w *resourceWatcher) apply(ctx context.Context, crds []*api.Object) error {
	var changed []*api.Object
	seen := map[string]bool{}
	for _, crd := range crds {
		name := crd.Metadata.Name
		seen[name] = true
		data, err := json.Marshal(crd)
		if err != nil {
			return fmt.Errorf("server: resources: encode %s: %w", name, err)
		}
		if prev, ok := w.applied[name]; ok && bytes.Equal(prev, data) {
			continue
		}
		changed = append(changed, crd)
		w.applied[name] = data
	}
	for name := range w.applied {
		if !seen[name] {
			delete(w.applied, name)
			w.s.log.Info("resources: CRD no longer in the files; left installed (kubectl delete crd removes it and its objects)", "crd", name)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	if err := w.s.ApplyCRDs(ctx, changed); err != nil {
		// Try these again at the next change.
		for _, crd := range changed {
			delete(w.applied, crd.Metadata.Name)
		}
		return err
	}
	for _, crd := range changed {
		w.s.log.Info("resources: CRD applied", "crd", crd.Metadata.Name)
	}
	return nil
}

// resourcesStamp summarizes the names, sizes and modification times of
// the files ReadResources would read: it changes when any of them does.
func resourcesStamp(path string) (string, error) {
	files, err := resourceFiles(path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s %d %d\n", f, fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String(), nil
}

// typeNames lists types' resource, kind, scope and short names, to
// notice a change.
func typeNames(types []registry.Type) string {
	var b strings.Builder
	for _, t := range types {
		fmt.Fprintf(&b, "%s %s %v %v\n", t.GVR(), t.Kind, t.Namespaced, t.ShortNames)
	}
	return b.String()
}
