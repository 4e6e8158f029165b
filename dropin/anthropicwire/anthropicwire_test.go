package anthropicwire

import (
	"encoding/json"
	"testing"

	"github.com/ctxgraph/ctxgraph/dropin"
	"github.com/ctxgraph/ctxgraph/model"
)

// An answer, as the client appends its content to the list and sends it back, must hash as
// the answer point ctxgraph recorded.
func TestAnAnswerEchoedBackMatchesItsPoint(t *testing.T) {
	runs := []model.RunResult{
		{AssemblyID: "asm_1", Message: &model.GeneratedMessage{Content: "Found it."}},
		{AssemblyID: "asm_2", ToolCalls: []model.RequestedToolCall{{CallID: "toolu_1", Tool: "search", Arguments: json.RawMessage(`{"q": "acme"}`)},
			{CallID: "toolu_2", Tool: "read", Arguments: json.RawMessage(`{}`)}}},
		{AssemblyID: "asm_3", Message: &model.GeneratedMessage{Content: ""}},
	}
	for _, run := range runs {
		content, _ := json.Marshal(Render(dropin.Answer{Run: run}, "m").Content)
		req, err := Translate(MessagesRequest{MaxTokens: ptr(10), Messages: []Message{{Role: "assistant", Content: content}}})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := dropin.Next("h", req.Messages[0]), dropin.Next("h", dropin.AnswerMessage(run)); got != want {
			t.Errorf("echo %s: got hash %s, want the answer point's %s", content, got, want)
		}
	}
}

func TestTranslateToolResultsAndRefusals(t *testing.T) {
	r, err := Decode([]byte(`{"model":"m","max_tokens":50,"system":[{"type":"text","text":"Be brief."}],"metadata":{"user_id":"u7"},
		"tool_choice":{"type":"any"},
		"messages":[{"role":"user","content":"find it"},
		{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"tool_use","id":"toolu_1","name":"search","input":{"q":"a"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"{\"id\":7}"}]},{"type":"text","text":"and?"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req, err := Translate(r)
	if err != nil {
		t.Fatal(err)
	}
	last := req.Messages[2]
	if *req.Instructions != "Be brief." || req.ThreadKey != "u7" || req.Options.ToolChoice != "required" {
		t.Errorf("got instructions %q, thread %q, choice %q", *req.Instructions, req.ThreadKey, req.Options.ToolChoice)
	}
	if len(last.Results) != 1 || last.Results[0].CallID != "toolu_1" || last.Results[0].Content != `{"id":7}` || last.Text != "and?" {
		t.Errorf("got %+v, want the result of toolu_1 and the text after it", last)
	}
	for body, field := range map[string]string{
		`{"model":"m","messages":[{"role":"user","content":"a"}]}`:                                                            "max_tokens",
		`{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"a"}]}`:                                           "messages[0].role",
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{}}]}]}`:                  "messages[0].content[0].type",
		`{"model":"m","max_tokens":5,"tool_choice":{"type":"tool"},"messages":[{"role":"user","content":"a"}]}`:               "tool_choice.name",
		`{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"x"}]}]}`: "messages[0].content[0].type",
	} {
		r, err := Decode([]byte(body))
		if err == nil {
			_, err = Translate(r)
		}
		if me, ok := err.(*model.Error); !ok || me.Field != field {
			t.Errorf("%s: got %v, want an error naming %s", body, err, field)
		}
	}
}

func ptr(n int) *int { return &n }
