package provider

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/ctxgraph/ctxgraph/model"
)

// DefaultAnthropicMaxTokens is max_tokens when a request sets no maxOutputTokens: the
// Messages API requires one.
const DefaultAnthropicMaxTokens = 4096

// Anthropic calls the Messages API through the anthropic-sdk-go SDK.
type Anthropic struct {
	cfg    Config
	client anthropic.Client
}

// NewAnthropic builds the adapter of one provider entry. The SDK's environment defaults
// (ANTHROPIC_API_KEY, profiles) are off: only the entry's apiKeyEnv counts.
func NewAnthropic(c Config) *Anthropic {
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(c.BaseURL),
		option.WithMaxRetries(c.MaxRetries),
		option.WithRequestTimeout(c.Timeout),
	}
	if c.Key != "" {
		// The Messages API's documented key header. This SDK version's WithAPIKey sends the
		// key as a bearer token, which the API (and llm-katan) reads as an OAuth token.
		opts = append(opts, option.WithHeader("x-api-key", c.Key))
	}
	return &Anthropic{cfg: c, client: anthropic.NewClient(opts...)}
}

// Name is the provider's name.
func (p *Anthropic) Name() string { return p.cfg.Name }

// Kind is anthropic.
func (p *Anthropic) Kind() string { return KindAnthropic }

// Generate makes one Messages call, streamed when req.OnDelta is set.
func (p *Anthropic) Generate(ctx context.Context, req model.ProviderRequest, call *model.ProviderCall) (model.ProviderResponse, error) {
	params, err := AnthropicParams(req)
	if err != nil {
		return model.ProviderResponse{}, err
	}
	opts := []option.RequestOption{option.WithMiddleware(hashBody(call))}
	if req.Temperature != nil {
		// This SDK version's params have no temperature field; the API still takes it.
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	start := time.Now()
	defer func() { call.Latency = time.Since(start) }()
	if req.OnDelta == nil {
		resp, err := p.client.Messages.New(ctx, params, opts...)
		if err != nil {
			return model.ProviderResponse{}, anthropicError(ctx, err, p.cfg.Key)
		}
		return anthropicResponse(resp), nil
	}
	var plain plainAnswer
	stream := p.client.Messages.NewStreaming(ctx, params, append(opts, option.WithMiddleware(plain.keep))...)
	defer stream.Close()
	var msg anthropic.Message
	events := 0
	for stream.Next() {
		ev := stream.Current()
		events++
		if err := msg.Accumulate(ev); err != nil {
			return model.ProviderResponse{}, &model.ProviderError{Code: "stream_decoding", Message: err.Error()}
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
			req.OnDelta(ev.Delta.Text)
		}
	}
	if err := stream.Err(); err != nil {
		return model.ProviderResponse{}, anthropicError(ctx, err, p.cfg.Key)
	}
	if out, done, err := plainEnd(&plain, events, "message", anthropicResponse, req.OnDelta); done {
		return out, err
	}
	return anthropicResponse(&msg), nil
}

// AnthropicParams serialises a request for the Messages API (DESIGN §6): the system
// content in `system`, alternating user and assistant turns with adjacent ones merged,
// speaker labels written into the text (there is no name field), each tool round as
// tool_use blocks answered by tool_result blocks in the next user turn.
func AnthropicParams(req model.ProviderRequest) (anthropic.MessageNewParams, error) {
	params := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: DefaultAnthropicMaxTokens}
	if req.MaxOutputTokens > 0 {
		params.MaxTokens = int64(req.MaxOutputTokens)
	}
	var system []string
	type turn struct {
		role   string
		blocks []anthropic.ContentBlockParamUnion
	}
	var turns []turn
	add := func(role string, b anthropic.ContentBlockParamUnion) {
		if n := len(turns); n > 0 && turns[n-1].role == role {
			turns[n-1].blocks = append(turns[n-1].blocks, b)
			return
		}
		turns = append(turns, turn{role: role, blocks: []anthropic.ContentBlockParamUnion{b}})
	}
	for _, m := range req.Messages {
		text := m.Content
		if m.Name != "" && text != "" {
			text = m.Name + ": " + text
		}
		switch m.Role {
		case "system":
			system = append(system, m.Content)
		case "user":
			add("user", anthropic.NewTextBlock(text))
		case "assistant":
			if text != "" {
				add("assistant", anthropic.NewTextBlock(text))
			}
			for _, tc := range m.ToolCalls {
				add("assistant", anthropic.NewToolUseBlock(tc.ID, json.RawMessage(tc.Arguments), tc.Name))
			}
		case "tool":
			add("user", anthropic.NewToolResultBlock(m.ToolCallID, m.Content, false))
		}
	}
	if len(turns) == 0 || turns[0].role != "user" {
		// The Messages API opens with a user turn.
		turns = append([]turn{{role: "user", blocks: []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock("(the conversation so far follows)")}}}, turns...)
	}
	for _, t := range turns {
		if t.role == "user" {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(t.blocks...))
		} else {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(t.blocks...))
		}
	}
	if len(system) > 0 {
		params.System = []anthropic.TextBlockParam{{Text: strings.Join(system, "\n\n")}}
	}
	for _, t := range req.Tools {
		tool := anthropic.ToolParam{Name: t.Name}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		schema := map[string]any{}
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return params, &model.ProviderError{Code: "invalid_tool", Message: "tool " + t.Name + ": parameters are not a JSON object"}
			}
		}
		tool.InputSchema = anthropic.ToolInputSchemaParam{Properties: schema["properties"]}
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					tool.InputSchema.Required = append(tool.InputSchema.Required, s)
				}
			}
		}
		extra := map[string]any{}
		for k, v := range schema {
			if k != "properties" && k != "required" && k != "type" {
				extra[k] = v
			}
		}
		if len(extra) > 0 {
			tool.InputSchema.ExtraFields = extra
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case "", "auto":
			if req.ToolChoice != "" {
				params.ToolChoice = anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}
			}
		case "none":
			params.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
		case "required":
			params.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}
		default:
			params.ToolChoice = anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: req.ToolChoice}}
		}
	}
	return params, nil
}

func anthropicResponse(m *anthropic.Message) model.ProviderResponse {
	out := model.ProviderResponse{
		ID: m.ID, Model: string(m.Model), FinishReason: string(m.StopReason),
		Usage: model.Usage{InputTokens: int(m.Usage.InputTokens), OutputTokens: int(m.Usage.OutputTokens)},
	}
	var text []string
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			args := string(b.Input)
			if args == "" || args == "null" {
				args = "{}"
			}
			out.ToolCalls = append(out.ToolCalls, model.ChatToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out.Content = strings.Join(text, "")
	return out
}

// anthropicError keeps what the provider said (status, error type, message), never the
// request.
func anthropicError(ctx context.Context, err error, key string) error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(apiErr.RawJSON()), &body)
		code, msg := body.Error.Type, body.Error.Message
		if code == "" {
			code = "provider_status"
		}
		if msg == "" {
			msg = statusText(apiErr.StatusCode)
		}
		return &model.ProviderError{Status: apiErr.StatusCode, Code: code, Message: scrub(msg, key)}
	}
	return transportError(ctx, err)
}
