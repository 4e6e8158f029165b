package provider

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

// A request with a context block, two speakers and one tool round of the run.
var roundRequest = model.ProviderRequest{
	Model: "m",
	Messages: []model.ChatMessage{
		{Role: "system", Content: "State at 2026-12-04T10:00Z:\nEU Q3: 3.46M"},
		{Role: "user", Content: "compare"},
		{Role: "assistant", Content: "EU is up", Name: "gpt"},
		{Role: "assistant", ToolCalls: []model.ChatToolCall{{ID: "c1", Name: "read", Arguments: `{"p":"a"}`}, {ID: "c2", Name: "read", Arguments: `{"p":"b"}`}}},
		{Role: "tool", ToolCallID: "c1", Content: "1"},
		{Role: "tool", ToolCallID: "c2", Content: "2"},
	},
	Tools:      []model.ToolSpec{{Name: "read", Parameters: json.RawMessage(`{"type":"object","properties":{"p":{"type":"string"}},"required":["p"]}`)}},
	ToolChoice: "read",
}

func TestOpenAIParamsKeepRoundsAndNames(t *testing.T) {
	params, err := OpenAIParams(roundRequest)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(params)
	var got struct {
		Messages []struct {
			Role       string `json:"role"`
			Name       string `json:"name"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		} `json:"messages"`
		ToolChoice struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tool_choice"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	roles := []string{}
	for _, m := range got.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,assistant,tool,tool" {
		t.Fatalf("roles %v: %s", roles, body)
	}
	if got.Messages[2].Name != "gpt" || len(got.Messages[3].ToolCalls) != 2 || got.Messages[3].ToolCalls[1].Function.Arguments != `{"p":"b"}` ||
		got.Messages[4].ToolCallID != "c1" || got.Messages[5].ToolCallID != "c2" || got.ToolChoice.Function.Name != "read" {
		t.Fatalf("serialised: %s", body)
	}
	if got.Messages[3].Content != nil {
		t.Fatalf("a tool-call message without text carries content: %s", body)
	}
}

func TestAnthropicParamsAlternateAndPair(t *testing.T) {
	params, err := AnthropicParams(roundRequest)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(params)
	var got struct {
		System   []struct{ Text string } `json:"system"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				ID        string          `json:"id"`
				ToolUseID string          `json:"tool_use_id"`
				Input     json.RawMessage `json:"input"`
			} `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
		ToolChoice map[string]any `json:"tool_choice"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.System) != 1 || !strings.Contains(got.System[0].Text, "EU Q3") {
		t.Fatalf("system: %s", body)
	}
	// user, assistant (text + two tool_use, merged), user (two tool_result, merged).
	if len(got.Messages) != 3 || got.Messages[0].Role != "user" || got.Messages[1].Role != "assistant" || got.Messages[2].Role != "user" {
		t.Fatalf("turns: %s", body)
	}
	a := got.Messages[1].Content
	if len(a) != 3 || a[0].Text != "gpt: EU is up" || a[1].Type != "tool_use" || a[1].ID != "c1" || string(a[2].Input) != `{"p":"b"}` {
		t.Fatalf("assistant turn: %s", body)
	}
	r := got.Messages[2].Content
	if len(r) != 2 || r[0].Type != "tool_result" || r[0].ToolUseID != "c1" || r[1].ToolUseID != "c2" {
		t.Fatalf("results turn: %s", body)
	}
	if got.Tools[0].InputSchema["type"] != "object" || got.Tools[0].InputSchema["required"].([]any)[0] != "p" ||
		got.ToolChoice["type"] != "tool" || got.ToolChoice["name"] != "read" {
		t.Fatalf("tools: %s", body)
	}
}
