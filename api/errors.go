package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/ctxgraph/ctxgraph/model"
)

// statusOfKind is the one table mapping error kinds to HTTP statuses.
var statusOfKind = map[model.Kind]int{
	model.KindInvalid:     http.StatusBadRequest,
	model.KindNotFound:    http.StatusNotFound,
	model.KindConflict:    http.StatusConflict,
	model.KindForbidden:   http.StatusForbidden,
	model.KindUnavailable: http.StatusServiceUnavailable,
	model.KindInternal:    http.StatusInternalServerError,
	model.KindGone:        http.StatusGone,
}

// codeOfStatus names the statuses that come from the HTTP layer itself, not the domain.
var codeOfStatus = map[int]string{
	http.StatusBadRequest:            "invalid",
	http.StatusUnauthorized:          "unauthenticated",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not_found",
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusConflict:              "conflict",
	http.StatusGone:                  "gone",
	http.StatusRequestEntityTooLarge: "too_large",
	http.StatusServiceUnavailable:    "unavailable",
	http.StatusInternalServerError:   "internal",
	http.StatusBadGateway:            "provider_error",
}

// errorBody is the JSON shape of every error: {"error": {"code", "message", "field"}}.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// httpError is an error raised by the HTTP layer (authentication, routing, body limits).
type httpError struct {
	status  int
	message string
	field   string
}

func (e *httpError) Error() string { return e.message }

// handleError renders any error a handler returns. Domain errors keep their message and
// field; internal causes and driver text are logged with the request id, never sent.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, detail := s.renderError(c, err)
	body, _ := json.Marshal(errorBody{Error: detail})
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.JSONBlob(status, body)
}

// renderError is what every rendering of an error shares: its status and detail, the cause
// of a 5xx logged with the request id, and Retry-After where the error names it or the
// database is unavailable.
func (s *Server) renderError(c echo.Context, err error) (int, errorDetail) {
	status, detail := s.describe(err)
	if status >= 500 {
		s.log.Error("request failed",
			zap.String("requestId", c.Response().Header().Get(echo.HeaderXRequestID)),
			zap.String("method", c.Request().Method), zap.String("path", c.Request().URL.Path),
			zap.Int("status", status), zap.Error(err))
	}
	var me *model.Error
	if errors.As(err, &me) && me.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(me.RetryAfter))
	} else if status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "1")
	}
	return status, detail
}

func (s *Server) describe(err error) (int, errorDetail) {
	var me *model.Error
	if errors.As(err, &me) {
		status := statusOfKind[me.Kind]
		if status == 0 {
			status = http.StatusInternalServerError
		}
		msg := me.Message
		if status == http.StatusInternalServerError {
			msg = "internal error"
		}
		return status, errorDetail{Code: string(me.Kind), Message: msg, Field: me.Field}
	}
	var he *httpError
	if errors.As(err, &he) {
		return he.status, errorDetail{Code: codeOf(he.status), Message: he.message, Field: he.field}
	}
	var ee *echo.HTTPError
	if errors.As(err, &ee) && ee.Code == http.StatusRequestEntityTooLarge {
		return ee.Code, errorDetail{Code: codeOf(ee.Code),
			Message: fmt.Sprintf("the request body is larger than this server's limit of %s (CTXGRAPH_MAX_BODY)", s.maxBody)}
	}
	if errors.As(err, &ee) {
		msg := http.StatusText(ee.Code)
		if m, ok := ee.Message.(string); ok && ee.Code < 500 {
			msg = m
		}
		return ee.Code, errorDetail{Code: codeOf(ee.Code), Message: msg}
	}
	return http.StatusInternalServerError, errorDetail{Code: "internal", Message: "internal error"}
}

func codeOf(status int) string {
	if code, ok := codeOfStatus[status]; ok {
		return code
	}
	return http.StatusText(status)
}
