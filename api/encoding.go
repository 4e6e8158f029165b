package api

import (
	"bytes"
	"encoding/json"

	"github.com/labstack/echo/v4"

	"github.com/ctxgraph/ctxgraph/model"
)

// jsonSerializer writes JSON without HTML escaping: assembled prompts and tool payloads keep
// `&`, `<` and `>` as they are, exactly as a client sent them.
type jsonSerializer struct{}

// Serialize writes i as JSON.
func (jsonSerializer) Serialize(c echo.Context, i any, indent string) error {
	enc := json.NewEncoder(c.Response())
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	return enc.Encode(i)
}

// Deserialize is unused: handlers bind bodies themselves (see bind).
func (jsonSerializer) Deserialize(c echo.Context, i any) error {
	return json.NewDecoder(c.Request().Body).Decode(i)
}

// assemblyJSON is the JSON of an assembly as it is answered: record (its JSON as its record
// keeps it, encoded before the record's own write was timed) with its timingsMs object
// replaced by the assembly's final timings, which include that write. It saves encoding the
// whole assembly, prompt included, a second time. ok is false when record does not hold the
// timings it should. The key cannot occur anywhere else unescaped: quotes inside strings are
// escaped, and no other object has that field.
func assemblyJSON(a model.Assembly, record []byte) (out []byte, ok bool) {
	if record == nil {
		return nil, false
	}
	recorded := a.TimingsMs
	recorded.Record = 0
	before, err := json.Marshal(recorded)
	if err != nil {
		return nil, false
	}
	key := []byte(`"timingsMs":`)
	i := bytes.LastIndex(record, append(key, before...))
	if i < 0 {
		return nil, false
	}
	now, err := json.Marshal(a.TimingsMs)
	if err != nil {
		return nil, false
	}
	out = make([]byte, 0, len(record)+len(now)-len(before))
	out = append(out, record[:i+len(key)]...)
	out = append(out, now...)
	return append(out, record[i+len(key)+len(before):]...), true
}
