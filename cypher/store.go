// Package cypher is ctxgraph's Neo4j store: the only package that imports the Neo4j driver.
// Every query is a .cypher file in queries/, embedded and run as a typed statement (query):
// a struct of its $parameters in, a struct per record out. Every driver error is translated
// to a model error kind here and nowhere else. The store feeds the records it reads to the
// lineage package, which selects an assembly's candidates from them.
package cypher

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"

	"github.com/ctxgraph/ctxgraph/lineage"
	"github.com/ctxgraph/ctxgraph/model"
)

// retryTime is how long a transaction is retried on transient failures (retrying; the driver's
// MaxTransactionRetryTime, and single's own loop).
const retryTime = 3 * time.Second

// lockRetryTime is how long a transaction is retried while it keeps losing lock conflicts:
// Neo4j breaks a deadlock by failing one of its transactions, which then runs again. Writes
// to one dense node (a branch with many records, racing its conversation's deletion) can
// lose several times in a row, each time after waiting for the locks it lost on, so the
// budget is longer than retryTime, which bounds waiting for an unreachable Neo4j.
const lockRetryTime = 15 * time.Second

// maxRetryDelay bounds the wait between two attempts of a transaction: a lost lock conflict
// is usually won a few milliseconds later, and a transaction that loses many in a row (a
// conversation's deletion racing its writers) keeps trying until lockRetryTime.
const maxRetryDelay = 250 * time.Millisecond

// DefaultInlineLimit is the payload size above which raw arguments and results go to the
// blob store instead of the graph (DESIGN §2: 64 KiB by default).
const DefaultInlineLimit = 64 << 10

// Config says how to reach Neo4j.
type Config struct {
	URI      string
	User     string
	Password string
	Database string
	// AnyReader lets a routing driver (neo4j://) send reads to any member of a cluster
	// that has applied the bookmarks of the request's causal chain (model.CausalChain):
	// the client's writes it sent the bookmarks of, and every write of this process.
	// Unset, reads go to the leader, as writes do, which has applied every write.
	AnyReader bool
}

// Store implements the model's graph services on Neo4j.
type Store struct {
	driver   neo4j.DriverWithContext
	database string
	blobs    model.BlobStore

	// InlineLimit is the largest payload kept inside the graph, in bytes.
	InlineLimit int
	// Now is the clock that stamps recordedAt; tests replace it.
	Now func() time.Time
	// Tokens counts the tokens of each record as naive history replay would send it, so that
	// an assembly's baseline is a sum, not a re-read of every raw payload. Nil counts zero.
	Tokens model.TokenCounter
	// AfterStatement, when set, runs after every statement of a write transaction and can
	// fail it. Tests use it to inject a failure half-way through a multi-node write.
	AfterStatement func(query string) error
	// ProfileStatements, when set, runs every statement under PROFILE and is given the
	// plan Neo4j executed. Tests use it to check what each statement of a request reads.
	ProfileStatements func(query string, plan neo4j.ProfiledPlan)
	// DeleteBatch is how many nodes each transaction of a conversation's deletion deletes.
	DeleteBatch int
	// ErasureGrace is how long an account's erasure waits for the writes already past its
	// checks (DefaultErasureGrace when zero).
	ErasureGrace time.Duration
	// erased is this server's view of the erased accounts.
	erased erasedAccountsCache
	// Promoter derives the memory of a tool result recorded without client memories, in
	// the result's transaction; nil derives none.
	Promoter model.Promoter

	// records is the assembler's cache of conversation copies (lineage.Cache); nil when
	// disabled with SetRecordCache(0).
	records *lineage.Cache
	// turnReads are reads of the turns' first statements, for their runs' first assemblies,
	// by run id (taken once).
	turnReads ring[*turnRead]
	// runPlaces are the branches and participants of the runs this process began, claimed
	// or read lately, by account and run id: a continue claims its run without reading it
	// first (ClaimRunStep).
	runPlaces ring[runPlace]
	// assemblyRecords, toolCalls and toolResults write assembly records, tool calls and
	// tool results, batching those of concurrent requests (groupCommit).
	assemblyRecords, toolCalls, toolResults groupCommit
	// recent remembers the calls this process recorded lately, for the memories derived
	// from their results.
	recent recentCalls
	// blobRetry holds the blob removals that could not be checked against the graph.
	blobRetry pendingBlobs
	// releases are the releases of Idempotency-Key claims that Neo4j did not answer.
	releases pendingReleases
	// unavailable and failed count the driver failures the store answered (Neo4jErrors).
	unavailable, failed atomic.Int64
	// unreachableSince is when Neo4j last began to be unavailable (unix nanoseconds), zero
	// while it answers: the Retry-After of a 503 grows with the outage (unavailableRetryAfter).
	unreachableSince atomic.Int64
	// readsOnLeader routes reads as writes are routed, to the leader (Config.AnyReader).
	readsOnLeader bool
	// direct says the URI names one server (bolt://), not a cluster to route over.
	direct bool
	// written is the causal chain of this process's own work: every session starts from
	// it, so that a read on any member sees every write this process answered before it.
	written *model.CausalChain
}

// session opens a session for work of the given mode, routed to the leader for reads too
// unless the store may read from any member of a cluster. The session starts from the
// bookmarks of the request's causal chain and of this process, and advances both. Every
// statement's answer is collected whole, so the session asks for all of it at once
// (FetchAll) instead of in pulls of 1,000 records: a conversation read in full is one
// record per node, and each pull is a round trip that stops Neo4j's stream.
func (s *Store) session(ctx context.Context, mode neo4j.AccessMode) neo4j.SessionWithContext {
	if s.readsOnLeader {
		mode = neo4j.AccessModeWrite
	}
	return s.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: s.database, AccessMode: mode, FetchSize: neo4j.FetchAll,
		BookmarkManager: causalBookmarks{request: model.CausalChainOf(ctx), process: s.written, direct: s.direct}})
}

// causalBookmarks is the driver's bookmark manager of one session: the bookmarks of its
// request's causal chain (none for the server's own background work) and of its process.
type causalBookmarks struct {
	request, process *model.CausalChain
	// direct says the store talks to one Neo4j server (bolt://), which has applied every
	// write it answered: a session sends only the bookmarks a client sent back, so that
	// Neo4j checks them, and spares it checking the process's own on every transaction.
	direct bool
}

// GetBookmarks returns the bookmarks a session must start from.
func (b causalBookmarks) GetBookmarks(context.Context) (neo4j.Bookmarks, error) {
	if b.direct {
		if !b.request.Sent() {
			return nil, nil
		}
		return b.request.Bookmarks(), nil
	}
	return model.JoinedBookmarks(b.process, b.request), nil
}

// UpdateBookmarks advances both chains past a transaction's end. On one server the
// process's chain is never sent, so it is not kept either: its sessions start from no
// bookmark, and each would add one to it for good.
func (b causalBookmarks) UpdateBookmarks(_ context.Context, previous, next neo4j.Bookmarks) error {
	if !b.direct {
		b.process.Advance(previous, next)
	}
	b.request.Advance(previous, next)
	return nil
}

var (
	_ model.ExecutionGraph   = (*Store)(nil)
	_ model.IdempotencyStore = (*Store)(nil)
	_ model.Pinger           = (*Store)(nil)
)

// Open connects to Neo4j and returns a store writing large payloads to blobs. It does not
// wait for Neo4j to answer: the store reports KindUnavailable until it does, and recovers
// on its own once it does.
func Open(cfg Config, blobs model.BlobStore) (*Store, error) {
	auth := neo4j.NoAuth()
	if cfg.User != "" {
		auth = neo4j.BasicAuth(cfg.User, cfg.Password, "")
	}
	driver, err := neo4j.NewDriverWithContext(cfg.URI, auth, func(c *config.Config) {
		// Fail fast when Neo4j is away, so that requests answer 503 instead of hanging for
		// the driver's default 30 s of retries and 60 s of pool waits.
		c.MaxTransactionRetryTime = retryTime
		c.SocketConnectTimeout = 2 * time.Second
		c.ConnectionAcquisitionTimeout = 5 * time.Second
		c.MaxConnectionPoolSize = 64
	})
	if err != nil {
		return nil, model.Invalid("NEO4J_URI", "cannot use Neo4j URI %q: %v", cfg.URI, err)
	}
	scheme, _, _ := strings.Cut(cfg.URI, "://")
	return &Store{
		driver:        driver,
		database:      cfg.Database,
		readsOnLeader: strings.HasPrefix(scheme, "neo4j") && !cfg.AnyReader,
		direct:        strings.HasPrefix(scheme, "bolt"),
		blobs:         blobs,
		InlineLimit:   DefaultInlineLimit,
		Now:           func() time.Time { return time.Now().UTC() },
		records:       lineage.NewCache(DefaultRecordCacheBytes),
		DeleteBatch:   DefaultDeleteBatch,
		written:       model.NewCausalChain(nil),
		turnReads:     ring[*turnRead]{size: maxTurnReads},
		runPlaces:     ring[runPlace]{size: maxRunPlaces},
		recent:        recentCalls{calls: ring[model.ToolCall]{size: recentCallsSize}},

		assemblyRecords: groupCommit{statement: recordAssemblies},
		toolCalls:       groupCommit{statement: requestToolCall},
		toolResults:     groupCommit{statement: recordToolResult},
	}, nil
}

// SetRecordCache sets the heap the assembler's copies of conversations may hold in all, in
// bytes; 0 turns the cache off, so that every assembly reads its conversation in full.
func (s *Store) SetRecordCache(bytes int64) {
	if bytes <= 0 {
		s.records = nil
		return
	}
	s.records = lineage.NewCache(bytes)
}

// Close releases the driver's connections.
func (s *Store) Close(ctx context.Context) error { return s.driver.Close(ctx) }

// Ping checks that Neo4j answers a query.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := s.driver.VerifyConnectivity(ctx); err != nil {
		return model.Unavailable("Neo4j is unreachable", err)
	}
	return nil
}

// roundTrip is the bare round trip.
var roundTrip = newQuery[noParams, struct {
	One int64 `col:"one"`
}]("RoundTrip")

// RoundTrip runs `RETURN 1` in a read transaction: one Bolt round trip to the server and
// back through the driver, the floor of any query.
func (s *Store) RoundTrip(ctx context.Context) error {
	_, err := readTx(ctx, s, func(t *tx) (struct{}, error) {
		_, _, err := roundTrip.one(t, noParams{})
		return struct{}{}, err
	})
	return err
}

// QueriesRun lists the names of the queries this process has run at least once.
func QueriesRun() []string { return coverage.ran() }

// QueryNames lists every embedded query.
func QueryNames() []string { return allQueryNames() }

// QueryText returns the text of a named query as it is run, its parts included.
func QueryText(name string) (string, error) { return queryText(name) }

// newID returns a fresh, time-ordered id with a prefix naming its label, so that ids read
// well in Neo4j Browser.
func newID(prefix string) string {
	return prefix + "_" + strings.ReplaceAll(uuid.Must(uuid.NewV7()).String(), "-", "")
}

// tx is one transaction of one request: every statement of a store method runs through it.
type tx struct {
	ctx   context.Context
	inner statementRunner
	store *Store
	write bool
	// first names the transaction's first statement, under which its time is counted.
	first string
	// answered says that the transaction stored its request's idempotent response (answer).
	answered bool
	// divisible says that the work can be split into smaller transactions: when Neo4j
	// refuses it for transaction memory it ends as tooLarge instead of being retried as it
	// is, which would fail the same way.
	divisible bool
}

// tooLarge is a divisible transaction that Neo4j refused for transaction memory.
type tooLarge struct{ err error }

func (e tooLarge) Error() string { return "transaction too large: " + e.err.Error() }

// outOfTransactionMemory reports whether Neo4j refused a transaction because it, or all
// transactions together, reached their memory limit (db.memory.transaction.max,
// dbms.memory.transaction.total.max), in a statement or at its commit.
func outOfTransactionMemory(err error) bool {
	var n4j *neo4j.Neo4jError
	return errors.As(err, &n4j) && (strings.HasSuffix(n4j.Code, ".General.MemoryPoolOutOfMemoryError") ||
		strings.HasSuffix(n4j.Code, ".General.TransactionOutOfMemoryError"))
}

// run executes the named query and collects its records.
func (t *tx) run(name string, params map[string]any) ([]*neo4j.Record, error) {
	text, err := queryText(name)
	if err != nil {
		return nil, err
	}
	profiled := t.store.ProfileStatements
	if profiled != nil {
		text = "PROFILE " + text
	}
	start := time.Now()
	res, err := t.inner.Run(t.ctx, text, params)
	if err != nil {
		return nil, err
	}
	records, err := res.Collect(t.ctx)
	if err != nil {
		return nil, err
	}
	var server time.Duration
	if sum, err := res.Consume(t.ctx); err == nil {
		server = sum.ResultAvailableAfter() + sum.ResultConsumedAfter()
		if profiled != nil && sum.Profile() != nil {
			profiled(name, sum.Profile())
		}
	}
	coverage.timed(name, time.Since(start), server)
	if t.first == "" {
		t.first = name
	}
	if t.write && t.store.AfterStatement != nil {
		if err := t.store.AfterStatement(name); err != nil {
			return nil, err
		}
	}
	return records, nil
}

// writeTx runs work in one managed write transaction, retried by the driver on transient
// failures, and translates any driver error.
func writeTx[T any](ctx context.Context, s *Store, work func(t *tx) (T, error)) (T, error) {
	return execute(ctx, s, neo4j.AccessModeWrite, work)
}

// writeTxPair is writeTx for work that answers two values.
func writeTxPair[A, B any](ctx context.Context, s *Store, work func(t *tx) (A, B, error)) (A, B, error) {
	type pair struct {
		a A
		b B
	}
	p, err := writeTx(ctx, s, func(t *tx) (pair, error) {
		a, b, err := work(t)
		return pair{a, b}, err
	})
	return p.a, p.b, err
}

// statementRunner runs statements: in a managed transaction, or (autoCommit) each in a
// transaction of its own.
type statementRunner interface {
	Run(ctx context.Context, cypher string, params map[string]any) (neo4j.ResultWithContext, error)
}

// autoCommit runs each statement as an auto-commit transaction of its session.
type autoCommit struct{ session neo4j.SessionWithContext }

func (a autoCommit) Run(ctx context.Context, cypher string, params map[string]any) (neo4j.ResultWithContext, error) {
	return a.session.Run(ctx, cypher, params)
}

// statement runs one statement as an auto-commit transaction and returns its records. It
// saves a managed transaction's BEGIN and COMMIT messages: a round trip, and Neo4j's CPU
// for both, which the hot paths (an
// assembly's read and record, a tool call, a tool result) pay on every request. Like a
// managed transaction, it is retried on transient failures for up to retryTime (retrySafe).
// With AfterStatement set, a write runs as a managed transaction instead, so that the failure
// the hook injects rolls it back.
func statement(ctx context.Context, s *Store, mode neo4j.AccessMode, name string, params map[string]any) ([]*neo4j.Record, error) {
	if mode == neo4j.AccessModeWrite && s.AfterStatement != nil {
		return execute(ctx, s, mode, func(t *tx) ([]*neo4j.Record, error) { return t.run(name, params) })
	}
	session := s.session(ctx, mode)
	defer session.Close(ctx)
	start := time.Now()
	recs, err := retrying(ctx, mode, func() ([]*neo4j.Record, bool, error) {
		t := &tx{ctx: ctx, inner: autoCommit{session}, store: s, write: mode == neo4j.AccessModeWrite}
		recs, err := t.run(name, params)
		return recs, true, err
	})
	if err != nil {
		return nil, s.translate(ctx, err)
	}
	s.unreachableSince.Store(0)
	coverage.transaction(name, time.Since(start))
	return recs, nil
}

// retrying runs attempt until it succeeds, or fails in a way that may not be retried
// (retrySafe; attempt reports whether a write's failure is ambiguous, that is, whether it
// may have come after the write committed), or the retry budget is spent: retryTime, or lockRetryTime while the attempts
// lose lock conflicts. Between attempts it backs off from 10 ms, doubling up to
// maxRetryDelay, with jitter.
func retrying[T any](ctx context.Context, mode neo4j.AccessMode, attempt func() (T, bool, error)) (T, error) {
	start := time.Now()
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, maxRetryDelay) {
		out, ambiguous, err := attempt()
		if err == nil {
			return out, nil
		}
		var zero T
		wait := delay/2 + time.Duration(rand.Int64N(int64(delay)))
		budget := retryTime
		if lockConflict(err) {
			budget = lockRetryTime
		}
		if !retrySafe(mode, err, ambiguous) || time.Since(start)+wait > budget {
			return zero, err
		}
		select {
		case <-ctx.Done():
			return zero, err
		case <-time.After(wait):
		}
	}
}

// retrySafe says whether a transaction that failed with err may run again. A read may
// whenever the driver calls the failure transient. A write may when Neo4j reported a
// transient failure (a deadlock, a lock timeout: the transaction was rolled back), or when
// its connection failed before it could have committed (not ambiguous: a transaction that
// never reached COMMIT is rolled back with its connection). A write whose connection failed
// at or after COMMIT may have committed, and running it again would answer a conflict for a
// write that happened, so it fails as unavailable and the client retries, with its
// Idempotency-Key. An auto-commit statement commits as it runs, so each of its failures is
// ambiguous.
func retrySafe(mode neo4j.AccessMode, err error, ambiguous bool) bool {
	if mode != neo4j.AccessModeWrite {
		return neo4j.IsRetryable(err)
	}
	var n4j *neo4j.Neo4jError
	if errors.As(err, &n4j) {
		return n4j.IsRetriableTransient() || n4j.IsRetriableCluster()
	}
	return !ambiguous && neo4j.IsRetryable(err)
}

// lockConflict reports whether err, or the last failure of the driver's retries that err
// reports, is Neo4j failing the transaction to break a deadlock.
func lockConflict(err error) bool {
	var limit *neo4j.TransactionExecutionLimit
	if errors.As(err, &limit) && len(limit.Errors) > 0 {
		err = limit.Errors[len(limit.Errors)-1]
	}
	var n4j *neo4j.Neo4jError
	return errors.As(err, &n4j) && n4j.Code == "Neo.TransientError.Transaction.DeadlockDetected"
}

// readTx runs work in one managed read transaction.
func readTx[T any](ctx context.Context, s *Store, work func(t *tx) (T, error)) (T, error) {
	return execute(ctx, s, neo4j.AccessModeRead, work)
}

func execute[T any](ctx context.Context, s *Store, mode neo4j.AccessMode, work func(t *tx) (T, error)) (T, error) {
	session := s.session(ctx, mode)
	defer session.Close(ctx)
	var first string
	var answered bool
	start := time.Now()
	out, err := retrying(ctx, mode, func() (T, bool, error) {
		var zero T
		inner, err := session.BeginTransaction(ctx)
		if err != nil {
			return zero, false, err
		}
		defer inner.Close(ctx)
		t := &tx{ctx: ctx, inner: inner, store: s, write: mode == neo4j.AccessModeWrite}
		out, err := work(t)
		first, answered = t.first, t.answered
		if err == nil {
			err = inner.Commit(ctx)
			if err != nil && !(t.divisible && outOfTransactionMemory(err)) {
				return zero, true, err
			}
		}
		if err != nil {
			_ = inner.Rollback(ctx)
			if t.divisible && outOfTransactionMemory(err) {
				return zero, false, tooLarge{err}
			}
			return zero, false, err
		}
		return out, false, nil
	})
	if first != "" {
		coverage.transaction(first, time.Since(start))
	}
	if err != nil {
		var zero T
		return zero, s.translate(ctx, err)
	}
	s.unreachableSince.Store(0)
	if claim := model.IdempotencyClaimOf(ctx); answered && claim != nil {
		claim.Answered = true
	}
	return out, nil
}

// translate maps a driver error to a model error kind. Model errors pass through unchanged;
// driver text never reaches a client, only the logs.
// translate is translate, counting what Neo4j failed at: unreachable or refusing for a
// while (unavailable), or a query that failed (failed). A cancelled request is neither.
func (s *Store) translate(ctx context.Context, err error) error {
	out := translate(err)
	if bookmarkRefused(err) && !model.CausalChainOf(ctx).Sent() {
		// The request sent no bookmark back, so the refused ones are this process's own:
		// they name writes the database does not have (it was restored from a backup, or
		// replaced). Forget them, or every later transaction would wait for them in vain,
		// and answer as Neo4j being away, to be retried.
		s.written.Forget()
		out = model.Unavailable("the database is behind this server's last write (restored from a backup?); try again", err)
	}
	switch {
	case errors.Is(err, context.Canceled):
	case model.KindOf(out) == model.KindUnavailable:
		s.unavailable.Add(1)
		now := time.Now().UnixNano()
		s.unreachableSince.CompareAndSwap(0, now)
		var me *model.Error
		if errors.As(out, &me) && me.RetryAfter == 0 {
			waited := *me
			waited.RetryAfter = unavailableRetryAfter(time.Duration(now - s.unreachableSince.Load()))
			out = &waited
		}
	case model.KindOf(out) == model.KindInternal:
		s.failed.Add(1)
	}
	return out
}

// bookmarkRefused reports whether Neo4j refused a transaction's bookmarks: not its own, or
// not applied within db.transaction.bookmark_ready_timeout.
func bookmarkRefused(err error) bool {
	var n4j *neo4j.Neo4jError
	return errors.As(err, &n4j) && (strings.HasPrefix(n4j.Code, "Neo.ClientError.Transaction.InvalidBookmark") ||
		n4j.Code == "Neo.TransientError.Transaction.BookmarkTimeout")
}

// maxUnavailableRetryAfter bounds the Retry-After of a 503 while Neo4j is unavailable.
const maxUnavailableRetryAfter = 5

// unavailableRetryAfter is the Retry-After, in seconds, of a 503 after Neo4j has been
// unavailable for down: a second at first, then half the outage so far, up to
// maxUnavailableRetryAfter. A blip is retried at once; a client that follows it through a
// long outage spends its retries over the outage rather than its first seconds (a client
// that gives up after five tries lasts about 20 s instead of 5), and loads the recovering
// server with fewer retries.
func unavailableRetryAfter(down time.Duration) int {
	return min(maxUnavailableRetryAfter, max(1, int(down/(2*time.Second))))
}

// Neo4jErrors reports how many of the store's statements and transactions failed because
// Neo4j was unavailable, and how many failed otherwise, since the store opened.
func (s *Store) Neo4jErrors() (unavailable, failed int64) {
	return s.unavailable.Load(), s.failed.Load()
}

func translate(err error) error {
	var me *model.Error
	if errors.As(err, &me) {
		return me
	}
	var n4j *neo4j.Neo4jError
	if errors.As(err, &n4j) {
		switch {
		case n4j.Code == "Neo.ClientError.Schema.ConstraintValidationFailed":
			return &model.Error{Kind: model.KindConflict, Message: "the record already exists", Err: err}
		case strings.HasPrefix(n4j.Code, "Neo.ClientError.Transaction.InvalidBookmark"):
			return &model.Error{Kind: model.KindInvalid, Field: model.BookmarkField,
				Message: "a bookmark sent back is not one of this database's", Err: err}
		case n4j.Code == "Neo.TransientError.Transaction.BookmarkTimeout":
			return model.Unavailable("no database member has applied the bookmark sent back yet; try again", err)
		case n4j.Code == "Neo.ClientError.Statement.EntityNotFound":
			return &model.Error{Kind: model.KindNotFound, Message: "a record this write depends on was deleted concurrently", Err: err}
		case strings.HasPrefix(n4j.Code, "Neo.TransientError."), n4j.Code == "Neo.ClientError.Database.DatabaseNotFound",
			strings.HasPrefix(n4j.Code, "Neo.ClientError.Cluster."):
			return model.Unavailable("Neo4j is temporarily unavailable", err)
		}
		return model.Internal("the graph query failed", err)
	}
	var conn *neo4j.ConnectivityError
	var limit *neo4j.TransactionExecutionLimit
	if errors.As(err, &limit) && len(limit.Errors) > 0 {
		// Retries ran out on a transient failure that is not a lost connection (a
		// deadlock, Neo4j's transaction memory limit): Neo4j answered, so "unreachable"
		// would mislead; the status code goes to the log with the cause.
		var last *neo4j.Neo4jError
		if errors.As(limit.Errors[len(limit.Errors)-1], &last) && strings.HasPrefix(last.Code, "Neo.TransientError.") {
			return model.Unavailable("Neo4j could not complete the transaction in time; try again", err)
		}
	}
	// The driver's pool reports some connection failures (acquisition timeouts, a dial
	// during session setup) as plain errors whose text is the only mark of their kind;
	// these two substrings are matched here, at the driver boundary, and nowhere else.
	if errors.As(err, &conn) || errors.As(err, &limit) || errors.Is(err, context.DeadlineExceeded) ||
		strings.Contains(err.Error(), "ConnectivityError") || strings.Contains(err.Error(), "connection acquisition") {
		return model.Unavailable("Neo4j is unreachable", err)
	}
	if errors.Is(err, context.Canceled) {
		return model.Unavailable("the request was cancelled", err)
	}
	return model.Internal("the graph query failed", fmt.Errorf("neo4j: %w", err))
}

// neo4jSessionConfig is the session of statements that cannot run in a managed transaction
// (schema commands, SHOW).
func neo4jSessionConfig(database string) neo4j.SessionConfig {
	return neo4j.SessionConfig{DatabaseName: database, AccessMode: neo4j.AccessModeWrite}
}

// baselineTokens is the cost of one record in naive history replay: one chat message with
// the record's role, text and speaker name, counted like an assembled message.
func (s *Store) baselineTokens(role, text, name string) int64 {
	if s.Tokens == nil {
		return 0
	}
	n := 3 + s.Tokens.Count(role) + s.Tokens.Count(text)
	if name != "" {
		n += s.Tokens.Count(name) + 1
	}
	return int64(n)
}
