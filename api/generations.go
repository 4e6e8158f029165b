package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ctxgraph/ctxgraph/model"
)

// keepAliveEvery is how often an idle event stream gets a comment line.
const keepAliveEvery = 15 * time.Second

// finalAnswerKey marks a response that is the request's final answer although it is not a
// 2xx (a turn whose every run failed): an Idempotency-Key keeps it, so that a retry calls
// no provider again.
const finalAnswerKey = "finalAnswer"

type userMessageBody struct {
	Content string `json:"content" validate:"required,maxbytes=1048576"`
	At      string `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

type toolSpecBody struct {
	Name           string          `json:"name" validate:"required,max=64"`
	Description    string          `json:"description" validate:"max=10000"`
	Parameters     json.RawMessage `json:"parameters" validate:"maxbytes=65536"`
	FreshnessClass string          `json:"freshnessClass" validate:"omitempty,freshnessclass"`
	StaleAfter     string          `json:"staleAfter" validate:"max=64"`
	RevalidateWith []string        `json:"revalidateWith" validate:"omitempty,max=32,dive,required,max=64"`
	Retention      *retentionBody  `json:"retention"`
}

// retentionBody is how long an artifact's body is kept (model.Retention).
type retentionBody struct {
	Class string `json:"class" validate:"required,max=32"`
	After string `json:"after" validate:"max=64"`
}

// retentionOf checks a retention a request names, naming field when it is wrong.
func retentionOf(b *retentionBody, field string) (*model.Retention, error) {
	if b == nil {
		return nil, nil
	}
	r := &model.Retention{Class: b.Class, After: b.After}
	if err := r.Check(field); err != nil {
		return nil, err
	}
	return r, nil
}

// callOptionsBody are the fields every model call of a request shares.
type callOptionsBody struct {
	Tools           []toolSpecBody `json:"tools" validate:"omitempty,max=128,dive"`
	ToolChoice      string         `json:"toolChoice" validate:"max=64"`
	MaxOutputTokens *int           `json:"maxOutputTokens" validate:"omitempty,gte=1,lte=1000000"`
	Temperature     *float64       `json:"temperature" validate:"omitempty,gte=0,lte=2"`
	Stream          bool           `json:"stream"`
}

type generationRequest struct {
	BranchID         string           `json:"branchId" validate:"required,max=100"`
	ParticipantIDs   []string         `json:"participantIds" validate:"required,min=1,max=8,unique,dive,required,max=100"`
	UserMessage      *userMessageBody `json:"userMessage"`
	ParentMessageIDs []string         `json:"parentMessageIds" validate:"omitempty,max=100,dive,required,max=100"`
	RuntimeKind      string           `json:"runtimeKind" validate:"omitempty,turnruntimekind"`
	PolicyVersion    string           `json:"policyVersion" validate:"max=200"`
	TokenBudget      *int             `json:"tokenBudget" validate:"omitempty,gte=1,lte=2000000"`
	ExactArtifactIDs []string         `json:"exactArtifactIds" validate:"omitempty,max=100,dive,required,max=100"`
	callOptionsBody
}

type discussionRequest struct {
	BranchID        string           `json:"branchId" validate:"required,max=100"`
	ParticipantIDs  []string         `json:"participantIds" validate:"required,min=1,max=8,unique,dive,required,max=100"`
	Directive       string           `json:"directive" validate:"required,maxbytes=65536"`
	Topic           *userMessageBody `json:"topic"`
	Rounds          *int             `json:"rounds" validate:"omitempty,gte=1,lte=20"`
	PolicyVersion   string           `json:"policyVersion" validate:"max=200"`
	TokenBudget     *int             `json:"tokenBudget" validate:"omitempty,gte=1,lte=2000000"`
	MaxOutputTokens *int             `json:"maxOutputTokens" validate:"omitempty,gte=1,lte=1000000"`
	Temperature     *float64         `json:"temperature" validate:"omitempty,gte=0,lte=2"`
	Stream          bool             `json:"stream"`
}

type subagentChildBody struct {
	ParticipantID string         `json:"participantId" validate:"required,max=100"`
	Task          string         `json:"task" validate:"required,maxbytes=1048576"`
	Tools         []toolSpecBody `json:"tools" validate:"omitempty,max=128,dive"`
}

type subagentsRequest struct {
	Children        []subagentChildBody `json:"children" validate:"required,min=1,max=8,dive"`
	PolicyVersion   string              `json:"policyVersion" validate:"max=200"`
	TokenBudget     *int                `json:"tokenBudget" validate:"omitempty,gte=1,lte=2000000"`
	MaxOutputTokens *int                `json:"maxOutputTokens" validate:"omitempty,gte=1,lte=1000000"`
	Temperature     *float64            `json:"temperature" validate:"omitempty,gte=0,lte=2"`
	Stream          bool                `json:"stream"`
}

type continueRequest struct {
	TokenBudget *int `json:"tokenBudget" validate:"omitempty,gte=1,lte=2000000"`
	callOptionsBody
}

var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// options validates the shared call options and turns them into the model's.
func (b callOptionsBody) options() (model.CallOptions, error) {
	o := model.CallOptions{ToolChoice: b.ToolChoice, Temperature: b.Temperature}
	if b.MaxOutputTokens != nil {
		o.MaxOutputTokens = *b.MaxOutputTokens
	}
	names := map[string]bool{}
	for i, t := range b.Tools {
		field := fmt.Sprintf("tools[%d]", i)
		if !toolNamePattern.MatchString(t.Name) {
			return o, &httpError{status: http.StatusBadRequest, field: field + ".name", message: "a tool name is 1 to 64 letters, digits, '_' or '-'"}
		}
		if t.Name == model.RecallTool {
			return o, &httpError{status: http.StatusBadRequest, field: field + ".name", message: fmt.Sprintf("%q is ctxgraph's own recall tool: offer your tool under another name", t.Name)}
		}
		if names[t.Name] {
			return o, &httpError{status: http.StatusBadRequest, field: field + ".name", message: fmt.Sprintf("tool %q is offered twice", t.Name)}
		}
		names[t.Name] = true
		spec := model.ToolSpec{Name: t.Name, Description: t.Description, FreshnessClass: t.FreshnessClass,
			StaleAfter: t.StaleAfter, RevalidateWith: t.RevalidateWith}
		if d, err := time.ParseDuration(t.StaleAfter); t.StaleAfter != "" && (err != nil || d <= 0) {
			return o, &httpError{status: http.StatusBadRequest, field: field + ".staleAfter", message: "staleAfter is a positive duration such as 30m or 24h"}
		}
		var err error
		if spec.Retention, err = retentionOf(t.Retention, field+".retention"); err != nil {
			return o, err
		}
		if !isAbsent(t.Parameters) {
			var schema map[string]any
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return o, &httpError{status: http.StatusBadRequest, field: field + ".parameters", message: "parameters must be a JSON Schema object"}
			}
			spec.Parameters = t.Parameters
		}
		o.Tools = append(o.Tools, spec)
	}
	if !model.ToolChoiceFits(o.Tools, b.ToolChoice) {
		return o, &httpError{status: http.StatusBadRequest, field: "toolChoice", message: "toolChoice is auto, none, required or the name of an offered tool"}
	}
	return o, nil
}

// options of a continue or a resume: tools left out are the run's (DESIGN §8), an empty
// list offers none. A toolChoice without tools is judged by the generator, against the
// tools the run is offered.
func (r continueRequest) options() (model.CallOptions, error) {
	b := r.callOptionsBody
	named := b.Tools != nil
	if !named {
		b.ToolChoice = ""
	}
	o, err := b.options()
	o.ToolsNamed, o.ToolChoice = named, r.ToolChoice
	return o, err
}

func (s *Server) generate(c echo.Context) error {
	var req generationRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	opts, err := req.options()
	if err != nil {
		return err
	}
	in := model.GenerationRequest{
		BranchID: req.BranchID, ParticipantIDs: req.ParticipantIDs, ParentMessageIDs: req.ParentMessageIDs,
		RuntimeKind: model.RuntimeKind(req.RuntimeKind), PolicyVersion: req.PolicyVersion, TokenBudget: derefInt(req.TokenBudget),
		ExactArtifactIDs: req.ExactArtifactIDs, Options: opts,
	}
	if req.UserMessage != nil {
		in.UserMessage = &model.NewUserMessage{Content: req.UserMessage.Content, At: timeOf(req.UserMessage.At)}
	}
	// The turn is kept under the request's key as it begins, so that a retry after its
	// server died completes it (model.WithTurnKey).
	claim := model.IdempotencyClaimOf(c.Request().Context())
	return s.runGeneration(c, req.Stream, http.StatusCreated, func(ctx context.Context, o model.CallOptions) (model.Generation, error) {
		in.Options = o
		return s.generator.Generate(model.WithTurnKey(ctx, claim), accountOf(c), in)
	}, opts)
}

func (s *Server) discuss(c echo.Context) error {
	var req discussionRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	opts, err := callOptionsBody{MaxOutputTokens: req.MaxOutputTokens, Temperature: req.Temperature}.options()
	if err != nil {
		return err
	}
	in := model.DiscussionRequest{
		BranchID: req.BranchID, ParticipantIDs: req.ParticipantIDs, Directive: req.Directive, Rounds: 1,
		PolicyVersion: req.PolicyVersion, TokenBudget: derefInt(req.TokenBudget),
	}
	if req.Rounds != nil {
		in.Rounds = *req.Rounds
	}
	if req.Topic != nil {
		in.Topic = &model.NewUserMessage{Content: req.Topic.Content, At: timeOf(req.Topic.At)}
	}
	return s.runGeneration(c, req.Stream, http.StatusCreated, func(ctx context.Context, o model.CallOptions) (model.Generation, error) {
		in.Options = o
		return s.generator.Discuss(ctx, accountOf(c), in)
	}, opts)
}

func (s *Server) startSubagents(c echo.Context) error {
	var req subagentsRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	opts, err := callOptionsBody{MaxOutputTokens: req.MaxOutputTokens, Temperature: req.Temperature}.options()
	if err != nil {
		return err
	}
	in := model.SubagentRequest{RunID: c.Param("id"), PolicyVersion: req.PolicyVersion, TokenBudget: derefInt(req.TokenBudget)}
	for i, ch := range req.Children {
		tools, err := callOptionsBody{Tools: ch.Tools}.options()
		if err != nil {
			var he *httpError
			if errors.As(err, &he) {
				he.field = fmt.Sprintf("children[%d].%s", i, he.field)
			}
			return err
		}
		in.Children = append(in.Children, model.SubagentChild{ParticipantID: ch.ParticipantID, Task: ch.Task, Tools: tools.Tools})
	}
	return s.runGeneration(c, req.Stream, http.StatusCreated, func(ctx context.Context, o model.CallOptions) (model.Generation, error) {
		in.Options = o
		return s.generator.Subagents(ctx, accountOf(c), in)
	}, opts)
}

func (s *Server) resumeRun(c echo.Context) error {
	return s.callRun(c, func(ctx context.Context, runID string, budget int, o model.CallOptions) (model.Generation, error) {
		return s.generator.Resume(ctx, accountOf(c), model.ResumeRequest{RunID: runID, TokenBudget: budget, Options: o})
	})
}

func (s *Server) continueRun(c echo.Context) error {
	return s.callRun(c, func(ctx context.Context, runID string, budget int, o model.CallOptions) (model.Generation, error) {
		return s.generator.Continue(ctx, accountOf(c), model.ContinueRequest{RunID: runID, TokenBudget: budget, Options: o})
	})
}

// callRun answers a request that calls the model of run {id} again (continue, resume).
func (s *Server) callRun(c echo.Context, call func(ctx context.Context, runID string, budget int, o model.CallOptions) (model.Generation, error)) error {
	var req continueRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	opts, err := req.options()
	if err != nil {
		return err
	}
	return s.runGeneration(c, req.Stream, http.StatusOK, func(ctx context.Context, o model.CallOptions) (model.Generation, error) {
		return call(ctx, c.Param("id"), derefInt(req.TokenBudget), o)
	}, opts)
}

// runGeneration answers a turn as JSON, or as server-sent events when streamed. Writes
// inside a turn do not carry the request's Idempotency-Key claim: the turn's answer is kept
// once it is complete (idempotent), not in the first write's transaction.
func (s *Server) runGeneration(c echo.Context, stream bool, status int, run func(context.Context, model.CallOptions) (model.Generation, error), opts model.CallOptions) error {
	ctx := model.WithIdempotencyClaim(c.Request().Context(), nil)
	// A turn lasts as long as its provider calls: the server's write timeout does not cut it.
	_ = http.NewResponseController(c.Response().Writer).SetWriteDeadline(time.Time{})
	if s.generator == nil {
		return &httpError{status: http.StatusServiceUnavailable, message: "generations are not configured on this server"}
	}
	if !stream {
		gen, err := run(ctx, opts)
		var pe *model.ProviderError
		if errors.As(err, &pe) {
			// Every run failed at its provider: 502 with the turn's body (DESIGN §6).
			c.Set(finalAnswerKey, true)
			return c.JSON(http.StatusBadGateway, map[string]any{
				"userMessageId": gen.UserMessageID, "runs": gen.Runs,
				"error": errorDetail{Code: "provider_error", Message: pe.Message},
			})
		}
		if err != nil {
			return err
		}
		return c.JSON(status, gen)
	}
	sse := &eventStream{c: c}
	opts.OnEvent = sse.send
	stop := sse.keepAlive()
	gen, err := run(ctx, opts)
	stop()
	var pe *model.ProviderError
	switch {
	case errors.As(err, &pe):
		// Every run failed at its provider: the runs' events said so; done ends the stream.
		c.Set(finalAnswerKey, true)
	case err != nil && !sse.started():
		// Nothing was streamed yet: an ordinary JSON error.
		return err
	case err != nil:
		_, detail := s.describe(err)
		sse.send(model.GenerationEvent{Name: "error", Data: map[string]any{"error": detail}})
	}
	sse.send(model.GenerationEvent{Name: model.EventDone, Data: gen})
	return nil
}

// eventStream writes server-sent events; runs of a multi-model turn send concurrently.
type eventStream struct {
	c    echo.Context
	mu   sync.Mutex
	open bool
}

func (e *eventStream) started() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.open
}

func (e *eventStream) begin() {
	if e.open {
		return
	}
	h := e.c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	e.c.Response().WriteHeader(http.StatusOK)
	e.open = true
}

func (e *eventStream) send(ev model.GenerationEvent) {
	data, err := model.EncodeJSON(ev.Data)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.begin()
	var b bytes.Buffer
	fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", ev.Name, data)
	_, _ = e.c.Response().Write(b.Bytes())
	e.c.Response().Flush()
}

// keepAlive writes a comment line while the stream is idle, until the returned stop.
func (e *eventStream) keepAlive() (stop func()) {
	return every(keepAliveEvery, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.begin()
		_, _ = e.c.Response().Write([]byte(": keep-alive\n\n"))
		e.c.Response().Flush()
	})
}

// every calls tick at each period until the returned stop, which waits for a tick in progress.
func every(period time.Duration, tick func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				tick()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
