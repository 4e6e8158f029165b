package cypher

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

// The statements of runs.
var (
	startRunQuery   = newQuery[startRunParams, runRow]("StartRun")
	finishRun       = newQuery[finishRunParams, runRow]("FinishRun")
	recordModelCall = newQuery[modelCallParams, runRow]("RecordModelCall")
	childRuns       = newQuery[runParams, struct {
		C props `col:"c"`
	}]("ChildRuns")
	runToolCalls = newQuery[runParams, struct {
		T           props    `col:"t"`
		ArtifactIDs []string `col:"artifactIds"`
	}]("RunToolCalls")
	claimRunStep   = newQuery[claimStepParams, claimStepRow]("ClaimRunStep")
	releaseRunStep = newQuery[releaseStepParams, noRows]("ReleaseRunStep")
)

type startRunParams struct {
	ID               string    `param:"id"`
	AccountID        string    `param:"accountId"`
	BranchID         string    `param:"branchId"`
	ParticipantID    string    `param:"participantId"`
	RuntimeKind      string    `param:"runtimeKind"`
	Provider         string    `param:"provider,null"`
	Model            string    `param:"model,null"`
	TriggerMessageID string    `param:"triggerMessageId,null"`
	ParentRunID      string    `param:"parentRunId,null"`
	Tools            string    `param:"tools,null"`
	ToolChoice       string    `param:"toolChoice,null"`
	LeaseUntil       time.Time `param:"leaseUntil,null"`
	LeaseHolder      string    `param:"leaseHolder,null"`
	CreatedAt        time.Time `param:"createdAt"`
	RecordedAt       time.Time `param:"recordedAt"`
}

type runRow struct {
	R props `col:"r"`
}

type finishRunParams struct {
	ID         string    `param:"id"`
	AccountID  string    `param:"accountId"`
	Status     string    `param:"status"`
	EndedAt    time.Time `param:"endedAt"`
	RecordedAt time.Time `param:"recordedAt"`
}

type modelCallParams struct {
	RunID          string    `param:"runId"`
	AccountID      string    `param:"accountId"`
	AssemblyID     string    `param:"assemblyId,null"`
	PolicyVersion  string    `param:"policyVersion,null"`
	RequestSHA256  string    `param:"requestSha256,null"`
	RequestBody    string    `param:"requestBody,null"`
	ResponseID     string    `param:"responseId,null"`
	ResponseModel  string    `param:"responseModel,null"`
	FinishReason   string    `param:"finishReason,null"`
	InputTokens    int64     `param:"inputTokens"`
	OutputTokens   int64     `param:"outputTokens"`
	LatencyMs      float64   `param:"latencyMs"`
	Status         string    `param:"status,null"`
	EndedAt        time.Time `param:"endedAt"`
	RecordedAt     time.Time `param:"recordedAt"`
	ErrorCode      *string   `param:"errorCode"`
	ErrorMessage   *string   `param:"errorMessage"`
	ProviderStatus int64     `param:"providerStatus,null"`
	Reoffer        bool      `param:"reoffer"`
	KeepLease      bool      `param:"keepLease"`
	Tools          string    `param:"tools,null"`
	ToolChoice     string    `param:"toolChoice,null"`
}

// runParams name a run of an account.
type runParams struct {
	AccountID string `param:"accountId"`
	RunID     string `param:"runId"`
}

type claimStepParams struct {
	AccountID   string    `param:"accountId"`
	RunID       string    `param:"runId"`
	Claim       string    `param:"claim"`
	Now         time.Time `param:"now"`
	StaleBefore time.Time `param:"staleBefore"`
	LeaseUntil  time.Time `param:"leaseUntil,null"`
	LeaseHolder string    `param:"leaseHolder,null"`
	// Continuing makes it a continue's claim.
	Continuing bool `param:"continuing"`
	// ParticipantID is the run's, Since the revisions of the assembler's copy (nil for none):
	// what the statement reads for the step's first assembly.
	ParticipantID string `param:"participantId"`
	Since         any    `param:"since"`
}

// claimStepRow is a row of ClaimRunStep: a row of ConversationRecords, the head row with
// the run, whether it was claimed, whether it was free and its calls without a result.
type claimStepRow struct {
	Kind    string   `col:"kind"`
	Record  props    `col:"record"`
	R       props    `col:"r"`
	Claimed bool     `col:"claimed"`
	Free    bool     `col:"free"`
	Open    []string `col:"open"`
}

type releaseStepParams struct {
	AccountID string `param:"accountId"`
	RunID     string `param:"runId"`
	Claim     string `param:"claim"`
}

// StartRun starts a run on a branch.
func (s *Store) StartRun(ctx context.Context, accountID string, in model.NewRun) (model.Run, error) {
	return writeTx(ctx, s, func(t *tx) (model.Run, error) {
		r, err := t.startRun(accountID, in)
		if err != nil {
			return model.Run{}, err
		}
		return r, t.answer(r, r.ConversationID, "")
	})
}

// startRun starts a run inside t (StartRun).
func (t *tx) startRun(accountID string, in model.NewRun) (model.Run, error) {
	createdAt, recordedAt := t.store.stamps(in.At)
	lin, err := t.branchLineage(accountID, in.BranchID)
	if err != nil {
		return model.Run{}, err
	}
	refs, err := t.locate(accountID, in.ParticipantID, in.TriggerMessageID, in.ParentRunID)
	if err != nil {
		return model.Run{}, err
	}
	if _, err := sameConversation(refs, lin.ConversationID, "Participant", "participantId", in.ParticipantID); err != nil {
		return model.Run{}, err
	}
	if in.TriggerMessageID != "" {
		m, err := sameConversation(refs, lin.ConversationID, "Message", "triggerMessageId", in.TriggerMessageID)
		if err != nil {
			return model.Run{}, err
		}
		if !lin.Contains(m.branchID(), m.seq()) {
			return model.Run{}, model.Invalid("triggerMessageId", "message %q is not in the lineage of branch %q", in.TriggerMessageID, in.BranchID)
		}
	}
	if in.ParentRunID != "" {
		if _, err := sameConversation(refs, lin.ConversationID, "ModelRun", "parentRunId", in.ParentRunID); err != nil {
			return model.Run{}, err
		}
	}
	tools, err := toolsText(in.Tools)
	if err != nil {
		return model.Run{}, err
	}
	leaseUntil, holder := t.store.leaseEnd(in.Lease)
	row, found, err := startRunQuery.one(t, startRunParams{
		ID: newID("run"), AccountID: accountID, BranchID: in.BranchID, ParticipantID: in.ParticipantID,
		RuntimeKind: string(in.RuntimeKind), Provider: in.Provider, Model: in.Model,
		TriggerMessageID: in.TriggerMessageID, ParentRunID: in.ParentRunID, Tools: tools, ToolChoice: in.ToolChoice,
		LeaseUntil: leaseUntil, LeaseHolder: holder, CreatedAt: createdAt, RecordedAt: recordedAt,
	})
	if err != nil {
		return model.Run{}, err
	}
	if !found {
		return model.Run{}, model.NotFound("branch", in.BranchID)
	}
	return runOf(row.R), nil
}

// Run reads a run.
func (s *Store) Run(ctx context.Context, accountID, id string) (model.Run, error) {
	rec, err := s.requireRecord(ctx, accountID, "ModelRun", id)
	if err != nil {
		return model.Run{}, err
	}
	run := runOf(rec.Props)
	s.placeRun(accountID, run)
	return run, nil
}

// FinishRun ends a running run.
func (s *Store) FinishRun(ctx context.Context, accountID string, in model.RunEnd) (model.Run, error) {
	endedAt, recordedAt := s.stamps(in.At)
	return writeTx(ctx, s, func(t *tx) (model.Run, error) {
		current, err := t.require(accountID, "ModelRun", "", in.RunID)
		if err != nil {
			return model.Run{}, err
		}
		row, found, err := finishRun.one(t, finishRunParams{
			ID: in.RunID, AccountID: accountID, Status: in.Status, EndedAt: endedAt, RecordedAt: recordedAt,
		})
		if err != nil {
			return model.Run{}, err
		}
		if !found {
			// Read again: the statement waited for any end of the run written meanwhile.
			if current, err = t.require(accountID, "ModelRun", "", in.RunID); err != nil {
				return model.Run{}, err
			}
			return model.Run{}, model.Conflict("run %q has already ended with status %s", in.RunID, current.Props.str("status"))
		}
		r := runOf(row.R)
		return r, t.answer(r, r.ConversationID, "")
	})
}

// RecordModelCall records one model call of the generation path on its assembly and run,
// ending the run when in.Status is set; KindConflict when the run has already ended.
func (s *Store) RecordModelCall(ctx context.Context, accountID string, in model.ModelCallRecord) (model.Run, error) {
	return writeTx(ctx, s, func(t *tx) (model.Run, error) { return t.recordModelCall(accountID, in) })
}

// BeginTurn writes the start of a turn in one transaction: the user message, when there is
// one, and the runs it triggers; and, when ctx carries a generation's Idempotency-Key claim
// (model.WithTurnKey), the turn's ids under the key.
func (s *Store) BeginTurn(ctx context.Context, accountID string, msg *model.NewMessage, runs []model.NewRun) (model.Message, []model.Run, error) {
	if oneStatementTurn(msg, runs) {
		return s.beginTurn(ctx, accountID, msg, runs)
	}
	type begun struct {
		msg  model.Message
		runs []model.Run
	}
	b, err := writeTx(ctx, s, func(t *tx) (begun, error) {
		var out begun
		if msg != nil {
			m, err := t.appendMessage(accountID, *msg)
			if err != nil {
				return begun{}, err
			}
			out.msg = m
		}
		for _, in := range runs {
			if msg != nil {
				in.TriggerMessageID = out.msg.ID
			}
			r, err := t.startRun(accountID, in)
			if err != nil {
				return begun{}, err
			}
			out.runs = append(out.runs, r)
		}
		if claim := model.TurnKeyOf(ctx); claim != nil {
			turn := model.KeyedTurn{UserMessageID: out.msg.ID}
			for _, r := range out.runs {
				turn.RunIDs = append(turn.RunIDs, r.ID)
			}
			if err := t.recordKeyedTurn(claim, turn); err != nil {
				return begun{}, err
			}
		}
		return out, nil
	})
	return b.msg, b.runs, err
}

// beginTurnParams are BeginTurn's: a user message (Content nil for none) and the runs.
type beginTurnParams struct {
	BranchID       string           `param:"branchId"`
	AccountID      string           `param:"accountId"`
	MessageID      string           `param:"messageId"`
	Content        *string          `param:"content"`
	Visibility     string           `param:"visibility"`
	BaselineTokens int64            `param:"baselineTokens"`
	CreatedAt      time.Time        `param:"createdAt"`
	RecordedAt     time.Time        `param:"recordedAt"`
	Runs           []map[string]any `param:"runs"`
	// ParticipantID and RunID are the first run's, Since the revisions of the assembler's
	// copy of the conversation (nil when it holds none): what the statement reads for the
	// run's first assembly (ConversationRecords' parameters).
	ParticipantID string `param:"participantId"`
	RunID         string `param:"runId"`
	Since         any    `param:"since"`
	// KeyID and Claim are a keyed turn's Idempotency-Key and the request's hold on it
	// (null for a turn without a key).
	KeyID string `param:"keyId,null"`
	Claim string `param:"claim,null"`
}

// beginTurnRow is a row of BeginTurn: a row of ConversationRecords, the head row with the
// message and runs.
type beginTurnRow struct {
	Kind   string `col:"kind"`
	Record props  `col:"record"`
	M      props  `col:"m"`
	Runs   []any  `col:"runs"`
}

var beginTurn = newQuery[beginTurnParams, beginTurnRow]("BeginTurn")

// oneStatementTurn says whether a turn begins as the generation path begins one: a user
// message replying to the latest message of the lineage (or none), and runs it triggers.
func oneStatementTurn(msg *model.NewMessage, runs []model.NewRun) bool {
	if len(runs) == 0 || (msg != nil && (len(msg.ParentMessageIDs) > 0 || msg.Role != "user" || msg.ParticipantID != "" || msg.RunID != "")) {
		return false
	}
	for _, r := range runs {
		if r.ParentRunID != "" || r.TriggerMessageID != "" || r.BranchID != runs[0].BranchID {
			return false
		}
	}
	return msg == nil || msg.BranchID == runs[0].BranchID
}

// beginTurn is BeginTurn's one statement (BeginTurn.cypher): the generation path resolved
// the participants from the branch's conversation, and the message replies to the latest
// of the lineage, so nothing is read first. A keyed turn records its ids under the key in
// the same statement, which writes nothing once a retry has taken the key over (and then
// reads the key, to say so).
func (s *Store) beginTurn(ctx context.Context, accountID string, msg *model.NewMessage, runs []model.NewRun) (model.Message, []model.Run, error) {
	var at *time.Time
	if msg != nil {
		at = msg.At
	}
	createdAt, recordedAt := s.stamps(at)
	p := beginTurnParams{BranchID: runs[0].BranchID, AccountID: accountID, MessageID: newID("msg"),
		Visibility: model.DefaultMessageVisibility, CreatedAt: createdAt, RecordedAt: recordedAt}
	if msg != nil {
		content := msg.Content
		p.Content, p.BaselineTokens = &content, s.baselineTokens("user", content, "")
		if msg.Visibility != "" {
			p.Visibility = msg.Visibility
		}
	}
	for _, r := range runs {
		tools, err := toolsText(r.Tools)
		if err != nil {
			return model.Message{}, nil, err
		}
		leaseUntil, holder := s.leaseEnd(r.Lease)
		run := map[string]any{"id": newID("run"), "participantId": r.ParticipantID, "runtimeKind": string(r.RuntimeKind),
			"provider": nullable(r.Provider), "model": nullable(r.Model), "tools": nullable(tools), "toolChoice": nullable(r.ToolChoice),
			"leaseUntil": nil, "leaseHolder": nullable(holder)}
		if !leaseUntil.IsZero() {
			run["leaseUntil"] = leaseUntil
		}
		p.Runs = append(p.Runs, run)
	}
	p.ParticipantID, p.RunID = runs[0].ParticipantID, p.Runs[0]["id"].(string)
	// The assembler's copy, to bring up to date for the run's first assembly: one run's.
	var tc turnCopy
	if len(runs) == 1 {
		tc, p.Since = s.turnCopy(accountID, p.BranchID)
	}
	type begun struct {
		msg     model.Message
		runs    []model.Run
		records []recordRow
	}
	read := func(rows []beginTurnRow) (begun, error) {
		out := begun{records: make([]recordRow, len(rows))}
		for i, row := range rows {
			out.records[i] = recordRow{Kind: row.Kind, Record: row.Record}
			if row.Kind != "head" {
				continue
			}
			if row.M != nil {
				out.msg = messageOf(row.M)
			}
			for _, r := range row.Runs {
				out.runs = append(out.runs, runOf(asProps(r)))
			}
		}
		if len(out.runs) != len(runs) {
			return begun{}, model.NotFound("branch", p.BranchID)
		}
		return out, nil
	}
	claim := model.TurnKeyOf(ctx)
	if claim != nil {
		p.KeyID, p.Claim = idempotencyID(claim.AccountID, claim.Key), claim.Claim
	}
	var b begun
	rows, err := beginTurn.autoAll(ctx, s, neo4j.AccessModeWrite, p)
	if err == nil {
		b, err = read(rows)
	}
	if claim != nil && len(rows) == 0 && model.KindOf(err) == model.KindNotFound {
		// Nothing was written: the branch is not the account's, or a retry took the key.
		err = s.keyHeldOr(ctx, claim, err)
	}
	if err == nil {
		// Committed: what the statement read is the conversation as of the turn.
		tc.keep(s, accountID, p.RunID, b.records)
		for _, r := range b.runs {
			s.placeRun(accountID, r)
		}
	}
	return b.msg, b.runs, err
}

// finishTurnParams are FinishTurn's: an assistant message and a completed model call.
type finishTurnParams struct {
	ID               string    `param:"id"`
	RunID            string    `param:"runId"`
	AccountID        string    `param:"accountId"`
	Content          string    `param:"content"`
	ParentMessageIDs []string  `param:"parentMessageIds"`
	Visibility       string    `param:"visibility"`
	BaselineTokens   int64     `param:"baselineTokens"`
	CreatedAt        time.Time `param:"createdAt"`
	RecordedAt       time.Time `param:"recordedAt"`
	AssemblyID       string    `param:"assemblyId,null"`
	PolicyVersion    string    `param:"policyVersion,null"`
	RequestSHA256    string    `param:"requestSha256,null"`
	RequestBody      string    `param:"requestBody,null"`
	ResponseID       string    `param:"responseId,null"`
	ResponseModel    string    `param:"responseModel,null"`
	FinishReason     string    `param:"finishReason,null"`
	InputTokens      int64     `param:"inputTokens"`
	OutputTokens     int64     `param:"outputTokens"`
	LatencyMs        float64   `param:"latencyMs"`
	Status           string    `param:"status"`
	EndedAt          time.Time `param:"endedAt"`
	Reoffer          bool      `param:"reoffer"`
	Tools            string    `param:"tools,null"`
	ToolChoice       string    `param:"toolChoice,null"`
}

var finishTurn = newQuery[finishTurnParams, messageRow]("FinishTurn")

// FinishTurn records a completed model call in one transaction: the assistant message
// GENERATED_BY the run, and the call on its assembly and run (RecordModelCall). An answer
// of the run's own participant that replies to one message, the generation path's, is one
// auto-commit statement (FinishTurn.cypher): its run, branch and parent are the serving
// server's own, so nothing of them is read first.
func (s *Store) FinishTurn(ctx context.Context, accountID string, msg model.NewMessage, in model.ModelCallRecord) (model.Message, error) {
	if len(msg.ParentMessageIDs) == 1 && msg.RunID == in.RunID && msg.Role == "assistant" && msg.Speaker != "" && in.Error == nil && in.Status != "" {
		return s.finishTurn(ctx, accountID, msg, in)
	}
	return writeTx(ctx, s, func(t *tx) (model.Message, error) {
		m, err := t.appendMessage(accountID, msg)
		if err != nil {
			return model.Message{}, err
		}
		_, err = t.recordModelCall(accountID, in)
		return m, err
	})
}

// finishTurn is FinishTurn's one statement.
func (s *Store) finishTurn(ctx context.Context, accountID string, msg model.NewMessage, in model.ModelCallRecord) (model.Message, error) {
	createdAt, recordedAt := s.stamps(msg.At)
	at := in.At
	if at.IsZero() {
		at = recordedAt
	}
	visibility := msg.Visibility
	if visibility == "" {
		visibility = model.DefaultMessageVisibility
	}
	p := finishTurnParams{
		ID: newID("msg"), RunID: in.RunID, AccountID: accountID, Content: msg.Content, ParentMessageIDs: msg.ParentMessageIDs,
		Visibility: visibility, BaselineTokens: s.baselineTokens("assistant", msg.Content, model.ChatName(msg.Speaker)),
		CreatedAt: createdAt, RecordedAt: recordedAt,
		AssemblyID: in.AssemblyID, PolicyVersion: in.PolicyVersion, RequestSHA256: in.RequestSHA256, RequestBody: string(in.RequestBody),
		ResponseID: in.ResponseID, ResponseModel: in.ResponseModel, FinishReason: in.FinishReason,
		InputTokens: int64(in.Usage.InputTokens), OutputTokens: int64(in.Usage.OutputTokens),
		LatencyMs: float64(in.Latency.Microseconds()) / 1000, Status: in.Status, EndedAt: at.UTC(),
	}
	if in.Offer != nil {
		tools, err := toolsText(in.Offer.Tools)
		if err != nil {
			return model.Message{}, err
		}
		p.Reoffer, p.Tools, p.ToolChoice = true, tools, in.Offer.ToolChoice
	}
	row, found, err := finishTurn.autoOne(ctx, s, neo4j.AccessModeWrite, p)
	if err != nil {
		return model.Message{}, err
	}
	if !found {
		// Only now is the run read, to say whether it is unknown or has ended.
		if _, err := s.requireRecord(ctx, accountID, "ModelRun", in.RunID); err != nil {
			return model.Message{}, err
		}
		return model.Message{}, model.Conflict("run %q has already ended", in.RunID)
	}
	return messageOf(row.M), nil
}

func (t *tx) recordModelCall(accountID string, in model.ModelCallRecord) (model.Run, error) {
	s := t.store
	at := in.At
	if at.IsZero() {
		at = s.Now().UTC()
	}
	params := modelCallParams{
		RunID: in.RunID, AccountID: accountID, AssemblyID: in.AssemblyID, PolicyVersion: in.PolicyVersion, RequestSHA256: in.RequestSHA256,
		RequestBody: string(in.RequestBody), ResponseID: in.ResponseID, ResponseModel: in.ResponseModel, FinishReason: in.FinishReason,
		InputTokens: int64(in.Usage.InputTokens), OutputTokens: int64(in.Usage.OutputTokens),
		LatencyMs: float64(in.Latency.Microseconds()) / 1000,
		Status:    in.Status, EndedAt: at.UTC(), RecordedAt: s.Now().UTC(),
	}
	if in.Error != nil {
		params.ErrorCode, params.ErrorMessage, params.ProviderStatus = &in.Error.Code, &in.Error.Message, int64(in.Error.Status)
	}
	params.KeepLease = in.KeepLease
	if in.Offer != nil {
		tools, err := toolsText(in.Offer.Tools)
		if err != nil {
			return model.Run{}, err
		}
		params.Reoffer, params.Tools, params.ToolChoice = true, tools, in.Offer.ToolChoice
	}
	if _, err := t.require(accountID, "ModelRun", "", in.RunID); err != nil {
		return model.Run{}, err
	}
	row, found, err := recordModelCall.one(t, params)
	if err != nil {
		return model.Run{}, err
	}
	if !found {
		return model.Run{}, model.Conflict("run %q has already ended", in.RunID)
	}
	return runOf(row.R), nil
}

func runOf(p props) model.Run {
	r := model.Run{
		ID: p.str("id"), ConversationID: p.str("conversationId"), BranchID: p.str("branchId"), Seq: p.i64("seq"),
		ParticipantID: p.str("participantId"), RuntimeKind: model.RuntimeKind(p.str("runtimeKind")), Status: p.str("status"),
		Provider: p.str("provider"), Model: p.str("model"), TriggerMessageID: p.str("triggerMessageId"),
		ParentRunID: p.str("parentRunId"), StartedAt: p.time("startedAt"), EndedAt: p.timePtr("endedAt"),
		RecordedAt: p.time("recordedAt"),
		ResponseID: p.str("responseId"), ResponseModel: p.str("responseModel"), FinishReason: p.str("finishReason"),
		LatencyMs: deref(p.float("latencyMs")), ModelCalls: p.i64("modelCalls"), Interruptions: p.i64("interruptions"), LastAssembly: p.str("lastAssemblyId"), PolicyVersion: p.str("policyVersion"),
		Tools: p.tools("tools"), ToolChoice: p.str("toolChoice"),
	}
	if r.ModelCalls > 0 {
		r.Usage = &model.Usage{InputTokens: int(p.i64("inputTokens")), OutputTokens: int(p.i64("outputTokens"))}
	}
	if code := p.str("errorCode"); code != "" {
		r.Error = &model.ProviderError{Code: code, Message: p.str("errorMessage"), Status: int(p.i64("providerStatus"))}
	}
	return r
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// branchParticipants reads the conversation of a branch with its participants.
var branchParticipants = newQuery[branchParams, branchParticipantsRow]("BranchParticipants")

type branchParticipantsRow struct {
	ConversationID string `col:"conversationId"`
	Participants   []any  `col:"participants"`
}

// BranchParticipants returns the conversation a branch of the account belongs to with its
// ID and participants only (no branches), in one auto-commit read; KindNotFound naming
// branchId otherwise. When the assembler's copy of the conversation knows the branch and
// every one of participantIDs, it answers with those and nothing is read: a branch never
// changes conversation, a participant's id, kind, name, provider and model never change,
// and participants are only added, so what the copy knows is current (an unknown
// participant may have been added since: the graph is read). A conversation deleted since
// the copy was read has lost its branches and participants with its deletion mark
// (MarkConversationDeleted), so the turn's first write (BeginTurn) finds no branch and
// answers KindNotFound naming it, as this read would have.
func (s *Store) BranchParticipants(ctx context.Context, accountID, branchID string, participantIDs []string) (model.Conversation, error) {
	if copy, known := s.records.Lookup(accountID, branchID); known && copy != nil && len(participantIDs) > 0 {
		if ps, ok := copy.Participants(participantIDs); ok {
			return model.Conversation{ID: copy.ID(), Participants: ps}, nil
		}
	}
	row, found, err := branchParticipants.autoOne(ctx, s, neo4j.AccessModeRead, branchParams{AccountID: accountID, BranchID: branchID})
	if err != nil {
		return model.Conversation{}, err
	}
	if !found {
		return model.Conversation{}, model.NotFound("branch", branchID)
	}
	c := model.Conversation{ID: row.ConversationID, Participants: make([]model.Participant, 0, len(row.Participants))}
	for _, v := range row.Participants {
		c.Participants = append(c.Participants, participantOf(asProps(v)))
	}
	return c, nil
}

// BranchConversation returns the conversation a branch of the account belongs to;
// KindNotFound naming branchId otherwise.
func (s *Store) BranchConversation(ctx context.Context, accountID, branchID string) (string, error) {
	return readTx(ctx, s, func(t *tx) (string, error) {
		row, found, err := branchConversation.one(t, branchParams{AccountID: accountID, BranchID: branchID})
		if err != nil {
			return "", err
		}
		if !found {
			return "", model.NotFound("branch", branchID)
		}
		return row.ConversationID, nil
	})
}

// RunToolCalls lists the calls a run requested, oldest first, with their outcomes' ids
// (arguments stored as blobs are not read back).
// ChildRuns lists the runs CHILD_OF a run, oldest first.
func (s *Store) ChildRuns(ctx context.Context, accountID, runID string) ([]model.Run, error) {
	return readTx(ctx, s, func(t *tx) ([]model.Run, error) {
		if _, err := t.require(accountID, "ModelRun", "", runID); err != nil {
			return nil, err
		}
		rows, err := childRuns.all(t, runParams{AccountID: accountID, RunID: runID})
		if err != nil {
			return nil, err
		}
		runs := make([]model.Run, 0, len(rows))
		for _, r := range rows {
			runs = append(runs, runOf(r.C))
		}
		return runs, nil
	})
}

func (s *Store) RunToolCalls(ctx context.Context, accountID, runID string) ([]model.ToolCall, error) {
	return readTx(ctx, s, func(t *tx) ([]model.ToolCall, error) {
		if _, err := t.require(accountID, "ModelRun", "", runID); err != nil {
			return nil, err
		}
		rows, err := runToolCalls.all(t, runParams{AccountID: accountID, RunID: runID})
		if err != nil {
			return nil, err
		}
		calls := make([]model.ToolCall, 0, len(rows))
		for _, r := range rows {
			call := toolCallOf(r.T)
			call.ArtifactIDs = r.ArtifactIDs
			calls = append(calls, call)
		}
		return calls, nil
	})
}

// maxRunPlaces bounds the runs whose places a Store remembers: about as many runs as wait
// for their clients' tools at once on one server.
const maxRunPlaces = 4096

// runPlace is where a run is: its branch and participant, which never change.
type runPlace struct{ branchID, participantID string }

// placeRun remembers where a run is.
func (s *Store) placeRun(accountID string, r model.Run) {
	if r.ID != "" && r.BranchID != "" {
		s.runPlaces.put(accountKey(accountID, r.ID), runPlace{branchID: r.BranchID, participantID: r.ParticipantID})
	}
}

// ClaimRunStep claims a running run, or reopens an interrupted one, for one model call
// under lease, and returns it as claimed; KindConflict when the run has otherwise ended or
// another call holds it: a live lease, or a claim without one newer than model.TurnHold.
// With continuing, also when the generation path did not start the run, or one of its
// calls waits for a result (naming toolCalls); nothing is written then. When this process
// knows where the run is (runPlaces), the statement also brings the assembler's copy of its
// conversation up to date for the step's first assembly.
func (s *Store) ClaimRunStep(ctx context.Context, accountID, runID, claim string, lease model.RunLease, continuing bool) (model.Run, error) {
	var tc turnCopy
	p := claimStepParams{AccountID: accountID, RunID: runID, Claim: claim, Continuing: continuing}
	if place, ok := s.runPlaces.get(accountKey(accountID, runID)); ok {
		tc, p.Since = s.turnCopy(accountID, place.branchID)
		p.ParticipantID = place.participantID
	}
	now := s.Now().UTC()
	p.Now, p.StaleBefore = now, now.Add(-model.TurnHold)
	p.LeaseUntil, p.LeaseHolder = s.leaseEnd(lease)
	rows, err := claimRunStep.autoAll(ctx, s, neo4j.AccessModeWrite, p)
	if err != nil {
		return model.Run{}, err
	}
	records := make([]recordRow, len(rows))
	var head *claimStepRow
	for i, row := range rows {
		records[i] = recordRow{Kind: row.Kind, Record: row.Record}
		if row.Kind == "head" {
			head = &rows[i]
		}
	}
	if head == nil || head.R == nil {
		return model.Run{}, model.NotFound("run", runID)
	}
	run := runOf(head.R)
	s.placeRun(accountID, run)
	if !head.Claimed {
		return model.Run{}, s.refusedClaim(run, head, continuing)
	}
	// Committed: what the statement read is the conversation as of the claim.
	tc.keep(s, accountID, runID, records)
	return run, nil
}

// refusedClaim says why ClaimRunStep did not take a run's step, in the order a continue
// checks: the run ended, the generation path did not start it, another call holds it, a
// call waits for its result.
func (s *Store) refusedClaim(run model.Run, head *claimStepRow, continuing bool) error {
	resumable := run.Resumable()
	switch {
	case run.Status != model.RunStatusRunning && !resumable:
		return model.Conflict("run %q has ended with status %s: a finished run cannot continue", run.ID, run.Status)
	case continuing && run.ModelCalls == 0 && run.Interruptions == 0 && !resumable:
		return model.Conflict("run %q was not started by a generation: continue runs the generation path's runs", run.ID)
	case !head.Free:
		held := head.R.time("leaseUntil")
		if held.IsZero() {
			held = head.R.time("stepClaimedAt").Add(model.TurnHold)
		}
		// Counted from now, after the statement: the lease it read may have been taken after
		// the statement began, and is then up to a whole term from now.
		return &model.Error{Kind: model.KindConflict, RetryAfter: retryAfter(held, s.Now()),
			Message: fmt.Sprintf("run %q is already calling its model: wait for that call to end", run.ID)}
	default:
		return &model.Error{Kind: model.KindConflict, Field: "toolCalls",
			Message: fmt.Sprintf("run %q still waits for the result of tool call %s: post it to /v1/tool-calls/{id}/result first", run.ID, strings.Join(head.Open, ", "))}
	}
}

// ReleaseRunStep releases a run's step claim that no model call followed.
func (s *Store) ReleaseRunStep(ctx context.Context, accountID, runID, claim string) error {
	_, err := writeTx(ctx, s, func(t *tx) (struct{}, error) {
		return struct{}{}, releaseRunStep.exec(t, releaseStepParams{AccountID: accountID, RunID: runID, Claim: claim})
	})
	return err
}
