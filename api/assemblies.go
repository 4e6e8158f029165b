package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ctxgraph/ctxgraph/model"
)

func (s *Server) assemble(c echo.Context) error {
	var req assemblyRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	in := model.AssemblyRequest{
		BranchID: req.BranchID, ParticipantID: req.ParticipantID, RunID: req.RunID, RuntimeKind: model.RuntimeKind(req.RuntimeKind),
		Provider: req.Provider, Model: req.Model, TokenBudget: derefInt(req.TokenBudget), ExactArtifactIDs: req.ExactArtifactIDs,
		PolicyVersion: req.PolicyVersion, Trace: req.Trace,
	}
	if t := timeOf(req.Now); t != nil {
		in.Now = *t
	}
	if t := timeOf(req.AsOf); t != nil {
		in.AsOf = *t
	}
	if in.ExactArtifactIDs == nil {
		in.ExactArtifactIDs = []string{}
	}
	a, record, err := s.assembler.Assemble(answering(c, http.StatusCreated), accountOf(c), in)
	if err != nil {
		return err
	}
	if body, ok := assemblyJSON(a, record); ok {
		return c.JSONBlob(http.StatusCreated, body)
	}
	return c.JSON(http.StatusCreated, a)
}

func (s *Server) readAssembly(c echo.Context) error {
	a, err := s.assemblies.Assembly(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

func (s *Server) explain(c echo.Context) error {
	ref := c.QueryParam("ref")
	if ref == "" {
		return &httpError{status: http.StatusBadRequest, field: "ref", message: "ref is required: the id of the record to explain"}
	}
	ex, err := s.assembler.Explain(c.Request().Context(), accountOf(c), c.Param("id"), ref)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ex)
}

func (s *Server) replay(c echo.Context) error {
	rep, err := s.assembler.Replay(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}

func (s *Server) diff(c echo.Context) error {
	var req diffRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	d, err := s.assembler.Diff(c.Request().Context(), accountOf(c), c.Param("id"), req.PolicyVersion)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

// errNoModelCalls answers the model-call routes of a server built without a reader of them.
var errNoModelCalls = &httpError{status: http.StatusServiceUnavailable, message: "the model calls of runs are not served here"}

func (s *Server) runModelCalls(c echo.Context) error {
	if s.modelCalls == nil {
		return errNoModelCalls
	}
	calls, err := s.modelCalls.RunModelCalls(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, calls)
}

// RequestSha256Header carries, with a request body a model call sent, the sha256 recorded
// when it was sent: a reader hashes the body and compares.
const RequestSha256Header = "X-Ctxgraph-Request-Sha256"

// sentRequest answers the exact bytes a model call sent, as they were sent.
func (s *Server) sentRequest(c echo.Context) error {
	if s.modelCalls == nil {
		return errNoModelCalls
	}
	req, err := s.modelCalls.SentRequest(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.Response().Header().Set(RequestSha256Header, req.RequestSha256)
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, req.Body)
}

// derefInt is *p, or 0 (absent) when p is nil.
func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
