package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/tracing"
)

// accountKey is where authenticate leaves the caller's account in the echo context.
const accountKey = "accountId"

// authenticate resolves `Authorization: Bearer <key>` to its account.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		header := c.Request().Header.Get(echo.HeaderAuthorization)
		token, ok := strings.CutPrefix(header, "Bearer ")
		if !ok || token == "" {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="ctxgraph"`)
			return &httpError{status: http.StatusUnauthorized, message: "missing bearer API key in the Authorization header"}
		}
		account := s.accountOfKey(token)
		if account == "" {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="ctxgraph", error="invalid_token"`)
			return &httpError{status: http.StatusUnauthorized, message: "unknown API key"}
		}
		if err := s.notErased(c, account); err != nil {
			return err
		}
		c.Set(accountKey, account)
		return next(c)
	}
}

// notErased refuses the requests of an erased account (DESIGN §10) with 410, but its
// DELETE /v1/account, which finishes an erasure that stopped.
func (s *Server) notErased(c echo.Context, account string) error {
	if s.accounts == nil || c.Request().Method == http.MethodDelete && c.Path() == "/v1/account" {
		return nil
	}
	at, err := s.accounts.AccountErasedAt(c.Request().Context(), account)
	if err != nil {
		return err
	}
	if at != nil {
		return model.Gone("this key's account was erased at %s (DELETE /v1/account): it writes and reads nothing more", at.UTC().Format(time.RFC3339))
	}
	return nil
}

// observe traces, counts and logs each request: a server span (continuing the caller's
// trace from its traceparent header), the request metric, and one access-log line with
// method, route, status, latency, request id and account, never a key or a body. It renders
// a handler's error itself, so that all three carry the status the client got. Health
// checks that pass are logged at debug level.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		req := c.Request()
		route := openAPIPath(c.Path())
		ctx := otel.GetTextMapPropagator().Extract(req.Context(), propagation.HeaderCarrier(req.Header))
		ctx, span := tracing.Tracer().Start(ctx, req.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", req.Method), attribute.String("http.route", route),
				attribute.String("url.path", req.URL.Path)))
		defer span.End()
		c.SetRequest(req.WithContext(ctx))
		res := c.Response()
		if err := next(c); err != nil {
			if clientGone(req, res) {
				// Nobody reads an answer now, and the failure is the client's leaving, not
				// the server's: it is logged and counted as 499, outside the 5xx metrics.
				res.Status = StatusClientClosedRequest
			} else {
				c.Error(err)
			}
		}
		span.SetAttributes(attribute.Int("http.response.status_code", res.Status), attribute.String("ctxgraph.request_id", res.Header().Get(echo.HeaderXRequestID)))
		if res.Status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(res.Status))
		}
		s.metrics.ObserveRequest(req.Method, route, res.Status, time.Since(start))
		level := zap.InfoLevel
		if (route == "/healthz" || route == "/readyz") && res.Status == http.StatusOK {
			level = zap.DebugLevel
		}
		if ce := s.log.Check(level, "request"); ce != nil {
			ce.Write(zap.String("method", c.Request().Method), zap.String("route", route), zap.Int("status", res.Status),
				zap.Float64("latencyMs", float64(time.Since(start).Microseconds())/1000), zap.Int64("bytes", res.Size),
				zap.String("requestId", res.Header().Get(echo.HeaderXRequestID)), zap.String("account", accountOf(c)))
		}
		return nil
	}
}

// StatusClientClosedRequest is the status (nginx's 499) a request is logged and counted with
// when its client disconnected before it was answered.
const StatusClientClosedRequest = 499

// clientGone tells whether req's client went away before res was sent: its context was
// cancelled (net/http cancels it when the connection closes) and nothing was answered.
func clientGone(req *http.Request, res *echo.Response) bool {
	return !res.Committed && errors.Is(req.Context().Err(), context.Canceled)
}

// unescapeParams gives handlers the ids of the path as the client meant them. Echo routes on
// the escaped path when the request's path needs it (an id holding `/`, `%` or a quote) and
// then leaves its parameters escaped; an error message would quote them so.
func unescapeParams(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().URL.RawPath != "" {
			values := c.ParamValues()
			for i, v := range values {
				if u, err := url.PathUnescape(v); err == nil {
					values[i] = u
				}
			}
			c.SetParamValues(values...)
		}
		return next(c)
	}
}

// accountOfKey is the account of an API key, empty for an unknown one. Every key is
// compared in constant time, so the answer's time says nothing of which key came close.
func (s *Server) accountOfKey(token string) string {
	account := ""
	for key, acc := range s.keys {
		if subtle.ConstantTimeCompare([]byte(key), []byte(token)) == 1 {
			account = acc
		}
	}
	return account
}

func accountOf(c echo.Context) string {
	a, _ := c.Get(accountKey).(string)
	return a
}

var idempotencyKeyPattern = regexp.MustCompile(`^[\x21-\x7e]{1,255}$`)

// idempotent makes writes that carry an Idempotency-Key safe to retry: the first response
// is stored, a retry with the same key and body gets it again and writes nothing, and the
// same key with a different body is a conflict. The claim on the key travels to the store
// in the request's context, and the store keeps the response in the transaction of the
// write it answers (see respond), so that a write never commits without it.
func (s *Server) idempotent(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		values, sent := req.Header[http.CanonicalHeaderKey("Idempotency-Key")]
		if !sent || req.Method == http.MethodGet || req.Method == http.MethodHead {
			return next(c)
		}
		key := ""
		if len(values) == 1 {
			key = values[0]
		}
		if !idempotencyKeyPattern.MatchString(key) {
			return &httpError{status: http.StatusBadRequest, field: "Idempotency-Key", message: "Idempotency-Key must be one header of 1 to 255 printable ASCII characters"}
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		hash := requestHash(req.Method, req.URL.Path, body)
		ctx := req.Context()

		claim, stored, release, err := s.claimKey(ctx, accountOf(c), key, hash, claimHold(c.Path()))
		if err != nil {
			return err
		}
		defer release()
		if claim == nil {
			c.Response().Header().Set("Idempotent-Replayed", "true")
			switch {
			case len(stored.Body) == 0:
				return c.NoContent(stored.Status)
			case bytes.HasPrefix(stored.Body, []byte("event: ")) || bytes.HasPrefix(stored.Body, []byte(": ")):
				// A streamed turn's events, replayed as they were sent.
				return c.Blob(stored.Status, "text/event-stream", stored.Body)
			}
			return c.JSONBlob(stored.Status, stored.Body)
		}
		c.SetRequest(req.WithContext(model.WithIdempotencyClaim(ctx, claim)))
		rec := &recordingWriter{ResponseWriter: c.Response().Writer}
		c.Response().Writer = rec
		err = next(c)
		status := c.Response().Status
		switch {
		case err == nil && claim.Answered:
		case err == nil && ((status >= 200 && status < 300) || c.Get(finalAnswerKey) == true):
			// A request that wrote nothing (a replay) keeps its response now.
			if cerr := s.idem.CompleteIdempotencyKey(ctx, claim, model.IdempotentResponse{RequestHash: hash, Status: status, Body: rec.body.Bytes()}); cerr != nil {
				s.log.Warn("storing the response of a request that wrote nothing failed; a retry runs it again", zap.Error(cerr))
				s.idem.ReleaseIdempotencyKey(ctx, claim)
			}
		default:
			s.idem.ReleaseIdempotencyKey(ctx, claim)
		}
		return err
	}
}

// claimKey claims an idempotency key for a request, holding it for hold; a turn's key
// (hold > 0) holds instead for a lease this server renews while the turn runs, so that a
// retry after the server died waits seconds, not model.TurnHold. release stops renewing it.
func (s *Server) claimKey(ctx context.Context, account, key, hash string, hold time.Duration) (*model.IdempotencyClaim, model.IdempotentResponse, func(), error) {
	lease := model.RunLease{}
	if hold > 0 && s.leases != nil {
		lease = s.leases.Lease()
	}
	if lease.For > 0 {
		hold = lease.For
	}
	claim, stored, err := s.idem.ClaimIdempotencyKey(ctx, account, key, hash, hold)
	release := func() {}
	if err == nil && claim != nil && lease.For > 0 {
		release = s.leases.HoldKey(claim)
	}
	return claim, stored, release, err
}

// requestHash is what tells a retry of a request from a different request under one
// Idempotency-Key: the method, the path and the body's content. A JSON body is hashed in
// its canonical form (compact, object keys sorted), so that a client that encodes the same
// request again after an outage, with its keys in another order or other spacing, is seen
// to retry it rather than to send a different one. Any other body is hashed as sent.
func requestHash(method, path string, body []byte) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil && !dec.More() {
		if canonical, err := json.Marshal(v); err == nil {
			body = canonical
		}
	}
	sum := sha256.Sum256(append([]byte(method+" "+path+"\n"), body...))
	return hex.EncodeToString(sum[:])
}

// recordingWriter keeps a copy of the response body for the idempotency store.
type recordingWriter struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.body.Write(p)
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer: a streamed turn
// flushes each event and lifts its write deadline.
func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// openAPIPath turns Echo's :param segments into OpenAPI's {param}.
func openAPIPath(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// claimHold is how long the Idempotency-Key of a request to route holds against a retry
// while the request runs: a turn's, as long as its model calls may take (model.TurnHold)
// unless its server renews it under a lease; any other write's, the store's default (0).
func claimHold(route string) time.Duration {
	switch route {
	case "/v1/generations", "/v1/runs/:id/continue", "/v1/discussions", "/v1/runs/:id/subagents", "/v1/runs/:id/resume":
		return model.TurnHold
	}
	return 0
}
