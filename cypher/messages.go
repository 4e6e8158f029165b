package cypher

import (
	"context"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// The statements of messages.
var (
	latestLineageMessage = newQuery[lineageQueryParams, idRow]("LatestLineageMessage")
	appendMessageQuery   = newQuery[appendMessageParams, messageRow]("AppendMessage")
	lineageHistory       = newQuery[lineageQueryParams, historyRow]("LineageHistory")
)

// lineageQueryParams name a lineage of an account (lineageParams).
type lineageQueryParams struct {
	AccountID string           `param:"accountId"`
	Lineage   []map[string]any `param:"lineage"`
}

type appendMessageParams struct {
	ID               string    `param:"id"`
	AccountID        string    `param:"accountId"`
	BranchID         string    `param:"branchId"`
	Role             string    `param:"role"`
	Content          string    `param:"content"`
	ParticipantID    string    `param:"participantId,null"`
	RunID            string    `param:"runId,null"`
	ParentMessageIDs []string  `param:"parentMessageIds"`
	Visibility       string    `param:"visibility"`
	CreatedAt        time.Time `param:"createdAt"`
	RecordedAt       time.Time `param:"recordedAt"`
	BaselineTokens   int64     `param:"baselineTokens"`
}

type messageRow struct {
	M props `col:"m"`
}

type historyRow struct {
	Type            string `col:"type"`
	Item            props  `col:"item"`
	ParticipantID   string `col:"participantId"`
	ParticipantName string `col:"participantName"`
}

// AppendMessage appends a message to a branch.
func (s *Store) AppendMessage(ctx context.Context, accountID string, in model.NewMessage) (model.Message, error) {
	return writeTx(ctx, s, func(t *tx) (model.Message, error) {
		m, err := t.appendMessage(accountID, in)
		if err != nil {
			return model.Message{}, err
		}
		return m, t.answer(m, m.ConversationID, "")
	})
}

// appendMessage appends a message inside t (AppendMessage).
func (t *tx) appendMessage(accountID string, in model.NewMessage) (model.Message, error) {
	createdAt, recordedAt := t.store.stamps(in.At)
	lin, err := t.branchLineage(accountID, in.BranchID)
	if err != nil {
		return model.Message{}, err
	}
	refs, err := t.locate(accountID, append([]string{in.ParticipantID, in.RunID}, in.ParentMessageIDs...)...)
	if err != nil {
		return model.Message{}, err
	}
	participantID := in.ParticipantID
	if in.RunID != "" {
		run, err := sameConversation(refs, lin.ConversationID, "ModelRun", "runId", in.RunID)
		if err != nil {
			return model.Message{}, err
		}
		if participantID == "" {
			participantID = run.Props.str("participantId")
		}
	}
	if participantID != "" {
		if _, seen := refs[participantID]; !seen {
			more, err := t.locate(accountID, participantID)
			if err != nil {
				return model.Message{}, err
			}
			refs[participantID] = more[participantID]
		}
		if _, err := sameConversation(refs, lin.ConversationID, "Participant", "participantId", participantID); err != nil {
			return model.Message{}, err
		}
	}
	parents := in.ParentMessageIDs
	for _, id := range parents {
		parent, err := sameConversation(refs, lin.ConversationID, "Message", "parentMessageIds", id)
		if err != nil {
			return model.Message{}, err
		}
		if !lin.Contains(parent.branchID(), parent.seq()) {
			return model.Message{}, model.Invalid("parentMessageIds", "message %q is not in the lineage of branch %q", id, in.BranchID)
		}
	}
	if parents == nil {
		latest, found, err := latestLineageMessage.one(t, lineageQueryParams{AccountID: accountID, Lineage: lineageParams(lin)})
		if err != nil {
			return model.Message{}, err
		}
		parents = []string{}
		if found {
			parents = []string{latest.ID}
		}
	}
	speaker := ""
	if participantID != "" && in.Role == "assistant" {
		speaker = model.ChatName(refs[participantID].Props.str("name"))
	}
	visibility := in.Visibility
	if visibility == "" {
		visibility = model.DefaultMessageVisibility
	}
	row, found, err := appendMessageQuery.one(t, appendMessageParams{
		ID: newID("msg"), AccountID: accountID, BranchID: in.BranchID, Role: in.Role, Content: in.Content,
		ParticipantID: participantID, RunID: in.RunID, ParentMessageIDs: parents,
		Visibility: visibility, CreatedAt: createdAt, RecordedAt: recordedAt,
		BaselineTokens: t.store.baselineTokens(in.Role, in.Content, speaker),
	})
	if err != nil {
		return model.Message{}, err
	}
	if !found {
		return model.Message{}, model.NotFound("branch", in.BranchID)
	}
	return messageOf(row.M), nil
}

// sameConversation returns the located record id of the given label, KindNotFound naming
// field when it is not the account's, KindInvalid when it belongs to another conversation.
func sameConversation(refs map[string]located, conversationID, label, field, id string) (located, error) {
	rec, ok := refs[id]
	if !ok || rec.Label != label {
		e := model.NotFound(labelNoun(label), id)
		e.Field = field
		return located{}, e
	}
	if rec.conversationID() != conversationID {
		return located{}, model.Invalid(field, "%s %q belongs to another conversation", labelNoun(label), id)
	}
	return rec, nil
}

// History reads the user-facing transcript of a branch's lineage.
func (s *Store) History(ctx context.Context, accountID, branchID string) (model.History, error) {
	return readTx(ctx, s, func(t *tx) (model.History, error) {
		lin, err := t.branchLineage(accountID, branchID)
		if err != nil {
			return model.History{}, err
		}
		rows, err := lineageHistory.all(t, lineageQueryParams{AccountID: accountID, Lineage: lineageParams(lin)})
		if err != nil {
			return model.History{}, err
		}
		h := model.History{BranchID: branchID, Lineage: lin.IDs(), Items: []model.HistoryItem{}}
		for _, r := range rows {
			p := r.Item
			h.Items = append(h.Items, model.HistoryItem{
				Type: r.Type, ID: p.str("id"), BranchID: p.str("branchId"), Seq: p.i64("seq"),
				Role: p.str("role"), Content: p.str("content"), RunID: p.str("runId"),
				ParticipantID: r.ParticipantID, ParticipantName: r.ParticipantName,
				Tool: p.str("tool"), Status: p.str("status"), ErrorCode: p.str("errorCode"), CreatedAt: p.time("createdAt"),
			})
		}
		return h, nil
	})
}

func messageOf(p props) model.Message {
	return model.Message{
		ID: p.str("id"), ConversationID: p.str("conversationId"), BranchID: p.str("branchId"), Seq: p.i64("seq"),
		Role: p.str("role"), Content: p.str("content"), ParticipantID: p.str("participantId"), RunID: p.str("runId"),
		ParentMessageIDs: p.strs("parentMessageIds"), Visibility: p.str("visibility"), Stamp: stampOf(p),
	}
}
