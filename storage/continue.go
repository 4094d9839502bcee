package storage

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// continueToken is the JSON inside a continue token; the field names match
// kube-apiserver's so the tokens look alike.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

const continueTokenVersion = "meta.k8s.io/v1"

// EncodeContinue builds the token for a page that continues at key
// nextKey (exclusive of nothing: the next page starts at nextKey) of a list
// under prefix read at revision rev.
func EncodeContinue(nextKey, prefix string, rev int64) (string, error) {
	rel, ok := strings.CutPrefix(nextKey, prefix)
	if !ok {
		return "", fmt.Errorf("storage: continue key %q is not under %q", nextKey, prefix)
	}
	b, err := json.Marshal(continueToken{APIVersion: continueTokenVersion, ResourceVersion: rev, StartKey: rel})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// DecodeContinue returns the key the next page starts at and the revision
// the list is pinned to. A malformed token is an Invalid error.
func DecodeContinue(token, prefix string) (fromKey string, rev int64, err error) {
	invalid := func(why string) error {
		return NewError(CodeInvalid, "", 0, fmt.Errorf("continue key is not valid: %s", why))
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, invalid("not base64")
	}
	var t continueToken
	if err := json.Unmarshal(b, &t); err != nil {
		return "", 0, invalid("not a continue token")
	}
	if t.APIVersion != continueTokenVersion {
		return "", 0, invalid(fmt.Sprintf("unknown version %q", t.APIVersion))
	}
	if t.ResourceVersion <= 0 {
		return "", 0, invalid("incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	// The key must stay under prefix: as kube-apiserver, refuse a key
	// path.Clean would change ("..", "." or empty segments), which
	// leaves names that merely contain dots ("a..b" is a valid Role
	// name) to page through.
	if t.StartKey == "" || strings.HasPrefix(t.StartKey, "/") || path.Clean("/"+t.StartKey) != "/"+t.StartKey {
		return "", 0, invalid("start key is not valid")
	}
	return prefix + t.StartKey, t.ResourceVersion, nil
}
