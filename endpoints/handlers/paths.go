package handlers

import (
	"strings"
)

// namespaceSubresources are the subresources of a namespace itself, which
// kube-apiserver tells apart from resources inside a namespace.
var namespaceSubresources = map[string]bool{"status": true, "finalize": true}

// ParseResourcePath turns the segments after /api/<v>/ or
// /apis/<g>/<v>/ into a RequestInfo, following kube-apiserver's rules:
// an optional legacy "watch" prefix, then namespaces/<ns>/ and
// <resource>[/<name>[/<subresource>]].
func ParseResourcePath(group, version, rest string) (RequestInfo, bool) {
	info := RequestInfo{Group: group, Version: version}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if len(parts) == 0 || parts[0] == "" {
		return info, false
	}
	if parts[0] == "watch" {
		info.Watch = true
		parts = parts[1:]
		if len(parts) == 0 {
			return info, false
		}
	}
	if parts[0] == "namespaces" && len(parts) > 2 && !namespaceSubresources[parts[2]] {
		if parts[1] == "" {
			// namespaces//<resource> names no namespace; read as one
			// it would address all of them.
			return info, false
		}
		info.Namespace = parts[1]
		info.NamespacedPath = true
		parts = parts[2:]
	}
	if len(parts) >= 3 && parts[2] == "proxy" {
		// A proxy subresource carries the path to proxy to after it,
		// which kube-apiserver passes on with a leading slash and the
		// URL's trailing slash: ".../proxy" proxies to "" (and is
		// redirected to ".../proxy/"), ".../proxy/" to "/".
		sub := strings.Join(parts[3:], "/")
		if sub != "" {
			sub = "/" + sub
		}
		if strings.HasSuffix(rest, "/") && !strings.HasSuffix(sub, "/") {
			sub += "/"
		}
		info.SubPath = sub
		parts = parts[:3]
	}
	for _, p := range parts {
		if p == "" {
			return info, false
		}
	}
	switch len(parts) {
	case 3:
		info.Subresource = parts[2]
		fallthrough
	case 2:
		info.Name = parts[1]
		fallthrough
	case 1:
		info.Resource = parts[0]
	default:
		return info, false
	}
	if info.Watch && info.Subresource != "" {
		return info, false
	}
	return info, true
}
