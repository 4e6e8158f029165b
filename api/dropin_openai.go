package api

import (
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ctxgraph/ctxgraph/dropin"
	"github.com/ctxgraph/ctxgraph/dropin/openaiwire"
	"github.com/ctxgraph/ctxgraph/model"
)

// openAIVendor renders OpenAI's Chat Completions protocol; model is the request's.
func openAIVendor(requestModel string, includeUsage bool) vendor {
	created := time.Now().Unix()
	return vendor{
		errorOf: func(status int, code, message, param string) any {
			return openaiwire.ErrorOf(status, code, message, param)
		},
		answer: func(a dropin.Answer) any { return openaiwire.Render(a, requestModel, created) },
		stream: func(w io.Writer) vendorStream {
			return &openAIStream{s: &openaiwire.Stream{W: w, Model: requestModel, Created: created, IncludeUsage: includeUsage}}
		},
	}
}

// openAIErrors renders errors before the request's model is known.
var openAIErrors = openAIVendor("", false)

// openAIChat is POST /v1/openai/chat/completions.
func (s *Server) openAIChat(c echo.Context) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	r, err := openaiwire.Decode(body)
	if err != nil {
		return err
	}
	req, err := openaiwire.Translate(r)
	if err != nil {
		return err
	}
	includeUsage := r.StreamOptions != nil && r.StreamOptions.IncludeUsage
	return s.dropIn(c, openAIVendor(r.Model, includeUsage), dropInRequest(c, req), r.Stream)
}

// openAIModels is GET /v1/openai/models: the configured providers' models.
func (s *Server) openAIModels(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": openaiwire.Models(s.providerInfo)})
}

// openAIUnknown answers a path under the OpenAI base URL that ctxgraph does not serve.
func openAIUnknown(c echo.Context) error {
	return &httpError{status: http.StatusNotFound, message: "ctxgraph serves chat/completions and models under this base URL, not " + c.Request().Method + " " + c.Request().URL.Path}
}

// openAIStream writes OpenAI's chunks.
type openAIStream struct{ s *openaiwire.Stream }

func (o *openAIStream) start(assemblyID string) error             { return o.s.Start(assemblyID) }
func (o *openAIStream) text(text string) error                    { return o.s.Text(text) }
func (o *openAIStream) toolCall(tc model.RequestedToolCall) error { return o.s.ToolCall(tc) }
func (o *openAIStream) end(r model.RunResult) error               { return o.s.End(r) }
func (o *openAIStream) keepAlive() error {
	_, err := io.WriteString(o.s.W, ": keep-alive\n\n")
	return err
}
func (o *openAIStream) fail(status int, code, message string) error {
	return o.s.Fail(openaiwire.ErrorOf(status, code, message, ""))
}
