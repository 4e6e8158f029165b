package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/ctxgraph/ctxgraph/model"
)

// respond runs a write and answers its result with status (no body for 204). The status
// goes to the store with the request's Idempotency-Key claim, if any, so that the store
// keeps exactly this response in the transaction of the write (cypher's answer).
func respond(c echo.Context, status int, write func(ctx context.Context) (any, error)) error {
	v, err := write(answering(c, status))
	if err != nil {
		return err
	}
	if status == http.StatusNoContent {
		return c.NoContent(status)
	}
	return c.JSON(status, v)
}

// answering returns the request's context, telling its Idempotency-Key claim, if any, the
// status that the write's result answers with.
func answering(c echo.Context, status int) context.Context {
	ctx := c.Request().Context()
	if claim := model.IdempotencyClaimOf(ctx); claim != nil {
		claim.Status = status
	}
	return ctx
}

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
	return respond(c, http.StatusCreated, func(ctx context.Context) (any, error) {
		return s.graph.CreateConversation(ctx, accountOf(c), model.NewConversation{Title: req.Title, Instructions: req.Instructions, At: timeOf(req.At)})
	})
}

// DefaultPageSize and MaxPageSize bound a page of a list; MaxTitleQuery bounds the text a
// list of conversations is searched for in their titles.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
	MaxTitleQuery   = 200
)

func (s *Server) listConversations(c echo.Context) error {
	limit := DefaultPageSize
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPageSize {
			return &httpError{status: http.StatusBadRequest, field: "limit", message: fmt.Sprintf("limit is a number from 1 to %d", MaxPageSize)}
		}
		limit = n
	}
	title := c.QueryParam("title")
	if utf8.RuneCountInString(title) > MaxTitleQuery {
		return &httpError{status: http.StatusBadRequest, field: "title", message: fmt.Sprintf("title is at most %d characters", MaxTitleQuery)}
	}
	page, err := s.graph.Conversations(c.Request().Context(), accountOf(c), model.ConversationQuery{Cursor: c.QueryParam("cursor"), Limit: limit, Title: title})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

func (s *Server) readConversation(c echo.Context) error {
	conv, err := s.graph.Conversation(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, conv)
}

func (s *Server) deleteConversation(c echo.Context) error {
	return respond(c, http.StatusNoContent, func(ctx context.Context) (any, error) {
		return nil, s.graph.DeleteConversation(ctx, accountOf(c), c.Param("id"))
	})
}

func (s *Server) addParticipant(c echo.Context) error {
	var req addParticipantRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	return respond(c, http.StatusCreated, func(ctx context.Context) (any, error) {
		return s.graph.AddParticipant(ctx, accountOf(c), model.NewParticipant{
			ConversationID: c.Param("id"), Kind: req.Kind, Name: req.Name, Provider: req.Provider, Model: req.Model,
			Instructions: req.Instructions, At: timeOf(req.At),
		})
	})
}

func (s *Server) readParticipant(c echo.Context) error {
	p, err := s.graph.Participant(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

func (s *Server) setParticipantInstructions(c echo.Context) error {
	return s.setInstructions(c, func(ctx context.Context, accountID, id, text string) (any, error) {
		return s.graph.SetParticipantInstructions(ctx, accountID, id, text)
	})
}

func (s *Server) setConversationInstructions(c echo.Context) error {
	return s.setInstructions(c, func(ctx context.Context, accountID, id, text string) (any, error) {
		return s.graph.SetConversationInstructions(ctx, accountID, id, text)
	})
}

// setInstructions binds a PATCH of instructions and sets them with set on the id of the path.
func (s *Server) setInstructions(c echo.Context, set func(ctx context.Context, accountID, id, text string) (any, error)) error {
	var req instructionsRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	return respond(c, http.StatusOK, func(ctx context.Context) (any, error) {
		return set(ctx, accountOf(c), c.Param("id"), *req.Instructions)
	})
}

func (s *Server) forkBranch(c echo.Context) error {
	var req forkBranchRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	return respond(c, http.StatusCreated, func(ctx context.Context) (any, error) {
		return s.graph.ForkBranch(ctx, accountOf(c), model.NewBranch{
			ConversationID: c.Param("id"), ParentBranchID: req.ParentBranchID, ForkAfterMessageID: req.ForkAfterMessageID,
			Name: req.Name, At: timeOf(req.At),
		})
	})
}

func (s *Server) appendMessage(c echo.Context) error {
	var req appendMessageRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	return respond(c, http.StatusCreated, func(ctx context.Context) (any, error) {
		return s.graph.AppendMessage(ctx, accountOf(c), model.NewMessage{
			BranchID: c.Param("id"), Role: req.Role, Content: req.Content, ParticipantID: req.ParticipantID, RunID: req.RunID,
			ParentMessageIDs: req.ParentMessageIDs, Visibility: req.Visibility, At: timeOf(req.At),
		})
	})
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
	return respond(c, http.StatusCreated, func(ctx context.Context) (any, error) {
		return s.graph.StartRun(ctx, accountOf(c), model.NewRun{
			BranchID: c.Param("id"), ParticipantID: req.ParticipantID, RuntimeKind: model.RuntimeKind(req.RuntimeKind),
			TriggerMessageID: req.TriggerMessageID, ParentRunID: req.ParentRunID, Provider: req.Provider, Model: req.Model,
			At: timeOf(req.At),
		})
	})
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
	return respond(c, http.StatusOK, func(ctx context.Context) (any, error) {
		return s.graph.FinishRun(ctx, accountOf(c), model.RunEnd{RunID: c.Param("id"), Status: req.Status, At: timeOf(req.At)})
	})
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
	return respond(c, http.StatusCreated, func(ctx context.Context) (any, error) {
		return s.graph.RequestToolCall(ctx, accountOf(c), model.NewToolCall{
			RunID: c.Param("id"), Tool: req.Tool, Arguments: args, CallID: req.CallID, RetryOf: req.RetryOf, At: timeOf(req.At),
		})
	})
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
	var err error
	if in.Retention, err = retentionOf(req.Retention, "retention"); err != nil {
		return err
	}
	return respond(c, http.StatusCreated, func(ctx context.Context) (any, error) {
		return s.graph.RecordToolResult(ctx, accountOf(c), in)
	})
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
	return respond(c, http.StatusCreated, func(ctx context.Context) (any, error) {
		return s.graph.DeriveMemory(ctx, accountOf(c), newMemory(req))
	})
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
	return respond(c, http.StatusNoContent, func(ctx context.Context) (any, error) {
		return nil, s.graph.DeleteArtifact(ctx, accountOf(c), c.Param("id"))
	})
}

// eraseRequest is POST /v1/artifacts/{id}/erase; an empty body erases.
type eraseRequest struct {
	DryRun bool `json:"dryRun"`
}

func (s *Server) eraseArtifact(c echo.Context) error {
	var req eraseRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	return respond(c, http.StatusOK, func(ctx context.Context) (any, error) {
		return s.graph.EraseArtifact(ctx, accountOf(c), c.Param("id"), req.DryRun)
	})
}

func (s *Server) eraseAccount(c echo.Context) error {
	if s.accounts == nil {
		return &httpError{status: http.StatusNotFound, message: "this server erases no accounts"}
	}
	return respond(c, http.StatusOK, func(ctx context.Context) (any, error) {
		// Once begun, an erasure runs to its end even when the client goes away (or the
		// answer outlasts CTXGRAPH_WRITE_TIMEOUT): asked again, it answers what is left.
		return s.accounts.EraseAccount(context.WithoutCancel(ctx), accountOf(c))
	})
}

func (s *Server) recordSkills(c echo.Context) error {
	var req skillsRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	return respond(c, http.StatusCreated, func(ctx context.Context) (any, error) {
		return s.graph.RecordSkills(ctx, accountOf(c), model.NewSkillState{
			RunID: c.Param("id"), LoadedSkills: req.LoadedSkills, ActiveProfiles: req.ActiveProfiles, DirectTools: req.DirectTools,
			At: timeOf(req.At),
		})
	})
}

func (s *Server) recordCheckpoint(c echo.Context) error {
	var req checkpointRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	if isAbsent(req.State) {
		return &httpError{status: http.StatusBadRequest, field: "state", message: "state is required"}
	}
	return respond(c, http.StatusCreated, func(ctx context.Context) (any, error) {
		return s.graph.RecordCheckpoint(ctx, accountOf(c), model.NewCheckpoint{
			RunID: c.Param("id"), State: req.State, AssemblyID: req.AssemblyID, At: timeOf(req.At),
		})
	})
}

func (s *Server) promote(c echo.Context) error {
	var req promoteRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	return respond(c, http.StatusCreated, func(ctx context.Context) (any, error) {
		return s.graph.Promote(ctx, accountOf(c), model.NewPromotion{
			RunID: c.Param("id"), ToolCallIDs: req.ToolCallIDs, ArtifactIDs: req.ArtifactIDs, MemoryIDs: req.MemoryIDs,
			Report: req.Report, ReportPrivacyClass: req.PrivacyClass, ReportSafeSummary: req.SafeSummary, At: timeOf(req.At),
		})
	})
}
