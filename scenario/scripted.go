package scenario

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// ScriptedModel is an OpenAI-compatible chat-completions server (non-streaming) in the same
// process that answers each model call with the next answer of its script and keeps every
// request body exactly as received. A provider entry of kind openai whose baseURL is
// BaseURL sends ctxgraph's model calls to it.
type ScriptedModel struct {
	srv *httptest.Server
	mu  sync.Mutex
	// label names the model calls of the current script (a turn's key).
	label   string
	answers []ScriptedAnswer
	calls   []ModelCall
	// unexpected lists the calls that found no answer left, or came on another path.
	unexpected []string
}

// ScriptedAnswer is one answer of the script: tool calls, or else the text.
type ScriptedAnswer struct {
	ToolCalls []ScriptedToolCall
	Text      string
}

// ScriptedToolCall is a tool call the scripted model makes: ID is its provider id.
type ScriptedToolCall struct {
	ID, Name, Arguments string
}

// ModelCall is one request the scripted model received.
type ModelCall struct {
	// Label is the script's label when the call came (a turn's key), and Step the index of
	// the answer it got in that script (-1 when none was left).
	Label string
	Step  int
	// Body is the request body exactly as received.
	Body []byte
}

// NewScriptedModel starts a scripted model; Close stops it.
func NewScriptedModel() *ScriptedModel {
	s := &ScriptedModel{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the base URL a provider entry of kind openai takes, up to and including /v1.
func (s *ScriptedModel) BaseURL() string { return s.srv.URL + "/v1" }

// Close stops the server.
func (s *ScriptedModel) Close() { s.srv.Close() }

// Script replaces what is left of the script: the next model calls, labelled label, get
// answers in order.
func (s *ScriptedModel) Script(label string, answers []ScriptedAnswer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.label, s.answers = label, append([]ScriptedAnswer(nil), answers...)
}

// Left is how many answers of the script no call has taken yet.
func (s *ScriptedModel) Left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.answers)
}

// Calls returns every request received so far, in order.
func (s *ScriptedModel) Calls() []ModelCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ModelCall(nil), s.calls...)
}

// Unexpected returns a line for every call the script did not expect.
func (s *ScriptedModel) Unexpected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unexpected...)
}

func (s *ScriptedModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	call := ModelCall{Label: s.label, Step: -1, Body: body}
	var answer *ScriptedAnswer
	switch {
	case r.URL.Path != "/v1/chat/completions":
		s.unexpected = append(s.unexpected, fmt.Sprintf("%s: a request on %s", s.label, r.URL.Path))
	case len(s.answers) == 0:
		s.unexpected = append(s.unexpected, fmt.Sprintf("%s: a model call after the script's last answer", s.label))
	default:
		answer = &s.answers[0]
		s.answers = s.answers[1:]
	}
	if answer != nil {
		// The step is counted among the calls that got one: the n-th answered call of this
		// label took answer n.
		call.Step = 0
		for _, c := range s.calls {
			if c.Label == s.label && c.Step >= 0 {
				call.Step++
			}
		}
	}
	s.calls = append(s.calls, call)
	s.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	if answer == nil {
		// 400, which no client retries: the unexpected call fails its run.
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"type": "invalid_request_error", "code": "unscripted_call", "message": "the scripted model has no answer left for this call"}})
		return
	}
	_ = json.NewEncoder(w).Encode(completion(call.Label, call.Step, *answer))
}

// completion is a chat.completion answering with the answer's tool calls or text.
func completion(label string, step int, a ScriptedAnswer) map[string]any {
	message := map[string]any{"role": "assistant", "content": a.Text}
	finish := "stop"
	if len(a.ToolCalls) > 0 {
		calls := make([]any, 0, len(a.ToolCalls))
		for _, tc := range a.ToolCalls {
			calls = append(calls, map[string]any{"id": tc.ID, "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
		}
		message = map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
		finish = "tool_calls"
	}
	return map[string]any{
		"id": fmt.Sprintf("chatcmpl-%s-%d", label, step), "object": "chat.completion", "created": 1, "model": "scripted-1",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": message}},
		"usage":   map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
	}
}
