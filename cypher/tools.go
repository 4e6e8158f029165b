package cypher

import (
	"context"

	"github.com/ctxgraph/ctxgraph/model"
)

// RequestToolCall records a tool call requested by a run.
func (s *Store) RequestToolCall(ctx context.Context, accountID string, in model.NewToolCall) (model.ToolCall, error) {
	createdAt, recordedAt := s.stamps(in.At)
	args, err := s.capture(ctx, in.Arguments)
	if err != nil {
		return model.ToolCall{}, err
	}
	id := newID("tc")
	callID := in.CallID
	if callID == "" {
		callID = id
	}
	call, err := writeTx(ctx, s, func(t *tx) (model.ToolCall, error) {
		run, err := t.require(accountID, "ModelRun", "", in.RunID)
		if err != nil {
			return model.ToolCall{}, err
		}
		if in.RetryOf != "" {
			refs, err := t.locate(accountID, in.RetryOf)
			if err != nil {
				return model.ToolCall{}, err
			}
			failed, err := sameConversation(refs, run.conversationID(), "ToolCall", "retryOf", in.RetryOf)
			if err != nil {
				return model.ToolCall{}, err
			}
			lin, err := t.branchLineage(accountID, run.branchID())
			if err != nil {
				return model.ToolCall{}, err
			}
			if !lin.contains(failed.branchID(), failed.seq()) {
				return model.ToolCall{}, model.Invalid("retryOf", "tool call %q is not in the lineage of the run's branch", in.RetryOf)
			}
		}
		rec, err := t.one("RequestToolCall", map[string]any{
			"id": id, "accountId": accountID, "runId": in.RunID, "callId": callID, "tool": in.Tool,
			"arguments": args.inline, "argumentsRef": args.ref, "argumentsSha256": args.sha256, "argumentsBytes": args.bytes,
			"retryOf": nullable(in.RetryOf), "createdAt": createdAt, "recordedAt": recordedAt,
			"baselineTokens": s.baselineTokens("assistant", model.BaselineToolCallText(in.Tool, string(in.Arguments)), ""),
		})
		if err != nil {
			return model.ToolCall{}, err
		}
		if rec == nil {
			return model.ToolCall{}, &model.Error{Kind: model.KindConflict, Field: "callId", Message: "the run already has a tool call with callId " + callID}
		}
		call := toolCallOf(nodeProps(rec, "t"))
		call.Arguments = in.Arguments
		return call, nil
	})
	return call, s.forgetPayloadOnFailure(ctx, err, args)
}

// ToolCall reads a tool call with its exact arguments.
func (s *Store) ToolCall(ctx context.Context, accountID, id string) (model.ToolCall, error) {
	var artifactIDs []string
	rec, err := readTx(ctx, s, func(t *tx) (located, error) {
		rec, err := t.require(accountID, "ToolCall", "", id)
		if err != nil {
			return located{}, err
		}
		ids, err := t.one("ToolCallArtifactIds", map[string]any{"id": id, "accountId": accountID})
		if err != nil {
			return located{}, err
		}
		artifactIDs = strList(ids, "ids")
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
	out, err := writeTx(ctx, s, func(t *tx) (model.ToolResultRecorded, error) {
		call, err := t.require(accountID, "ToolCall", "", in.ToolCallID)
		if err != nil {
			return model.ToolResultRecorded{}, err
		}
		if len(in.SharedWithParticipants) > 0 {
			refs, err := t.locate(accountID, in.SharedWithParticipants...)
			if err != nil {
				return model.ToolResultRecorded{}, err
			}
			for _, id := range in.SharedWithParticipants {
				if _, err := sameConversation(refs, call.conversationID(), "Participant", "sharedWithParticipants", id); err != nil {
					return model.ToolResultRecorded{}, err
				}
			}
		}
		artifactID := newID("art")
		rec, err := t.one("RecordToolResult", map[string]any{
			"id": artifactID, "accountId": accountID, "toolCallId": in.ToolCallID, "status": in.Status,
			"retryable": in.Retryable, "errorCode": errCode, "errorMessage": errMessage,
			"result": result.inline, "resultRef": result.ref, "resultSha256": result.sha256, "resultBytes": result.bytes,
			"privacyClass": privacy, "visibility": visibility, "sharedWithParticipants": orEmpty(in.SharedWithParticipants),
			"toolVersion": nullable(in.ToolVersion), "createdAt": createdAt, "recordedAt": recordedAt,
			"baselineTokens": baseline,
		})
		if err != nil {
			return model.ToolResultRecorded{}, err
		}
		if rec == nil {
			return model.ToolResultRecorded{}, model.Conflict("tool call %q already has a final outcome (%s)", in.ToolCallID, call.Props.str("status"))
		}
		out := model.ToolResultRecorded{ArtifactID: artifactID, MemoryIDs: []string{}}
		for i, m := range in.Memories {
			if m.At == nil {
				m.At = in.At
			}
			m.DerivedFrom = append([]string{artifactID}, m.DerivedFrom...)
			mem, err := s.deriveMemory(t, accountID, m, memoryFieldPrefix(i))
			if err != nil {
				return model.ToolResultRecorded{}, err
			}
			out.MemoryIDs = append(out.MemoryIDs, mem.ID)
		}
		return out, nil
	})
	return out, s.forgetPayloadOnFailure(ctx, err, result)
}

func toolCallOf(p props) model.ToolCall {
	c := model.ToolCall{
		ID: p.str("id"), ConversationID: p.str("conversationId"), BranchID: p.str("branchId"), RunID: p.str("runId"),
		Seq: p.i64("seq"), CallID: p.str("callId"), Tool: p.str("tool"), Arguments: p.raw("arguments"),
		Status: p.str("status"), Retryable: p.boolean("retryable"), RetryOf: p.str("retryOf"), Stamp: stampOf(p),
	}
	if code, msg := p.str("errorCode"), p.str("errorMessage"); code != "" || msg != "" {
		c.Error = &model.ToolError{Code: code, Message: msg}
	}
	return c
}
