package scenario

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestConversationFilesLoad checks that every conversation of testdata/conversations
// parses, that each need's value is where it says, and that the generated results are
// what the file promises: the same bytes on every load.
func TestConversationFilesLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "conversations", "*.json"))
	if err != nil || len(files) < 8 {
		t.Fatalf("got %d conversation files (%v), want at least 8", len(files), err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			conv, err := LoadConversation(file)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(conv.Turns); n < 4 || n > 10 {
				t.Errorf("got %d turns, want 4 to 10", n)
			}
			if want := strings.TrimSuffix(filepath.Base(file), ".json"); conv.Name != want {
				t.Errorf("got name %q, want the file's name %q", conv.Name, want)
			}
			again, _ := LoadConversation(file)
			for i, turn := range conv.Turns {
				for key, out := range turn.Results {
					a, _ := out.Body()
					b, _ := again.Turns[i].Results[key].Body()
					if !bytes.Equal(a, b) {
						t.Errorf("result %s is not the same on every load", key)
					}
				}
			}
		})
	}
}

func TestParseConversationRefusesWhatMeasuresNothing(t *testing.T) {
	const head = `{"name": "x", "participants": [{"key": "a"}], "turns": [
	  {"key": "t1", "user": "book it", "steps": [{"toolCalls": [{"key": "c1", "tool": "book"}]}, {"text": "Booked."}],
	   "results": {"c1": {"result": {"id": "BK-1"}}}},`
	for _, tc := range []struct {
		name, turn, want string
	}{
		{"a value its source does not hold", `{"key": "t2", "user": "cancel", "steps": [{"text": "ok"}], "needs": [{"value": "BK-2", "from": "c1"}]}`, "does not occur in c1"},
		{"a value the turn's own message holds", `{"key": "t2", "user": "cancel BK-1", "steps": [{"text": "ok"}], "needs": [{"value": "BK-1", "from": "c1"}]}`, "own user message"},
		{"a source of the same turn", `{"key": "t2", "user": "again", "steps": [{"toolCalls": [{"key": "c2", "tool": "book"}]}, {"text": "ok"}], "results": {"c2": {"result": "BK-3"}}, "needs": [{"value": "BK-3", "from": "c2"}]}`, "no earlier call"},
		{"a call without a result", `{"key": "t2", "user": "again", "steps": [{"toolCalls": [{"key": "c2", "tool": "book"}]}, {"text": "ok"}]}`, "has no result"},
		{"a recall mixed with a client call", `{"key": "t2", "user": "again", "steps": [{"toolCalls": [{"key": "r", "tool": "ctxgraph_recall", "arguments": {"artifactOf": "c1"}}, {"key": "c2", "tool": "book"}]}, {"text": "ok"}], "results": {"c2": {"result": 1}}}`, "not both"},
		{"a need at recall without one", `{"key": "t2", "user": "again", "steps": [{"text": "ok"}], "needs": [{"value": "BK-1", "from": "c1", "at": "recall"}]}`, "no step recalls"},
		{"a final text before the last step", `{"key": "t2", "user": "again", "steps": [{"text": "ok"}, {"text": "ok"}]}`, "only the last step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConversation([]byte(head + tc.turn + `]}`))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestGeneratorKeepsHeadFirstAndOverrides(t *testing.T) {
	g := Generator{Head: []byte(`{"z": 1, "a": "head"}`), Field: "rows", Rows: 3,
		Template: []byte(`{"sku": "S-{i4}", "n": 5}`), Overrides: map[string]json.RawMessage{"1": json.RawMessage(`{"n": 42}`)}}
	got, err := g.body()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":1,"a":"head","rows":[{"sku":"S-0000","n":5},{"sku":"S-0001","n":42},{"sku":"S-0002","n":5}]}`
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	lines := Generator{Lines: 3, Line: "line {i}", LineOverrides: map[string]string{"2": "two"}}
	if got, _ := lines.body(); string(got) != `"line 1\ntwo\nline 3"` {
		t.Errorf("got %s, want three lines with the second replaced", got)
	}
}

func TestCarriesLooksInsideMessages(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"cancel it"},` +
		`{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"id\":\"BK-1\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c","content":"{\"note\":\"a \\\"quoted\\\" R&D <tag>\"}"}],` +
		`"tools":[{"type":"function","function":{"name":"TOOL-ONLY"}}]}`)
	for _, tc := range []struct {
		value string
		want  bool
	}{
		{"cancel it", true},
		{"BK-1", true},
		{`a "quoted" R&D <tag>`, true},
		{"TOOL-ONLY", false},
		{"BK-2", false},
	} {
		if got := carries(body, tc.value); got != tc.want {
			t.Errorf("carries(%q): got %v, want %v", tc.value, got, tc.want)
		}
	}
}

func TestScriptedModelAnswersInOrderAndRefusesExtraCalls(t *testing.T) {
	m := NewScriptedModel()
	defer m.Close()
	m.Script("t1", []ScriptedAnswer{{ToolCalls: []ScriptedToolCall{{ID: "call_t1_1", Name: "f", Arguments: "{}"}}}, {Text: "done"}})
	post := func() (int, string) {
		resp, err := http.Post(m.BaseURL()+"/chat/completions", "application/json", strings.NewReader(`{"messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for i, want := range []struct {
		status int
		holds  string
	}{{200, `"id":"call_t1_1"`}, {200, `"content":"done"`}, {400, "unscripted_call"}} {
		status, body := post()
		if status != want.status || !strings.Contains(body, want.holds) {
			t.Errorf("call %d: got %d %s, want %d holding %s", i+1, status, body, want.status, want.holds)
		}
	}
	calls := m.Calls()
	if len(calls) != 3 || calls[0].Step != 0 || calls[1].Step != 1 || calls[2].Step != -1 || len(m.Unexpected()) != 1 || m.Left() != 0 {
		t.Errorf("got calls %+v and unexpected %v, want steps 0, 1 and one unexpected", calls, m.Unexpected())
	}
}
