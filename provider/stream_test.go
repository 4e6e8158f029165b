package provider

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// A streamed request answered with one JSON document, as llm-katan 0.22.0 answers one that
// offers tools, is read as the whole answer; a stream with no event is an error, never an
// empty answer.
func TestStreamedRequestAnsweredWithoutEvents(t *testing.T) {
	const (
		openAIToolCall = `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,` +
			`"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"p\":\"a\"}"}}]},"finish_reason":"tool_calls"}],` +
			`"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`
		openAIText        = `{"id":"c2","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}]}`
		anthropicToolCall = `{"id":"m1","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"read","input":{"p":"a"}}],` +
			`"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":2}}`
	)
	for _, tc := range []struct {
		name, kind, contentType, body string
		want                          model.ProviderResponse
		wantDeltas                    string
		wantCode                      string
	}{
		{name: "openai tool call as JSON", kind: KindOpenAI, contentType: "application/json", body: openAIToolCall,
			want: model.ProviderResponse{ID: "c1", Model: "m", FinishReason: "tool_calls", Usage: model.Usage{InputTokens: 3, OutputTokens: 2},
				ToolCalls: []model.ChatToolCall{{ID: "call_1", Name: "read", Arguments: `{"p":"a"}`}}}},
		{name: "openai text as JSON", kind: KindOpenAI, contentType: "application/json; charset=utf-8", body: openAIText,
			want: model.ProviderResponse{ID: "c2", Model: "m", FinishReason: "stop", Content: "hello"}, wantDeltas: "hello"},
		{name: "openai empty stream", kind: KindOpenAI, contentType: "text/event-stream", body: "", wantCode: "stream_empty"},
		{name: "openai JSON that is no completion", kind: KindOpenAI, contentType: "application/json", body: `[1]`, wantCode: "stream_decoding"},
		{name: "anthropic tool call as JSON", kind: KindAnthropic, contentType: "application/json", body: anthropicToolCall,
			want: model.ProviderResponse{ID: "m1", Model: "m", FinishReason: "tool_use", Usage: model.Usage{InputTokens: 3, OutputTokens: 2},
				ToolCalls: []model.ChatToolCall{{ID: "toolu_1", Name: "read", Arguments: `{"p":"a"}`}}}},
		{name: "anthropic empty stream", kind: KindAnthropic, contentType: "text/event-stream", body: "", wantCode: "stream_empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			cfg := Config{Name: tc.kind, Kind: tc.kind, BaseURL: srv.URL, Key: "k", Timeout: 5 * time.Second}
			var p model.Provider = NewAnthropic(cfg)
			if tc.kind == KindOpenAI {
				cfg.BaseURL += "/v1"
				p = NewOpenAI(cfg)
			}
			var deltas strings.Builder
			req := model.ProviderRequest{Model: "m", Messages: []model.ChatMessage{{Role: "user", Content: "hi"}},
				Tools: roundRequest.Tools, OnDelta: func(s string) { deltas.WriteString(s) }}
			got, err := p.Generate(context.Background(), req, &model.ProviderCall{})
			if tc.wantCode != "" {
				var pe *model.ProviderError
				if !errors.As(err, &pe) || pe.Code != tc.wantCode {
					t.Fatalf("got %+v, %v; want error %s", got, err, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != tc.want.ID || got.Model != tc.want.Model || got.Content != tc.want.Content || got.FinishReason != tc.want.FinishReason ||
				got.Usage != tc.want.Usage || len(got.ToolCalls) != len(tc.want.ToolCalls) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i, c := range got.ToolCalls {
				if c != tc.want.ToolCalls[i] {
					t.Errorf("tool call %d: got %+v, want %+v", i, c, tc.want.ToolCalls[i])
				}
			}
			if deltas.String() != tc.wantDeltas {
				t.Errorf("deltas: got %q, want %q", deltas.String(), tc.wantDeltas)
			}
		})
	}
}
