// Package anthropicwire translates Anthropic's Messages protocol
// (https://docs.anthropic.com/en/api/messages) to and from the drop-in service's terms
// (DESIGN §9): the request into a dropin.Request, an answer into a message or its event
// stream (https://docs.anthropic.com/en/docs/build-with-claude/streaming), and errors into
// Anthropic's error object.
package anthropicwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ctxgraph/ctxgraph/dropin"
	"github.com/ctxgraph/ctxgraph/model"
)

// MessagesRequest is a Messages request: the fields ctxgraph reads.
type MessagesRequest struct {
	Model       string          `json:"model"`
	MaxTokens   *int            `json:"max_tokens"`
	System      json.RawMessage `json:"system"`
	Messages    []Message       `json:"messages"`
	Tools       []Tool          `json:"tools"`
	ToolChoice  *ToolChoice     `json:"tool_choice"`
	Temperature *float64        `json:"temperature"`
	Stream      bool            `json:"stream"`
	Metadata    *Metadata       `json:"metadata"`
}

// Message is one message of the request's list: its content a string or a list of blocks.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Block is a content block: text, tool_use or tool_result.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// Tool is a tool offered to the model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Type        string          `json:"type"`
}

// ToolChoice says how the model may use the tools: auto, any, tool (with its name) or none.
type ToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// Metadata names the request's end user, the thread's stable key.
type Metadata struct {
	UserID string `json:"user_id"`
}

// Decode reads a Messages request; KindInvalid names the field that is not as Anthropic's
// protocol has it.
func Decode(body []byte) (MessagesRequest, error) {
	return dropin.DecodeRequest[MessagesRequest](body, "a Messages request")
}

// Translate turns a Messages request into the drop-in service's request; headers (branch,
// conversation, participant) are the caller's to add.
func Translate(r MessagesRequest) (dropin.Request, error) {
	out := dropin.Request{Model: r.Model}
	if r.MaxTokens == nil || *r.MaxTokens < 1 {
		return out, model.Invalid("max_tokens", "max_tokens is required, at least 1")
	}
	out.Options.MaxOutputTokens = *r.MaxTokens
	if t := r.Temperature; t != nil && (*t < 0 || *t > 1) {
		return out, model.Invalid("temperature", "temperature is between 0 and 1")
	}
	out.Options.Temperature = r.Temperature
	if r.Metadata != nil {
		out.ThreadKey = r.Metadata.UserID
	}
	system, err := text(r.System, "system")
	if err != nil {
		return out, err
	}
	if len(r.System) > 0 && string(r.System) != "null" {
		out.Instructions = &system
	}
	for i, t := range r.Tools {
		if t.Type != "" && t.Type != "custom" {
			return out, model.Invalid(fmt.Sprintf("tools[%d].type", i), "ctxgraph offers client tools only, not %q", t.Type)
		}
		out.Options.Tools = append(out.Options.Tools, model.ToolSpec{Name: t.Name, Description: t.Description, Parameters: dropin.Schema(t.InputSchema)})
	}
	if c := r.ToolChoice; c != nil {
		switch c.Type {
		case "auto", "none":
			out.Options.ToolChoice = c.Type
		case "any":
			out.Options.ToolChoice = "required"
		case "tool":
			if c.Name == "" {
				return out, model.Invalid("tool_choice.name", "a tool choice of type tool names the tool")
			}
			out.Options.ToolChoice = c.Name
		default:
			return out, model.Invalid("tool_choice.type", "tool_choice.type is auto, any, tool or none")
		}
	}
	for i, m := range r.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		if m.Role != "user" && m.Role != "assistant" {
			return out, model.Invalid(field+".role", "role is user or assistant (the system prompt is the request's system)")
		}
		blocks, err := blocksOf(m.Content, field+".content")
		if err != nil {
			return out, err
		}
		msg := model.ClientMessage{Role: m.Role}
		var texts []string
		for j, b := range blocks {
			bf := fmt.Sprintf("%s.content[%d]", field, j)
			switch {
			case b.Type == "text":
				texts = append(texts, b.Text)
			case b.Type == "tool_use" && m.Role == "assistant":
				if b.ID == "" || b.Name == "" {
					return out, model.Invalid(bf, "a tool_use block needs its id and name")
				}
				msg.ToolCalls = append(msg.ToolCalls, model.ClientToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input})
			case b.Type == "tool_result" && m.Role == "user":
				content, err := text(b.Content, bf+".content")
				if err != nil {
					return out, err
				}
				msg.Results = append(msg.Results, model.ClientToolResult{CallID: b.ToolUseID, Content: content, IsError: b.IsError})
			case b.Type == "thinking" || b.Type == "redacted_thinking":
				// A model's thinking is its own; it is neither recorded nor matched.
			default:
				return out, model.Invalid(bf+".type", "ctxgraph takes text, tool_use (assistant) and tool_result (user) blocks, not %q", b.Type)
			}
		}
		msg.Text = strings.Join(texts, "\n")
		out.Messages = append(out.Messages, msg)
		out.Positions = append(out.Positions, i)
	}
	return out, nil
}

// blocksOf reads a message's content: a string is one text block.
func blocksOf(raw json.RawMessage, field string) ([]Block, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []Block{{Type: "text", Text: s}}, nil
	}
	var blocks []Block
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, model.Invalid(field, "content is a string or a list of content blocks")
	}
	return blocks, nil
}

// text is a string, or the text of a list of text blocks, joined.
func text(raw json.RawMessage, field string) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	blocks, err := blocksOf(raw, field)
	if err != nil {
		return "", err
	}
	parts := make([]string, 0, len(blocks))
	for i, b := range blocks {
		if b.Type != "text" {
			return "", model.Invalid(fmt.Sprintf("%s[%d].type", field, i), "ctxgraph takes text blocks here, not %q", b.Type)
		}
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n"), nil
}

// Answer is a Messages response.
type Answer struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	Content      []Block `json:"content"`
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	Usage        Usage   `json:"usage"`
}

// Usage is what the provider reported of a call's tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// ID is a message's id: its assembly's, one per model call.
func ID(r model.RunResult) string { return "msg_" + r.AssemblyID }

// Render is the message of an answer, under the model the request named.
func Render(a dropin.Answer, requestModel string) Answer {
	r := a.Run
	out := Answer{ID: ID(r), Type: "message", Role: "assistant", Model: requestModel, Content: []Block{},
		StopReason: StopReason(r), Usage: Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}}
	if r.Message != nil && r.Message.Content != "" {
		out.Content = append(out.Content, Block{Type: "text", Text: r.Message.Content})
	}
	for _, tc := range r.ToolCalls {
		out.Content = append(out.Content, Block{Type: "tool_use", ID: tc.CallID, Name: tc.Tool, Input: inputOf(tc.Arguments)})
	}
	return out
}

// inputOf is a call's arguments as a tool_use block's input, an object.
func inputOf(args json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 || !json.Valid(args) {
		return json.RawMessage("{}")
	}
	return args
}

// StopReason is Anthropic's name for why a run's call stopped, whatever its provider said.
func StopReason(r model.RunResult) string {
	switch {
	case len(r.ToolCalls) > 0:
		return "tool_use"
	case r.FinishReason == "length" || r.FinishReason == "max_tokens":
		return "max_tokens"
	case r.FinishReason == "content_filter" || r.FinishReason == "refusal":
		return "refusal"
	case r.FinishReason == "stop_sequence":
		return "stop_sequence"
	}
	return "end_turn"
}

// Error is Anthropic's error object.
type Error struct {
	Type  string      `json:"type"`
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what failed.
type ErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// ErrorOf is the error object of a failed request with status, as Anthropic's API types it.
// A message that names a field says so.
func ErrorOf(status int, message, field string) Error {
	typ := "invalid_request_error"
	switch {
	case status == 401:
		typ = "authentication_error"
	case status == 403:
		typ = "permission_error"
	case status == 404:
		typ = "not_found_error"
	case status == 413:
		typ = "request_too_large"
	case status == 429:
		typ = "rate_limit_error"
	case status == 503 || status == 529:
		typ = "overloaded_error"
	case status >= 500:
		typ = "api_error"
	}
	if field != "" {
		message = field + ": " + message
	}
	return Error{Type: "error", Error: ErrorDetail{Type: typ, Message: message}}
}

// Stream writes a streamed answer as Anthropic's events: message_start, a content block per
// text and per tool call (started, its deltas, stopped), message_delta with the stop reason
// and usage, message_stop.
type Stream struct {
	W     io.Writer
	Model string
	index int
	open  string
}

// Start opens the stream of the model call whose assembly is assemblyID.
func (s *Stream) Start(assemblyID string) error {
	return s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_" + assemblyID, "type": "message", "role": "assistant", "model": s.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": Usage{}}})
}

// Text streams a piece of the answer's text, opening its text block first.
func (s *Stream) Text(text string) error {
	if s.open != "text" {
		if err := s.closeBlock(); err != nil {
			return err
		}
		s.open = "text"
		if err := s.event("content_block_start", map[string]any{"type": "content_block_start", "index": s.index,
			"content_block": map[string]any{"type": "text", "text": ""}}); err != nil {
			return err
		}
	}
	return s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": s.index,
		"delta": map[string]any{"type": "text_delta", "text": text}})
}

// ToolCall streams one call the model asked for as its tool_use block.
func (s *Stream) ToolCall(tc model.RequestedToolCall) error {
	if err := s.closeBlock(); err != nil {
		return err
	}
	s.open = "tool_use"
	if err := s.event("content_block_start", map[string]any{"type": "content_block_start", "index": s.index,
		"content_block": map[string]any{"type": "tool_use", "id": tc.CallID, "name": tc.Tool, "input": map[string]any{}}}); err != nil {
		return err
	}
	return s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": s.index,
		"delta": map[string]any{"type": "input_json_delta", "partial_json": string(inputOf(tc.Arguments))}})
}

// End streams the stop reason and usage, and message_stop.
func (s *Stream) End(r model.RunResult) error {
	if err := s.closeBlock(); err != nil {
		return err
	}
	if err := s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": StopReason(r), "stop_sequence": nil},
		"usage": Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}}); err != nil {
		return err
	}
	return s.event("message_stop", map[string]any{"type": "message_stop"})
}

// Ping is the keep-alive event Anthropic's streams carry.
func (s *Stream) Ping() error { return s.event("ping", map[string]any{"type": "ping"}) }

// Fail streams an error that came after the stream began.
func (s *Stream) Fail(e Error) error { return s.event("error", e) }

func (s *Stream) closeBlock() error {
	if s.open == "" {
		return nil
	}
	err := s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": s.index})
	s.open = ""
	s.index++
	return err
}

func (s *Stream) event(name string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.W, "event: %s\ndata: %s\n\n", name, b)
	return err
}
