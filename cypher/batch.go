package cypher

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

// maxBatchWriters is how many batches of one statement are written at once: two, so that
// one is sent and encoded while the other commits.
const maxBatchWriters = 2

// maxBatchRows is the most rows one batch writes.
const maxBatchRows = 16

// batchTimeout bounds the write of one batch, which no single request's context governs.
const batchTimeout = 30 * time.Second

// groupCommit writes the rows of one batched statement (a statement that takes $rows, each
// row the parameters of one request's write, and returns one record per row it wrote, with
// the row's index as i) for concurrent requests together, in one transaction: group commit.
// A row submitted while fewer than maxBatchWriters batches are being written is written at
// once; rows submitted meanwhile wait and are then written together, up to maxBatchRows in
// one transaction. A transaction's fixed cost (its Bolt messages, its commit and the
// transaction log append) is then paid once per batch, not once per request, and for a
// small write it is as much as the write itself. Concurrent assemblies of a
// conversation also link the same included records and decisions: in separate
// transactions each locks those nodes' relationship chains in turn and waits for the
// others' locks; in one transaction each node is locked once.
//
// Each request still answers only after its row has committed, and a batch that fails for
// any reason but Neo4j being unavailable is written again one row at a time, so that a
// request fails only for its own reasons and a failed request writes nothing. The zero value
// with a statement is ready to use.
type groupCommit struct {
	statement batchQuery

	mu      sync.Mutex
	queue   []*pendingRow
	writers int
}

// QueuedRows returns how many rows wait for a batch of the named statement
// (RecordAssemblies, RequestToolCall or RecordToolResult), for tests that must know that
// requests have queued behind the batches being written.
func (s *Store) QueuedRows(statement string) int {
	for _, g := range []*groupCommit{&s.assemblyRecords, &s.toolCalls, &s.toolResults} {
		if g.statement.queryName() == statement {
			g.mu.Lock()
			defer g.mu.Unlock()
			return len(g.queue)
		}
	}
	return 0
}

// pendingRow is one request's row waiting for its batch.
type pendingRow struct {
	ctx       context.Context
	accountID string
	row       map[string]any
	done      chan rowResult
}

// rowResult is what writing a row returned: its record, or nil when the statement wrote
// nothing for it.
type rowResult struct {
	rec *neo4j.Record
	err error
}

// write queues a row of an account, waits until it is written, and returns its record (nil
// when the statement wrote nothing for it).
func (g *groupCommit) write(ctx context.Context, s *Store, accountID string, row map[string]any) (*neo4j.Record, error) {
	p := &pendingRow{ctx: ctx, accountID: accountID, row: row, done: make(chan rowResult, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, p)
	if g.writers < maxBatchWriters {
		g.writers++
		go g.drain(s)
	}
	g.mu.Unlock()
	// Not abandoned when ctx ends: once its batch is being written the row may commit, and
	// the answer says what happened. A row whose request has ended before its batch starts
	// is not written.
	r := <-p.done
	return r.rec, r.err
}

// drain writes batches until the queue is empty. A batch holds rows of one account, the
// first waiting one's, in the order they came: the statement takes the account as
// $accountId, so that no statement can touch two accounts' data.
func (g *groupCommit) drain(s *Store) {
	for {
		g.mu.Lock()
		if len(g.queue) == 0 {
			g.writers--
			g.mu.Unlock()
			return
		}
		var batch, rest []*pendingRow
		for _, p := range g.queue {
			if len(batch) < maxBatchRows && p.accountID == g.queue[0].accountID {
				batch = append(batch, p)
			} else {
				rest = append(rest, p)
			}
		}
		g.queue = rest
		g.mu.Unlock()
		g.writeBatch(s, batch)
	}
}

// writeBatch writes the rows of batch whose requests are still waiting, in one
// transaction, and answers each; when that transaction fails for any reason but Neo4j being
// unavailable, it writes them again one at a time.
func (g *groupCommit) writeBatch(s *Store, batch []*pendingRow) {
	live := make([]*pendingRow, 0, len(batch))
	rows := make([]map[string]any, 0, len(batch))
	for _, p := range batch {
		if err := p.ctx.Err(); err != nil {
			p.done <- rowResult{err: translate(err)}
			continue
		}
		live = append(live, p)
		rows = append(rows, p.row)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	chain := joinedChain(live)
	ctx = model.WithCausalChain(ctx, chain)
	accountID := live[0].accountID
	recs, err := writeRows(ctx, s, g.statement, accountID, rows)
	if err != nil && len(live) > 1 && model.KindOf(err) != model.KindUnavailable {
		// Each row alone, from its own request's bookmarks: a bookmark one client sent
		// that Neo4j refuses fails that client's row only.
		for _, p := range live {
			one, err := writeRows(model.WithCausalChain(ctx, model.CausalChainOf(p.ctx)), s, g.statement, accountID, []map[string]any{p.row})
			p.answer(nil, rowResult{rec: one[0], err: err})
		}
		return
	}
	for i, p := range live {
		p.answer(chain, rowResult{rec: recs[i], err: err})
	}
}

// joinedChain is the causal chain of a batch: it starts from the bookmarks of every row's
// request, so that the batch sees what each of them must.
func joinedChain(rows []*pendingRow) *model.CausalChain {
	chains := make([]*model.CausalChain, len(rows))
	for i, p := range rows {
		chains[i] = model.CausalChainOf(p.ctx)
	}
	return model.NewCausalChain(model.JoinedBookmarks(chains...))
}

// answer advances the row's request past its batch (chain, nil when the row was written
// alone), then answers it.
func (p *pendingRow) answer(chain *model.CausalChain, r rowResult) {
	model.CausalChainOf(p.ctx).Advance(nil, chain.Bookmarks())
	p.done <- r
}

// writeRows runs a batched statement over rows of an account as one auto-commit transaction
// (statement, retried on transient failures) and returns each row's record, nil where the
// statement returned none for it; on failure, a nil record for each row.
func writeRows(ctx context.Context, s *Store, q batchQuery, accountID string, rows []map[string]any) ([]*neo4j.Record, error) {
	recs, err := statement(ctx, s, neo4j.AccessModeWrite, q.queryName(), q.encode(rowsParams(accountID, rows)))
	if err != nil {
		return make([]*neo4j.Record, len(rows)), err
	}
	return placeRows(len(rows), recs)
}

// oneRow runs a batched statement over one row of an account in the transaction and returns
// its record, or nil when it wrote nothing for it.
func (t *tx) oneRow(q batchQuery, accountID string, row map[string]any) (*neo4j.Record, error) {
	recs, err := t.run(q.queryName(), q.encode(rowsParams(accountID, []map[string]any{row})))
	if err != nil {
		return nil, err
	}
	out, err := placeRows(1, recs)
	return out[0], err
}

// batchParams are a batched statement's parameters: the account, and the rows, each the
// parameters of one request's write, numbered (i) by its index.
type batchParams struct {
	AccountID string `param:"accountId"`
	Rows      []any  `param:"rows"`
}

// batchQuery is a batched statement, whatever its rows: each of its records carries its
// row's index as i.
type batchQuery interface {
	queryName() string
	encode(p *batchParams) map[string]any
}

// rowsParams numbers the rows of a batched statement over an account.
func rowsParams(accountID string, rows []map[string]any) *batchParams {
	list := make([]any, len(rows))
	for i, row := range rows {
		row["i"] = i
		list[i] = row
	}
	return &batchParams{AccountID: accountID, Rows: list}
}

// placeRows returns the records of a batched statement over n rows, each at its row's index
// (i), nil for a row it returned none for.
func placeRows(n int, recs []*neo4j.Record) ([]*neo4j.Record, error) {
	out := make([]*neo4j.Record, n)
	for _, rec := range recs {
		v, _ := rec.Get("i")
		i, ok := v.(int64)
		if !ok || i < 0 || int(i) >= n {
			return make([]*neo4j.Record, n), model.Internal(fmt.Sprintf("a batched statement returned row %d of %d", i, n), nil)
		}
		out[i] = rec
	}
	return out, nil
}
