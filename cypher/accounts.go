package cypher

import (
	"context"
	"sync"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

// An account's erasure (DESIGN §10): an AccountErasure node first, which every server's
// requests and the writes that create an account's first records check; then, after a
// grace that lets the writes already past those checks commit, its conversations are
// deleted (each as DELETE /v1/conversations/{id} does, with their blobs) and its own nodes,
// twice, the second pass after another grace for any write that was still in flight.

var (
	markAccountErased    = newQuery[accountStampParams, erasedRow]("MarkAccountErased")
	erasedAccounts       = newQuery[noParams, erasedAccountRow]("ErasedAccounts")
	accountConversations = newQuery[accountLimitParams, idRow]("AccountConversations")
	accountRecords       = newQuery[accountParams, labelCountRow]("AccountRecords")
	deleteAccountBatch   = newQuery[accountLimitParams, deletedRow]("DeleteAccountBatch")
)

type accountStampParams struct {
	AccountID string    `param:"accountId"`
	Now       time.Time `param:"now"`
}

type accountLimitParams struct {
	AccountID string `param:"accountId"`
	Limit     int    `param:"limit"`
}

type erasedRow struct {
	ErasedAt time.Time `col:"erasedAt"`
}

type erasedAccountRow struct {
	AccountID string    `col:"accountId"`
	ErasedAt  time.Time `col:"erasedAt"`
}

type labelCountRow struct {
	Label string `col:"label"`
	Nodes int64  `col:"nodes"`
}

type deletedRow struct {
	Deleted int64 `col:"deleted"`
}

// DefaultErasureGrace is how long an account's erasure waits after recording it, and again
// before its second pass: longer than a server takes to see it (erasedRefresh) plus a write
// that was already past the checks.
const DefaultErasureGrace = 5 * time.Second

// erasedRefresh is how often a server reads the erased accounts again.
const erasedRefresh = 2 * time.Second

// erasedAccountsCache is a server's view of the erased accounts. One request at a time reads
// it again; the others answer from the view it replaces meanwhile, unless there is none yet.
type erasedAccountsCache struct {
	mu         sync.Mutex
	read       time.Time
	refreshing bool
	erased     map[string]time.Time
}

// accountErased is the error of a write for an erased account.
func accountErased(accountID string) error {
	return model.Gone("account %q was erased (DELETE /v1/account): its key writes and reads nothing more", accountID)
}

// AccountErasedAt says when an account was erased, from a view of the erased accounts read
// again every couple of seconds: see model.Accounts.
func (s *Store) AccountErasedAt(ctx context.Context, accountID string) (*time.Time, error) {
	c := &s.erased
	c.mu.Lock()
	if time.Since(c.read) > erasedRefresh && (!c.refreshing || c.read.IsZero()) {
		c.refreshing = true
		c.mu.Unlock()
		rows, err := erasedAccounts.autoAll(ctx, s, neo4j.AccessModeRead, noParams{})
		c.mu.Lock()
		c.refreshing = false
		if err != nil {
			c.mu.Unlock()
			return nil, err
		}
		fresh := make(map[string]time.Time, len(rows))
		for _, r := range rows {
			fresh[r.AccountID] = r.ErasedAt
		}
		for id, at := range c.erased {
			// An erasure this server recorded meanwhile stays.
			if _, ok := fresh[id]; !ok {
				fresh[id] = at
			}
		}
		c.erased, c.read = fresh, time.Now()
	}
	defer c.mu.Unlock()
	if t, ok := c.erased[accountID]; ok {
		return &t, nil
	}
	return nil, nil
}

// EraseAccount erases everything of an account: see model.Accounts.
func (s *Store) EraseAccount(ctx context.Context, accountID string) (model.AccountErasure, error) {
	row, _, err := markAccountErased.autoOne(ctx, s, neo4j.AccessModeWrite, accountStampParams{AccountID: accountID, Now: s.Now().UTC()})
	if err != nil {
		return model.AccountErasure{}, err
	}
	s.erased.mu.Lock()
	if s.erased.erased == nil {
		s.erased.erased = map[string]time.Time{}
	}
	s.erased.erased[accountID] = row.ErasedAt
	s.erased.mu.Unlock()
	out := model.AccountErasure{AccountID: accountID, ErasedAt: row.ErasedAt, Deleted: map[string]int64{}}
	grace := s.ErasureGrace
	if grace == 0 {
		grace = DefaultErasureGrace
	}
	for range 2 {
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(grace):
		}
		counts, err := accountRecords.autoAll(ctx, s, neo4j.AccessModeRead, accountParams{AccountID: accountID})
		if err != nil {
			return out, err
		}
		for _, c := range counts {
			out.Deleted[c.Label] += c.Nodes
		}
		if err := s.deleteAccountRecords(ctx, accountID); err != nil {
			return out, err
		}
	}
	return out, nil
}

// deleteAccountRecords deletes an erased account's conversations and its own nodes.
func (s *Store) deleteAccountRecords(ctx context.Context, accountID string) error {
	for {
		ids, err := accountConversations.autoAll(ctx, s, neo4j.AccessModeRead, accountLimitParams{AccountID: accountID, Limit: 100})
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			break
		}
		for _, id := range ids {
			if err := s.DeleteConversation(ctx, accountID, id.ID); err != nil && model.KindOf(err) != model.KindNotFound {
				return err
			}
		}
	}
	for {
		row, _, err := deleteAccountBatch.autoOne(ctx, s, neo4j.AccessModeWrite, accountLimitParams{AccountID: accountID, Limit: max(1, s.DeleteBatch)})
		if err != nil {
			return err
		}
		if row.Deleted == 0 {
			return nil
		}
	}
}
