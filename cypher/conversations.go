package cypher

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

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

// The statements of conversations, their branches and participants.
var (
	createConversation          = newQuery[createConversationParams, createConversationRow]("CreateConversation")
	readConversation            = newQuery[idParams, readConversationRow]("ReadConversation")
	markConversationDeleted     = newQuery[idStampParams, idRow]("MarkConversationDeleted")
	deleteConversationBatch     = newQuery[deleteBatchParams, deleteBatchRow]("DeleteConversationBatch")
	addParticipant              = newQuery[addParticipantParams, participantRow]("AddParticipant")
	readParticipant             = newQuery[idParams, participantRow]("ReadParticipant")
	setParticipantInstructions  = newQuery[instructionsParams, participantRow]("SetParticipantInstructions")
	setConversationInstructions = newQuery[instructionsParams, conversationRow]("SetConversationInstructions")
	branchNameTaken             = newQuery[branchNameParams, idRow]("BranchNameTaken")
	forkBranch                  = newQuery[forkBranchParams, forkBranchRow]("ForkBranch")
	listConversations           = newQuery[listConversationsParams, conversationRow]("ListConversations")
)

type createConversationParams struct {
	ID           string    `param:"id"`
	BranchID     string    `param:"branchId"`
	AccountID    string    `param:"accountId"`
	Title        string    `param:"title"`
	Instructions string    `param:"instructions"`
	CreatedAt    time.Time `param:"createdAt"`
	RecordedAt   time.Time `param:"recordedAt"`
}

type createConversationRow struct {
	C props `col:"c"`
	B props `col:"b"`
}

type readConversationRow struct {
	C            props `col:"c"`
	Branches     []any `col:"branches"`
	Participants []any `col:"participants"`
}

type deleteBatchParams struct {
	ID        string `param:"id"`
	AccountID string `param:"accountId"`
	Limit     int    `param:"limit"`
}

type deleteBatchRow struct {
	Deleted int64    `col:"deleted"`
	Refs    []string `col:"refs"`
}

type addParticipantParams struct {
	ID             string    `param:"id"`
	AccountID      string    `param:"accountId"`
	ConversationID string    `param:"conversationId"`
	Kind           string    `param:"kind"`
	Name           string    `param:"name"`
	Provider       string    `param:"provider"`
	Model          string    `param:"model"`
	Instructions   string    `param:"instructions"`
	CreatedAt      time.Time `param:"createdAt"`
	RecordedAt     time.Time `param:"recordedAt"`
}

// instructionsParams replace the instructions of a conversation or a participant.
type instructionsParams struct {
	ID           string    `param:"id"`
	AccountID    string    `param:"accountId"`
	Instructions string    `param:"instructions"`
	RecordedAt   time.Time `param:"recordedAt"`
}

type participantRow struct {
	P props `col:"p"`
}

type branchNameParams struct {
	ConversationID string `param:"conversationId"`
	AccountID      string `param:"accountId"`
	Name           string `param:"name"`
}

type forkBranchParams struct {
	ID                 string    `param:"id"`
	AccountID          string    `param:"accountId"`
	ConversationID     string    `param:"conversationId"`
	HolderBranchID     string    `param:"holderBranchId"`
	ForkAfterMessageID string    `param:"forkAfterMessageId"`
	Name               string    `param:"name"`
	CreatedAt          time.Time `param:"createdAt"`
	RecordedAt         time.Time `param:"recordedAt"`
}

type forkBranchRow struct {
	B              props  `col:"b"`
	ParentBranchID string `col:"parentBranchId"`
	AfterSeq       int64  `col:"afterSeq"`
}

type listConversationsParams struct {
	AccountID string     `param:"accountId"`
	Limit     int        `param:"limit"`
	AfterAt   *time.Time `param:"afterAt,null"`
	AfterID   string     `param:"afterId,null"`
	Title     string     `param:"title,null"`
}

type conversationRow struct {
	C props `col:"c"`
}

// CreateConversation creates a conversation and its root branch `main`.
func (s *Store) CreateConversation(ctx context.Context, accountID string, in model.NewConversation) (model.Conversation, error) {
	createdAt, recordedAt := s.stamps(in.At)
	return writeTx(ctx, s, func(t *tx) (model.Conversation, error) {
		row, found, err := createConversation.one(t, createConversationParams{
			ID: newID("cnv"), BranchID: newID("br"), AccountID: accountID, Title: in.Title, Instructions: in.Instructions,
			CreatedAt: createdAt, RecordedAt: recordedAt,
		})
		if err != nil {
			return model.Conversation{}, err
		}
		if !found {
			return model.Conversation{}, accountErased(accountID)
		}
		c := conversationOf(row.C)
		c.Branches = []model.Branch{branchOf(row.B)}
		c.Participants = []model.Participant{}
		return c, t.answer(c, c.ID, "")
	})
}

// Conversation reads a conversation with its branches and participants.
func (s *Store) Conversation(ctx context.Context, accountID, id string) (model.Conversation, error) {
	return readTx(ctx, s, func(t *tx) (model.Conversation, error) { return t.conversation(accountID, id) })
}

// conversation reads a conversation with its branches and participants in t.
func (t *tx) conversation(accountID, id string) (model.Conversation, error) {
	rec, found, err := readConversation.one(t, idParams{ID: id, AccountID: accountID})
	if err != nil {
		return model.Conversation{}, err
	}
	if !found {
		return model.Conversation{}, model.NotFound("conversation", id)
	}
	c := conversationOf(rec.C)
	c.Branches = []model.Branch{}
	for _, v := range rec.Branches {
		row := props(v.(map[string]any))
		b := branchOf(asProps(row["branch"]))
		b.ParentBranchID = row.str("parentBranchId")
		b.ForkAfterMessageID = row.str("afterMessageId")
		b.ForkAfterSeq = row.i64("afterSeq")
		c.Branches = append(c.Branches, b)
	}
	c.Participants = []model.Participant{}
	for _, v := range rec.Participants {
		c.Participants = append(c.Participants, participantOf(asProps(v)))
	}
	return c, nil
}

// DefaultDeleteBatch is how many nodes the first transaction of a conversation's deletion
// deletes. What a batch costs in Neo4j's transaction memory depends on what the nodes are
// (an assembly of a long conversation holds ~200 INCLUDED edges), so DeleteConversation
// halves the batch whenever Neo4j refuses one for memory.
const DefaultDeleteBatch = 1000

// DeleteConversation deletes a conversation and everything under it: first, in one
// transaction, it marks the conversation deleted, removes its branches and participants
// (from then on reads answer 404 and no write can land in it) and erases the stored
// idempotent responses of its writes (a replay answers 404, never the deleted content);
// then the remaining nodes go in batches, each its own transaction, so that no transaction
// outgrows Neo4j's transaction memory however long the conversation; the conversation node
// goes last. A batch that Neo4j refuses for memory is rolled back and taken again at half
// the size, down to one node. After each batch, the blobs its nodes held are removed unless
// another record shares them, so a failed delete leaves every remaining payload readable,
// and deleting again finishes an interrupted deletion.
func (s *Store) DeleteConversation(ctx context.Context, accountID, id string) error {
	_, err := writeTx(ctx, s, func(t *tx) (struct{}, error) {
		_, found, err := markConversationDeleted.one(t, idStampParams{ID: id, AccountID: accountID, RecordedAt: s.Now()})
		if err != nil {
			return struct{}{}, err
		}
		if !found {
			return struct{}{}, model.NotFound("conversation", id)
		}
		return struct{}{}, nil
	})
	if err != nil {
		return err
	}
	s.records.Drop(accountID, id)
	for limit := max(1, s.DeleteBatch); ; {
		deleted, refs, err := writeTxPair(ctx, s, func(t *tx) (int64, []string, error) {
			t.divisible = true
			row, found, err := deleteConversationBatch.one(t, deleteBatchParams{ID: id, AccountID: accountID, Limit: limit})
			if err != nil || !found {
				return 0, nil, err
			}
			if row.Deleted == 0 {
				// The conversation node went in this transaction: the deletion is done.
				return 0, row.Refs, t.answer(nil, "", "")
			}
			return row.Deleted, row.Refs, nil
		})
		var refused tooLarge
		if errors.As(err, &refused) {
			if limit == 1 {
				return model.Unavailable("Neo4j has too little transaction memory to delete one record of the conversation", refused.err)
			}
			limit /= 2
			continue
		}
		if err != nil {
			return err
		}
		s.removeBlobs(ctx, refs)
		if deleted == 0 {
			return nil
		}
	}
}

// AddParticipant adds a participant to a conversation.
func (s *Store) AddParticipant(ctx context.Context, accountID string, in model.NewParticipant) (model.Participant, error) {
	createdAt, recordedAt := s.stamps(in.At)
	return writeTx(ctx, s, func(t *tx) (model.Participant, error) {
		row, found, err := addParticipant.one(t, addParticipantParams{
			ID: newID("pt"), AccountID: accountID, ConversationID: in.ConversationID,
			Kind: in.Kind, Name: in.Name, Provider: in.Provider, Model: in.Model, Instructions: in.Instructions,
			CreatedAt: createdAt, RecordedAt: recordedAt,
		})
		if err != nil {
			return model.Participant{}, err
		}
		if !found {
			return model.Participant{}, model.NotFound("conversation", in.ConversationID)
		}
		p := participantOf(row.P)
		return p, t.answer(p, p.ConversationID, "")
	})
}

// Participant reads a participant.
func (s *Store) Participant(ctx context.Context, accountID, id string) (model.Participant, error) {
	return readTx(ctx, s, func(t *tx) (model.Participant, error) {
		row, found, err := readParticipant.one(t, idParams{ID: id, AccountID: accountID})
		if err != nil {
			return model.Participant{}, err
		}
		if !found {
			return model.Participant{}, model.NotFound("participant", id)
		}
		return participantOf(row.P), nil
	})
}

// SetParticipantInstructions replaces a participant's instructions, keeping the versions
// they replace for the assemblies that used them.
func (s *Store) SetParticipantInstructions(ctx context.Context, accountID, id, instructions string) (model.Participant, error) {
	return writeTx(ctx, s, func(t *tx) (model.Participant, error) {
		row, found, err := setParticipantInstructions.one(t, instructionsParams{ID: id, AccountID: accountID, Instructions: instructions, RecordedAt: s.Now().UTC()})
		if err != nil {
			return model.Participant{}, err
		}
		if !found {
			return model.Participant{}, model.NotFound("participant", id)
		}
		p := participantOf(row.P)
		return p, t.answer(p, p.ConversationID, "")
	})
}

// SetConversationInstructions replaces a conversation's instructions, keeping the versions
// they replace for the assemblies that used them. It answers the conversation with its
// branches and participants, as Conversation reads it.
func (s *Store) SetConversationInstructions(ctx context.Context, accountID, id, instructions string) (model.Conversation, error) {
	return writeTx(ctx, s, func(t *tx) (model.Conversation, error) {
		_, found, err := setConversationInstructions.one(t, instructionsParams{ID: id, AccountID: accountID, Instructions: instructions, RecordedAt: s.Now().UTC()})
		if err != nil {
			return model.Conversation{}, err
		}
		if !found {
			return model.Conversation{}, model.NotFound("conversation", id)
		}
		c, err := t.conversation(accountID, id)
		if err != nil {
			return model.Conversation{}, err
		}
		return c, t.answer(c, c.ID, "")
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
		if !parent.Contains(msg.branchID(), msg.seq()) {
			return model.Branch{}, model.Invalid("forkAfterMessageId", "message %q is not in the lineage of branch %q", in.ForkAfterMessageID, in.ParentBranchID)
		}
		name := in.Name
		if name == "" {
			name = fmt.Sprintf("fork-%s", in.ForkAfterMessageID)
		}
		_, taken, err := branchNameTaken.one(t, branchNameParams{ConversationID: in.ConversationID, AccountID: accountID, Name: name})
		if err != nil {
			return model.Branch{}, err
		}
		if taken {
			return model.Branch{}, &model.Error{Kind: model.KindConflict, Field: "name", Message: fmt.Sprintf("conversation already has a branch named %q", name)}
		}
		row, found, err := forkBranch.one(t, forkBranchParams{
			ID: newID("br"), AccountID: accountID, ConversationID: in.ConversationID,
			HolderBranchID: msg.branchID(), ForkAfterMessageID: in.ForkAfterMessageID, Name: name,
			CreatedAt: createdAt, RecordedAt: recordedAt,
		})
		if err != nil {
			return model.Branch{}, err
		}
		if !found {
			return model.Branch{}, model.NotFound("conversation", in.ConversationID)
		}
		b := branchOf(row.B)
		b.ParentBranchID = row.ParentBranchID
		b.ForkAfterMessageID = in.ForkAfterMessageID
		b.ForkAfterSeq = row.AfterSeq
		return b, t.answer(b, b.ConversationID, "")
	})
}

func conversationOf(p props) model.Conversation {
	return model.Conversation{ID: p.str("id"), Title: p.str("title"), BranchID: p.str("rootBranchId"), Instructions: p.str("instructions"),
		Stamp: stampOf(p)}
}

func branchOf(p props) model.Branch {
	return model.Branch{ID: p.str("id"), ConversationID: p.str("conversationId"), Name: p.str("name"), Stamp: stampOf(p)}
}

func participantOf(p props) model.Participant {
	return model.Participant{
		ID: p.str("id"), ConversationID: p.str("conversationId"), Kind: p.str("kind"), Name: p.str("name"),
		Provider: p.str("provider"), Model: p.str("model"), Instructions: p.str("instructions"), Stamp: stampOf(p),
	}
}

// Conversations lists an account's conversations, newest first, a page at a time. The
// cursor is the last listed conversation's createdAt and id, opaque to clients.
func (s *Store) Conversations(ctx context.Context, accountID string, q model.ConversationQuery) (model.ConversationPage, error) {
	limit := q.Limit
	params := listConversationsParams{AccountID: accountID, Limit: limit + 1, Title: q.Title}
	if q.Cursor != "" {
		at, id, err := decodeCursor(q.Cursor)
		if err != nil {
			return model.ConversationPage{}, err
		}
		params.AfterAt, params.AfterID = &at, id
	}
	recs, err := listConversations.autoAll(ctx, s, neo4j.AccessModeRead, params)
	if err != nil {
		return model.ConversationPage{}, err
	}
	page := model.ConversationPage{Conversations: []model.ConversationSummary{}}
	for i, r := range recs {
		if i == limit {
			last := page.Conversations[limit-1]
			next := encodeCursor(last.CreatedAt, last.ID)
			page.NextCursor = &next
			break
		}
		c := conversationOf(r.C)
		page.Conversations = append(page.Conversations, model.ConversationSummary{ID: c.ID, Title: c.Title, BranchID: c.BranchID, Stamp: c.Stamp})
	}
	return page, nil
}

func encodeCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(at.UTC().Format(time.RFC3339Nano) + "|" + id))
}

func decodeCursor(cursor string) (time.Time, string, error) {
	bad := model.Invalid("cursor", "cursor %q is not one that a page of this list returned", cursor)
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return time.Time{}, "", bad
	}
	stamp, id, ok := strings.Cut(string(raw), "|")
	at, err := time.Parse(time.RFC3339Nano, stamp)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", bad
	}
	return at, id, nil
}
