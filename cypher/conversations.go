package cypher

import (
	"context"
	"fmt"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// stamps returns the event time (at, or now) and the recorded time of a write.
func (s *Store) stamps(at *time.Time) (time.Time, time.Time) {
	now := s.Now().UTC()
	if at != nil {
		return at.UTC(), now
	}
	return now, now
}

func stampOf(p props) model.Stamp {
	return model.Stamp{CreatedAt: p.time("createdAt"), RecordedAt: p.time("recordedAt")}
}

// CreateConversation creates a conversation and its root branch `main`.
func (s *Store) CreateConversation(ctx context.Context, accountID string, in model.NewConversation) (model.Conversation, error) {
	createdAt, recordedAt := s.stamps(in.At)
	return writeTx(ctx, s, func(t *tx) (model.Conversation, error) {
		rec, err := t.one("CreateConversation", map[string]any{
			"id": newID("cnv"), "branchId": newID("br"), "accountId": accountID, "title": in.Title,
			"createdAt": createdAt, "recordedAt": recordedAt,
		})
		if err != nil {
			return model.Conversation{}, err
		}
		c := conversationOf(nodeProps(rec, "c"))
		c.Branches = []model.Branch{branchOf(nodeProps(rec, "b"))}
		c.Participants = []model.Participant{}
		return c, nil
	})
}

// Conversation reads a conversation with its branches and participants.
func (s *Store) Conversation(ctx context.Context, accountID, id string) (model.Conversation, error) {
	return readTx(ctx, s, func(t *tx) (model.Conversation, error) {
		rec, err := t.one("ReadConversation", map[string]any{"id": id, "accountId": accountID})
		if err != nil {
			return model.Conversation{}, err
		}
		if rec == nil {
			return model.Conversation{}, model.NotFound("conversation", id)
		}
		c := conversationOf(nodeProps(rec, "c"))
		c.Branches = []model.Branch{}
		for _, v := range value(rec, "branches").([]any) {
			row := props(v.(map[string]any))
			b := branchOf(asProps(row["branch"]))
			b.ParentBranchID = row.str("parentBranchId")
			b.ForkAfterMessageID = row.str("afterMessageId")
			b.ForkAfterSeq = row.i64("afterSeq")
			c.Branches = append(c.Branches, b)
		}
		c.Participants = []model.Participant{}
		for _, v := range value(rec, "participants").([]any) {
			c.Participants = append(c.Participants, participantOf(asProps(v)))
		}
		return c, nil
	})
}

// DefaultDeleteBatch is how many nodes one transaction of a conversation's deletion deletes:
// 1,000 assemblies with ~200 INCLUDED edges each stay well inside the 512 MiB of
// transaction memory the local Neo4j allows.
const DefaultDeleteBatch = 1000

// DeleteConversation deletes a conversation and everything under it: first, in one
// transaction, it marks the conversation deleted and removes its branches and participants
// (from then on reads answer 404 and no write can land in it); then the remaining nodes go in
// batches, each its own transaction, so that no transaction outgrows Neo4j's transaction
// memory however long the conversation; the conversation node goes last. Blobs that no other
// record shares are removed after that, so a failed delete leaves every payload readable,
// and deleting again finishes an interrupted deletion.
func (s *Store) DeleteConversation(ctx context.Context, accountID, id string) error {
	params := map[string]any{"id": id, "accountId": accountID}
	refs, err := writeTx(ctx, s, func(t *tx) ([]string, error) {
		rec, err := t.one("ConversationBlobRefs", params)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			return nil, model.NotFound("conversation", id)
		}
		refs := strList(rec, "refs")
		if rec, err = t.one("MarkConversationDeleted", map[string]any{"id": id, "accountId": accountID, "recordedAt": s.Now()}); err != nil {
			return nil, err
		}
		if rec == nil {
			return nil, model.NotFound("conversation", id)
		}
		return refs, nil
	})
	if err != nil {
		return err
	}
	s.records.drop(accountID, id)
	for {
		deleted, err := writeTx(ctx, s, func(t *tx) (int64, error) {
			rec, err := t.one("DeleteConversationBatch", map[string]any{"id": id, "accountId": accountID, "limit": s.DeleteBatch})
			if err != nil || rec == nil {
				return 0, err
			}
			n, _ := value(rec, "deleted").(int64)
			return n, nil
		})
		if err != nil {
			return err
		}
		if deleted == 0 {
			break
		}
	}
	return s.dropUnreferencedBlobs(ctx, refs)
}

// dropUnreferencedBlobs deletes the blobs among refs that no remaining record holds.
func (s *Store) dropUnreferencedBlobs(ctx context.Context, refs []string) error {
	if len(refs) == 0 {
		return nil
	}
	orphans, err := readTx(ctx, s, func(t *tx) ([]string, error) {
		rec, err := t.one("UnreferencedBlobRefs", map[string]any{"refs": refs})
		if err != nil || rec == nil {
			return nil, err
		}
		return strList(rec, "refs"), nil
	})
	if err != nil {
		return err
	}
	for _, ref := range orphans {
		if err := s.blobs.Delete(ctx, ref); err != nil {
			return err
		}
	}
	return nil
}

// AddParticipant adds a participant to a conversation.
func (s *Store) AddParticipant(ctx context.Context, accountID string, in model.NewParticipant) (model.Participant, error) {
	createdAt, recordedAt := s.stamps(in.At)
	return writeTx(ctx, s, func(t *tx) (model.Participant, error) {
		rec, err := t.one("AddParticipant", map[string]any{
			"id": newID("pt"), "accountId": accountID, "conversationId": in.ConversationID,
			"kind": in.Kind, "name": in.Name, "provider": in.Provider, "model": in.Model,
			"createdAt": createdAt, "recordedAt": recordedAt,
		})
		if err != nil {
			return model.Participant{}, err
		}
		if rec == nil {
			return model.Participant{}, model.NotFound("conversation", in.ConversationID)
		}
		return participantOf(nodeProps(rec, "p")), nil
	})
}

// ForkBranch forks a branch after a message of the parent's lineage.
func (s *Store) ForkBranch(ctx context.Context, accountID string, in model.NewBranch) (model.Branch, error) {
	createdAt, recordedAt := s.stamps(in.At)
	return writeTx(ctx, s, func(t *tx) (model.Branch, error) {
		parent, err := t.branchLineage(accountID, in.ParentBranchID)
		if err != nil {
			if model.KindOf(err) == model.KindNotFound {
				err.(*model.Error).Field = "parentBranchId"
			}
			return model.Branch{}, err
		}
		if parent.ConversationID != in.ConversationID {
			return model.Branch{}, model.Invalid("parentBranchId", "branch %q is not a branch of conversation %q", in.ParentBranchID, in.ConversationID)
		}
		msg, err := t.require(accountID, "Message", "forkAfterMessageId", in.ForkAfterMessageID)
		if err != nil {
			return model.Branch{}, err
		}
		if !parent.contains(msg.branchID(), msg.seq()) {
			return model.Branch{}, model.Invalid("forkAfterMessageId", "message %q is not in the lineage of branch %q", in.ForkAfterMessageID, in.ParentBranchID)
		}
		name := in.Name
		if name == "" {
			name = fmt.Sprintf("fork-%s", in.ForkAfterMessageID)
		}
		taken, err := t.one("BranchNameTaken", map[string]any{"conversationId": in.ConversationID, "accountId": accountID, "name": name})
		if err != nil {
			return model.Branch{}, err
		}
		if taken != nil {
			return model.Branch{}, &model.Error{Kind: model.KindConflict, Field: "name", Message: fmt.Sprintf("conversation already has a branch named %q", name)}
		}
		rec, err := t.one("ForkBranch", map[string]any{
			"id": newID("br"), "accountId": accountID, "conversationId": in.ConversationID,
			"holderBranchId": msg.branchID(), "forkAfterMessageId": in.ForkAfterMessageID, "name": name,
			"createdAt": createdAt, "recordedAt": recordedAt,
		})
		if err != nil {
			return model.Branch{}, err
		}
		if rec == nil {
			return model.Branch{}, model.NotFound("conversation", in.ConversationID)
		}
		b := branchOf(nodeProps(rec, "b"))
		b.ParentBranchID = strValue(rec, "parentBranchId")
		b.ForkAfterMessageID = in.ForkAfterMessageID
		b.ForkAfterSeq, _ = value(rec, "afterSeq").(int64)
		return b, nil
	})
}

func conversationOf(p props) model.Conversation {
	return model.Conversation{ID: p.str("id"), Title: p.str("title"), BranchID: p.str("rootBranchId"), Stamp: stampOf(p)}
}

func branchOf(p props) model.Branch {
	return model.Branch{ID: p.str("id"), ConversationID: p.str("conversationId"), Name: p.str("name"), Stamp: stampOf(p)}
}

func participantOf(p props) model.Participant {
	return model.Participant{
		ID: p.str("id"), ConversationID: p.str("conversationId"), Kind: p.str("kind"), Name: p.str("name"),
		Provider: p.str("provider"), Model: p.str("model"), Stamp: stampOf(p),
	}
}
