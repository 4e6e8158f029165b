package integration

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestNeo4jStoppedIs503 stops the real Neo4j and starts it again. It runs when `make test`
// started the project's local Neo4j and says how to control it; against a Neo4j the suite
// does not own (NEO4J_URI set by the user, or a container) the proxy test above covers the
// same behaviour without touching the server.
func TestNeo4jStoppedIs503(t *testing.T) {
	control := os.Getenv("CTXGRAPH_TEST_NEO4J_CONTROL")
	if control == "" {
		t.Skip("the suite does not own this Neo4j (CTXGRAPH_TEST_NEO4J_CONTROL unset); TestNeo4jUnreachableIs503AndRecoversWithoutRestart covers outages")
	}
	h := newHarness(t)
	w := h.world()
	neo4jctl(t, control, "stop")
	restarted := false
	defer func() {
		if !restarted {
			neo4jctl(t, control, "start")
		}
	}()
	h.expectError(h.call("POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "while stopped"}), 503, "unavailable", "")
	h.expectError(h.call("GET", "/readyz", nil), 503, "unavailable", "")
	h.expectError(h.call("GET", "/v1/branches/"+w.branch+"/history", nil), 503, "unavailable", "")

	neo4jctl(t, control, "start")
	restarted = true
	h.waitReady(30 * time.Second)
	h.must(201, "POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "after restart"})
	if got := transcript(h.must(200, "GET", "/v1/branches/"+w.branch+"/history", nil)); len(got) != 3 {
		t.Errorf("got history %v, want the write refused while stopped to be absent", got)
	}
}

func neo4jctl(t *testing.T, control, verb string) {
	t.Helper()
	out, err := exec.Command(control, verb).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", control, verb, err, out)
	}
	t.Logf("%s %s: %s", control, verb, out)
}

// A client that disconnects while its write runs is not a server error: the request is
// logged and counted as 499, not 500, and nothing is logged at error level for it.
func TestClientDisconnectIs499Not500(t *testing.T) {
	_, _, gate, h := gatedHarness(t)
	core, logs := observer.New(zap.DebugLevel)
	cfg := h.cfg
	cfg.Log, cfg.Metrics = zap.New(core), true
	h.wire(cfg)
	w := h.world()
	logs.TakeAll()

	gate.arm("AppendMessage", 1)
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, "POST", "/v1/branches/"+w.branch+"/messages",
		strings.NewReader(`{"role": "user", "content": "the client leaves"}`))
	req.Header.Set("Authorization", "Bearer "+h.key)
	req.Header.Set("Content-Type", "application/json")
	served := make(chan struct{})
	go func() {
		h.srv.ServeHTTP(httptest.NewRecorder(), req)
		close(served)
	}()
	gate.waitHeld()
	cancel()
	gate.release()
	<-served

	var statuses []int64
	for _, e := range logs.All() {
		if e.Level >= zap.ErrorLevel {
			t.Errorf("logged at %v for a client's disconnect: %s %v", e.Level, e.Message, e.ContextMap())
		}
		if m := e.ContextMap(); e.Message == "request" && m["route"] == "/v1/branches/{id}/messages" {
			statuses = append(statuses, m["status"].(int64))
		}
	}
	if len(statuses) != 1 || statuses[0] != 499 {
		t.Errorf("got access-log statuses %v for the abandoned write, want [499]", statuses)
	}
	metrics := h.call("GET", "/metrics", nil)
	series := `route="/v1/branches/{id}/messages",status="`
	if !strings.Contains(string(metrics.body), series+`499"`) || strings.Contains(string(metrics.body), series+`500"`) {
		t.Errorf("/metrics counts the abandoned write as %s, want status 499 and no 500",
			regexp.MustCompile(`ctxgraph_http_request_duration_seconds_count\{.*/messages".*`).FindAllString(string(metrics.body), -1))
	}
}

// keyedTurnCut is a keyed generation cut by an outage: Neo4j, reached through a proxy, went
// away while one of the request's statements was held, before its transaction committed.
type keyedTurnCut struct {
	h      *harness
	p      *flakyProxy
	branch string
	body   map[string]any
	// got is what the cut request answered.
	got response
}

// cutKeyedTurn sends a generation with Idempotency-Key key, holds its statement, cuts the
// proxy, lets the statement go and waits for the answer. Neo4j stays away. The server's run
// lease (3 s) outlasts the outage, so that the cut request's release of its key, retried
// every second while the lease holds, reaches Neo4j once it is back.
func cutKeyedTurn(t *testing.T, statement, key string) keyedTurnCut {
	t.Helper()
	p, store := proxiedStore(t, t.TempDir())
	gate := gateStatements(store)
	h := newHarnessWith(t, store, "")
	cfg := h.cfg
	cfg.RunLease = 3 * time.Second
	h.wire(cfg)
	_, branch, ids := h.conversationWith([3]string{"echo", "echo", ""})
	body := map[string]any{"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "cut at " + statement}}
	gate.arm(statement, 1)
	answered := make(chan response, 1)
	go func() { answered <- h.call("POST", "/v1/generations", body, "Idempotency-Key", key) }()
	gate.waitHeld()
	p.down()
	gate.release()
	return keyedTurnCut{h: h, p: p, branch: branch, body: body, got: <-answered}
}

// A keyed generation whose last write is cut by an outage, after its turn began: it answers
// 503, and its retry with the same key and body once Neo4j is back finds the turn it began
// and completes it, never writing its user message again.
func TestOutageAfterTurnBeganRetryCompletesIt(t *testing.T) {
	c := cutKeyedTurn(t, "FinishTurn", "turn-cut")
	h, p, branch, body, r := c.h, c.p, c.branch, c.body, c.got
	h.expectError(r, 503, "unavailable", "")
	if r.header.Get("Retry-After") == "" {
		t.Errorf("the 503 carries no Retry-After")
	}

	p.up(t)
	h.waitReady(20 * time.Second)
	// Left alone, the run the failed request started is ended failed, with the cause, once
	// Neo4j is back: its server remembered that it could not record the call.
	recs := cypherQuery(t, `MATCH (r:ModelRun {branchId: $b}) RETURN r.id AS id`, map[string]any{"b": branch})
	if len(recs) != 1 {
		t.Fatalf("the cut turn started %d runs, want 1", len(recs))
	}
	runID := recs[0].AsMap()["id"].(string)
	waitEnded(t, runID, "database_unavailable")
	again := retryKeyed(h, 20*time.Second, "POST", "/v1/generations", body, "turn-cut")
	if again.status != 201 {
		t.Fatalf("the retry with the same key and body answered %d %s, want 201", again.status, again.body)
	}
	users := cypherCount(t, `MATCH (m:Message {branchId: $b, role: 'user'}) RETURN count(m)`, map[string]any{"b": branch})
	runs := cypherCount(t, `MATCH (r:ModelRun {branchId: $b}) RETURN count(r)`, map[string]any{"b": branch})
	running := cypherCount(t, `MATCH (r:ModelRun {branchId: $b, status: 'running'}) RETURN count(r)`, map[string]any{"b": branch})
	if users != 1 || runs != 1 || running != 0 {
		t.Errorf("the branch holds %d user messages and %d runs, %d running; want 1, 1 and 0", users, runs, running)
	}
	if run := first(again.obj(t), "runs"); str(run, "runId") != runID || str(run, "status") != "completed" {
		t.Errorf("the retry answered %s, want run %s completed", again.body, runID)
	}
	if replay := h.call("POST", "/v1/generations", body, "Idempotency-Key", "turn-cut"); fmt.Sprint(replay.obj(t)) != fmt.Sprint(again.obj(t)) {
		t.Errorf("a further retry answered %s, want %s", replay.body, again.body)
	}
}

// A client that encodes its request again to retry it (its keys in another order, other
// spacing) retries the same request: it gets the first answer, not "used for a different
// request"; a body that says something else is still a different request.
func TestIdempotentRetryOfReencodedBodyIsTheSameRequest(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	path := "/v1/branches/" + w.branch + "/messages"
	first := h.call("POST", path, `{"role":"user","content":"sent again after an outage"}`, "Idempotency-Key", "reencoded-1")
	again := h.call("POST", path, "{\n  \"content\": \"sent again after an outage\",\n  \"role\": \"user\"\n}\n", "Idempotency-Key", "reencoded-1")
	if first.status != 201 || again.status != 201 || string(first.body) != string(again.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("got %d %s then %d %s, want the first 201 replayed", first.status, first.body, again.status, again.body)
	}
	h.expectError(h.call("POST", path, `{"role":"user","content":"something else"}`, "Idempotency-Key", "reencoded-1"), 409, "conflict", "Idempotency-Key")
	if got := transcript(h.must(200, "GET", "/v1/branches/"+w.branch+"/history", nil)); len(got) != 3 {
		t.Errorf("got history %v, want the world's two entries and one message written for the key", got)
	}
}

// loopClients starts clients goroutines, each calling try with its number and its count of
// tries so far, again and again; stop ends the loops and waits for them.
func loopClients(clients int, try func(c, n int)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				try(c, n)
			}
		}()
	}
	return func() {
		close(done)
		wg.Wait()
	}
}

// outcome is what one keyed generation of TestOutageEightClients got, first and last.
type outcome struct {
	key, content string
	statuses     []int
	final        response
	// sent and ended are when its last try was sent and answered.
	sent, ended time.Time
	// tries are when each try was sent, from the drill's start.
	tries []time.Duration
}

// Eight clients loop keyed generations while Neo4j is unreachable for 20 s (a proxy cut,
// so any Neo4j will do) and their provider fails for 10 s. Each client retries a 503 or a
// 409 as its Retry-After says, with the same key and body. Nothing answers 500; every
// retried request ends in 201; no run is left running; no user message is written twice.
func TestOutageEightClients(t *testing.T) {
	if testing.Short() {
		t.Skip("a 40 s outage drill")
	}
	const (
		clients       = 8
		neo4jOutage   = 20 * time.Second
		providerStart = time.Second
		providerDown  = 10 * time.Second
		cutAt         = 3 * time.Second
		patience      = 30 * time.Second
	)
	var providerFailing atomic.Bool
	fake := newProtocolServer(t, "/v1/chat/completions", func(n int, _ map[string]any) (int, map[string]string, any) {
		if providerFailing.Load() {
			return 503, nil, map[string]any{"error": map[string]any{"message": "the provider is down"}}
		}
		return 200, nil, openAIText(fmt.Sprintf("answer %d", n))
	})
	p, store := proxiedStore(t, t.TempDir())
	h := newHarnessFull(t, store, "", providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+fake.URL+`/v1", maxRetries: 0}
`))
	// A lease longer than the outage: the keys of the requests it failed are still held,
	// and their releases retried, when Neo4j comes back.
	cfg := h.cfg
	cfg.RunLease = neo4jOutage + 5*time.Second
	h.wire(cfg)
	branches := make([]string, clients)
	participants := make([][]string, clients)
	for i := range clients {
		_, branches[i], participants[i] = h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
	}
	// The timeline below assumes requests of milliseconds. A Neo4j that has not planned the
	// turn's statements since it started (an earlier test restarts it) takes seconds to plan
	// them (BeginTurn alone is about a second), and the clients' first turns would still be
	// waiting for their plans when the cut comes. So a turn that succeeds, a second that
	// succeeds and one the provider fails run first, keyed as the clients' are, on a
	// conversation of their own.
	_, warmBranch, warmParticipants := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
	warming := time.Now()
	for n, status := range []int{201, 201, 502} {
		providerFailing.Store(status == 502)
		h.must(status, "POST", "/v1/generations", map[string]any{"branchId": warmBranch, "participantIds": warmParticipants,
			"userMessage": map[string]any{"content": fmt.Sprintf("warming turn %d", n)}}, "Idempotency-Key", fmt.Sprintf("warm-%s-%d", warmBranch, n))
	}
	providerFailing.Store(false)
	t.Logf("the three turns that warm Neo4j's plans took %v", time.Since(warming))

	start := time.Now()
	var mu sync.Mutex
	var outcomes []outcome
	maxWait := 0
	stop := loopClients(clients, func(c, n int) {
		o := outcome{key: fmt.Sprintf("drill-%s-%d-%d", branches[c], c, n), content: fmt.Sprintf("client %d turn %d %s", c, n, randomHex(4))}
		body := map[string]any{"branchId": branches[c], "participantIds": participants[c], "userMessage": map[string]any{"content": o.content}}
		deadline := time.Now().Add(patience)
		for {
			o.sent = time.Now()
			o.tries = append(o.tries, o.sent.Sub(start))
			r := h.call("POST", "/v1/generations", body, "Idempotency-Key", o.key)
			o.statuses, o.final, o.ended = append(o.statuses, r.status), r, time.Now()
			wait, err := strconv.Atoi(r.header.Get("Retry-After"))
			if r.status == 503 {
				mu.Lock()
				maxWait = max(maxWait, wait)
				mu.Unlock()
			}
			if (r.status != 503 && r.status != 409) || err != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Duration(max(wait, 1)) * time.Second)
		}
		mu.Lock()
		outcomes = append(outcomes, o)
		mu.Unlock()
	})
	time.Sleep(providerStart)
	providerFailing.Store(true)
	time.AfterFunc(providerDown, func() { providerFailing.Store(false) })
	time.Sleep(cutAt - providerStart - 200*time.Millisecond)
	beforeCut := neo4jTransactions(t)
	time.Sleep(200 * time.Millisecond)
	p.down()
	time.Sleep(neo4jOutage)
	p.up(t)
	recovered := time.Now()
	time.Sleep(3 * time.Second)
	stop()
	t.Logf("%d requests in %v; the last retry ended %v after Neo4j came back", len(outcomes), time.Since(start), time.Since(recovered))

	retried, finals, slowest := 0, map[int]int{}, time.Duration(0)
	for _, o := range outcomes {
		finals[o.final.status]++
		if o.sent.After(recovered.Add(time.Second)) {
			slowest = max(slowest, o.ended.Sub(o.sent))
		}
		for _, s := range o.statuses {
			if s >= 500 && s != 502 && s != 503 {
				t.Errorf("key %s answered %d in %v", o.key, s, o.statuses)
			}
		}
		if len(o.statuses) > 1 {
			retried++
			if o.final.status != 201 {
				t.Errorf("key %s, retried per Retry-After, ended %d %s (all: %v)", o.key, o.final.status, o.final.body, o.statuses)
			}
		}
		if o.final.status != 201 && o.final.status != 502 {
			t.Errorf("key %s ended %d %s, want 201, or 502 from the failing provider", o.key, o.final.status, o.final.body)
		}
		if n := cypherCount(t, `MATCH (m:Message {role: 'user', content: $c}) RETURN count(m)`, map[string]any{"c": o.content}); n != 1 {
			t.Errorf("key %s's user message is written %d times, want once (statuses %v)", o.key, n, o.statuses)
		}
	}
	t.Logf("final statuses %v; %d requests retried; the slowest try sent a second after recovery took %v; the longest Retry-After of a 503 was %d s",
		finals, retried, slowest, maxWait)
	if maxWait < 2 || maxWait > 5 {
		t.Errorf("the longest Retry-After of a 503 in a 20 s outage was %d s, want it to grow with the outage, to at most 5 s", maxWait)
	}
	// Under the pool's 5 s acquisition timeout: no try waits out a dead connection.
	if slowest > 4*time.Second {
		t.Errorf("a try sent a second after Neo4j came back took %v, want the pool recovered at once", slowest)
	}
	if retried == 0 || finals[201] == 0 || finals[502] == 0 {
		t.Errorf("the drill saw %d retried requests and finals %v: the outages did not bite", retried, finals)
		for _, o := range outcomes {
			t.Logf("key %s sent at %v, ended at %v: %v", o.key, o.tries, o.ended.Sub(start), o.statuses)
		}
		t.Logf("Neo4j's transactions 200 ms before the cut:\n%s", beforeCut)
	}
	waitUntil(t, "no run left running", func() bool {
		return cypherCount(t, `MATCH (r:ModelRun) WHERE r.branchId IN $b AND r.status = 'running' RETURN count(r)`, map[string]any{"b": branches}) == 0
	})
}

// neo4jTransactions lists what each transaction Neo4j runs is doing, for a drill's log.
func neo4jTransactions(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, r := range cypherQuery(t, `SHOW TRANSACTIONS YIELD transactionId, status, elapsedTime, waitTime, activeLockCount, currentQuery, resourceInformation
		RETURN transactionId, status, elapsedTime, waitTime, activeLockCount, split(currentQuery, '\n')[0] AS query, resourceInformation`, nil) {
		fmt.Fprintf(&b, "%v\n", r.AsMap())
	}
	return b.String()
}

// Clients that hammer keyed writes while Neo4j is unreachable leave a release of a claim
// behind each refused try; once Neo4j is back those releases must not crowd the pool: a
// write sent just after recovery is answered at once.
func TestOutageReleasesDoNotCrowdThePool(t *testing.T) {
	p, store := proxiedStore(t, t.TempDir())
	h := newHarnessWith(t, store, "")
	w := h.world()
	path := "/v1/branches/" + w.branch + "/messages"
	p.down()
	var refused atomic.Int64
	stop := loopClients(16, func(c, n int) {
		r := h.call("POST", path, map[string]any{"role": "user", "content": fmt.Sprintf("hammer %d %d", c, n)},
			"Idempotency-Key", fmt.Sprintf("hammer-%s-%d-%d", w.conv, c, n))
		if r.status == 503 {
			refused.Add(1)
		}
	})
	time.Sleep(8 * time.Second)
	stop()
	p.up(t)
	time.Sleep(1500 * time.Millisecond)
	var slowest time.Duration
	for i := range 5 {
		start := time.Now()
		h.must(201, "POST", path, map[string]any{"role": "user", "content": fmt.Sprintf("after recovery %d", i)})
		slowest = max(slowest, time.Since(start))
	}
	t.Logf("%d tries refused while Neo4j was away; the slowest write after recovery took %v", refused.Load(), slowest)
	if slowest > time.Second {
		t.Errorf("a write after recovery took %v, want it answered at once", slowest)
	}
}

// A keyed generation answered 201 as Neo4j went away, before its response was stored under
// its key: the retry after recovery finds the turn on the key and answers it, with the same
// message and run, writing nothing again.
func TestOutageBeforeTheAnswerIsStoredRetryWritesNothing(t *testing.T) {
	c := cutKeyedTurn(t, "CompleteIdempotencyKey", "turn-unstored")
	h, p, branch, body, sent := c.h, c.p, c.branch, c.body, c.got
	if sent.status != 201 {
		t.Fatalf("the generation answered %d %s, want 201", sent.status, sent.body)
	}
	p.up(t)
	h.waitReady(20 * time.Second)
	again := retryKeyed(h, 20*time.Second, "POST", "/v1/generations", body, "turn-unstored")
	users := cypherCount(t, `MATCH (m:Message {branchId: $b, role: 'user'}) RETURN count(m)`, map[string]any{"b": branch})
	answers := cypherCount(t, `MATCH (m:Message {branchId: $b, role: 'assistant'}) RETURN count(m)`, map[string]any{"b": branch})
	if again.status != 201 || users != 1 || answers != 1 {
		t.Fatalf("the retry answered %d %s; the branch holds %d user messages and %d answers, want 201, 1 and 1", again.status, again.body, users, answers)
	}
	a, b := sent.obj(t), again.obj(t)
	if str(a, "userMessageId") != str(b, "userMessageId") || str(first(a, "runs"), "runId") != str(first(b, "runs"), "runId") {
		t.Errorf("the retry answered %s, want the turn of %s", again.body, sent.body)
	}
	// The recorded turn is answered whole, as first answered: the run's answer, the assembly
	// of its call and its token counts, usage and finish reason.
	ra, rb := first(a, "runs"), first(b, "runs")
	if fmt.Sprint(rb) != fmt.Sprint(ra) {
		t.Errorf("the retry answered run\n%v\nwant it as first answered\n%v", rb, ra)
	}
	if tokens, _ := ra["tokens"].(map[string]any); tokens["assembled"] == 0.0 || str(ra, "finishReason") == "" {
		t.Errorf("the first answer %v counts no tokens or gives no finish reason: the comparison proves nothing", ra)
	}
	t.Logf("first: %s\nretry: %s", sent.body, again.body)
}

// A continue whose last write is cut by an outage, on its own: the run awaited a tool's
// result, the result was posted, and the continue's answer could not be recorded. It answers
// 503, not 500. Left alone once Neo4j is back, the run is ended with the cause; retried with
// the same key, at once or after that, the continue completes the run exactly once: one
// answer, its step claim and lease released, and a further retry answers the same.
func TestOutageCutsAContinueRetryCompletesItOnce(t *testing.T) {
	for _, leftAlone := range []bool{false, true} {
		t.Run(map[bool]string{false: "retried at once", true: "left alone first"}[leftAlone], func(t *testing.T) {
			fake := newProtocolServer(t, "/v1/chat/completions", func(n int, _ map[string]any) (int, map[string]string, any) {
				if n == 0 {
					return 200, nil, openAIToolCall("call_1", "sheet_read", `{"sheet":"q3"}`)
				}
				return 200, nil, openAIText(fmt.Sprintf("answer %d", n))
			})
			p, store := proxiedStore(t, t.TempDir())
			gate := gateStatements(store)
			h := newHarnessFull(t, store, "", providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+fake.URL+`/v1", maxRetries: 0}
`))
			cfg := h.cfg
			cfg.RunLease = 3 * time.Second
			h.wire(cfg)
			_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
			run := first(h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
				"userMessage": map[string]any{"content": "read q3"}, "tools": []any{sheetTool}}), "runs")
			runID := str(run, "runId")
			h.must(201, "POST", "/v1/tool-calls/"+str(first(run, "toolCalls"), "id")+"/result", map[string]any{"status": "succeeded", "result": "q3 revenue: 42"})

			path := "/v1/runs/" + runID + "/continue"
			gate.arm("FinishTurn", 1)
			answered := make(chan response, 1)
			go func() { answered <- h.call("POST", path, map[string]any{}, "Idempotency-Key", "continue-cut") }()
			gate.waitHeldOr(t, answered)
			p.down()
			gate.release()
			h.expectError(<-answered, 503, "unavailable", "")

			p.up(t)
			h.waitReady(20 * time.Second)
			if leftAlone {
				waitEnded(t, runID, "database_unavailable")
			}
			again := retryKeyed(h, 30*time.Second, "POST", path, map[string]any{}, "continue-cut")
			if again.status != 200 {
				t.Fatalf("the retry with the same key answered %d %s, want 200", again.status, again.body)
			}
			cont := first(again.obj(t), "runs")
			if msg, _ := cont["message"].(map[string]any); str(cont, "runId") != runID || str(cont, "status") != "completed" || str(msg, "content") == "" {
				t.Errorf("the retry answered %s, want run %s completed with its answer", again.body, runID)
			}
			if n := cypherCount(t, `MATCH (:Message)-[:GENERATED_BY]->(:ModelRun {id: $r}) RETURN count(*)`, map[string]any{"r": runID}); n != 1 {
				t.Errorf("%d answers recorded for the run, want 1", n)
			}
			if st := runStateOf(t, runID); st.status != "completed" || st.errorCode != "" || !st.ended || st.claimed || st.leased {
				t.Errorf("the continued run reads %+v, want completed, ended, its claim and lease released", st)
			}
			if replay := h.call("POST", path, map[string]any{}, "Idempotency-Key", "continue-cut"); replay.status != 200 || string(replay.body) != string(again.body) {
				t.Errorf("a further retry answered %d %s, want %s", replay.status, replay.body, again.body)
			}
			t.Logf("the cut continue's retry answered %s after %d provider calls", again.body, fake.count())
		})
	}
}
