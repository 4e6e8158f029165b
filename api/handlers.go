package api

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ctxgraph/ctxgraph/model"
)

// isAbsent reports whether an optional JSON value was left out or sent as null.
func isAbsent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

func (s *Server) createConversation(c echo.Context) error {
	var req createConversationRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	conv, err := s.graph.CreateConversation(c.Request().Context(), accountOf(c), model.NewConversation{Title: req.Title, At: timeOf(req.At)})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, conv)
}

func (s *Server) readConversation(c echo.Context) error {
	conv, err := s.graph.Conversation(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, conv)
}

func (s *Server) deleteConversation(c echo.Context) error {
	if err := s.graph.DeleteConversation(c.Request().Context(), accountOf(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) addParticipant(c echo.Context) error {
	var req addParticipantRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	p, err := s.graph.AddParticipant(c.Request().Context(), accountOf(c), model.NewParticipant{
		ConversationID: c.Param("id"), Kind: req.Kind, Name: req.Name, Provider: req.Provider, Model: req.Model, At: timeOf(req.At),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, p)
}

func (s *Server) forkBranch(c echo.Context) error {
	var req forkBranchRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	b, err := s.graph.ForkBranch(c.Request().Context(), accountOf(c), model.NewBranch{
		ConversationID: c.Param("id"), ParentBranchID: req.ParentBranchID, ForkAfterMessageID: req.ForkAfterMessageID,
		Name: req.Name, At: timeOf(req.At),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, b)
}

func (s *Server) appendMessage(c echo.Context) error {
	var req appendMessageRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	m, err := s.graph.AppendMessage(c.Request().Context(), accountOf(c), model.NewMessage{
		BranchID: c.Param("id"), Role: req.Role, Content: req.Content, ParticipantID: req.ParticipantID, RunID: req.RunID,
		ParentMessageIDs: req.ParentMessageIDs, Visibility: req.Visibility, At: timeOf(req.At),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, m)
}

func (s *Server) history(c echo.Context) error {
	h, err := s.graph.History(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h)
}

func (s *Server) startRun(c echo.Context) error {
	var req startRunRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	r, err := s.graph.StartRun(c.Request().Context(), accountOf(c), model.NewRun{
		BranchID: c.Param("id"), ParticipantID: req.ParticipantID, RuntimeKind: req.RuntimeKind,
		TriggerMessageID: req.TriggerMessageID, ParentRunID: req.ParentRunID, Provider: req.Provider, Model: req.Model,
		At: timeOf(req.At),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, r)
}

func (s *Server) readRun(c echo.Context) error {
	r, err := s.graph.Run(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

func (s *Server) finishRun(c echo.Context) error {
	var req finishRunRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	r, err := s.graph.FinishRun(c.Request().Context(), accountOf(c), model.RunEnd{RunID: c.Param("id"), Status: req.Status, At: timeOf(req.At)})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

func (s *Server) requestToolCall(c echo.Context) error {
	var req toolCallRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	args := req.Arguments
	if isAbsent(args) {
		args = json.RawMessage("{}")
	}
	call, err := s.graph.RequestToolCall(c.Request().Context(), accountOf(c), model.NewToolCall{
		RunID: c.Param("id"), Tool: req.Tool, Arguments: args, CallID: req.CallID, RetryOf: req.RetryOf, At: timeOf(req.At),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, call)
}

func (s *Server) readToolCall(c echo.Context) error {
	call, err := s.graph.ToolCall(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, call)
}

func (s *Server) recordToolResult(c echo.Context) error {
	var req toolResultRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	in := model.ToolResult{
		ToolCallID: c.Param("id"), Status: req.Status, Retryable: req.Retryable, PrivacyClass: req.PrivacyClass,
		Visibility: req.Visibility, SharedWithParticipants: req.SharedWithParticipants, ToolVersion: req.ToolVersion,
		At: timeOf(req.At),
	}
	if !isAbsent(req.Result) {
		in.Result = req.Result
	}
	if req.Error != nil {
		in.Error = &model.ToolError{Code: req.Error.Code, Message: req.Error.Message}
	}
	for _, m := range req.Memories {
		in.Memories = append(in.Memories, newMemory(m))
	}
	out, err := s.graph.RecordToolResult(c.Request().Context(), accountOf(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func newMemory(m memoryRequest) model.NewMemory {
	in := model.NewMemory{
		DerivedFrom: m.DerivedFrom, Locators: m.Locators, Summary: m.Summary, SafeSummary: m.SafeSummary,
		Confidence: m.Confidence, ConfidenceSource: m.ConfidenceSource, Rationale: m.Rationale, Limitations: m.Limitations,
		FreshnessClass: m.FreshnessClass, ObservedAt: timeOf(m.ObservedAt), StaleAfter: timeOf(m.StaleAfter),
		RevalidateWith: m.RevalidateWith, Supersedes: m.Supersedes, ConflictsWith: m.ConflictsWith,
		PrivacyClass: m.PrivacyClass, Visibility: m.Visibility, SharedWithParticipants: m.SharedWithParticipants,
		At: timeOf(m.At),
	}
	if !isAbsent(m.Data) {
		in.Data = m.Data
	}
	return in
}

func (s *Server) deriveMemory(c echo.Context) error {
	var req memoryRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	if len(req.DerivedFrom) == 0 {
		return &httpError{status: http.StatusBadRequest, field: "derivedFrom", message: "derivedFrom is required: the artifact ids the memory is derived from"}
	}
	m, err := s.graph.DeriveMemory(c.Request().Context(), accountOf(c), newMemory(req))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, m)
}

func (s *Server) readMemory(c echo.Context) error {
	m, err := s.graph.Memory(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, m)
}

func (s *Server) readArtifact(c echo.Context) error {
	a, err := s.graph.Artifact(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

func (s *Server) readArtifactRaw(c echo.Context) error {
	raw, err := s.graph.ArtifactRaw(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, raw)
}

func (s *Server) deleteArtifact(c echo.Context) error {
	if err := s.graph.DeleteArtifact(c.Request().Context(), accountOf(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) recordSkills(c echo.Context) error {
	var req skillsRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	sk, err := s.graph.RecordSkills(c.Request().Context(), accountOf(c), model.NewSkillState{
		RunID: c.Param("id"), LoadedSkills: req.LoadedSkills, ActiveProfiles: req.ActiveProfiles, DirectTools: req.DirectTools,
		At: timeOf(req.At),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, sk)
}

func (s *Server) recordCheckpoint(c echo.Context) error {
	var req checkpointRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	if isAbsent(req.State) {
		return &httpError{status: http.StatusBadRequest, field: "state", message: "state is required"}
	}
	cp, err := s.graph.RecordCheckpoint(c.Request().Context(), accountOf(c), model.NewCheckpoint{
		RunID: c.Param("id"), State: req.State, AssemblyID: req.AssemblyID, At: timeOf(req.At),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, cp)
}

func (s *Server) promote(c echo.Context) error {
	var req promoteRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	p, err := s.graph.Promote(c.Request().Context(), accountOf(c), model.NewPromotion{
		RunID: c.Param("id"), ToolCallIDs: req.ToolCallIDs, ArtifactIDs: req.ArtifactIDs, MemoryIDs: req.MemoryIDs,
		Report: req.Report, At: timeOf(req.At),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, p)
}
