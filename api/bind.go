package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
	"github.com/labstack/echo/v4"

	"github.com/ctxgraph/ctxgraph/model"
)

// enums are the validation tags of the fields whose values come from one of model's lists:
// a request struct names the list (`validate:"omitempty,visibility"`), never a copy of its
// values, so that the contract's vocabulary is written down once.
var enums = map[string][]string{
	"participantkind":  model.ParticipantKinds,
	"messagerole":      model.MessageRoles,
	"runtimekind":      model.RuntimeKinds,
	"turnruntimekind":  model.TurnRuntimeKinds,
	"runendstatus":     model.RunEndStatuses,
	"toolresultstatus": model.ToolResultStatuses,
	"visibility":       model.Visibilities,
	"freshnessclass":   model.FreshnessClasses,
}

// newValidator returns a validator that names fields by their JSON names and knows the
// enums.
func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		return name
	})
	for tag, allowed := range enums {
		if err := v.RegisterValidation(tag, func(fl validator.FieldLevel) bool {
			return slices.Contains(allowed, fl.Field().String())
		}); err != nil {
			panic(err) // a tag name the validator rejects is a programming error
		}
	}
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
	if !utf8.Valid(body) {
		return invalidUTF8(body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			return unknownFieldError(body, dst)
		}
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

// unknownFieldError names the first key of body, in key order, that the request type of dst
// has no field for: a misspelt field is an error, not a default silently taken.
func unknownFieldError(body []byte, dst any) error {
	var v any
	_ = json.Unmarshal(body, &v)
	path := unknownField(v, reflect.TypeOf(dst), "")
	if path == "" {
		return &httpError{status: http.StatusBadRequest, message: "the body has a field this request does not take"}
	}
	return &httpError{status: http.StatusBadRequest, field: path, message: path + " is not a field of this request"}
}

// unknownField walks v, decoded JSON, beside t, the type it was decoded into, and returns
// the path of the first object key with no field (matched as encoding/json matches them,
// ignoring case). Free-form values (json.RawMessage, maps) hold any keys.
func unknownField(v any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(json.RawMessage(nil)) {
		return ""
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f, ok := jsonField(t, k)
			sub := joinPath(path, k)
			if !ok {
				return sub
			}
			if p := unknownField(obj[k], f.Type, sub); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		list, ok := v.([]any)
		if !ok {
			return ""
		}
		for i, e := range list {
			if p := unknownField(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// jsonField finds the field of struct type t that JSON key k decodes into.
func jsonField(t reflect.Type, k string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.EqualFold(name, k) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			return &httpError{status: http.StatusBadRequest, message: "the body must be a JSON object"}
		}
		want, got := jsonTypeName(typeErr.Type), jsonValueName(typeErr.Value)
		if want == "an integer" && got == "a number" {
			return &httpError{status: http.StatusBadRequest, field: field, message: field + " must be an integer"}
		}
		return &httpError{status: http.StatusBadRequest, field: field,
			message: fmt.Sprintf("%s must be %s, not %s", field, want, got)}
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
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
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

// jsonValueName names the JSON value json.UnmarshalTypeError describes: "number", "number
// 1e4", "string", "bool", "array" or "object".
func jsonValueName(v string) string {
	kind, _, _ := strings.Cut(v, " ")
	switch kind {
	case "number":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	return v
}

// invalidUTF8 answers a body that is not valid UTF-8, naming the field whose string holds
// the first invalid byte. JSON decoding would replace such bytes with U+FFFD; ctxgraph
// stores what the client sent or nothing.
func invalidUTF8(body []byte) error {
	bad := len(body)
	for i := 0; i < len(body); {
		r, size := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && size <= 1 {
			bad = i
			break
		}
		i += size
	}
	if field := fieldAt(body, bad); field != "" {
		return &httpError{status: http.StatusBadRequest, field: field, message: field + " must be valid UTF-8"}
	}
	return &httpError{status: http.StatusBadRequest, message: "the body must be valid UTF-8"}
}

// fieldAt returns the path, as validation errors name it (memories[0].summary), of the
// value of body that spans byte offset off, or "" when the body cannot be walked to it.
func fieldAt(body []byte, off int) string {
	type level struct {
		object bool
		key    string
		index  int
		// wantKey is true in an object when the next string token is a key.
		wantKey bool
	}
	var stack []level
	path := func() string {
		var b strings.Builder
		for i, l := range stack {
			if l.object {
				if i > 0 {
					b.WriteByte('.')
				}
				b.WriteString(l.key)
			} else {
				b.WriteString("[" + strconv.Itoa(l.index) + "]")
			}
		}
		return b.String()
	}
	// afterValue moves the innermost level on once one of its values is complete.
	afterValue := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		end := int(dec.InputOffset())
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, level{object: true, wantKey: true})
			case '[':
				stack = append(stack, level{})
			default:
				stack = stack[:len(stack)-1]
				afterValue()
			}
			continue
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
				stack[n-1].key, stack[n-1].wantKey = v, false
				if off < end {
					return path()
				}
				continue
			}
		}
		if off < end {
			return path()
		}
		afterValue()
	}
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
	if allowed, ok := enums[fe.Tag()]; ok {
		return fmt.Sprintf("%s must be one of: %s", field, strings.Join(allowed, ", "))
	}
	switch fe.Tag() {
	case "required":
		return field + " is required"
	case "max":
		if fe.Kind() == reflect.Slice || fe.Kind() == reflect.Map {
			return fmt.Sprintf("%s must have at most %s entries", field, fe.Param())
		}
		return fmt.Sprintf("%s must be at most %s characters long", field, fe.Param())
	case "min":
		return fmt.Sprintf("%s must have at least %s", field, fe.Param())
	case "maxbytes":
		return fmt.Sprintf("%s must be at most %s bytes", field, fe.Param())
	case "gte":
		return fmt.Sprintf("%s must be at least %s", field, fe.Param())
	case "lte":
		return fmt.Sprintf("%s must be at most %s", field, fe.Param())
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
