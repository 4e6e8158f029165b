package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/ctxgraph/ctxgraph/api"
	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/generation"
	"github.com/ctxgraph/ctxgraph/integration/neo4jtest"
	"github.com/ctxgraph/ctxgraph/provider"
	"github.com/ctxgraph/ctxgraph/server"
)

// The suite's real Neo4j store and blob location (a directory, or an s3:// URL: see
// blobs_test.go), shared by tests that need no special wiring. Tests isolate themselves by
// account: each harness makes fresh accounts.
var (
	neo4jServer neo4jtest.Server
	sharedStore *cypher.Store
	blobDir     string
)

func TestMain(m *testing.M) {
	flag.Parse()
	ctx := context.Background()
	var err error
	if neo4jServer, err = neo4jtest.Find(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		os.Exit(1)
	}
	if blobDir, err = setUpBlobStores(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		os.Exit(1)
	}
	sharedStore = openStore(blobDir)
	if _, err := sharedStore.Migrate(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "integration: migrating the schema on", neo4jServer.URI, "failed:", err)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" {
		code = checkQueryCoverage()
	}
	sharedStore.Close(ctx)
	removeBlobLocation(blobDir)
	os.Exit(code)
}

// checkQueryCoverage fails the run when an embedded .cypher file was never executed.
func checkQueryCoverage() int {
	ran := map[string]bool{}
	for _, n := range cypher.QueriesRun() {
		ran[n] = true
	}
	var missing []string
	for _, n := range cypher.QueryNames() {
		if !ran[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "integration: these .cypher files were never run against Neo4j: %s\n", strings.Join(missing, ", "))
		return 1
	}
	return 0
}

func openStore(dir string) *cypher.Store {
	return openStoreAt(neo4jServer.URI, dir)
}

func openStoreAt(uri, dir string) *cypher.Store {
	s, err := server.OpenStore(cypher.Config{URI: uri, User: neo4jServer.User, Password: neo4jServer.Password, Database: neo4jServer.Database}, dir)
	if err != nil {
		panic(err)
	}
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// harness is one test's client: two fresh accounts (its own and "another") against a
// server wired to a real store.
type harness struct {
	t     *testing.T
	srv   *api.Server
	asm   *assembly.Service
	turns *generation.Service
	// summariser is the server's model summariser: a test waits for it (Wait).
	summariser *generation.Summariser
	// cfg is what the server was wired from, for a test that wires it again changed.
	cfg      server.Config
	key      string
	otherKey string
	// account is the account of key.
	account string
	// steps are the generation steps the server observed, in order.
	steps *observedSteps
}

// observedSteps records the steps a generation.Service observes.
type observedSteps struct {
	mu    sync.Mutex
	steps []generation.Step
}

func (o *observedSteps) observe(step generation.Step, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.steps = append(o.steps, step)
}

// take returns the steps observed since the last take.
func (o *observedSteps) take() []generation.Step {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.steps
	o.steps = nil
	return out
}

func newHarness(t *testing.T) *harness {
	return newHarnessWith(t, sharedStore, "")
}

func newHarnessWith(t *testing.T, store *cypher.Store, maxBody string) *harness {
	return newHarnessFull(t, store, maxBody, nil)
}

// newProviderHarness is a harness whose generations go to the given providers (the echo
// provider when none).
func newProviderHarness(t *testing.T, providers ...provider.Config) *harness {
	return newHarnessFull(t, sharedStore, "", providers)
}

func newHarnessFull(t *testing.T, store *cypher.Store, maxBody string, providers []provider.Config) *harness {
	t.Helper()
	h := &harness{t: t, key: "key-" + randomHex(8), otherKey: "key-" + randomHex(8),
		account: "acct-" + randomHex(6), steps: &observedSteps{}}
	// The server is wired as cmd/ctxgraph wires it. Its scheduler is never started: the
	// harness's schedules are written and read through the API, and a test that wants them
	// to fire starts a scheduler of its own (newScheduler).
	h.wire(server.Config{
		Store: store, MaxBody: maxBody, Providers: providers, ObserveStep: h.steps.observe,
		Keys: map[string]string{h.key: h.account, h.otherKey: "other-" + randomHex(6)},
		// The cause of a 500 is logged, never sent: the test's log shows it.
		Log: zaptest.NewLogger(t, zaptest.Level(zap.ErrorLevel)),
	})
	return h
}

// wire builds the harness's server from cfg, replacing the one it had. Its leases are kept
// as cmd/ctxgraph keeps them, until the test ends.
func (h *harness) wire(cfg server.Config) {
	srv := server.New(cfg)
	srv.Leases.Start()
	h.t.Cleanup(srv.Leases.Stop)
	h.srv, h.asm, h.turns, h.summariser, h.cfg = srv.API, srv.Assembler, srv.Turns, srv.Summariser, cfg
}

// response is what the server answered.
type response struct {
	status int
	header http.Header
	body   []byte
}

// obj decodes the body as a JSON object.
func (r response) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

// errorOf returns the error body's code and field.
func (r response) errorOf(t *testing.T) (code, field string) {
	t.Helper()
	e, ok := r.obj(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("body %s has no error object", r.body)
	}
	code, _ = e["code"].(string)
	field, _ = e["field"].(string)
	return code, field
}

// call sends a request as the harness's own account.
func (h *harness) call(method, path string, body any, headers ...string) response {
	return h.callAs(h.key, method, path, body, headers...)
}

// client is a client of the harness's server, in process, with the harness's key.
func (h *harness) client() *client.Client {
	return &client.Client{Handler: h.srv, Key: h.key}
}

// callAs sends a request with the given API key; headers are name, value pairs. A body is
// sent as it is when it is a string or []byte (tests send malformed ones too), otherwise
// encoded with encoding/json.
func (h *harness) callAs(key, method, path string, body any, headers ...string) response {
	h.t.Helper()
	c := h.client().WithKey(key)
	for i := 0; i+1 < len(headers); i += 2 {
		c = c.WithHeader(headers[i], headers[i+1])
	}
	var payload any
	switch b := body.(type) {
	case nil:
	case []byte:
		payload = b
	case string:
		payload = []byte(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		payload = data
	}
	var resp client.Response
	// Not the test's context: cleanups, which run after it is cancelled, call too.
	err := c.Do(context.Background(), method, path, payload, &resp)
	if refused := (*client.Error)(nil); err != nil && !errors.As(err, &refused) {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	return response{status: resp.Status, header: resp.Header, body: resp.Body}
}

// must sends a request and fails the test unless it answers want; it returns the body.
func (h *harness) must(want int, method, path string, body any, headers ...string) map[string]any {
	h.t.Helper()
	r := h.call(method, path, body, headers...)
	if r.status != want {
		h.t.Fatalf("%s %s: got status %d, want %d; body %s", method, path, r.status, want, r.body)
	}
	if len(r.body) == 0 {
		return nil
	}
	return r.obj(h.t)
}

// expectError checks an error response's status, code and field.
func (h *harness) expectError(r response, status int, code, field string) {
	h.t.Helper()
	if r.status != status {
		h.t.Fatalf("got status %d, want %d; body %s", r.status, status, r.body)
	}
	gotCode, gotField := r.errorOf(h.t)
	if gotCode != code || gotField != field {
		h.t.Fatalf("got error code %q field %q, want %q and %q; body %s", gotCode, gotField, code, field, r.body)
	}
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// world is a small conversation made through the API: a user message, a run of a model
// participant and one tool call.
type world struct {
	conv, branch, participant, message, run, call string
}

func (h *harness) world() world {
	h.t.Helper()
	var w world
	c := h.must(201, "POST", "/v1/conversations", map[string]any{"title": "world", "at": "2026-11-01T09:00:00Z"})
	w.conv, w.branch = str(c, "id"), str(c, "branchId")
	w.participant = str(h.must(201, "POST", "/v1/conversations/"+w.conv+"/participants",
		map[string]any{"kind": "model", "name": "gpt", "provider": "openai", "model": "gpt-4.1"}), "id")
	w.message = str(h.must(201, "POST", "/v1/branches/"+w.branch+"/messages",
		map[string]any{"role": "user", "content": "find the Q3 numbers", "at": "2026-11-01T09:00:01Z"}), "id")
	w.run = str(h.must(201, "POST", "/v1/branches/"+w.branch+"/runs",
		map[string]any{"participantId": w.participant, "runtimeKind": "chat", "triggerMessageId": w.message, "at": "2026-11-01T09:00:02Z"}), "id")
	w.call = str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls",
		map[string]any{"tool": "sheet_read", "arguments": map[string]any{"sheet": "q3", "range": "A1:F200"}, "callId": "call_1", "at": "2026-11-01T09:00:03Z"}), "id")
	return w
}

// waitReady polls /readyz until it answers 200, failing the test after within.
func (h *harness) waitReady(within time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for h.call("GET", "/readyz", nil).status != 200 {
		if time.Now().After(deadline) {
			h.t.Fatalf("readyz did not recover within %v of Neo4j coming back", within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitUntil polls cond until it holds, for at most 10 s: the signal a test waits for
// instead of sleeping for a time it guesses is long enough.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, 10*time.Second, 2*time.Millisecond, what, func() error {
		if cond() {
			return nil
		}
		return errors.New("it never held")
	})
}

// waitWithin polls check every interval until it returns nil, for at most within, and then
// fails the test with what check last said: waitUntil for a condition that takes seconds to
// come about, or costs a query to check.
func waitWithin(t *testing.T, within, interval time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s: %v", within, what, err)
		}
		time.Sleep(interval)
	}
}

// blockedOnLocks returns how many of account's transactions wait for another's locks.
func blockedOnLocks(t *testing.T, account string) int64 {
	t.Helper()
	return cypherCount(t, `SHOW TRANSACTIONS YIELD status, parameters
		WHERE status STARTS WITH 'Blocked' AND parameters.accountId = $account RETURN count(*)`, map[string]any{"account": account})
}

// statementGate holds the first runs of one statement inside their write transactions,
// after the statement and before the commit, until it is opened, so that a test can send
// requests that queue behind them or race them; it counts the statement's runs.
type statementGate struct {
	mu        sync.Mutex
	statement string
	hold      int32
	open      chan struct{}
	entered   chan struct{}
	held      atomic.Int32
	runs      atomic.Int32
}

// gateStatements makes a statementGate the store's AfterStatement hook.
func gateStatements(store *cypher.Store) *statementGate {
	g := &statementGate{}
	store.AfterStatement = g.after
	return g
}

// arm holds the next n runs of statement until open is called, and counts its runs from
// zero.
func (g *statementGate) arm(statement string, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.statement, g.hold = statement, int32(n)
	g.open, g.entered = make(chan struct{}), make(chan struct{}, n)
	g.held.Store(0)
	g.runs.Store(0)
}

// gateTimeout is how long waitHeld waits for the gated statement to run.
const gateTimeout = time.Minute

// waitHeld waits until one more run is held. A statement that never runs (renamed, or no
// longer on the path the test drives) panics with its name after gateTimeout, rather than
// hanging the run until go test's own timeout; callers in goroutines cannot call t.Fatal.
func (g *statementGate) waitHeld() {
	g.mu.Lock()
	entered, statement := g.entered, g.statement
	g.mu.Unlock()
	select {
	case <-entered:
	case <-time.After(gateTimeout):
		panic(fmt.Sprintf("statementGate: no run of statement %s reached the gate within %s", statement, gateTimeout))
	}
}

// waitHeldOr is waitHeld for a statement that a request sent in the background runs: when
// the request answers first (it failed before the statement, or never runs it), the test
// fails with the answer.
func (g *statementGate) waitHeldOr(t *testing.T, answered <-chan response) {
	t.Helper()
	g.mu.Lock()
	entered, statement := g.entered, g.statement
	g.mu.Unlock()
	select {
	case <-entered:
	case r := <-answered:
		t.Fatalf("the request answered %d %s before a run of %s reached the gate", r.status, r.body, statement)
	case <-time.After(gateTimeout):
		t.Fatalf("no run of statement %s reached the gate within %s", statement, gateTimeout)
	}
}

// release lets the held runs commit.
func (g *statementGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.open)
}

func (g *statementGate) after(query string) error {
	g.mu.Lock()
	match, hold, open, entered := query == g.statement, g.hold, g.open, g.entered
	g.mu.Unlock()
	if match {
		g.runs.Add(1)
		if g.held.Add(1) <= hold {
			entered <- struct{}{}
			<-open
		}
	}
	return nil
}
