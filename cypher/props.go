package cypher

import (
	"encoding/json"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/dbtype"
)

// props is a node's or map's properties with typed accessors that tolerate missing keys.
type props map[string]any

// nodeProps returns the properties of the node (or map) under key in rec.
func nodeProps(rec *neo4j.Record, key string) props {
	v, _ := rec.Get(key)
	return asProps(v)
}

// asProps returns the properties of a node or map value.
func asProps(v any) props {
	switch n := v.(type) {
	case dbtype.Node:
		return n.Props
	case map[string]any:
		return n
	}
	return props{}
}

func (p props) str(k string) string {
	s, _ := p[k].(string)
	return s
}

func (p props) i64(k string) int64 {
	switch v := p[k].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}

func (p props) boolean(k string) bool {
	b, _ := p[k].(bool)
	return b
}

func (p props) float(k string) *float64 {
	switch v := p[k].(type) {
	case float64:
		return &v
	case int64:
		f := float64(v)
		return &f
	}
	return nil
}

func (p props) time(k string) time.Time {
	t, _ := p[k].(time.Time)
	return t.UTC()
}

func (p props) timePtr(k string) *time.Time {
	t, ok := p[k].(time.Time)
	if !ok {
		return nil
	}
	t = t.UTC()
	return &t
}

func (p props) strs(k string) []string {
	list, _ := p[k].([]any)
	return strs(list)
}

// strs returns the strings of a list, never nil.
func strs(list []any) []string {
	out := []string{}
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// raw returns a JSON text property as raw JSON, nil when absent.
func (p props) raw(k string) json.RawMessage {
	s, ok := p[k].(string)
	if !ok || s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// value returns a non-node value of a record.
func value(rec *neo4j.Record, key string) any {
	v, _ := rec.Get(key)
	return v
}

// strValue returns a string value of a record.
func strValue(rec *neo4j.Record, key string) string {
	s, _ := value(rec, key).(string)
	return s
}

// strList returns a list-of-strings value of a record.
func strList(rec *neo4j.Record, key string) []string {
	list, _ := value(rec, key).([]any)
	return strs(list)
}

// nullable turns an empty string into a Cypher null, so that optional ids are not stored.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullableTime turns a nil time into a Cypher null.
func nullableTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC()
}

// jsonText stores raw JSON as text, or null when absent.
func jsonText(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

// orEmpty keeps list properties non-null so that Cypher list functions need no guards.
func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
