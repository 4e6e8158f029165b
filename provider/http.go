package provider

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/ctxgraph/ctxgraph/model"
)

// hashBody is SDK middleware that keeps the sha256 of the exact request body sent, read as
// the SDK hands it to the transport (a retry sends the same bytes).
func hashBody(call *model.ProviderCall) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if req.Body != nil && call.RequestSHA256 == "" {
			body, err := io.ReadAll(req.Body)
			_ = req.Body.Close()
			if err != nil {
				return nil, err
			}
			sum := sha256.Sum256(body)
			call.RequestSHA256 = hex.EncodeToString(sum[:])
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
		return next(req)
	}
}

// transportError is a call that got no HTTP answer: cancelled, timed out or unreachable.
// Its message names what happened, not the error's text, which can carry the URL.
func transportError(ctx context.Context, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return &model.ProviderError{Code: "cancelled", Message: "the request was cancelled"}
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &model.ProviderError{Code: "timeout", Message: "the provider did not answer in time"}
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return &model.ProviderError{Code: "timeout", Message: "the provider did not answer in time"}
	}
	return &model.ProviderError{Code: "unreachable", Message: "the provider could not be reached"}
}

// keyLike matches what providers echo of an API key in their error messages (OpenAI's
// "Incorrect API key provided: sk-proj-****abcd", Anthropic's sk-ant-… keys).
var keyLike = regexp.MustCompile(`\b(sk|rk|pk)-[A-Za-z0-9_*.-]{4,}`)

// scrub removes the configured key, and anything shaped like a key, from a provider's
// message before it is kept on a run or answered: keys never reach the graph or a client.
func scrub(message, key string) string {
	if key != "" {
		message = strings.ReplaceAll(message, key, "[redacted]")
	}
	return keyLike.ReplaceAllString(message, "[redacted]")
}

func statusText(status int) string {
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "status " + strconv.Itoa(status)
}
