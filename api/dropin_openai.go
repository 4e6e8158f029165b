package api

import (
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ctxgraph/ctxgraph/dropin"
	"github.com/ctxgraph/ctxgraph/dropin/openaiwire"
	"github.com/ctxgraph/ctxgraph/dropin/responseswire"
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
func (o *openAIStream) end(a dropin.Answer) error                 { return o.s.End(a.Run) }
func (o *openAIStream) keepAlive() error {
	_, err := io.WriteString(o.s.W, ": keep-alive\n\n")
	return err
}
func (o *openAIStream) fail(status int, code, message string) error {
	return o.s.Fail(openaiwire.ErrorOf(status, code, message, ""))
}

// responsesVendor renders OpenAI's Responses protocol; model is the request's.
func responsesVendor(requestModel string) vendor {
	created := time.Now().Unix()
	return vendor{
		errorOf: func(status int, code, message, param string) any {
			return openaiwire.ErrorOf(status, code, message, param)
		},
		answer: func(a dropin.Answer) any { return responseswire.Render(a, requestModel, created) },
		stream: func(w io.Writer) vendorStream {
			return &responsesStream{s: &responseswire.Stream{W: w, Model: requestModel, Created: created}}
		},
	}
}

// openAIResponses is POST /v1/openai/responses.
func (s *Server) openAIResponses(c echo.Context) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	r, err := responseswire.Decode(body)
	if err != nil {
		return err
	}
	req, err := responseswire.Translate(r)
	if err != nil {
		return err
	}
	conversation := req.ConversationID
	req = dropInRequest(c, req)
	if conversation != "" {
		// The previous response names the conversation; a header may not name another.
		if req.ConversationID != "" && req.ConversationID != conversation {
			return model.Invalid("previous_response_id", "the previous response is of conversation %s, not %s", conversation, req.ConversationID)
		}
		req.ConversationID = conversation
	}
	return s.dropIn(c, responsesVendor(r.Model), req, r.Stream)
}

// responsesStream writes the Responses protocol's events.
type responsesStream struct{ s *responseswire.Stream }

func (o *responsesStream) start(assemblyID string) error             { return o.s.Start(assemblyID) }
func (o *responsesStream) text(text string) error                    { return o.s.Text(text) }
func (o *responsesStream) toolCall(tc model.RequestedToolCall) error { return o.s.ToolCall(tc) }
func (o *responsesStream) end(a dropin.Answer) error                 { return o.s.End(a) }
func (o *responsesStream) keepAlive() error {
	_, err := io.WriteString(o.s.W, ": keep-alive\n\n")
	return err
}
func (o *responsesStream) fail(status int, code, message string) error { return o.s.Fail(message) }
