package provider

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
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
			call.RequestSHA256, call.RequestBody = hex.EncodeToString(sum[:]), body
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
		return next(req)
	}
}

// plainAnswer keeps the body of a successful answer to a streamed request that is one JSON
// document rather than an event stream: some OpenAI-compatible servers answer so (llm-katan
// 0.22.0 does whenever the request offers tools). The SDKs' stream decoders skip what is not
// an event, reading such an answer as a stream of none: its keep middleware takes the body
// and hands the decoder an empty one, and the adapter decodes body as the whole answer.
type plainAnswer struct {
	body []byte
}

func (p *plainAnswer) keep(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := next(req)
	if err != nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media != "application/json" {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	p.body, resp.Body = body, http.NoBody
	return resp, nil
}

// plainEnd ends a streamed call whose stream carried events events: done with the kept JSON
// answer decoded as a T (what names it) and converted, its text handed to onDelta as one
// delta; done with an error when there was neither an event nor such an answer, since
// recording it would make an empty answer of a call whose answer was lost; otherwise not
// done, and the stream's accumulated answer stands.
func plainEnd[T any](p *plainAnswer, events int, what string, convert func(*T) model.ProviderResponse, onDelta func(string)) (out model.ProviderResponse, done bool, err error) {
	switch {
	case p.body != nil:
		var whole T
		if err := json.Unmarshal(p.body, &whole); err != nil {
			return out, true, &model.ProviderError{Code: "stream_decoding", Message: "the provider answered the streamed request with JSON that is not a " + what}
		}
		out = convert(&whole)
		if out.Content != "" {
			onDelta(out.Content)
		}
		return out, true, nil
	case events == 0:
		return out, true, &model.ProviderError{Code: "stream_empty", Message: "the provider's streamed answer carried no event"}
	}
	return out, false, nil
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
