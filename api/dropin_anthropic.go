package api

import (
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ctxgraph/ctxgraph/dropin"
	"github.com/ctxgraph/ctxgraph/dropin/anthropicwire"
	"github.com/ctxgraph/ctxgraph/model"
)

// anthropicVendor renders Anthropic's Messages protocol; model is the request's.
func anthropicVendor(requestModel string) vendor {
	return vendor{
		errorOf: func(status int, _, message, param string) any {
			return anthropicwire.ErrorOf(status, message, param)
		},
		answer: func(a dropin.Answer) any { return anthropicwire.Render(a, requestModel) },
		stream: func(w io.Writer) vendorStream {
			return &anthropicStream{s: &anthropicwire.Stream{W: w, Model: requestModel}}
		},
	}
}

// anthropicErrors renders errors before the request's model is known.
var anthropicErrors = anthropicVendor("")

// anthropicMessages is POST /v1/anthropic/v1/messages.
func (s *Server) anthropicMessages(c echo.Context) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	r, err := anthropicwire.Decode(body)
	if err != nil {
		return err
	}
	req, err := anthropicwire.Translate(r)
	if err != nil {
		return err
	}
	return s.dropIn(c, anthropicVendor(r.Model), dropInRequest(c, req), r.Stream)
}

// anthropicUnknown answers a path under the Anthropic base URL that ctxgraph does not serve.
func anthropicUnknown(c echo.Context) error {
	return &httpError{status: http.StatusNotFound, message: "ctxgraph serves v1/messages under this base URL, not " + c.Request().Method + " " + c.Request().URL.Path}
}

// anthropicStream writes Anthropic's events.
type anthropicStream struct{ s *anthropicwire.Stream }

func (a *anthropicStream) start(assemblyID string) error             { return a.s.Start(assemblyID) }
func (a *anthropicStream) text(text string) error                    { return a.s.Text(text) }
func (a *anthropicStream) toolCall(tc model.RequestedToolCall) error { return a.s.ToolCall(tc) }
func (a *anthropicStream) end(ans dropin.Answer) error               { return a.s.End(ans.Run) }
func (a *anthropicStream) keepAlive() error                          { return a.s.Ping() }
func (a *anthropicStream) fail(status int, _, message string) error {
	return a.s.Fail(anthropicwire.ErrorOf(status, message, ""))
}
