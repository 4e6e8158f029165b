package cypher

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/dbtype"

	"github.com/ctxgraph/ctxgraph/model"
)

// query is one .cypher file typed as sqlc types a query: P holds its $parameters, one
// field each, tagged `param:"name"` (`param:"name,null"` sends the zero string, number or
// time as null; a nil pointer is always null); R holds one record of its answer, one field
// per RETURN column, tagged `col:"alias"`. A test checks the tags against the file's text,
// so a misspelt parameter or alias fails it; decoding a record fails on a column it lacks or
// a value of another type, instead of reading a zero value. A null reads as the zero value.
type query[P, R any] struct {
	name string

	once   sync.Once
	params []field
	cols   []field
}

// noRows is the row type of a statement that returns nothing.
type noRows struct{}

// noParams is the parameter type of a statement without $parameters.
type noParams struct{}

// queryTypes is what the test of the statements checks: the types of each statement's
// parameters and rows, by name.
var queryTypes = map[string][2]reflect.Type{}

// newQuery declares the statement of the named .cypher file.
func newQuery[P, R any](name string) *query[P, R] {
	queryTypes[name] = [2]reflect.Type{reflect.TypeFor[P](), reflect.TypeFor[R]()}
	return &query[P, R]{name: name}
}

// field is one tagged field of a parameter or row type: its name in the statement, where it
// lies in the struct and how it is read or written. Fields are reached through their
// offsets, not through reflect.Value, so that encoding a statement's parameters allocates
// what the map literal it replaces did and decoding a row allocates nothing: the assembly
// path runs statements on every request.
type field struct {
	name     string
	goName   string
	offset   uintptr
	kind     fieldKind
	nullable bool
}

// fieldKind is the type of a field.
type fieldKind int

const (
	kindString fieldKind = iota
	kindInt64
	kindInt
	kindBool
	kindFloat
	kindTime
	kindTimePtr
	kindFloatPtr
	kindStringPtr
	kindStrings
	kindList
	kindMaps
	kindRevs
	kindProps
	kindNode
	kindAny
)

var fieldKinds = map[reflect.Type]fieldKind{
	reflect.TypeFor[string]():           kindString,
	reflect.TypeFor[int64]():            kindInt64,
	reflect.TypeFor[int]():              kindInt,
	reflect.TypeFor[bool]():             kindBool,
	reflect.TypeFor[float64]():          kindFloat,
	reflect.TypeFor[time.Time]():        kindTime,
	reflect.TypeFor[*time.Time]():       kindTimePtr,
	reflect.TypeFor[*float64]():         kindFloatPtr,
	reflect.TypeFor[*string]():          kindStringPtr,
	reflect.TypeFor[[]string]():         kindStrings,
	reflect.TypeFor[[]any]():            kindList,
	reflect.TypeFor[[]map[string]any](): kindMaps,
	reflect.TypeFor[map[string]int64](): kindRevs,
	reflect.TypeFor[props]():            kindProps,
	reflect.TypeFor[dbtype.Node]():      kindNode,
	reflect.TypeFor[any]():              kindAny,
}

// fieldsOf reads the fields of a parameter or row type, tagged with tag.
func fieldsOf(statement string, t reflect.Type, tag string) []field {
	out := make([]field, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		kind, ok := fieldKinds[f.Type]
		if !ok {
			panic(fmt.Sprintf("statement %s: field %s has type %s, which statements do not carry", statement, f.Name, f.Type))
		}
		name, opt, _ := strings.Cut(f.Tag.Get(tag), ",")
		out = append(out, field{name: name, goName: f.Name, offset: f.Offset, kind: kind, nullable: opt == "null"})
	}
	return out
}

// plan reads the tags of P and R once.
func (q *query[P, R]) plan() {
	q.once.Do(func() {
		q.params = fieldsOf(q.name, reflect.TypeFor[P](), "param")
		q.cols = fieldsOf(q.name, reflect.TypeFor[R](), "col")
	})
}

// encode renders p as the statement's parameter map.
func (q *query[P, R]) encode(p *P) map[string]any {
	q.plan()
	if len(q.params) == 0 {
		return nil
	}
	out := make(map[string]any, len(q.params))
	for _, f := range q.params {
		out[f.name] = f.get(unsafe.Add(unsafe.Pointer(p), f.offset))
	}
	return out
}

// get returns the field at ptr as a parameter value: null for the zero value of a nullable
// field.
func (f field) get(ptr unsafe.Pointer) any {
	switch f.kind {
	case kindString:
		if s := *(*string)(ptr); s != "" || !f.nullable {
			return s
		}
	case kindInt64:
		if n := *(*int64)(ptr); n != 0 || !f.nullable {
			return n
		}
	case kindInt:
		if n := *(*int)(ptr); n != 0 || !f.nullable {
			return n
		}
	case kindBool:
		return *(*bool)(ptr)
	case kindFloat:
		return *(*float64)(ptr)
	case kindTime:
		if t := *(*time.Time)(ptr); !t.IsZero() || !f.nullable {
			return t
		}
	case kindTimePtr:
		if t := *(**time.Time)(ptr); t != nil {
			return t.UTC()
		}
	case kindFloatPtr:
		if f := *(**float64)(ptr); f != nil {
			return *f
		}
	case kindStringPtr:
		if s := *(**string)(ptr); s != nil {
			return *s
		}
	case kindStrings:
		return *(*[]string)(ptr)
	case kindList:
		return *(*[]any)(ptr)
	case kindMaps:
		return *(*[]map[string]any)(ptr)
	case kindRevs:
		return *(*map[string]int64)(ptr)
	case kindProps:
		return map[string]any(*(*props)(ptr))
	case kindAny:
		return *(*any)(ptr)
	}
	return nil
}

// scan decodes one record into dst: every column of R must be in the record, each value
// of its field's type or null (which leaves the field's zero value).
func (q *query[P, R]) scan(rec *neo4j.Record, dst *R) error {
	q.plan()
	for _, c := range q.cols {
		i := keyIndex(rec.Keys, c.name)
		if i < 0 {
			return model.Internal("decoding the graph's answer", fmt.Errorf("statement %s: its answer has no column %s (it has %s)",
				q.name, c.name, strings.Join(rec.Keys, ", ")))
		}
		if val := rec.Values[i]; val != nil && !c.set(unsafe.Add(unsafe.Pointer(dst), c.offset), val) {
			return model.Internal("decoding the graph's answer", fmt.Errorf("statement %s: column %s holds a %T, which its field %s cannot hold",
				q.name, c.name, val, c.goName))
		}
	}
	return nil
}

// set stores a column's value in the field at ptr; false when the field cannot hold it.
func (f field) set(ptr unsafe.Pointer, val any) bool {
	ok := true
	switch f.kind {
	case kindString:
		*(*string)(ptr), ok = val.(string)
	case kindInt64:
		*(*int64)(ptr), ok = val.(int64)
	case kindInt:
		var n int64
		n, ok = val.(int64)
		*(*int)(ptr) = int(n)
	case kindBool:
		*(*bool)(ptr), ok = val.(bool)
	case kindFloat:
		switch x := val.(type) {
		case float64:
			*(*float64)(ptr) = x
		case int64:
			*(*float64)(ptr) = float64(x)
		default:
			ok = false
		}
	case kindTime:
		var t time.Time
		t, ok = val.(time.Time)
		*(*time.Time)(ptr) = t.UTC()
	case kindTimePtr:
		var t time.Time
		if t, ok = val.(time.Time); ok {
			t = t.UTC()
			*(**time.Time)(ptr) = &t
		}
	case kindFloatPtr:
		var x float64
		if x, ok = val.(float64); ok {
			*(**float64)(ptr) = &x
		}
	case kindStrings:
		var l []any
		l, ok = val.([]any)
		*(*[]string)(ptr) = strs(l)
	case kindList:
		*(*[]any)(ptr), ok = val.([]any)
	case kindProps:
		switch n := val.(type) {
		case dbtype.Node:
			*(*props)(ptr) = n.Props
		case map[string]any:
			*(*props)(ptr) = n
		default:
			ok = false
		}
	case kindNode:
		*(*dbtype.Node)(ptr), ok = val.(dbtype.Node)
	case kindAny:
		*(*any)(ptr) = val
	default:
		ok = false
	}
	return ok
}

func keyIndex(keys []string, name string) int {
	for i, k := range keys {
		if k == name {
			return i
		}
	}
	return -1
}

// scanAll decodes every record.
func (q *query[P, R]) scanAll(recs []*neo4j.Record) ([]R, error) {
	out := make([]R, len(recs))
	for i, rec := range recs {
		if err := q.scan(rec, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scanFirst decodes the first record; found is false when there is none.
func (q *query[P, R]) scanFirst(recs []*neo4j.Record) (row R, found bool, err error) {
	if len(recs) == 0 {
		return row, false, nil
	}
	err = q.scan(recs[0], &row)
	return row, err == nil, err
}

// all runs the statement in t and decodes its records.
func (q *query[P, R]) all(t *tx, p P) ([]R, error) {
	recs, err := t.run(q.name, q.encode(&p))
	if err != nil {
		return nil, err
	}
	return q.scanAll(recs)
}

// one runs the statement in t and decodes its first record; found is false when it
// returned none.
func (q *query[P, R]) one(t *tx, p P) (row R, found bool, err error) {
	recs, err := t.run(q.name, q.encode(&p))
	if err != nil {
		return row, false, err
	}
	return q.scanFirst(recs)
}

// queryName is the name of the statement's .cypher file.
func (q *query[P, R]) queryName() string { return q.name }

// exec runs the statement in t for its effect.
func (q *query[P, R]) exec(t *tx, p P) error {
	_, err := t.run(q.name, q.encode(&p))
	return err
}

// autoAll runs the statement as an auto-commit transaction of its own (statement) and
// decodes its records.
func (q *query[P, R]) autoAll(ctx context.Context, s *Store, mode neo4j.AccessMode, p P) ([]R, error) {
	recs, err := statement(ctx, s, mode, q.name, q.encode(&p))
	if err != nil {
		return nil, err
	}
	return q.scanAll(recs)
}

// autoOne runs the statement as an auto-commit transaction of its own (statement) and
// decodes its first record; found is false when it returned none.
func (q *query[P, R]) autoOne(ctx context.Context, s *Store, mode neo4j.AccessMode, p P) (row R, found bool, err error) {
	recs, err := statement(ctx, s, mode, q.name, q.encode(&p))
	if err != nil {
		return row, false, err
	}
	return q.scanFirst(recs)
}

// inSession runs the statement as an auto-commit transaction of session without retries,
// for statements that cannot run in a managed transaction (schema commands, SHOW, and the
// migrations' bookkeeping beside them), and decodes its records.
func (q *query[P, R]) inSession(ctx context.Context, session neo4j.SessionWithContext, p P) ([]R, error) {
	res, err := session.Run(ctx, mustQuery(q.name), q.encode(&p))
	if err != nil {
		return nil, translate(err)
	}
	records, err := res.Collect(ctx)
	if err != nil {
		return nil, translate(err)
	}
	coverage.mark(q.name)
	return q.scanAll(records)
}

// idParams name one record of an account.
type idParams struct {
	ID        string `param:"id"`
	AccountID string `param:"accountId"`
}

// idStampParams name one record of an account that a write changes at recordedAt.
type idStampParams struct {
	ID         string    `param:"id"`
	AccountID  string    `param:"accountId"`
	RecordedAt time.Time `param:"recordedAt"`
}

// idRow is an answer that names a record.
type idRow struct {
	ID string `col:"id"`
}
