package provider

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/ctxgraph/ctxgraph/model"
)

// OpenAI calls any OpenAI-compatible chat-completions server (OpenAI, OpenRouter, vLLM,
// llama.cpp server, Ollama) through the openai-go SDK.
type OpenAI struct {
	cfg    Config
	client openai.Client
}

// NewOpenAI builds the adapter of one provider entry: its base URL, key, per-attempt
// timeout and retries are the SDK's own options.
func NewOpenAI(c Config) *OpenAI {
	opts := []option.RequestOption{
		option.WithBaseURL(c.BaseURL),
		option.WithMaxRetries(c.MaxRetries),
		option.WithRequestTimeout(c.Timeout),
		// No key from the environment behind the configuration's back: only apiKeyEnv's.
		option.WithAPIKey(c.Key),
	}
	if c.Key == "" {
		opts = append(opts, option.WithHeaderDel("Authorization"))
	}
	return &OpenAI{cfg: c, client: openai.NewClient(opts...)}
}

// Name is the provider's name.
func (p *OpenAI) Name() string { return p.cfg.Name }

// Kind is openai.
func (p *OpenAI) Kind() string { return KindOpenAI }

// Generate makes one chat-completions call, streamed when req.OnDelta is set.
func (p *OpenAI) Generate(ctx context.Context, req model.ProviderRequest, call *model.ProviderCall) (model.ProviderResponse, error) {
	params, err := OpenAIParams(req)
	if err != nil {
		return model.ProviderResponse{}, err
	}
	capture := option.WithMiddleware(hashBody(call))
	start := time.Now()
	defer func() { call.Latency = time.Since(start) }()
	if req.OnDelta == nil {
		resp, err := p.client.Chat.Completions.New(ctx, params, capture)
		if err != nil {
			return model.ProviderResponse{}, openAIError(ctx, err, p.cfg.Key)
		}
		return openAIResponse(resp), nil
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	var plain plainAnswer
	stream := p.client.Chat.Completions.NewStreaming(ctx, params, capture, option.WithMiddleware(plain.keep))
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		chunk := stream.Current()
		chunks++
		acc.AddChunk(chunk)
		for _, ch := range chunk.Choices {
			if ch.Delta.Content != "" {
				req.OnDelta(ch.Delta.Content)
			}
		}
	}
	if err := stream.Err(); err != nil {
		return model.ProviderResponse{}, openAIError(ctx, err, p.cfg.Key)
	}
	if out, done, err := plainEnd(&plain, chunks, "chat completion", openAIResponse, req.OnDelta); done {
		return out, err
	}
	return openAIResponse(&acc.ChatCompletion), nil
}

// OpenAIParams serialises a request for chat completions (DESIGN §6): system, user and
// assistant messages with their name labels, each tool round as the assistant's
// tool_calls followed by one `tool` message per call.
func OpenAIParams(req model.ProviderRequest) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(req.Model)}
	for _, m := range req.Messages {
		var name param.Opt[string]
		if m.Name != "" {
			name = openai.String(m.Name)
		}
		switch m.Role {
		case "system":
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case "user":
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfUser: &openai.ChatCompletionUserMessageParam{
				Content: openai.ChatCompletionUserMessageParamContentUnion{OfString: openai.String(m.Content)}, Name: name,
			}})
		case "assistant":
			a := &openai.ChatCompletionAssistantMessageParam{Name: name}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content = openai.ChatCompletionAssistantMessageParamContentUnion{OfString: openai.String(m.Content)}
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
				}})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: a})
		case "tool":
			params.Messages = append(params.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		}
	}
	for _, t := range req.Tools {
		def := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &def.Parameters); err != nil {
				return params, &model.ProviderError{Code: "invalid_tool", Message: "tool " + t.Name + ": parameters are not a JSON object"}
			}
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(def))
	}
	if len(req.Tools) > 0 && req.ToolChoice != "" {
		if model.Contains(model.ToolChoices, req.ToolChoice) {
			params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(req.ToolChoice)}
		} else {
			params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
				Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice},
			}}
		}
	}
	if req.MaxOutputTokens > 0 {
		// max_tokens rather than max_completion_tokens: every OpenAI-compatible server
		// takes it.
		params.MaxTokens = openai.Int(int64(req.MaxOutputTokens))
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	return params, nil
}

func openAIResponse(resp *openai.ChatCompletion) model.ProviderResponse {
	out := model.ProviderResponse{
		ID: resp.ID, Model: resp.Model,
		Usage: model.Usage{InputTokens: int(resp.Usage.PromptTokens), OutputTokens: int(resp.Usage.CompletionTokens)},
	}
	if len(resp.Choices) > 0 {
		ch := resp.Choices[0]
		out.Content, out.FinishReason = ch.Message.Content, ch.FinishReason
		for _, tc := range ch.Message.ToolCalls {
			if tc.Type != "" && tc.Type != "function" {
				continue
			}
			args := tc.Function.Arguments
			if args == "" {
				args = "{}"
			}
			out.ToolCalls = append(out.ToolCalls, model.ChatToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
		}
	}
	return out
}

// openAIError keeps what the provider said (status, code, message), never the request.
func openAIError(ctx context.Context, err error, key string) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		code := apiErr.Code
		if code == "" {
			code = apiErr.Type
		}
		if code == "" {
			code = "provider_status"
		}
		msg := apiErr.Message
		if msg == "" {
			msg = statusText(apiErr.StatusCode)
		}
		return &model.ProviderError{Status: apiErr.StatusCode, Code: code, Message: scrub(msg, key)}
	}
	return transportError(ctx, err)
}
