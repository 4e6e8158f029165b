package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ctxgraph/ctxgraph/dropin"
	"github.com/ctxgraph/ctxgraph/model"
)

// The drop-in endpoints (DESIGN §9) speak a vendor's protocol: its request, its answer, its
// stream and its errors. What the protocols share is here; each vendor's translation is in
// its package (dropin/openaiwire, dropin/anthropicwire).

// The headers a drop-in request may send and its answer carries.
const (
	headerBranch       = "X-Ctxgraph-Branch"
	headerConversation = "X-Ctxgraph-Conversation"
	headerParticipant  = "X-Ctxgraph-Participant"
	headerRun          = "X-Ctxgraph-Run"
	headerAssembly     = "X-Ctxgraph-Assembly"
	headerTokens       = "X-Ctxgraph-Tokens"
)

// vendor is what a drop-in protocol renders: its error object, its answer and its stream.
type vendor struct {
	// errorOf is the vendor's error object for a failed request.
	errorOf func(status int, code, message, param string) any
	// answer is the vendor's answer to a completed call.
	answer func(a dropin.Answer) any
	// stream opens the vendor's event stream on w.
	stream func(w io.Writer) vendorStream
}

// vendorStream writes one streamed answer in a vendor's events.
type vendorStream interface {
	start(assemblyID string) error
	text(text string) error
	toolCall(tc model.RequestedToolCall) error
	end(a dropin.Answer) error
	fail(status int, code, message string) error
	keepAlive() error
}

// vendorErrors renders the errors of a vendor's routes in that vendor's error object, with
// the status the one table gives their kind.
func (s *Server) vendorErrors(v vendor) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := next(c)
			if err == nil || c.Response().Committed || clientGone(c.Request(), c.Response()) {
				return err
			}
			status, detail := s.renderError(c, err)
			if status == http.StatusConflict && c.Response().Header().Get("Retry-After") == "" {
				// The vendors' SDKs retry a 409: they are told when.
				c.Response().Header().Set("Retry-After", "1")
			}
			return c.JSON(status, v.errorOf(status, detail.Code, detail.Message, detail.Field))
		}
	}
}

// vendorKey authenticates a drop-in request by the key its SDK sends: `Authorization:
// Bearer` (OpenAI's) or `x-api-key` (Anthropic's).
func (s *Server) vendorKey(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header
		token, ok := strings.CutPrefix(h.Get(echo.HeaderAuthorization), "Bearer ")
		if !ok || token == "" {
			token = h.Get("X-Api-Key")
		}
		if token == "" {
			return &httpError{status: http.StatusUnauthorized, field: "Authorization",
				message: "missing API key: send the ctxgraph key as the SDK's API key (Authorization: Bearer, or x-api-key)"}
		}
		account := s.accountOfKey(token)
		if account == "" {
			return &httpError{status: http.StatusUnauthorized, field: "Authorization", message: "unknown API key"}
		}
		if err := s.notErased(c, account); err != nil {
			return err
		}
		c.Set(accountKey, account)
		return next(c)
	}
}

// dropInRequest adds the request's X-Ctxgraph-* headers to req.
func dropInRequest(c echo.Context, req dropin.Request) dropin.Request {
	h := c.Request().Header
	req.BranchID, req.ConversationID, req.ParticipantID = h.Get(headerBranch), h.Get(headerConversation), h.Get(headerParticipant)
	return req
}

// dropIn runs a drop-in call and answers it in v's protocol. The call's natural key (its
// conversation and the hash of its whole list) is claimed as an Idempotency-Key is: a
// request that repeats one already answered gets that answer and records nothing, one
// that repeats one still running gets 409 with Retry-After, and a retry after its server
// died completes the turn that server began.
func (s *Server) dropIn(c echo.Context, v vendor, req dropin.Request, stream bool) error {
	if s.dropins == nil || s.generator == nil {
		return &httpError{status: http.StatusServiceUnavailable, message: "generations are not configured on this server"}
	}
	_ = http.NewResponseController(c.Response().Writer).SetWriteDeadline(time.Time{})
	ctx, account := c.Request().Context(), accountOf(c)
	call, err := s.dropins.Prepare(ctx, account, req)
	if err != nil {
		return err
	}
	key := call.Key()
	claim, stored, release, err := s.claimKey(ctx, account, key, requestHash(http.MethodPost, key, nil), model.TurnHold)
	if err != nil {
		return err
	}
	defer release()
	if claim == nil {
		var ans dropin.Answer
		if err := json.Unmarshal(stored.Body, &ans); err != nil {
			return model.Internal("reading the stored answer of a repeated request", err)
		}
		c.Response().Header().Set("Idempotent-Replayed", "true")
		return s.answerDropIn(c, v, ans, stream)
	}
	ctx = model.WithTurnKey(model.WithIdempotencyClaim(ctx, claim), claim)
	if !stream {
		ans, err := call.Run(ctx, nil)
		if err != nil {
			s.idem.ReleaseIdempotencyKey(context.WithoutCancel(ctx), claim)
			return dropInFailure(ans, err)
		}
		return s.answerDropIn(c, v, ans, false)
	}
	out := &dropInStream{c: c, v: v, branch: call.BranchID}
	stop := out.keepAlive()
	ans, err := call.Run(ctx, out.event)
	stop()
	if err != nil {
		s.idem.ReleaseIdempotencyKey(context.WithoutCancel(ctx), claim)
		err = dropInFailure(ans, err)
		if !out.started() {
			return err
		}
		status, detail := s.describe(err)
		return out.fail(status, detail.Code, detail.Message)
	}
	return out.finish(ans)
}

// dropInFailure is the error of a call whose every run failed at its provider: 502 with the
// provider's message, which a vendor SDK retries (the list is recorded; the retry records
// it once).
func dropInFailure(ans dropin.Answer, err error) error {
	var pe *model.ProviderError
	if !errors.As(err, &pe) {
		return err
	}
	msg := "the provider failed: " + pe.Message
	if ans.Run.RunID != "" {
		msg += fmt.Sprintf(" (run %s)", ans.Run.RunID)
	}
	return &httpError{status: http.StatusBadGateway, message: msg}
}

// answerDropIn answers a completed call: its headers, then the vendor's answer or, to a
// streamed request (a repeat of one answered), the answer as the vendor's stream.
func (s *Server) answerDropIn(c echo.Context, v vendor, ans dropin.Answer, stream bool) error {
	setDropInHeaders(c, ans.BranchID, ans.Run.RunID, ans.Run.AssemblyID, ans.Run.Tokens)
	if !stream {
		return c.JSON(http.StatusOK, v.answer(ans))
	}
	out := &dropInStream{c: c, v: v, branch: func() string { return ans.BranchID }}
	out.event(model.GenerationEvent{Name: model.EventRunStarted, Data: map[string]any{"runId": ans.Run.RunID,
		"assemblyId": ans.Run.AssemblyID, "tokens": ans.Run.Tokens}})
	if ans.Run.Message != nil {
		out.event(model.GenerationEvent{Name: model.EventMessageDelta, Data: map[string]string{"text": ans.Run.Message.Content}})
	}
	for _, tc := range ans.Run.ToolCalls {
		out.event(model.GenerationEvent{Name: model.EventToolCall, Data: map[string]any{"toolCall": tc}})
	}
	return out.finish(ans)
}

func setDropInHeaders(c echo.Context, branch, run, assembly string, tokens model.GenerationTokens) {
	h := c.Response().Header()
	h.Set(headerBranch, branch)
	if run != "" {
		h.Set(headerRun, run)
	}
	if assembly != "" {
		h.Set(headerAssembly, assembly)
		h.Set(headerTokens, fmt.Sprintf("%d/%d", tokens.Assembled, tokens.Baseline))
	}
}

// dropInStream turns a call's generation events into a vendor's stream. The stream opens at
// the run's first model call, when its run, assembly and token counts (the answer's
// headers) are known; recall calls ctxgraph answers itself are not the client's to see.
type dropInStream struct {
	c      echo.Context
	v      vendor
	branch func() string
	mu     sync.Mutex
	out    vendorStream
	err    error
}

func (d *dropInStream) started() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out != nil
}

// event writes one generation event; a write that fails (the client went away) ends the
// writing, not the call, whose answer is recorded all the same.
func (d *dropInStream) event(ev model.GenerationEvent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return
	}
	switch ev.Name {
	case model.EventRunStarted:
		if d.out != nil {
			return
		}
		data, _ := ev.Data.(map[string]any)
		run, _ := data["runId"].(string)
		assembly, _ := data["assemblyId"].(string)
		tokens, _ := data["tokens"].(model.GenerationTokens)
		setDropInHeaders(d.c, d.branch(), run, assembly, tokens)
		h := d.c.Response().Header()
		h.Set(echo.HeaderContentType, "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		d.c.Response().WriteHeader(http.StatusOK)
		d.out = d.v.stream(d.c.Response())
		d.write(d.out.start(assembly))
	case model.EventMessageDelta:
		if d.out == nil {
			return
		}
		data, _ := ev.Data.(map[string]string)
		if data["text"] != "" {
			d.write(d.out.text(data["text"]))
		}
	case model.EventToolCall:
		if d.out == nil {
			return
		}
		data, _ := ev.Data.(map[string]any)
		if tc, ok := data["toolCall"].(model.RequestedToolCall); ok && tc.AnsweredBy == "" {
			d.write(d.out.toolCall(tc))
		}
	}
}

func (d *dropInStream) write(err error) {
	if err == nil {
		d.c.Response().Flush()
		return
	}
	d.err = err
}

// finish ends the stream with the answer's stop reason and usage.
func (d *dropInStream) finish(ans dropin.Answer) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.out == nil {
		return model.Internal("a streamed call answered without its run starting", nil)
	}
	if d.err == nil {
		d.write(d.out.end(ans))
	}
	return nil
}

// fail ends an open stream with the vendor's error event.
func (d *dropInStream) fail(status int, code, message string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		d.write(d.out.fail(status, code, message))
	}
	return nil
}

// keepAlive writes the vendor's keep-alive while an open stream is idle, until stop.
func (d *dropInStream) keepAlive() (stop func()) {
	return every(keepAliveEvery, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.out != nil && d.err == nil {
			d.write(d.out.keepAlive())
		}
	})
}
