package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// Echo is the built-in development provider: it answers deterministically with what it
// received (message count, characters, the last user message) and says what it is. Offered
// tools it never calls: a turn with it always completes.
type Echo struct{ name string }

// Name is the provider's name.
func (e Echo) Name() string { return e.name }

// Kind is echo.
func (Echo) Kind() string { return KindEcho }

// Generate answers with a description of the request. The request body it hashes is the
// JSON of the messages and tools it was given.
func (e Echo) Generate(ctx context.Context, req model.ProviderRequest, call *model.ProviderCall) (model.ProviderResponse, error) {
	start := time.Now()
	body, err := json.Marshal(struct {
		Model    string              `json:"model"`
		Messages []model.ChatMessage `json:"messages"`
		Tools    []model.ToolSpec    `json:"tools,omitempty"`
	}{req.Model, req.Messages, req.Tools})
	if err != nil {
		return model.ProviderResponse{}, &model.ProviderError{Code: "request_encoding", Message: err.Error()}
	}
	sum := sha256.Sum256(body)
	call.RequestSHA256, call.RequestBody = hex.EncodeToString(sum[:]), body
	last, chars := "", 0
	for _, m := range req.Messages {
		chars += len(m.Content)
		if m.Role == "user" {
			last = m.Content
		}
	}
	text := fmt.Sprintf("[echo provider: a development aid, not a model] I received %d messages (%d characters); your last message: %q",
		len(req.Messages), chars, last)
	if req.OnDelta != nil {
		for _, word := range strings.SplitAfter(text, " ") {
			if err := ctx.Err(); err != nil {
				return model.ProviderResponse{}, &model.ProviderError{Code: "cancelled", Message: "the request was cancelled"}
			}
			req.OnDelta(word)
		}
	}
	call.Latency = time.Since(start)
	return model.ProviderResponse{
		ID: "echo-" + call.RequestSHA256[:16], Model: req.Model, Content: text, FinishReason: "stop",
		Usage: model.Usage{InputTokens: chars / 4, OutputTokens: len(text) / 4},
	}, nil
}
