package api

import (
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
