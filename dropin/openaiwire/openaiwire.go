// Package openaiwire translates OpenAI's Chat Completions protocol
// (https://platform.openai.com/docs/api-reference/chat) to and from the drop-in service's
// terms (DESIGN §9): the request into a dropin.Request, an answer into a chat.completion or
// a stream of chat.completion.chunk, and errors into OpenAI's error object.
package openaiwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ctxgraph/ctxgraph/dropin"
	"github.com/ctxgraph/ctxgraph/model"
)

// ChatRequest is a chat completion request: the fields ctxgraph reads. Fields it does not
// know are ignored, as OpenAI-compatible servers do.
type ChatRequest struct {
	Model               string           `json:"model"`
	Messages            []ChatMessage    `json:"messages"`
	Tools               []Tool           `json:"tools"`
	ToolChoice          json.RawMessage  `json:"tool_choice"`
	MaxTokens           *int             `json:"max_tokens"`
	MaxCompletionTokens *int             `json:"max_completion_tokens"`
	Temperature         *float64         `json:"temperature"`
	N                   *int             `json:"n"`
	Stream              bool             `json:"stream"`
	StreamOptions       *StreamOptions   `json:"stream_options"`
	User                string           `json:"user"`
	Metadata            map[string]any   `json:"metadata"`
	ResponseFormat      *json.RawMessage `json:"response_format"`
}

// StreamOptions are a streamed request's options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// ChatMessage is one message of the request's list.
type ChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []ToolCall      `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

// ToolCall is an assistant message's call of a function.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is a tool call's function and its arguments, a JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a function offered to the model.
type Tool struct {
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is an offered function's declaration.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ThreadKeyField is the metadata field that names a thread when `user` does not.
const ThreadKeyField = "ctxgraph_thread"

// Decode reads a chat completion request; KindInvalid names the field that is not as
// OpenAI's protocol has it.
func Decode(body []byte) (ChatRequest, error) {
	var r ChatRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&r); err != nil {
		return r, model.Invalid(fieldOf(err), "the request body is not a chat completion request: %s", plainJSONError(err))
	}
	return r, nil
}

// Translate turns a chat completion request into the drop-in service's request; headers
// (branch, conversation, participant) are the caller's to add.
func Translate(r ChatRequest) (dropin.Request, error) {
	out := dropin.Request{Model: r.Model}
	if r.N != nil && *r.N != 1 {
		return out, model.Invalid("n", "ctxgraph answers one choice per request: n must be 1")
	}
	if r.ResponseFormat != nil {
		var f struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(*r.ResponseFormat, &f) != nil || (f.Type != "" && f.Type != "text") {
			return out, model.Invalid("response_format", "ctxgraph's providers are asked for text: response_format %s is not supported", string(*r.ResponseFormat))
		}
	}
	switch {
	case r.MaxCompletionTokens != nil:
		out.Options.MaxOutputTokens = *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		out.Options.MaxOutputTokens = *r.MaxTokens
	}
	if out.Options.MaxOutputTokens < 0 {
		return out, model.Invalid("max_tokens", "max_tokens must be positive")
	}
	if t := r.Temperature; t != nil && (*t < 0 || *t > 2) {
		return out, model.Invalid("temperature", "temperature is between 0 and 2")
	}
	out.Options.Temperature = r.Temperature
	out.ThreadKey = r.User
	if v, ok := r.Metadata[ThreadKeyField].(string); ok && v != "" {
		out.ThreadKey = v
	}
	for i, t := range r.Tools {
		if t.Type != "" && t.Type != "function" {
			return out, model.Invalid(fmt.Sprintf("tools[%d].type", i), "ctxgraph offers function tools only")
		}
		out.Options.Tools = append(out.Options.Tools, model.ToolSpec{Name: t.Function.Name, Description: t.Function.Description,
			Parameters: dropin.Schema(t.Function.Parameters)})
	}
	choice, err := toolChoice(r.ToolChoice)
	if err != nil {
		return out, err
	}
	out.Options.ToolChoice = choice
	var system []string
	for i, m := range r.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		text, err := ContentText(m.Content, field+".content")
		if err != nil {
			return out, err
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
			continue
		case "user":
			out.Messages = append(out.Messages, model.ClientMessage{Role: "user", Text: text})
		case "assistant":
			msg := model.ClientMessage{Role: "assistant", Text: text}
			for j, tc := range m.ToolCalls {
				if tc.ID == "" || tc.Function.Name == "" {
					return out, model.Invalid(fmt.Sprintf("%s.tool_calls[%d]", field, j), "a tool call needs its id and its function's name")
				}
				msg.ToolCalls = append(msg.ToolCalls, model.ClientToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)})
			}
			out.Messages = append(out.Messages, msg)
		case "tool":
			if m.ToolCallID == "" {
				return out, model.Invalid(field+".tool_call_id", "a tool message names the call it answers in tool_call_id")
			}
			out.Messages = append(out.Messages, model.ClientMessage{Role: "tool", Results: []model.ClientToolResult{{CallID: m.ToolCallID, Content: text}}})
		default:
			return out, model.Invalid(field+".role", "role %q is not one ctxgraph takes: system, developer, user, assistant or tool", m.Role)
		}
		out.Positions = append(out.Positions, i)
	}
	if len(system) > 0 {
		s := strings.Join(system, "\n\n")
		out.Instructions = &s
	}
	return out, nil
}

// toolChoice reads tool_choice: "auto", "none", "required", or a named function.
func toolChoice(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none", "required":
			return s, nil
		}
		return "", model.Invalid("tool_choice", "tool_choice is auto, none, required or {\"type\": \"function\", \"function\": {\"name\": ...}}")
	}
	var named struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &named) != nil || named.Function.Name == "" {
		return "", model.Invalid("tool_choice", "tool_choice is auto, none, required or {\"type\": \"function\", \"function\": {\"name\": ...}}")
	}
	return named.Function.Name, nil
}

// ContentText is a message's content as text: a string, or its text parts joined, of the
// part types given (`text` when none is).
func ContentText(raw json.RawMessage, field string, textTypes ...string) (string, error) {
	if len(textTypes) == 0 {
		textTypes = []string{"text"}
	}
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", model.Invalid(field, "content is a string or a list of text parts")
	}
	var b strings.Builder
	for i, p := range parts {
		if !slices.Contains(textTypes, p.Type) {
			return "", model.Invalid(fmt.Sprintf("%s[%d].type", field, i), "ctxgraph takes text parts only, not %q", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// Completion is a chat.completion object.
type Completion struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	Choices           []Choice `json:"choices"`
	Usage             Usage    `json:"usage"`
	SystemFingerprint *string  `json:"system_fingerprint"`
}

// Choice is a completion's one choice.
type Choice struct {
	Index        int           `json:"index"`
	Message      AnswerMessage `json:"message"`
	FinishReason string        `json:"finish_reason"`
	Logprobs     *struct{}     `json:"logprobs"`
}

// AnswerMessage is the assistant message a completion answers.
type AnswerMessage struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	Refusal   *string    `json:"refusal"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// Usage is what the provider reported of a call's tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// ID is a completion's id: its assembly's, one per model call.
func ID(r model.RunResult) string { return "chatcmpl-" + r.AssemblyID }

// Render is the chat.completion of an answer, under the model the request named.
func Render(a dropin.Answer, requestModel string, created int64) Completion {
	r := a.Run
	msg := AnswerMessage{Role: "assistant"}
	if r.Message != nil {
		content := r.Message.Content
		msg.Content = &content
	}
	for _, tc := range r.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.CallID, Type: "function", Function: FunctionCall{Name: tc.Tool, Arguments: string(tc.Arguments)}})
	}
	return Completion{ID: ID(r), Object: "chat.completion", Created: created, Model: requestModel,
		Choices: []Choice{{Message: msg, FinishReason: FinishReason(r)}}, Usage: usageOf(r.Usage)}
}

func usageOf(u model.Usage) Usage {
	return Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
}

// FinishReason is OpenAI's name for why a run's call stopped, whatever its provider said.
func FinishReason(r model.RunResult) string {
	switch {
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	case r.FinishReason == "length" || r.FinishReason == "max_tokens":
		return "length"
	case r.FinishReason == "content_filter" || r.FinishReason == "refusal":
		return "content_filter"
	}
	return "stop"
}

// Error is OpenAI's error object.
type Error struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what failed: a message, its type, the parameter at fault and a code.
type ErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// ErrorOf is the error object of a failed request with status, as OpenAI's API types it.
func ErrorOf(status int, code, message, param string) Error {
	typ := "invalid_request_error"
	switch {
	case status == 401:
		typ = "authentication_error"
	case status == 403:
		typ = "permission_error"
	case status == 404:
		typ = "not_found_error"
	case status == 429:
		typ = "rate_limit_error"
	case status >= 500:
		typ = "api_error"
	}
	e := Error{Error: ErrorDetail{Message: message, Type: typ}}
	if param != "" {
		e.Error.Param = &param
	}
	if code != "" {
		e.Error.Code = &code
	}
	return e
}

// Model is one model of GET /models.
type Model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// Models lists the configured providers' models as `provider/model`; a provider that lists
// none is named by itself.
func Models(providers []model.ProviderInfo) []Model {
	out := []Model{}
	for _, p := range providers {
		for _, m := range p.Models {
			out = append(out, Model{ID: p.Name + "/" + m, Object: "model", OwnedBy: p.Name})
		}
	}
	return out
}

// Stream writes a streamed answer as OpenAI's chunks: the role first, then the text and
// tool calls as they come, the finish reason, the usage when asked for, and [DONE].
type Stream struct {
	W            io.Writer
	Model        string
	Created      int64
	IncludeUsage bool
	id           string
	calls        int
	started      bool
}

type chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint *string       `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	Usage             *Usage        `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int            `json:"index"`
	Delta        map[string]any `json:"delta"`
	Logprobs     *struct{}      `json:"logprobs"`
	FinishReason *string        `json:"finish_reason"`
}

// Start opens the stream of the model call whose assembly is assemblyID.
func (s *Stream) Start(assemblyID string) error {
	if s.started {
		return nil
	}
	s.started, s.id = true, "chatcmpl-"+assemblyID
	return s.delta(map[string]any{"role": "assistant", "content": ""}, nil)
}

// Text streams a piece of the answer's text.
func (s *Stream) Text(text string) error {
	return s.delta(map[string]any{"content": text}, nil)
}

// ToolCall streams one call the model asked for, whole.
func (s *Stream) ToolCall(tc model.RequestedToolCall) error {
	i := s.calls
	s.calls++
	return s.delta(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": tc.CallID, "type": "function",
		"function": map[string]any{"name": tc.Tool, "arguments": string(tc.Arguments)}}}}, nil)
}

// End streams the finish reason, the usage when asked for, and [DONE].
func (s *Stream) End(r model.RunResult) error {
	reason := FinishReason(r)
	if err := s.delta(map[string]any{}, &reason); err != nil {
		return err
	}
	if s.IncludeUsage {
		u := usageOf(r.Usage)
		if err := s.write(chunk{ID: s.id, Object: "chat.completion.chunk", Created: s.Created, Model: s.Model, Choices: []chunkChoice{}, Usage: &u}); err != nil {
			return err
		}
	}
	_, err := io.WriteString(s.W, "data: [DONE]\n\n")
	return err
}

// Fail streams an error that came after the stream began, as OpenAI's API sends one.
func (s *Stream) Fail(e Error) error {
	b, _ := json.Marshal(e)
	_, err := fmt.Fprintf(s.W, "data: %s\n\n", b)
	return err
}

func (s *Stream) delta(d map[string]any, finish *string) error {
	return s.write(chunk{ID: s.id, Object: "chat.completion.chunk", Created: s.Created, Model: s.Model,
		Choices: []chunkChoice{{Delta: d, FinishReason: finish}}})
}

func (s *Stream) write(c chunk) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.W, "data: %s\n\n", b)
	return err
}

// fieldOf names the field a JSON decoding error is about, when it says.
func fieldOf(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
		return te.Field
	}
	return "body"
}

func plainJSONError(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return fmt.Sprintf("%s must be %s, not %s", te.Field, te.Type, te.Value)
	}
	return err.Error()
}
