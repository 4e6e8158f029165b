package integration

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// interruptLease is the run lease of the server processes these tests kill: a killed
// server's runs are ended within about that long.
const interruptLease = time.Second

// hangingProvider is an OpenAI-compatible provider whose call number hang never answers
// while the test runs (the server that made it is killed meanwhile); the others answer
// with answer(n). It returns the provider and a providers file naming it openai, beside
// the echo provider.
func hangingProvider(t *testing.T, hang int, answer func(n int) any) (*protocolServer, string) {
	t.Helper()
	stop := make(chan struct{})
	p := newProtocolServer(t, "/v1/chat/completions", func(n int, _ map[string]any) (int, map[string]string, any) {
		if n == hang {
			<-stop
			return 500, nil, map[string]any{"error": map[string]any{"message": "the test ended"}}
		}
		return 200, nil, answer(n)
	})
	// Registered after the provider's server, so run before it closes (which waits for its
	// handlers).
	t.Cleanup(func() { close(stop) })
	return p, echoAndOpenAIProviders(t, p.URL)
}

// echoAndOpenAIProviders writes a providers file for a server process: the echo provider,
// and openai at baseURL with its key in OPENAI_KEY.
func echoAndOpenAIProviders(t *testing.T, baseURL string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "providers.yaml")
	yaml := `providers:
  - {name: echo, kind: echo}
  - {name: openai, kind: openai, baseURL: "` + baseURL + `/v1", apiKeyEnv: OPENAI_KEY, maxRetries: 0, timeout: 120s}
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// runState is a run as the graph holds it, read without the code under test.
type runState struct {
	status, errorCode            string
	ended, claimed, leased       bool
	interruptions, toolCalls     int64
	triggerMessageID, lastAnswer string
}

func runStateOf(t *testing.T, runID string) runState {
	t.Helper()
	recs := cypherQuery(t, `MATCH (r:ModelRun {id: $id})
		OPTIONAL MATCH (m:Message)-[:GENERATED_BY]->(r)
		WITH r, m ORDER BY m.seq DESC
		WITH r, collect(m.content) AS answers
		RETURN r.status AS status, coalesce(r.errorCode, '') AS errorCode, r.endedAt IS NOT NULL AS ended,
		       r.stepClaim IS NOT NULL AS claimed, r.leaseUntil IS NOT NULL AS leased,
		       coalesce(r.interruptions, 0) AS interruptions, COUNT { (r)-[:REQUESTED]->(:ToolCall) } AS toolCalls,
		       coalesce(r.triggerMessageId, '') AS trigger, coalesce(answers[0], '') AS lastAnswer`, map[string]any{"id": runID})
	if len(recs) != 1 {
		t.Fatalf("run %s: %d records", runID, len(recs))
	}
	m := recs[0].AsMap()
	return runState{status: m["status"].(string), errorCode: m["errorCode"].(string), ended: m["ended"].(bool),
		claimed: m["claimed"].(bool), leased: m["leased"].(bool), interruptions: m["interruptions"].(int64),
		toolCalls: m["toolCalls"].(int64), triggerMessageID: m["trigger"].(string), lastAnswer: m["lastAnswer"].(string)}
}

// waitInterrupted waits until run is ended as interrupted and says how long that took.
func waitInterrupted(t *testing.T, runID string) (runState, time.Duration) {
	t.Helper()
	return waitEnded(t, runID, "interrupted")
}

// waitEnded waits until run is ended as failed with error code, its claim and lease
// released, and says how long that took. It waits for the code, not for the end: a run
// whose call was not recorded may be ended interrupted by a sweep before its cause is
// recorded.
func waitEnded(t *testing.T, runID, code string) (runState, time.Duration) {
	t.Helper()
	start := time.Now()
	var st runState
	for st = runStateOf(t, runID); st.errorCode != code && time.Since(start) < 10*time.Second; st = runStateOf(t, runID) {
		time.Sleep(2 * time.Millisecond)
	}
	if st.status != "failed" || st.errorCode != code || !st.ended || st.claimed || st.leased {
		t.Fatalf("the ended run reads %+v, want failed, %s, ended, its claim and lease released", st, code)
	}
	return st, time.Since(start)
}

// startKeyed sends a request to p in the background, as a client whose connection the
// server's death cuts; it returns at once.
func (h *harness) startKeyed(p serverProcess, path string, body any, key string) {
	c := client.New(p.base, h.key)
	if key != "" {
		c = c.WithHeader("Idempotency-Key", key)
	}
	go func() { _ = c.Do(h.t.Context(), http.MethodPost, path, body, &client.Response{}) }()
}

// A server killed (SIGKILL) while its generation waits on the provider: a second server
// ends the run as interrupted within seconds, with no scheduler of its own; the retry with
// the same Idempotency-Key on the second server completes the same turn, reusing the user
// message and the run, writing neither again; a further retry answers the same.
func TestInterruptedGenerationCompletesOnRetry(t *testing.T) {
	provider, file := hangingProvider(t, 0, func(n int) any { return openAIText(fmt.Sprintf("answer %d", n)) })
	h := newProviderHarness(t)
	bin := buildServer(t)
	env := []string{"CTXGRAPH_PROVIDERS_FILE=" + file, "OPENAI_KEY=sk-test", "CTXGRAPH_RUN_LEASE=" + interruptLease.String()}
	a := h.startServer(bin, env...)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
	body := map[string]any{"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "a question worth waiting for"}}
	h.startKeyed(a, "/v1/generations", body, "turn-killed")
	waitUntil(t, "the provider is called", func() bool { return provider.count() == 1 })
	recs := cypherQuery(t, `MATCH (r:ModelRun {branchId: $b}) RETURN r.id AS id`, map[string]any{"b": branch})
	if len(recs) != 1 {
		t.Fatalf("the turn started %d runs, want 1", len(recs))
	}
	runID := recs[0].AsMap()["id"].(string)
	if st := runStateOf(t, runID); st.status != "running" || !st.leased {
		t.Fatalf("the run in flight reads %+v, want running under its server's lease", st)
	}
	time.Sleep(3 * interruptLease) // the lease is renewed meanwhile: no sweep ends the run
	if st := runStateOf(t, runID); st.status != "running" {
		t.Fatalf("a run whose server lives reads %+v after three leases", st)
	}

	a.kill()
	b := h.startServer(bin, append(env, "CTXGRAPH_SCHEDULER=off")...)
	st, took := waitInterrupted(t, runID)
	t.Logf("the run was ended as interrupted %v after the second server was ready", took)

	again := h.send(b, 201, "POST", "/v1/generations", body, "Idempotency-Key", "turn-killed")
	run := first(again, "runs")
	msg, _ := run["message"].(map[string]any)
	if str(again, "userMessageId") != st.triggerMessageID || str(run, "runId") != runID || str(run, "status") != "completed" ||
		str(msg, "content") != "answer 1" {
		t.Fatalf("the retry answered %v; want the turn of message %s completed by run %s", again, st.triggerMessageID, runID)
	}
	users := cypherCount(t, `MATCH (m:Message {branchId: $b, role: 'user'}) RETURN count(m)`, map[string]any{"b": branch})
	runs := cypherCount(t, `MATCH (r:ModelRun {branchId: $b}) RETURN count(r)`, map[string]any{"b": branch})
	if users != 1 || runs != 1 {
		t.Fatalf("the branch holds %d user messages and %d runs, want 1 and 1", users, runs)
	}
	if done := runStateOf(t, runID); done.status != "completed" || done.errorCode != "" || !done.ended || done.leased ||
		done.interruptions != 1 || done.lastAnswer != "answer 1" {
		t.Fatalf("the completed run reads %+v", done)
	}
	if n := cypherCount(t, `MATCH (a:ContextAssembly)-[:FOR_RUN]->(:ModelRun {id: $r}) WHERE a.requestSha256 IS NOT NULL RETURN count(a)`,
		map[string]any{"r": runID}); n != 1 {
		t.Fatalf("%d of the run's assemblies carry the request's sha256, want the completed call's", n)
	}
	replay := h.send(b, 201, "POST", "/v1/generations", body, "Idempotency-Key", "turn-killed")
	if fmt.Sprint(replay) != fmt.Sprint(again) || provider.count() != 2 {
		t.Fatalf("a further retry answered %v after %d provider calls; want the same answer, no call", replay, provider.count())
	}
}

// A server killed while a continue waits on the provider: the run's step claim is released
// within seconds by a second server, its tool result stays, and a new continue on the
// second server calls the model again, with that result, and appends its answer after the
// turns taken meanwhile.
func TestInterruptedContinueContinuesOnAnotherServer(t *testing.T) {
	provider, file := hangingProvider(t, 1, func(n int) any {
		if n == 0 {
			return openAIToolCall("call_1", "sheet_read", `{"sheet":"q3"}`)
		}
		return openAIText(fmt.Sprintf("answer %d", n))
	})
	h := newProviderHarness(t)
	bin := buildServer(t)
	env := []string{"CTXGRAPH_PROVIDERS_FILE=" + file, "OPENAI_KEY=sk-test", "CTXGRAPH_RUN_LEASE=" + interruptLease.String()}
	a := h.startServer(bin, env...)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"}, [3]string{"other", "echo", ""})
	gen := h.send(a, 201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[:1],
		"userMessage": map[string]any{"content": "read q3"}, "tools": []any{sheetTool}})
	run := first(gen, "runs")
	runID := str(run, "runId")
	h.send(a, 201, "POST", "/v1/tool-calls/"+str(first(run, "toolCalls"), "id")+"/result", map[string]any{"status": "succeeded", "result": "q3 revenue: 42"})
	h.startKeyed(a, "/v1/runs/"+runID+"/continue", map[string]any{}, "")
	waitUntil(t, "the continue's provider call", func() bool { return provider.count() == 2 })
	if st := runStateOf(t, runID); !st.claimed || !st.leased {
		t.Fatalf("the run in its continue reads %+v, want its step claimed under a lease", st)
	}

	a.kill()
	b := h.startServer(bin, env...)
	st, took := waitInterrupted(t, runID)
	t.Logf("the run was ended as interrupted %v after the second server was ready", took)
	if st.toolCalls != 1 {
		t.Fatalf("the interrupted run requested %d tool calls, want its one left as it was", st.toolCalls)
	}
	// Later turns on the branch, by another participant, while the run is interrupted.
	for i := range 3 {
		h.send(b, 201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[1:],
			"userMessage": map[string]any{"content": fmt.Sprintf("meanwhile %d", i)}})
	}

	cont := first(h.send(b, 200, "POST", "/v1/runs/"+runID+"/continue", map[string]any{}), "runs")
	if msg, _ := cont["message"].(map[string]any); str(cont, "status") != "completed" || str(msg, "content") != "answer 2" {
		t.Fatalf("the continue of the interrupted run answered %v", cont)
	}
	tools := 0
	for _, m := range messagesOf(t, provider.request(t, 2)) {
		if str(m, "role") == "tool" && strings.Contains(str(m, "content"), "42") {
			tools++
		}
	}
	if tools != 1 {
		t.Fatalf("the continue's call carries %d results of the tool call, want 1: %s", tools, fmtMessages(provider.request(t, 2)))
	}
	if done := runStateOf(t, runID); done.status != "completed" || done.claimed || done.leased || done.interruptions != 1 {
		t.Fatalf("the continued run reads %+v", done)
	}
	last := cypherQuery(t, `MATCH (m:Message {branchId: $b}) RETURN m.content AS content, m.runId AS runId ORDER BY m.seq DESC LIMIT 1`,
		map[string]any{"b": branch})[0].AsMap()
	if last["content"] != "answer 2" || last["runId"] != runID {
		t.Fatalf("the branch ends with %v, want the continue's answer, after the turns taken meanwhile", last)
	}
	if n := cypherCount(t, `MATCH (:Message)-[:GENERATED_BY]->(:ModelRun {id: $r}) RETURN count(*)`, map[string]any{"r": runID}); n != 1 {
		t.Fatalf("%d answers recorded for the run, want 1", n)
	}
}

// A renewal of a server's leases that reads a run just before the turn's last write ends it
// must not put the lease back on the ended run: the renewal waits on the run's lock, and
// checks that the run still runs under its lease only once it holds it.
func TestARenewalBehindTheFinishLeavesNoLease(t *testing.T) {
	store := openStore(t.TempDir())
	defer store.Close(context.Background())
	runID, holder := "run_renew_"+randomHex(6), "server-"+randomHex(4)
	cypherQuery(t, `CREATE (:ModelRun {id: $id, accountId: 'acct-renew', status: 'running', leaseHolder: $holder,
	                leaseUntil: datetime() + duration('PT30S')})`, map[string]any{"id": runID, "holder": holder})

	driver, err := neo4j.NewDriverWithContext(neo4jServer.URI, neo4j.BasicAuth(neo4jServer.User, neo4jServer.Password, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close(context.Background())
	session := driver.NewSession(t.Context(), neo4j.SessionConfig{DatabaseName: neo4jServer.Database})
	defer session.Close(context.Background())
	// The turn's last write, not yet committed: it holds the run's lock.
	finish, err := session.BeginTransaction(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := finish.Run(t.Context(), `MATCH (r:ModelRun {id: $id}) SET r.status = 'completed' REMOVE r.leaseUntil, r.leaseHolder`,
		map[string]any{"id": runID}); err != nil {
		t.Fatal(err)
	}
	behindTheLock(t, finish, "RenewLeases", func() (struct{}, error) {
		return struct{}{}, store.RenewLeases(context.Background(), model.RunLease{Holder: holder, For: time.Minute}, []string{runID}, nil)
	})
	if st := cypherQuery(t, `MATCH (r:ModelRun {id: $id}) RETURN r.status AS status, r.leaseUntil IS NOT NULL AS leased, r.leaseHolder AS holder`,
		map[string]any{"id": runID})[0].AsMap(); st["leased"] != false || st["holder"] != nil {
		t.Errorf("after the finish and the renewal behind it the run reads %v, want no lease", st)
	}
}

// lockedRun creates a branch and a running run on it whose lease lapsed a minute ago, with
// one model call and a step claim, for the tests of what ends a run behind a lock; and
// opens a transaction that holds the branch's lock, as a write that ends the run does.
func lockedRun(t *testing.T, account string) (runID string, holder neo4j.ExplicitTransaction) {
	t.Helper()
	runID, branchID := "run_lock_"+randomHex(6), "br_lock_"+randomHex(6)
	cypherQuery(t, `CREATE (:Branch {id: $branch, accountId: $account, seq: 1, rev: 1})
	                CREATE (:ModelRun {id: $id, accountId: $account, branchId: $branch, status: 'running', modelCalls: 1,
	                        stepClaim: 'claim-1', leaseHolder: 'gone', leaseUntil: datetime() - duration('PT1M')})`,
		map[string]any{"id": runID, "branch": branchID, "account": account})
	driver, err := neo4j.NewDriverWithContext(neo4jServer.URI, neo4j.BasicAuth(neo4jServer.User, neo4jServer.Password, ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { driver.Close(context.Background()) })
	session := driver.NewSession(t.Context(), neo4j.SessionConfig{DatabaseName: neo4jServer.Database})
	t.Cleanup(func() { session.Close(context.Background()) })
	holder, err = session.BeginTransaction(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Run(t.Context(), `MATCH (b:Branch {id: $branch}) SET b._lock = true REMOVE b._lock`,
		map[string]any{"branch": branchID}); err != nil {
		t.Fatal(err)
	}
	return runID, holder
}

// behindTheLock runs statement (named name) while holder holds a lock it needs, waits until
// it waits on a lock, commits holder and returns what statement answered.
func behindTheLock[T any](t *testing.T, holder neo4j.ExplicitTransaction, name string, statement func() (T, error)) T {
	t.Helper()
	type answer struct {
		v   T
		err error
	}
	done := make(chan answer, 1)
	go func() {
		v, err := statement()
		done <- answer{v, err}
	}()
	waitUntil(t, name+" waiting on a lock", func() bool {
		return cypherCount(t, `SHOW TRANSACTIONS YIELD currentQuery, status
		                       WHERE currentQuery CONTAINS $name AND status STARTS WITH 'Blocked' RETURN count(*)`,
			map[string]any{"name": "name: " + name}) > 0
	})
	if err := holder.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil {
		t.Fatalf("%s: %v", name, a.err)
	}
	return a.v
}

// A sweep that found a run lapsed and then waited on its branch's lock, behind the write
// that ended the run with its cause (EndUnrecordedRun), must see that end once it holds the
// lock and leave the run alone: Neo4j caches a property read for the rest of a statement,
// so a check made again after the lock has to read the run again.
func TestASweepBehindAnEndLeavesTheRunAlone(t *testing.T) {
	store := openStore(t.TempDir())
	defer store.Close(context.Background())
	runID, end := lockedRun(t, "acct-sweep-"+randomHex(4))
	if _, err := end.Run(t.Context(), `MATCH (r:ModelRun {id: $id})
	                                  SET r.status = 'failed', r.errorCode = 'database_unavailable', r.endedAt = datetime()
	                                  REMOVE r.stepClaim, r.leaseUntil, r.leaseHolder`, map[string]any{"id": runID}); err != nil {
		t.Fatal(err)
	}
	ids := behindTheLock(t, end, "EndLapsedRuns", func() ([]string, error) {
		return store.EndLapsedRuns(context.Background(), 1000)
	})
	if slices.Contains(ids, runID) {
		t.Errorf("the sweep says it ended %s, which had ended before it held the lock", runID)
	}
	if st := runStateOf(t, runID); st.status != "failed" || st.errorCode != "database_unavailable" {
		t.Errorf("after the end and the sweep behind it the run reads %+v, want failed, database_unavailable", st)
	}
}

// The end of a run whose model call could not be recorded, waiting on the branch's lock
// behind a write that completes the run, must leave the completed run as it is.
func TestAnUnrecordedEndBehindAFinishLeavesTheRunAlone(t *testing.T) {
	store := openStore(t.TempDir())
	defer store.Close(context.Background())
	account := "acct-unrec-" + randomHex(4)
	runID, finish := lockedRun(t, account)
	if _, err := finish.Run(t.Context(), `MATCH (r:ModelRun {id: $id}) SET r.status = 'completed', r.endedAt = datetime()
	                                     REMOVE r.leaseUntil, r.leaseHolder`, map[string]any{"id": runID}); err != nil {
		t.Fatal(err)
	}
	ended := behindTheLock(t, finish, "EndUnrecordedRun", func() (bool, error) {
		return store.EndUnrecordedRun(context.Background(), model.UnrecordedCall{AccountID: account, RunID: runID,
			Claim: "claim-1", ModelCalls: 1})
	})
	if st := runStateOf(t, runID); ended || st.status != "completed" || st.errorCode != "" {
		t.Errorf("the end behind the finish says ended=%v and the run reads %+v, want it left completed", ended, st)
	}
}
