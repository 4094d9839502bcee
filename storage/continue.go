package storage

import (
	"fmt"

	kubestorage "k8s.io/apiserver/pkg/storage"
)

// Continue tokens are kube-apiserver's own (k8s.io/apiserver's
// EncodeContinue and DecodeContinue), so a token reads, and a bad one is
// refused, exactly as there; these two only fit them to our keys and
// errors.

// EncodeContinue builds the token for a page that continues at key
// nextKey (the next page starts at nextKey) of a list under prefix read
// at revision rev.
func EncodeContinue(nextKey, prefix string, rev int64) (string, error) {
	return kubestorage.EncodeContinue(nextKey, prefix, rev)
}

// DecodeContinue returns the key the next page starts at and the revision
// the list is pinned to; 0 for a token whose revision is negative, which
// kube-apiserver reads as "the latest". A malformed token is an Invalid
// error with kube-apiserver's message.
func DecodeContinue(token, prefix string) (fromKey string, rev int64, err error) {
	fromKey, rev, err = kubestorage.DecodeContinue(token, prefix)
	if err != nil {
		return "", 0, NewError(CodeInvalid, "", 0, fmt.Errorf("invalid continue token: %w", err))
	}
	return fromKey, max(rev, 0), nil
}
