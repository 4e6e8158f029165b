package cypher

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

// The statements of the drop-in endpoints' conversations and hash chains (DESIGN §9).
var (
	keyedConversation = newQuery[keyedConversationParams, idRow]("KeyedConversation")
	conversationByKey = newQuery[conversationKeyParams, idRow]("ConversationByKey")
	chainHeads        = newQuery[chainHeadsParams, chainHeadRow]("ChainHeads")
	longestChainPoint = newQuery[longestChainPointParams, chainPointRow]("LongestChainPoint")
	rootBranch        = newQuery[rootBranchParams, branchRow]("RootBranch")
	recordChain       = newQuery[recordChainParams, recordChainRow]("RecordChain")
)

type keyedConversationParams struct {
	ID           string    `param:"id"`
	BranchID     string    `param:"branchId"`
	AccountID    string    `param:"accountId"`
	Key          string    `param:"key"`
	Title        string    `param:"title"`
	Instructions string    `param:"instructions"`
	CreatedAt    time.Time `param:"createdAt"`
	RecordedAt   time.Time `param:"recordedAt"`
}

type conversationKeyParams struct {
	AccountID string `param:"accountId"`
	Key       string `param:"key"`
}

type chainHeadsParams struct {
	ConversationID string `param:"conversationId"`
	AccountID      string `param:"accountId"`
	BranchID       string `param:"branchId"`
}

type chainHeadRow struct {
	BranchID  string `col:"branchId"`
	SHA256    string `col:"sha256"`
	Length    int    `col:"length"`
	MessageID string `col:"messageId"`
	RunID     string `col:"runId"`
	Awaiting  bool   `col:"awaiting"`
	Empty     bool   `col:"empty"`
}

type longestChainPointParams struct {
	ConversationID string   `param:"conversationId"`
	AccountID      string   `param:"accountId"`
	Hashes         []string `param:"hashes"`
}

type chainPointRow struct {
	P props `col:"p"`
}

type rootBranchParams struct {
	ID             string    `param:"id"`
	AccountID      string    `param:"accountId"`
	ConversationID string    `param:"conversationId"`
	Name           string    `param:"name"`
	CreatedAt      time.Time `param:"createdAt"`
	RecordedAt     time.Time `param:"recordedAt"`
}

type branchRow struct {
	B props `col:"b"`
}

type recordChainParams struct {
	AccountID     string           `param:"accountId"`
	BranchID      string           `param:"branchId"`
	HeadSHA256    string           `param:"headSha256"`
	HeadLength    int              `param:"headLength"`
	HeadMessageID string           `param:"headMessageId"`
	HeadRunID     string           `param:"headRunId"`
	HeadAwaiting  bool             `param:"headAwaiting"`
	Points        []map[string]any `param:"points"`
	Now           time.Time        `param:"now"`
	// KeyID, Claim, Status, Body and ConversationID store the call's answer under its
	// Idempotency-Key (KeyID null for none).
	KeyID          string `param:"keyId,null"`
	Claim          string `param:"claim,null"`
	Status         int    `param:"status"`
	Body           string `param:"body"`
	ConversationID string `param:"conversationId,null"`
}

type recordChainRow struct {
	BranchID string `col:"branchId"`
	Points   int64  `col:"points"`
}

// KeyedConversation finds the conversation of a stable key in a read, and creates it only
// when there is none.
func (s *Store) KeyedConversation(ctx context.Context, accountID, key string, in model.NewConversation) (model.Conversation, error) {
	c, err := readTx(ctx, s, func(t *tx) (model.Conversation, error) {
		row, found, err := conversationByKey.one(t, conversationKeyParams{AccountID: accountID, Key: key})
		if err != nil || !found {
			return model.Conversation{}, err
		}
		return t.conversation(accountID, row.ID)
	})
	if err != nil || c.ID != "" {
		return c, err
	}
	createdAt, recordedAt := s.stamps(in.At)
	return writeTx(ctx, s, func(t *tx) (model.Conversation, error) {
		row, found, err := keyedConversation.one(t, keyedConversationParams{
			ID: newID("cnv"), BranchID: newID("br"), AccountID: accountID, Key: key, Title: in.Title,
			Instructions: in.Instructions, CreatedAt: createdAt, RecordedAt: recordedAt,
		})
		if err != nil {
			return model.Conversation{}, err
		}
		if !found {
			return model.Conversation{}, accountErased(accountID)
		}
		return t.conversation(accountID, row.ID)
	})
}

// ChainHeads reads the heads of a conversation's branches.
func (s *Store) ChainHeads(ctx context.Context, accountID, conversationID, branchID string) ([]model.ChainHead, error) {
	rows, err := chainHeads.autoAll(ctx, s, neo4j.AccessModeRead, chainHeadsParams{ConversationID: conversationID, AccountID: accountID, BranchID: branchID})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		if branchID != "" {
			return nil, model.NotFound("branch", branchID)
		}
		return nil, model.NotFound("conversation", conversationID)
	}
	out := make([]model.ChainHead, len(rows))
	for i, r := range rows {
		out[i] = model.ChainHead{BranchID: r.BranchID, SHA256: r.SHA256, Length: r.Length, MessageID: r.MessageID,
			RunID: r.RunID, Awaiting: r.Awaiting, Empty: r.Empty}
	}
	return out, nil
}

// LongestChainPoint finds the point of the longest list among hashes.
func (s *Store) LongestChainPoint(ctx context.Context, accountID, conversationID string, hashes []string) (model.ChainPoint, bool, error) {
	row, found, err := longestChainPoint.autoOne(ctx, s, neo4j.AccessModeRead, longestChainPointParams{ConversationID: conversationID, AccountID: accountID, Hashes: hashes})
	if err != nil || !found {
		return model.ChainPoint{}, false, err
	}
	p := row.P
	return model.ChainPoint{SHA256: p.str("sha256"), Length: int(p.i64("length")), BranchID: p.str("branchId"), MessageID: p.str("messageId"),
		RunID: p.str("runId"), Request: p.boolean("request"), Awaiting: p.boolean("awaiting")}, true, nil
}

// RootBranch starts a branch that inherits no message.
func (s *Store) RootBranch(ctx context.Context, accountID, conversationID, name string) (model.Branch, error) {
	createdAt, recordedAt := s.stamps(nil)
	row, found, err := rootBranch.autoOne(ctx, s, neo4j.AccessModeWrite, rootBranchParams{ID: newID("br"), AccountID: accountID,
		ConversationID: conversationID, Name: name, CreatedAt: createdAt, RecordedAt: recordedAt})
	if err != nil {
		return model.Branch{}, err
	}
	if !found || row.B == nil {
		return model.Branch{}, model.NotFound("conversation", conversationID)
	}
	return branchOf(row.B), nil
}

// RecordChain writes a call's chain points and its branch's head, with the call's answer
// stored under the request's claim, in one statement.
func (s *Store) RecordChain(ctx context.Context, accountID string, in model.ChainRecord) error {
	points := make([]map[string]any, len(in.Points))
	for i, p := range in.Points {
		points[i] = map[string]any{"sha256": p.SHA256, "length": p.Length, "branchId": p.BranchID, "messageId": p.MessageID,
			"runId": p.RunID, "request": p.Request, "awaiting": p.Awaiting}
	}
	h := in.Head
	p := recordChainParams{AccountID: accountID, BranchID: h.BranchID, HeadSHA256: h.SHA256,
		HeadLength: h.Length, HeadMessageID: h.MessageID, HeadRunID: h.RunID, HeadAwaiting: h.Awaiting, Points: points, Now: s.Now()}
	claim := model.IdempotencyClaimOf(ctx)
	answering := in.Answer != nil && claim != nil && claim.Status != 0
	if answering {
		body, err := responseBody(in.Answer)
		if err != nil {
			return err
		}
		p.KeyID, p.Claim, p.Status, p.Body, p.ConversationID = idempotencyID(claim.AccountID, claim.Key), claim.Claim, claim.Status, string(body), in.ConversationID
	}
	_, found, err := recordChain.autoOne(ctx, s, neo4j.AccessModeWrite, p)
	if err == nil && !found {
		err = model.NotFound("branch", h.BranchID)
		if answering {
			// Nothing was written: the branch is gone, or a retry took the key.
			err = s.keyHeldOr(ctx, claim, err)
		}
	}
	if err == nil && answering {
		claim.Answered = true
	}
	return err
}
