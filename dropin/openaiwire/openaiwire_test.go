package openaiwire

import (
	"encoding/json"
	"testing"

	"github.com/ctxgraph/ctxgraph/dropin"
	"github.com/ctxgraph/ctxgraph/model"
)

// An answer, as a client appends it to its list and sends it back, must hash as the answer
// point ctxgraph recorded: otherwise every next call would fork the branch.
func TestAnAnswerEchoedBackMatchesItsPoint(t *testing.T) {
	tests := []struct {
		name string
		run  model.RunResult
		// echo is what the client sends back for the answer's message.
		echo string
	}{
		{"text, as the SDK serialises its message", model.RunResult{AssemblyID: "asm_1", Message: &model.GeneratedMessage{Content: "Found it."}},
			`{"role":"assistant","content":"Found it.","refusal":null,"tool_calls":null}`},
		{"tool calls, content null", model.RunResult{AssemblyID: "asm_2", ToolCalls: []model.RequestedToolCall{{CallID: "call_1", Tool: "search", Arguments: json.RawMessage(`{"q": "acme", "n": 2}`)}}},
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"q\": \"acme\", \"n\": 2}"}}]}`},
		{"tool calls, arguments encoded again by the client (LangChain)", model.RunResult{AssemblyID: "asm_3", ToolCalls: []model.RequestedToolCall{{CallID: "call_1", Tool: "search", Arguments: json.RawMessage(`{"q": "acme", "n": 2}`)}}},
			`{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"n\":2,\"q\":\"acme\"}"}}]}`},
		{"text as a list of parts (Vercel AI SDK)", model.RunResult{AssemblyID: "asm_4", Message: &model.GeneratedMessage{Content: "Hi"}},
			`{"role":"assistant","content":[{"type":"text","text":"Hi"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The rendered answer decodes to the message the client keeps.
			rendered, _ := json.Marshal(Render(dropin.Answer{Run: tt.run}, "openai/gpt", 1).Choices[0].Message)
			for _, echoed := range []string{string(rendered), tt.echo} {
				var m ChatMessage
				if err := json.Unmarshal([]byte(echoed), &m); err != nil {
					t.Fatal(err)
				}
				req, err := Translate(ChatRequest{Messages: []ChatMessage{m}})
				if err != nil {
					t.Fatal(err)
				}
				got, want := dropin.Next("h", req.Messages[0]), dropin.Next("h", dropin.AnswerMessage(tt.run))
				if got != want {
					t.Errorf("echo %s: got hash %s, want the answer point's %s", echoed, got, want)
				}
			}
		})
	}
}

func TestTranslateNamesTheFieldItRefuses(t *testing.T) {
	tests := []struct {
		name, body, field string
	}{
		{"two choices", `{"model":"m","n":2,"messages":[{"role":"user","content":"a"}]}`, "n"},
		{"json mode", `{"model":"m","response_format":{"type":"json_object"},"messages":[{"role":"user","content":"a"}]}`, "response_format"},
		{"an unknown role", `{"model":"m","messages":[{"role":"function","content":"a"}]}`, "messages[0].role"},
		{"a tool message without its call", `{"model":"m","messages":[{"role":"tool","content":"a"}]}`, "messages[0].tool_call_id"},
		{"an image", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, "messages[0].content[0].type"},
		{"a bad tool choice", `{"model":"m","tool_choice":"sometimes","messages":[{"role":"user","content":"a"}]}`, "tool_choice"},
		{"a hot temperature", `{"model":"m","temperature":3,"messages":[{"role":"user","content":"a"}]}`, "temperature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Decode([]byte(tt.body))
			if err == nil {
				_, err = Translate(r)
			}
			var me *model.Error
			if !errorAs(err, &me) || me.Kind != model.KindInvalid || me.Field != tt.field {
				t.Errorf("got %v, want an invalid %s", err, tt.field)
			}
		})
	}
}

func TestTranslateKeepsSystemAsInstructionsAndPositions(t *testing.T) {
	r, err := Decode([]byte(`{"model":"openai/gpt","user":"u1","metadata":{"ctxgraph_thread":"t9"},"tool_choice":{"type":"function","function":{"name":"search"}},
		"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"a"},{"role":"developer","content":"Cite ids."},{"role":"user","content":"b"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req, err := Translate(r)
	if err != nil {
		t.Fatal(err)
	}
	if req.Instructions == nil || *req.Instructions != "Be brief.\n\nCite ids." {
		t.Errorf("instructions: got %v, want both system messages", req.Instructions)
	}
	if len(req.Messages) != 2 || req.Positions[1] != 3 {
		t.Errorf("got messages %v at %v, want the two user messages at 1 and 3", req.Messages, req.Positions)
	}
	if req.ThreadKey != "t9" || req.Options.ToolChoice != "search" {
		t.Errorf("got thread %q and tool choice %q, want t9 and search", req.ThreadKey, req.Options.ToolChoice)
	}
}

func errorAs(err error, target **model.Error) bool {
	me, ok := err.(*model.Error)
	if ok {
		*target = me
	}
	return ok
}
