package miniapitest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/miniapi/miniapi/api"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// crdFileExtensions are the file name extensions WithCRDs reads; envtest
// (controller-runtime pkg/envtest, readCRDs) reads the same three.
var crdFileExtensions = []string{".json", ".yaml", ".yml"}

// crdAPIVersion and crdKind identify a CustomResourceDefinition document.
const (
	crdAPIVersion = "apiextensions.k8s.io/v1"
	crdKind       = "CustomResourceDefinition"
)

// readCRDPaths reads the CustomResourceDefinitions in paths the way
// envtest reads CRDInstallOptions.Paths:
//
//   - a directory contributes its files ending in .json, .yaml or .yml,
//     in name order, not its subdirectories;
//   - a file holds one or more YAML documents separated by "---" lines
//     (or JSON); a document whose kind is not CustomResourceDefinition, or
//     that has no spec.group or spec.names.kind, is skipped, so a
//     kustomization.yaml or a Namespace beside the CRDs does no harm;
//   - a document that is not valid YAML, or not an object, is an error;
//   - when several documents define the CRD of one name, the last wins.
//
// Two differences, both failing where envtest would go on quietly: a path
// that does not exist, or a file named directly whose extension is not
// one of the three, is an error (envtest skips both unless
// ErrorIfPathMissing); and a CustomResourceDefinition of another
// apiVersion than apiextensions.k8s.io/v1 is an error (envtest decodes it
// as v1 and installs whatever that yields). Lists of CRDs (kind List or
// CustomResourceDefinitionList) are read item by item, where envtest
// skips them.
func readCRDPaths(paths []string) ([]*api.Object, error) {
	var out []*api.Object
	index := map[string]int{} // CRD name → its position in out
	for _, p := range paths {
		files, err := crdFiles(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			crds, err := readCRDFile(f)
			if err != nil {
				return nil, err
			}
			for _, crd := range crds {
				if i, ok := index[crd.Metadata.Name]; ok {
					out[i] = crd
					continue
				}
				index[crd.Metadata.Name] = len(out)
				out = append(out, crd)
			}
		}
	}
	return out, nil
}

// crdFiles lists the files readCRDPaths reads for path.
func crdFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("CRD path: %w", err)
	}
	if !fi.IsDir() {
		if !slices.Contains(crdFileExtensions, filepath.Ext(path)) {
			return nil, fmt.Errorf("CRD path %s: not a .json, .yaml or .yml file", path)
		}
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path) // sorted by name
	if err != nil {
		return nil, fmt.Errorf("CRD path: %w", err)
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() || !slices.Contains(crdFileExtensions, filepath.Ext(e.Name())) {
			continue
		}
		files = append(files, filepath.Join(path, e.Name()))
	}
	return files, nil
}

// readCRDFile returns the CRDs among the documents of one file.
func readCRDFile(path string) ([]*api.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read CRDs: %w", err)
	}
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*api.Object
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out, err = appendCRDs(out, doc)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i, err)
		}
	}
}

// crdHead is the part of a document that decides whether it is a CRD.
type crdHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
	} `json:"spec"`
	Items []json.RawMessage `json:"items"`
}

// appendCRDs appends the CRD doc holds, if any, to out; see readCRDPaths
// for what is skipped.
func appendCRDs(out []*api.Object, doc []byte) ([]*api.Object, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	j = bytes.TrimSpace(j)
	if bytes.Equal(j, []byte("null")) { // only comments, or empty
		return out, nil
	}
	if len(j) == 0 || j[0] != '{' {
		return nil, errors.New("not an object")
	}
	var head crdHead
	headErr := json.Unmarshal(j, &head)
	switch {
	case head.Kind == "List" || head.Kind == crdKind+"List":
		if headErr != nil {
			return nil, headErr
		}
		for _, item := range head.Items {
			if out, err = appendCRDs(out, item); err != nil {
				return nil, err
			}
		}
		return out, nil
	case head.Kind != crdKind:
		// Not a CRD; a field of another kind that happens not to fit
		// crdHead is no error either.
		return out, nil
	case headErr != nil:
		return nil, headErr
	case head.Spec.Group == "" || head.Spec.Names.Kind == "":
		return out, nil
	case head.APIVersion != crdAPIVersion:
		return nil, fmt.Errorf("%s %s: only %s is served", head.APIVersion, crdKind, crdAPIVersion)
	}
	obj := new(api.Object)
	if err := json.Unmarshal(j, obj); err != nil {
		return nil, err
	}
	if obj.Metadata.Name == "" {
		return nil, fmt.Errorf("a %s without metadata.name", crdKind)
	}
	return append(out, obj), nil
}
