package cypher

import (
	"context"

	"github.com/ctxgraph/ctxgraph/model"
)

// StartRun starts a run on a branch.
func (s *Store) StartRun(ctx context.Context, accountID string, in model.NewRun) (model.Run, error) {
	createdAt, recordedAt := s.stamps(in.At)
	return writeTx(ctx, s, func(t *tx) (model.Run, error) {
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
			if !lin.contains(m.branchID(), m.seq()) {
				return model.Run{}, model.Invalid("triggerMessageId", "message %q is not in the lineage of branch %q", in.TriggerMessageID, in.BranchID)
			}
		}
		if in.ParentRunID != "" {
			if _, err := sameConversation(refs, lin.ConversationID, "ModelRun", "parentRunId", in.ParentRunID); err != nil {
				return model.Run{}, err
			}
		}
		rec, err := t.one("StartRun", map[string]any{
			"id": newID("run"), "accountId": accountID, "branchId": in.BranchID, "participantId": in.ParticipantID,
			"runtimeKind": in.RuntimeKind, "provider": nullable(in.Provider), "model": nullable(in.Model),
			"triggerMessageId": nullable(in.TriggerMessageID), "parentRunId": nullable(in.ParentRunID),
			"createdAt": createdAt, "recordedAt": recordedAt,
		})
		if err != nil {
			return model.Run{}, err
		}
		if rec == nil {
			return model.Run{}, model.NotFound("branch", in.BranchID)
		}
		r := runOf(nodeProps(rec, "r"))
		return r, t.answer(r, r.ConversationID, "")
	})
}

// Run reads a run.
func (s *Store) Run(ctx context.Context, accountID, id string) (model.Run, error) {
	return readTx(ctx, s, func(t *tx) (model.Run, error) {
		rec, err := t.require(accountID, "ModelRun", "", id)
		if err != nil {
			return model.Run{}, err
		}
		return runOf(rec.Props), nil
	})
}

// FinishRun ends a running run.
func (s *Store) FinishRun(ctx context.Context, accountID string, in model.RunEnd) (model.Run, error) {
	endedAt, recordedAt := s.stamps(in.At)
	return writeTx(ctx, s, func(t *tx) (model.Run, error) {
		current, err := t.require(accountID, "ModelRun", "", in.RunID)
		if err != nil {
			return model.Run{}, err
		}
		rec, err := t.one("FinishRun", map[string]any{
			"id": in.RunID, "accountId": accountID, "status": in.Status, "endedAt": endedAt, "recordedAt": recordedAt,
		})
		if err != nil {
			return model.Run{}, err
		}
		if rec == nil {
			// Read again: the statement waited for any end of the run written meanwhile.
			if current, err = t.require(accountID, "ModelRun", "", in.RunID); err != nil {
				return model.Run{}, err
			}
			return model.Run{}, model.Conflict("run %q has already ended with status %s", in.RunID, current.Props.str("status"))
		}
		r := runOf(nodeProps(rec, "r"))
		return r, t.answer(r, r.ConversationID, "")
	})
}

func runOf(p props) model.Run {
	return model.Run{
		ID: p.str("id"), ConversationID: p.str("conversationId"), BranchID: p.str("branchId"), Seq: p.i64("seq"),
		ParticipantID: p.str("participantId"), RuntimeKind: p.str("runtimeKind"), Status: p.str("status"),
		Provider: p.str("provider"), Model: p.str("model"), TriggerMessageID: p.str("triggerMessageId"),
		ParentRunID: p.str("parentRunId"), StartedAt: p.time("startedAt"), EndedAt: p.timePtr("endedAt"),
		RecordedAt: p.time("recordedAt"),
	}
}
