package api

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// DescribeJSONError words encoding/json's errors for clients: where the
// syntax broke, or which field has the wrong type.
func DescribeJSONError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		if te.Field != "" {
			return fmt.Sprintf("field %s must be of type %s, got %s", te.Field, te.Type, te.Value)
		}
		return fmt.Sprintf("expected %s, got %s", te.Type, te.Value)
	}
	return err.Error()
}

// SummarizeBody is the start of a request body a server could not
// decode, as kube-apiserver's handlers quote one: a JSON object as text,
// anything else (protobuf) in hex, 30 bytes at most, then " ...".
func SummarizeBody(body []byte) string {
	const max = 30
	cut, more := body, ""
	if len(body) > max {
		cut, more = body[:max], " ..."
	}
	if len(body) > 0 && body[0] == '{' {
		return string(cut) + more
	}
	return hex.EncodeToString(cut) + more
}
