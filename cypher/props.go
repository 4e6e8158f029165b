package cypher

import (
	"encoding/json"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j/dbtype"

	"github.com/ctxgraph/ctxgraph/model"
)

// props is a node's or map's properties with typed accessors that tolerate missing keys.
type props map[string]any

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

// times returns a list of times, never nil.
func (p props) times(k string) []time.Time {
	list, _ := p[k].([]any)
	out := []time.Time{}
	for _, v := range list {
		if t, ok := v.(time.Time); ok {
			out = append(out, t.UTC())
		}
	}
	return out
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

// tools decodes a property of tools kept as JSON text (toolsText), nil when absent.
func (p props) tools(k string) []model.ToolSpec {
	var out []model.ToolSpec
	if raw := p.raw(k); raw != nil {
		// Only toolsText writes these properties: the text is always a list of tools.
		_ = json.Unmarshal(raw, &out)
	}
	return out
}

// toolsText encodes tools as the JSON text a node keeps them in: with their parameters and
// freshness declarations, "" for none.
func toolsText(tools []model.ToolSpec) (string, error) {
	if len(tools) == 0 {
		return "", nil
	}
	b, err := model.EncodeJSON(tools)
	if err != nil {
		return "", model.Internal("encoding the tools offered failed", err)
	}
	return string(b), nil
}

// nullable turns an empty string into a Cypher null, so that optional ids are not stored.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// orEmpty keeps list properties non-null so that Cypher list functions need no guards.
func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
