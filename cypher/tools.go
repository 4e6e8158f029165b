package cypher

import (
	"context"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

// requestToolCall records tool calls (batchParams' rows, see RequestToolCall).
var requestToolCall = newQuery[batchParams, requestToolCallRow]("RequestToolCall")

type requestToolCallRow struct {
	I int64 `col:"i"`
	T props `col:"t"`
}

// recordToolResult records tool results (batchParams' rows, see RecordToolResult).
var recordToolResult = newQuery[batchParams, recordToolResultRow]("RecordToolResult")

type recordToolResultRow struct {
	I              int64    `col:"i"`
	ID             string   `col:"id"`
	ConversationID string   `col:"conversationId"`
	MemoryIDs      []string `col:"memoryIds"`
}

// toolCallArtifactIDs reads the ids of a call's artifacts.
var toolCallArtifactIDs = newQuery[idParams, struct {
	IDs []string `col:"ids"`
}]("ToolCallArtifactIds")

// RequestToolCall records a tool call requested by a run.
func (s *Store) RequestToolCall(ctx context.Context, accountID string, in model.NewToolCall) (model.ToolCall, error) {
	createdAt, recordedAt := s.stamps(in.At)
	args, err := s.capture(ctx, in.Arguments)
	if err != nil {
		return model.ToolCall{}, err
	}
	params := s.toolCallRow(in, args, createdAt, recordedAt)
	callID := params["callId"].(string)
	var rec *neo4j.Record
	if in.RetryOf == "" && !keyed(ctx) {
		rec, err = s.toolCalls.write(ctx, s, accountID, params)
	} else {
		// A retry is checked against the run's lineage first, in the same transaction; a
		// keyed request stores its response in it.
		rec, err = writeTx(ctx, s, func(t *tx) (*neo4j.Record, error) {
			if in.RetryOf != "" {
				if err := t.checkRetryOf(accountID, in.RunID, in.RetryOf); err != nil {
					return nil, err
				}
			}
			rec, err := t.oneRow(requestToolCall, accountID, params)
			if err != nil || rec == nil {
				return rec, err
			}
			call, err := requestedCall(rec, in)
			if err != nil {
				return nil, err
			}
			return rec, t.answer(call, call.ConversationID, "")
		})
	}
	if err == nil && rec == nil {
		// The statement wrote nothing: either the run is not this account's or the callId
		// is taken. Only then is the run looked up, to say which.
		if _, err = s.requireRecord(ctx, accountID, "ModelRun", in.RunID); err == nil {
			err = &model.Error{Kind: model.KindConflict, Field: "callId", Message: "the run already has a tool call with callId " + callID}
		}
	}
	var call model.ToolCall
	if err == nil {
		call, err = requestedCall(rec, in)
	}
	if err == nil {
		s.recent.put(accountID, call)
	}
	return call, s.settle(ctx, err, args)
}

// recordRequestedCalls records a model call that asked for tool calls with the calls
// (RecordRequestedCalls).
var recordRequestedCalls = newQuery[requestedCallsParams, struct {
	Calls []any `col:"calls"`
}]("RecordRequestedCalls")

// requestedCallsParams are RecordRequestedCalls': the calls' rows (toolCallRow) and the
// model call as RecordModelCall records it, without an end.
type requestedCallsParams struct {
	RunID         string           `param:"runId"`
	AccountID     string           `param:"accountId"`
	Calls         []map[string]any `param:"calls"`
	AssemblyID    string           `param:"assemblyId,null"`
	PolicyVersion string           `param:"policyVersion,null"`
	RequestSHA256 string           `param:"requestSha256,null"`
	RequestBody   string           `param:"requestBody,null"`
	ResponseID    string           `param:"responseId,null"`
	ResponseModel string           `param:"responseModel,null"`
	FinishReason  string           `param:"finishReason,null"`
	InputTokens   int64            `param:"inputTokens"`
	OutputTokens  int64            `param:"outputTokens"`
	LatencyMs     float64          `param:"latencyMs"`
	Reoffer       bool             `param:"reoffer"`
	Tools         string           `param:"tools,null"`
	ToolChoice    string           `param:"toolChoice,null"`
}

// RecordRequestedCalls records a model call of the generation path that asked for tool
// calls in one auto-commit statement (RecordRequestedCalls.cypher): each call as
// RequestToolCall records it, in order, then the call on its assembly and run as
// RecordModelCall records it, releasing the run's step claim and lease. It writes nothing
// when a call is refused: KindNotFound when the run is not the account's, KindConflict when
// it has ended or already has a call with one of the callIds (or two calls share one), and
// KindInvalid for a call that names a retryOf or another run. The writes of a turn carry
// no Idempotency-Key claim, so no response is stored with them.
func (s *Store) RecordRequestedCalls(ctx context.Context, accountID string, rec model.ModelCallRecord, calls []model.NewToolCall) (_ []model.ToolCall, err error) {
	if rec.Status != "" || rec.Error != nil || rec.KeepLease {
		return nil, model.Internal("a model call that asked for tool calls awaits them: it neither ends its run nor keeps its lease", nil)
	}
	createdAt, recordedAt := s.stamps(nil)
	p := requestedCallsParams{
		RunID: rec.RunID, AccountID: accountID, Calls: make([]map[string]any, 0, len(calls)),
		AssemblyID: rec.AssemblyID, PolicyVersion: rec.PolicyVersion, RequestSHA256: rec.RequestSHA256, RequestBody: string(rec.RequestBody),
		ResponseID: rec.ResponseID, ResponseModel: rec.ResponseModel, FinishReason: rec.FinishReason,
		InputTokens: int64(rec.Usage.InputTokens), OutputTokens: int64(rec.Usage.OutputTokens),
		LatencyMs: float64(rec.Latency.Microseconds()) / 1000,
	}
	if rec.Offer != nil {
		tools, err := toolsText(rec.Offer.Tools)
		if err != nil {
			return nil, err
		}
		p.Reoffer, p.Tools, p.ToolChoice = true, tools, rec.Offer.ToolChoice
	}
	captured := make([]payload, 0, len(calls))
	defer func() {
		for _, args := range captured {
			_ = s.settle(ctx, err, args)
		}
	}()
	seen := map[string]bool{}
	for i, in := range calls {
		switch {
		case in.RunID != rec.RunID:
			return nil, model.Invalid(fmt.Sprintf("calls[%d].runId", i), "a model call's tool calls are its run's")
		case in.RetryOf != "":
			return nil, model.Invalid(fmt.Sprintf("calls[%d].retryOf", i), "a model's tool call retries nothing: RequestToolCall records a retry")
		}
		var args payload
		if args, err = s.capture(ctx, in.Arguments); err != nil {
			return nil, err
		}
		captured = append(captured, args)
		row := s.toolCallRow(in, args, createdAt, recordedAt)
		callID := row["callId"].(string)
		if seen[callID] {
			return nil, &model.Error{Kind: model.KindConflict, Field: "callId", Message: "the model call asks for two tool calls with callId " + callID}
		}
		seen[callID] = true
		p.Calls = append(p.Calls, row)
	}
	row, found, err := recordRequestedCalls.autoOne(ctx, s, neo4j.AccessModeWrite, p)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, s.refusedCalls(ctx, accountID, rec.RunID, seen)
	}
	out := make([]model.ToolCall, len(row.Calls))
	for i, v := range row.Calls {
		out[i] = toolCallOf(asProps(v))
		out[i].Arguments = calls[i].Arguments
		s.recent.put(accountID, out[i])
	}
	return out, nil
}

// refusedCalls says why RecordRequestedCalls wrote nothing for a run: it is not the
// account's, it has ended, or it already has a call with one of callIDs. Only then is the
// run read.
func (s *Store) refusedCalls(ctx context.Context, accountID, runID string, callIDs map[string]bool) error {
	run, err := s.requireRecord(ctx, accountID, "ModelRun", runID)
	if err != nil {
		return err
	}
	if status := run.Props.str("status"); status != model.RunStatusRunning {
		return model.Conflict("run %q has already ended with status %s", runID, status)
	}
	existing, err := s.RunToolCalls(ctx, accountID, runID)
	if err != nil {
		return err
	}
	for _, c := range existing {
		if callIDs[c.CallID] {
			return &model.Error{Kind: model.KindConflict, Field: "callId", Message: "the run already has a tool call with callId " + c.CallID}
		}
	}
	// Another write ended the run or took a callId and was undone meanwhile: the caller may
	// try again.
	return model.Conflict("run %q changed while its model call was recorded", runID)
}

// toolCallRow is the row of a requested call's node as RequestToolCall and
// RecordRequestedCalls write it, with a new id; its callId is the id when in names none.
func (s *Store) toolCallRow(in model.NewToolCall, args payload, createdAt, recordedAt time.Time) map[string]any {
	id := newID("tc")
	callID := in.CallID
	if callID == "" {
		callID = id
	}
	row := map[string]any{
		"id": id, "runId": in.RunID, "callId": callID, "tool": in.Tool,
		"arguments": args.inline, "argumentsRef": args.ref, "argumentsSha256": args.sha256, "argumentsBytes": args.bytes,
		"retryOf": nullable(in.RetryOf), "createdAt": createdAt, "recordedAt": recordedAt,
		"freshnessClass": nil, "staleAfter": nil, "revalidateWith": nil, "retentionClass": nil, "retentionAfter": nil,
		"baselineTokens": s.baselineTokens("assistant", model.BaselineToolCallText(in.Tool, string(in.Arguments)), ""),
	}
	if f := in.Freshness; f != nil {
		row["freshnessClass"], row["staleAfter"], row["revalidateWith"] = nullable(f.Class), nullable(f.StaleAfter), f.RevalidateWith
	}
	if r := in.Retention; r != nil {
		row["retentionClass"], row["retentionAfter"] = r.Class, nullable(r.After)
	}
	return row
}

// requestedCall is the tool call RequestToolCall wrote, as its response shows it.
func requestedCall(rec *neo4j.Record, in model.NewToolCall) (model.ToolCall, error) {
	var row requestToolCallRow
	if err := requestToolCall.scan(rec, &row); err != nil {
		return model.ToolCall{}, err
	}
	call := toolCallOf(row.T)
	call.Arguments = in.Arguments
	return call, nil
}

// keyed says whether ctx is a request's that carries an Idempotency-Key: its write runs in
// a transaction of its own, not in a batch, and stores its response there (answer).
func keyed(ctx context.Context) bool { return model.IdempotencyClaimOf(ctx) != nil }

// checkRetryOf checks that the call a new call retries is a call of the lineage of the
// run's branch.
func (t *tx) checkRetryOf(accountID, runID, retryOf string) error {
	run, err := t.require(accountID, "ModelRun", "", runID)
	if err != nil {
		return err
	}
	refs, err := t.locate(accountID, retryOf)
	if err != nil {
		return err
	}
	failed, err := sameConversation(refs, run.conversationID(), "ToolCall", "retryOf", retryOf)
	if err != nil {
		return err
	}
	lin, err := t.branchLineage(accountID, run.branchID())
	if err != nil {
		return err
	}
	if !lin.Contains(failed.branchID(), failed.seq()) {
		return model.Invalid("retryOf", "tool call %q is not in the lineage of the run's branch", retryOf)
	}
	return nil
}

// checkSharedWith checks that the participants a tool result is shared with are
// participants of the call's conversation.
func (t *tx) checkSharedWith(accountID, toolCallID string, participantIDs []string) error {
	if len(participantIDs) == 0 {
		return nil
	}
	call, err := t.require(accountID, "ToolCall", "", toolCallID)
	if err != nil {
		return err
	}
	refs, err := t.locate(accountID, participantIDs...)
	if err != nil {
		return err
	}
	for _, id := range participantIDs {
		if _, err := sameConversation(refs, call.conversationID(), "Participant", "sharedWithParticipants", id); err != nil {
			return err
		}
	}
	return nil
}

// requireRecord is require as an auto-commit read of its own.
func (s *Store) requireRecord(ctx context.Context, accountID, label, id string) (located, error) {
	found, err := s.locate(ctx, accountID, id)
	if err != nil {
		return located{}, err
	}
	return required(found, label, "", id)
}

// ToolCall reads a tool call with its exact arguments.
func (s *Store) ToolCall(ctx context.Context, accountID, id string) (model.ToolCall, error) {
	var artifactIDs []string
	rec, err := readTx(ctx, s, func(t *tx) (located, error) {
		rec, err := t.require(accountID, "ToolCall", "", id)
		if err != nil {
			return located{}, err
		}
		row, _, err := toolCallArtifactIDs.one(t, idParams{ID: id, AccountID: accountID})
		if err != nil {
			return located{}, err
		}
		artifactIDs = row.IDs
		return rec, nil
	})
	if err != nil {
		return model.ToolCall{}, err
	}
	call := toolCallOf(rec.Props)
	call.ArtifactIDs = artifactIDs
	if call.Arguments, err = s.restore(ctx, rec.Props, "arguments", "argumentsRef", "argumentsSha256"); err != nil {
		return model.ToolCall{}, err
	}
	return call, nil
}

// RecordToolResult captures a tool call's outcome as an artifact, with optional memories.
func (s *Store) RecordToolResult(ctx context.Context, accountID string, in model.ToolResult) (model.ToolResultRecorded, error) {
	createdAt, recordedAt := s.stamps(in.At)
	result, err := s.capture(ctx, in.Result)
	if err != nil {
		return model.ToolResultRecorded{}, err
	}
	privacy := in.PrivacyClass
	if privacy == "" {
		privacy = model.DefaultPrivacyClass
	}
	visibility := in.Visibility
	if visibility == "" {
		visibility = model.DefaultArtifactVisibility
	}
	var errCode, errMessage any
	if in.Error != nil {
		errCode, errMessage = in.Error.Code, in.Error.Message
	}
	baseline := s.baselineTokens("tool", model.BaselineToolResultText(string(in.Result), in.Error), "")
	out := model.ToolResultRecorded{ArtifactID: newID("art"), MemoryIDs: []string{}}
	params := map[string]any{
		"id": out.ArtifactID, "toolCallId": in.ToolCallID, "status": in.Status,
		"retryable": in.Retryable, "errorCode": errCode, "errorMessage": errMessage,
		"result": result.inline, "resultRef": result.ref, "resultSha256": result.sha256, "resultBytes": result.bytes,
		"privacyClass": privacy, "visibility": visibility, "sharedWithParticipants": orEmpty(in.SharedWithParticipants),
		"toolVersion": nullable(in.ToolVersion), "createdAt": createdAt, "recordedAt": recordedAt,
		"baselineTokens": baseline,
	}
	params["memory"] = s.derivedMemory(ctx, accountID, in, createdAt)
	params["retentionClass"], params["retentionAfter"], params["retentionSource"], params["retainUntil"] = nil, nil, nil, nil
	if r, source := s.retention(ctx, accountID, in); r != nil && r.Class != model.RetentionKeep {
		params["retentionClass"], params["retentionAfter"], params["retentionSource"] = r.Class, r.After, source
		params["retainUntil"] = r.Until(recordedAt.UTC()).UTC()
	}
	var written bool
	if len(in.SharedWithParticipants) == 0 && len(in.Memories) == 0 && !keyed(ctx) {
		var rec *neo4j.Record
		rec, err = s.toolResults.write(ctx, s, accountID, params)
		if written = rec != nil; written && err == nil {
			var row recordToolResultRow
			err = recordToolResult.scan(rec, &row)
			out.MemoryIDs = orEmpty(row.MemoryIDs)
		}
	} else {
		// Participants it is shared with are checked first, and memories derived after, in
		// the same transaction.
		out.MemoryIDs, err = writeTx(ctx, s, func(t *tx) ([]string, error) {
			if err := t.checkSharedWith(accountID, in.ToolCallID, in.SharedWithParticipants); err != nil {
				return nil, err
			}
			rec, err := t.oneRow(recordToolResult, accountID, params)
			if written = rec != nil; err != nil || !written {
				return nil, err
			}
			var row recordToolResultRow
			if err := recordToolResult.scan(rec, &row); err != nil {
				return nil, err
			}
			ids := orEmpty(row.MemoryIDs)
			for i, m := range in.Memories {
				if m.At == nil {
					m.At = in.At
				}
				m.DerivedFrom = append([]string{out.ArtifactID}, m.DerivedFrom...)
				mem, err := s.deriveMemory(t, accountID, m, memoryFieldPrefix(i))
				if err != nil {
					return nil, err
				}
				ids = append(ids, mem.ID)
			}
			return ids, t.answer(model.ToolResultRecorded{ArtifactID: out.ArtifactID, MemoryIDs: ids}, row.ConversationID, out.ArtifactID)
		})
	}
	if err == nil && !written {
		// Nothing was written: the call is not this account's, or it has a final outcome
		// already. Only then is it looked up, to say which.
		var call located
		if call, err = s.requireRecord(ctx, accountID, "ToolCall", in.ToolCallID); err == nil {
			err = model.Conflict("tool call %q already has a final outcome (%s)", in.ToolCallID, call.Props.str("status"))
		}
	}
	if err != nil {
		out = model.ToolResultRecorded{}
	}
	return out, s.settle(ctx, err, result)
}

// derivedMemory is the row of the memory the store's Promoter derives from a result recorded
// without client memories, written by RecordToolResult beside the artifact in the same
// statement (so a derived memory never costs a result its batch); nil when none is derived.
// Its owner, run, privacy, visibility and sharing are the artifact's, as the inheritance
// rules give them for one source (promotion.Inherit). The call's tool, arguments and declared
// freshness are fixed once it is recorded, so reading them before the write decides the
// same memory as reading them in it; a call this process recorded lately is not read again.
//
// It returns an untyped nil, never a nil map: the driver sends a nil map as an empty one,
// which is not null to the statement.
func (s *Store) derivedMemory(ctx context.Context, accountID string, in model.ToolResult, observedAt time.Time) any {
	if len(in.Memories) > 0 || s.Promoter == nil || in.Status != string(model.ToolSucceeded) {
		return nil
	}
	call, ok := s.recent.get(accountID, in.ToolCallID)
	if !ok {
		var err error
		if call, err = s.ToolCall(ctx, accountID, in.ToolCallID); err != nil {
			return nil // the write finds the call missing or not the account's, and says so
		}
	}
	m, ok := s.Promoter.PromoteResult(ctx, accountID, call, in, observedAt)
	if !ok {
		return nil
	}
	freshness := m.FreshnessClass
	if freshness == "" {
		freshness = model.DefaultFreshnessClass
	}
	var staleAfter, confidence any
	if m.StaleAfter != nil {
		staleAfter = m.StaleAfter.UTC()
	}
	if m.Confidence != nil {
		confidence = *m.Confidence
	}
	return map[string]any{
		"id": newID("mem"), "summary": m.Summary, "safeSummary": nullable(m.SafeSummary), "confidence": confidence,
		"confidenceSource": nullable(m.ConfidenceSource), "limitations": nullable(m.Limitations), "freshnessClass": freshness,
		"staleAfter": staleAfter, "revalidateWith": orEmpty(m.RevalidateWith), "locators": orEmpty(m.QuotedLocators),
		"quotesWhole": m.QuotesWhole, "promotionPolicy": m.PromotionPolicy,
	}
}

func toolCallOf(p props) model.ToolCall {
	c := model.ToolCall{
		ID: p.str("id"), ConversationID: p.str("conversationId"), BranchID: p.str("branchId"), RunID: p.str("runId"),
		Seq: p.i64("seq"), CallID: p.str("callId"), Tool: p.str("tool"), Arguments: p.raw("arguments"),
		Status: p.str("status"), Retryable: p.boolean("retryable"), RetryOf: p.str("retryOf"), Stamp: stampOf(p),
	}
	if class, stale, with := p.str("freshnessClass"), p.str("staleAfter"), p.strs("revalidateWith"); class != "" || stale != "" || len(with) > 0 {
		c.Freshness = &model.ToolFreshness{Class: class, StaleAfter: stale, RevalidateWith: with}
	}
	if class := p.str("retentionClass"); class != "" {
		c.Retention = &model.Retention{Class: class, After: p.str("retentionAfter")}
	}
	if code, msg := p.str("errorCode"), p.str("errorMessage"); code != "" || msg != "" {
		c.Error = &model.ToolError{Code: code, Message: msg}
	}
	return c
}

// retention decides how long a result's body is kept (DESIGN §10): the result's own, else
// the declaration of its tool where it was offered, else the account's default policy
// version's rule for the tool; nil keeps it. The call is read only when the result names
// none.
func (s *Store) retention(ctx context.Context, accountID string, in model.ToolResult) (*model.Retention, string) {
	if in.Retention != nil {
		return in.Retention, model.RetentionFromResult
	}
	call, ok := s.recent.get(accountID, in.ToolCallID)
	if !ok {
		var err error
		if call, err = s.ToolCall(ctx, accountID, in.ToolCallID); err != nil {
			return nil, "" // the write finds the call missing or not the account's, and says so
		}
	}
	if call.Retention != nil {
		return call.Retention, model.RetentionFromTool
	}
	if s.Promoter != nil {
		if r := s.Promoter.RetentionFor(ctx, accountID, call.Tool); r != nil {
			return r, model.RetentionFromPolicy
		}
	}
	return nil, ""
}
