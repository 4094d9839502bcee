package storage

import (
	"fmt"
	"strings"
)

// DefaultRoot is the key prefix under which miniapi stores every object.
const DefaultRoot = "/registry"

// coreGroupSegment stands for the core ("") API group in keys, so every key
// has the same number of segments. API group names other than the core
// group contain a dot or are one of Kubernetes' built-in names, none of
// which is "core".
const coreGroupSegment = "core"

// ResourceKeys lays out the etcd keys of one resource:
// <root>/<group>/<resource>/<namespace>/<name> for namespaced objects and
// <root>/<group>/<resource>/<name> for cluster-scoped ones.
type ResourceKeys struct {
	Root       string
	Group      string
	Resource   string
	Namespaced bool
}

// Prefix is the prefix of every key of the resource, ending in "/".
func (k ResourceKeys) Prefix() string {
	root := strings.TrimSuffix(k.Root, "/")
	if root == "" {
		root = DefaultRoot
	}
	g := k.Group
	if g == "" {
		g = coreGroupSegment
	}
	return root + "/" + g + "/" + k.Resource + "/"
}

// NamespacePrefix is the prefix of the keys in one namespace, or Prefix for
// "" (all namespaces) and for cluster-scoped resources.
func (k ResourceKeys) NamespacePrefix(namespace string) string {
	if !k.Namespaced || namespace == "" {
		return k.Prefix()
	}
	return k.Prefix() + namespace + "/"
}

// Key is the key of one object.
func (k ResourceKeys) Key(namespace, name string) string {
	if k.Namespaced {
		return k.Prefix() + namespace + "/" + name
	}
	return k.Prefix() + name
}

// Parse splits a key of this resource into namespace and name.
func (k ResourceKeys) Parse(key string) (namespace, name string, err error) {
	rest, ok := strings.CutPrefix(key, k.Prefix())
	if !ok {
		return "", "", fmt.Errorf("storage: key %q is not under %q", key, k.Prefix())
	}
	if !k.Namespaced {
		if rest == "" || strings.Contains(rest, "/") {
			return "", "", fmt.Errorf("storage: malformed cluster-scoped key %q", key)
		}
		return "", rest, nil
	}
	namespace, name, ok = strings.Cut(rest, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("storage: malformed namespaced key %q", key)
	}
	return namespace, name, nil
}
