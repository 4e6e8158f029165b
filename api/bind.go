package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/go-playground/validator/v10"
	"github.com/labstack/echo/v4"
)

// rfc3339 is the validation tag for time fields; they are strings in the request structs so
// that a malformed time is reported with its field name.
const rfc3339 = "2006-01-02T15:04:05Z07:00"

// newValidator returns a validator that names fields by their JSON names.
func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		return name
	})
	return v
}

// bind decodes the JSON body into dst and validates it. Errors name the offending field.
func (s *Server) bind(c echo.Context, dst any) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return he
		}
		return &httpError{status: http.StatusBadRequest, message: "cannot read the request body"}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return &httpError{status: http.StatusBadRequest, message: "the body must hold one JSON object"}
	}
	if err := s.validate.Struct(dst); err != nil {
		return validationError(err)
	}
	return nil
}

func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			return &httpError{status: http.StatusBadRequest, message: "the body must be a JSON object"}
		}
		return &httpError{status: http.StatusBadRequest, field: field,
			message: fmt.Sprintf("%s must be %s, not %s", field, jsonTypeName(typeErr.Type), typeErr.Value)}
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &httpError{status: http.StatusBadRequest, message: "the body is not valid JSON"}
	}
	return &httpError{status: http.StatusBadRequest, message: "the body is not valid JSON: " + err.Error()}
}

func jsonTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonTypeName(t.Elem())
	}
	return t.String()
}

func validationError(err error) error {
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) || len(verrs) == 0 {
		return &httpError{status: http.StatusBadRequest, message: err.Error()}
	}
	fe := verrs[0]
	field := fe.Namespace()
	if _, rest, ok := strings.Cut(field, "."); ok {
		field = rest
	}
	return &httpError{status: http.StatusBadRequest, field: field, message: describeRule(field, fe)}
}

func describeRule(field string, fe validator.FieldError) string {
	switch fe.Tag() {
	case "required":
		return field + " is required"
	case "oneof":
		return fmt.Sprintf("%s must be one of: %s", field, strings.ReplaceAll(fe.Param(), " ", ", "))
	case "max":
		return fmt.Sprintf("%s must be at most %s long", field, fe.Param())
	case "min":
		return fmt.Sprintf("%s must have at least %s", field, fe.Param())
	case "gte", "lte":
		return fmt.Sprintf("%s must be between 0 and 1", field)
	case "datetime":
		return field + " must be an RFC 3339 time, such as 2026-11-20T12:00:00Z"
	case "privacyclass":
		return field + " must be a lowercase privacy class name, such as internal or oauth_derived"
	case "json":
		return field + " must be JSON"
	}
	return fmt.Sprintf("%s fails the %s rule", field, fe.Tag())
}

// timeOf converts a validated RFC 3339 field; empty means "not given".
func timeOf(s string) *time.Time {
	if s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil
	}
	t = t.UTC()
	return &t
}
