// Package responseswire translates OpenAI's Responses protocol
// (https://platform.openai.com/docs/api-reference/responses) to and from the drop-in
// service's terms (DESIGN §9), as the Vercel AI SDK's default OpenAI model and
// `client.responses.create` speak it. Items ctxgraph answered are named by self-describing
// ids (`msg_<assembly>`, `fc_<call id>`), so that a client that sends them back by
// reference (`item_reference`, which the Vercel AI SDK does by default) or with
// `previous_response_id` is matched without a read. An assistant message sent back whole
// without its id is matched by its content, which does not match the answer's id: the list
// forks there.
package responseswire

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ctxgraph/ctxgraph/dropin"
	"github.com/ctxgraph/ctxgraph/dropin/openaiwire"
	"github.com/ctxgraph/ctxgraph/model"
)

// Request is a Responses request: the fields ctxgraph reads.
type Request struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       *string         `json:"instructions"`
	Tools              []Tool          `json:"tools"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	Temperature        *float64        `json:"temperature"`
	Stream             bool            `json:"stream"`
	User               string          `json:"user"`
	Metadata           map[string]any  `json:"metadata"`
	PreviousResponseID string          `json:"previous_response_id"`
}

// Tool is a function offered to the model, flat as the Responses protocol has it.
type Tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// item is one input item: a message (by role), a function call, its output, or a
// reference to an item of an earlier response.
type item struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// textParts are the content parts that hold text in the Responses protocol.
var textParts = []string{"input_text", "output_text", "text"}

// The prefixes of the ids of the items ctxgraph answers.
const (
	messagePrefix  = "msg_"
	callPrefix     = "fc_"
	responsePrefix = "resp_"
)

// Decode reads a Responses request; KindInvalid names the field at fault.
func Decode(body []byte) (Request, error) {
	return dropin.DecodeRequest[Request](body, "a Responses request")
}

// Translate turns a Responses request into the drop-in service's request.
func Translate(r Request) (dropin.Request, error) {
	out := dropin.Request{Model: r.Model, Answer: AnswerItems}
	if r.MaxOutputTokens != nil {
		if *r.MaxOutputTokens < 1 {
			return out, model.Invalid("max_output_tokens", "max_output_tokens must be positive")
		}
		out.Options.MaxOutputTokens = *r.MaxOutputTokens
	}
	if t := r.Temperature; t != nil && (*t < 0 || *t > 2) {
		return out, model.Invalid("temperature", "temperature is between 0 and 2")
	}
	out.Options.Temperature = r.Temperature
	out.ThreadKey = r.User
	if v, ok := r.Metadata["ctxgraph_thread"].(string); ok && v != "" {
		out.ThreadKey = v
	}
	if id := r.PreviousResponseID; id != "" {
		conv, sha, length, ok := parseResponseID(id)
		if !ok {
			return out, model.Invalid("previous_response_id", "%q is not the id of a response ctxgraph answered", id)
		}
		out.ConversationID, out.After = conv, &model.ChainPoint{SHA256: sha, Length: length}
	}
	for i, t := range r.Tools {
		if t.Type != "" && t.Type != "function" {
			return out, model.Invalid(fmt.Sprintf("tools[%d].type", i), "ctxgraph offers function tools only, not %q", t.Type)
		}
		out.Options.Tools = append(out.Options.Tools, model.ToolSpec{Name: t.Name, Description: t.Description, Parameters: dropin.Schema(t.Parameters)})
	}
	choice, err := toolChoice(r.ToolChoice)
	if err != nil {
		return out, err
	}
	out.Options.ToolChoice = choice
	var system []string
	if r.Instructions != nil && *r.Instructions != "" {
		system = append(system, *r.Instructions)
	}
	var items []item
	var text string
	if json.Unmarshal(r.Input, &text) == nil {
		items = []item{{Type: "message", Role: "user", Content: r.Input}}
	} else if err := json.Unmarshal(r.Input, &items); err != nil {
		return out, model.Invalid("input", "input is a string or a list of items")
	}
	for i, it := range items {
		field := fmt.Sprintf("input[%d]", i)
		msg, isSystem, err := clientMessage(it, field)
		if err != nil {
			return out, err
		}
		if isSystem {
			system = append(system, msg.Text)
			continue
		}
		out.Messages = append(out.Messages, msg)
		out.Positions = append(out.Positions, i)
	}
	if len(system) > 0 {
		s := strings.Join(system, "\n\n")
		out.Instructions = &s
	}
	return out, nil
}

// clientMessage is one input item as a message of the list; isSystem says it is a system
// or developer message, the conversation's instructions.
func clientMessage(it item, field string) (m model.ClientMessage, isSystem bool, err error) {
	typ := it.Type
	if typ == "" && it.Role != "" {
		typ = "message"
	}
	switch typ {
	case "message":
		text, err := openaiwire.ContentText(it.Content, field+".content", textParts...)
		if err != nil {
			return m, false, err
		}
		switch it.Role {
		case "system", "developer":
			return model.ClientMessage{Role: "system", Text: text}, true, nil
		case "user":
			return model.ClientMessage{Role: "user", Text: text}, false, nil
		case "assistant":
			return model.ClientMessage{Role: "assistant", Text: text, ItemID: it.ID}, false, nil
		}
		return m, false, model.Invalid(field+".role", "role is system, developer, user or assistant")
	case "function_call":
		if it.CallID == "" || it.Name == "" {
			return m, false, model.Invalid(field, "a function_call names its call_id and name")
		}
		// A function call is known by its call id, whether the client sends it whole (the
		// Vercel AI SDK leaves its item id out) or by reference (fc_<call id>).
		return model.ClientMessage{Role: "assistant", ItemID: callPrefix + it.CallID,
			ToolCalls: []model.ClientToolCall{{ID: it.CallID, Name: it.Name, Arguments: json.RawMessage(it.Arguments)}}}, false, nil
	case "function_call_output":
		if it.CallID == "" {
			return m, false, model.Invalid(field+".call_id", "a function_call_output names the call it answers")
		}
		output, err := openaiwire.ContentText(it.Output, field+".output", textParts...)
		if err != nil {
			return m, false, err
		}
		return model.ClientMessage{Role: "tool", Results: []model.ClientToolResult{{CallID: it.CallID, Content: output}}}, false, nil
	case "item_reference":
		m := model.ClientMessage{Role: "assistant", ItemID: it.ID, Reference: true}
		if call, ok := strings.CutPrefix(it.ID, callPrefix); ok {
			m.ToolCalls = []model.ClientToolCall{{ID: call}}
		} else if !strings.HasPrefix(it.ID, messagePrefix) {
			return m, false, model.Invalid(field+".id", "%q is not an item ctxgraph answered: send the item itself", it.ID)
		}
		return m, false, nil
	}
	return m, false, model.Invalid(field+".type", "ctxgraph takes message, function_call, function_call_output and item_reference items, not %q", typ)
}

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
	}
	var named struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &named) == nil && named.Type == "function" && named.Name != "" {
		return named.Name, nil
	}
	return "", model.Invalid("tool_choice", "tool_choice is auto, none, required or {\"type\": \"function\", \"name\": ...}")
}

// AnswerItems is an answer as the items a client appends: its message, or one function
// call per call asked for, each by its id.
func AnswerItems(r model.RunResult) []model.ClientMessage {
	if len(r.ToolCalls) == 0 {
		return []model.ClientMessage{{Role: "assistant", ItemID: messagePrefix + r.AssemblyID}}
	}
	out := make([]model.ClientMessage, len(r.ToolCalls))
	for i, tc := range r.ToolCalls {
		out[i] = model.ClientMessage{Role: "assistant", ItemID: callPrefix + tc.CallID}
	}
	return out
}

// ResponseID is the id of a response: its conversation and the chain point its answer
// leaves, which a later request names as previous_response_id.
func ResponseID(a dropin.Answer) string {
	return fmt.Sprintf("%s%s.%s.%d", responsePrefix, a.ConversationID, a.Point.SHA256, a.Point.Length)
}

func parseResponseID(id string) (conv, sha string, length int, ok bool) {
	rest, found := strings.CutPrefix(id, responsePrefix)
	if !found {
		return "", "", 0, false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 || len(parts[1]) != 64 {
		return "", "", 0, false
	}
	if _, err := fmt.Sscanf(parts[2], "%d", &length); err != nil || length < 1 {
		return "", "", 0, false
	}
	return parts[0], parts[1], length, true
}

// Response is a response object.
type Response struct {
	ID                string         `json:"id"`
	Object            string         `json:"object"`
	CreatedAt         int64          `json:"created_at"`
	Status            string         `json:"status"`
	Model             string         `json:"model"`
	Output            []OutputItem   `json:"output"`
	Usage             *Usage         `json:"usage"`
	IncompleteDetails map[string]any `json:"incomplete_details"`
	Error             any            `json:"error"`
}

// OutputItem is a message or a function call of a response.
type OutputItem struct {
	Type      string        `json:"type"`
	ID        string        `json:"id"`
	Status    string        `json:"status"`
	Role      string        `json:"role,omitempty"`
	Content   []ContentPart `json:"content,omitempty"`
	CallID    string        `json:"call_id,omitempty"`
	Name      string        `json:"name,omitempty"`
	Arguments *string       `json:"arguments,omitempty"`
}

// ContentPart is a message's text.
type ContentPart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

// Usage is what the provider reported of a call's tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// Render is the response of an answer, under the model the request named.
func Render(a dropin.Answer, requestModel string, created int64) Response {
	r := a.Run
	out := Response{ID: ResponseID(a), Object: "response", CreatedAt: created, Status: "completed", Model: requestModel,
		Output: []OutputItem{}, Usage: &Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens,
			TotalTokens: r.Usage.InputTokens + r.Usage.OutputTokens}}
	if reason := r.FinishReason; reason == "length" || reason == "max_tokens" {
		out.Status, out.IncompleteDetails = "incomplete", map[string]any{"reason": "max_output_tokens"}
	}
	if len(r.ToolCalls) == 0 {
		text := ""
		if r.Message != nil {
			text = r.Message.Content
		}
		out.Output = append(out.Output, messageItem(r.AssemblyID, text, "completed"))
	}
	for _, tc := range r.ToolCalls {
		out.Output = append(out.Output, callItem(tc, string(tc.Arguments), "completed"))
	}
	return out
}

func messageItem(assemblyID, text, status string) OutputItem {
	return OutputItem{Type: "message", ID: messagePrefix + assemblyID, Status: status, Role: "assistant",
		Content: []ContentPart{{Type: "output_text", Text: text, Annotations: []any{}}}}
}

func callItem(tc model.RequestedToolCall, args, status string) OutputItem {
	return OutputItem{Type: "function_call", ID: callPrefix + tc.CallID, Status: status, CallID: tc.CallID, Name: tc.Tool, Arguments: &args}
}

// Stream writes a streamed answer as the Responses protocol's events, each with its
// sequence_number: response.created, an output item per message or call (added, its
// deltas, done), response.completed.
type Stream struct {
	W       io.Writer
	Model   string
	Created int64
	seq     int
	index   int
	asm     string
	text    strings.Builder
	open    bool
}

// Start opens the stream of the model call whose assembly is assemblyID.
func (s *Stream) Start(assemblyID string) error {
	s.asm = assemblyID
	return s.event("response.created", map[string]any{"response": Response{ID: responsePrefix + assemblyID, Object: "response",
		CreatedAt: s.Created, Status: "in_progress", Model: s.Model, Output: []OutputItem{}}})
}

// Text streams a piece of the answer's text, opening its message item first.
func (s *Stream) Text(text string) error {
	id := messagePrefix + s.asm
	if !s.open {
		s.open = true
		item := messageItem(s.asm, "", "in_progress")
		item.Content = []ContentPart{}
		if err := s.event("response.output_item.added", map[string]any{"output_index": s.index, "item": item}); err != nil {
			return err
		}
		if err := s.event("response.content_part.added", map[string]any{"item_id": id, "output_index": s.index, "content_index": 0,
			"part": ContentPart{Type: "output_text", Annotations: []any{}}}); err != nil {
			return err
		}
	}
	s.text.WriteString(text)
	return s.event("response.output_text.delta", map[string]any{"item_id": id, "output_index": s.index, "content_index": 0, "delta": text})
}

func (s *Stream) closeMessage() error {
	if !s.open {
		return nil
	}
	id, text := messagePrefix+s.asm, s.text.String()
	s.open = false
	for _, ev := range []struct {
		name string
		data map[string]any
	}{
		{"response.output_text.done", map[string]any{"item_id": id, "output_index": s.index, "content_index": 0, "text": text}},
		{"response.content_part.done", map[string]any{"item_id": id, "output_index": s.index, "content_index": 0,
			"part": ContentPart{Type: "output_text", Text: text, Annotations: []any{}}}},
		{"response.output_item.done", map[string]any{"output_index": s.index, "item": messageItem(s.asm, text, "completed")}},
	} {
		if err := s.event(ev.name, ev.data); err != nil {
			return err
		}
	}
	s.index++
	return nil
}

// ToolCall streams one function call the model asked for.
func (s *Stream) ToolCall(tc model.RequestedToolCall) error {
	if err := s.closeMessage(); err != nil {
		return err
	}
	args := string(tc.Arguments)
	events := []struct {
		name string
		data map[string]any
	}{
		{"response.output_item.added", map[string]any{"output_index": s.index, "item": callItem(tc, "", "in_progress")}},
		{"response.function_call_arguments.delta", map[string]any{"item_id": callPrefix + tc.CallID, "output_index": s.index, "delta": args}},
		{"response.function_call_arguments.done", map[string]any{"item_id": callPrefix + tc.CallID, "output_index": s.index, "arguments": args}},
		{"response.output_item.done", map[string]any{"output_index": s.index, "item": callItem(tc, args, "completed")}},
	}
	for _, ev := range events {
		if err := s.event(ev.name, ev.data); err != nil {
			return err
		}
	}
	s.index++
	return nil
}

// End closes an open message and streams the whole response.
func (s *Stream) End(a dropin.Answer) error {
	if len(a.Run.ToolCalls) == 0 && !s.open && s.index == 0 {
		// A text answer that streamed no delta still has its message item.
		if err := s.Text(""); err != nil {
			return err
		}
	}
	if err := s.closeMessage(); err != nil {
		return err
	}
	return s.event("response.completed", map[string]any{"response": Render(a, s.Model, s.Created)})
}

// Fail streams an error that came after the stream began.
func (s *Stream) Fail(message string) error {
	return s.event("error", map[string]any{"code": "provider_error", "message": message, "param": nil})
}

func (s *Stream) event(name string, data map[string]any) error {
	data["type"] = name
	data["sequence_number"] = s.seq
	s.seq++
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.W, "event: %s\ndata: %s\n\n", name, b)
	return err
}
