package integration

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/api"
	"github.com/ctxgraph/ctxgraph/cypher"
)

// runNonce makes this run's blob contents its own: blobs are shared by content, and the
// suite's Neo4j keeps what earlier runs committed, which would reference the same blobs.
var runNonce = randomHex(8) + " "

// bigResult is a tool result well over the inline limit, so that it goes to the blob store;
// tag makes it unique to its round.
func bigResult(tag string) string {
	return runNonce + tag + strings.Repeat("q3 revenue by region, row after row; ", 80<<10/36)
}

// cypherQuery runs a read on the suite's Neo4j directly, not through the code under test.
func cypherQuery(t *testing.T, query string, params map[string]any) []*neo4j.Record {
	t.Helper()
	driver, err := neo4j.NewDriverWithContext(neo4jServer.URI, neo4j.BasicAuth(neo4jServer.User, neo4jServer.Password, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close(context.Background())
	res, err := neo4j.ExecuteQuery(t.Context(), driver, query, params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(neo4jServer.Database))
	if err != nil {
		t.Fatal(err)
	}
	return res.Records
}

func cypherCount(t *testing.T, query string, params map[string]any) int64 {
	t.Helper()
	recs := cypherQuery(t, query, params)
	if len(recs) != 1 {
		t.Fatalf("%s: got %d rows, want one", query, len(recs))
	}
	n, _ := recs[0].Values[0].(int64)
	return n
}

// orphanBlobs lists the payloads of the blob location dir that no node of the graph
// references, reading both without the code under test.
func orphanBlobs(t *testing.T, dir string) []string {
	t.Helper()
	files := storedBlobs(t, dir)
	if len(files) == 0 {
		return nil
	}
	recs := cypherQuery(t, `UNWIND $refs AS ref
		WITH ref WHERE NOT EXISTS { MATCH (a:ToolArtifact) WHERE a.resultRef = ref OR a.argsRef = ref }
		  AND NOT EXISTS { MATCH (c:ToolCall) WHERE c.argumentsRef = ref }
		RETURN collect(ref)`, map[string]any{"refs": files})
	var out []string
	for _, r := range recs[0].Values[0].([]any) {
		out = append(out, r.(string))
	}
	return out
}

// gatedHarness is a harness on a store of its own, with its own blob location and a
// statement gate; the store closes when the test ends.
func gatedHarness(t *testing.T) (*cypher.Store, string, *statementGate, *harness) {
	dir := newBlobLocation(t)
	store := openStore(dir)
	t.Cleanup(func() { store.Close(context.Background()) })
	return store, dir, gateStatements(store), newHarnessWith(t, store, "")
}

// proxiedStore is a store with blob location dir that reaches the suite's Neo4j through a
// proxy the test can cut; the store closes when the test ends.
func proxiedStore(t *testing.T, dir string) (*flakyProxy, *cypher.Store) {
	target := strings.TrimPrefix(neo4jServer.URI, "bolt://")
	if strings.Contains(target, "://") {
		t.Skipf("cannot proxy %s", neo4jServer.URI)
	}
	p := &flakyProxy{target: target}
	p.up(t)
	store := openStoreAt("bolt://"+p.addr, dir)
	t.Cleanup(func() { store.Close(context.Background()) })
	return p, store
}

// One account's failed write must never remove a blob that another account's write, not
// yet committed, references: account A's tool result is held in its transaction, after its
// statement, while account B posts the same body to made-up calls and fails; then A commits
// and its raw body must still be there.
func TestFailedWriteNeverRemovesAnotherAccountsBlob(t *testing.T) {
	_, dir, gate, h := gatedHarness(t)
	w := h.world()
	const rounds = 40
	missing := 0
	for round := range rounds {
		call := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "callId": fmt.Sprintf("race_%d", round)}), "id")
		body := map[string]any{"status": "succeeded", "result": bigResult(fmt.Sprintf("round %d ", round))}
		gate.arm("RecordToolResult", 1)
		recorded := make(chan response, 1)
		go func() { recorded <- h.call("POST", "/v1/tool-calls/"+call+"/result", body) }()
		gate.waitHeld()
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fake := fmt.Sprintf("call_%s", randomHex(8))
				key := h.otherKey
				if i == 3 {
					key = h.key // a failed write of the same account must not remove it either
				}
				if r := h.callAs(key, "POST", "/v1/tool-calls/"+fake+"/result", body); r.status != 404 {
					t.Errorf("result for a made-up call: got %d %s, want 404", r.status, r.body)
				}
			}()
		}
		wg.Wait()
		gate.release()
		r := <-recorded
		if r.status != 201 {
			t.Fatalf("round %d: recording the result answered %d %s", round, r.status, r.body)
		}
		art := str(r.obj(t), "artifactId")
		if raw := h.call("GET", "/v1/artifacts/"+art+"/raw", nil); raw.status != 200 {
			missing++
			t.Errorf("round %d: raw body of %s answered %d %s", round, art, raw.status, raw.body)
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d rounds lost the committed artifact's blob", missing, rounds)
	}
	if orphans := orphanBlobs(t, dir); len(orphans) > 0 {
		t.Errorf("%d blob files no node references: %v", len(orphans), orphans)
	}
}

// retryKeyed repeats a keyed write until it answers something other than 503 or a 409 in
// progress, honouring Retry-After, for at most patience.
func retryKeyed(h *harness, patience time.Duration, method, path string, body any, key string) response {
	h.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		r := h.call(method, path, body, "Idempotency-Key", key)
		wait := r.header.Get("Retry-After")
		if (r.status != 503 && r.status != 409) || wait == "" {
			return r
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("key %s still answers %d %s after %v", key, r.status, r.body, patience)
		}
		secs, _ := strconv.Atoi(wait)
		time.Sleep(time.Duration(max(secs, 1)) * time.Second)
	}
}

// Writes with keys while Neo4j goes away, then retries of each: every key's write exists
// exactly once and no key is left pending. One write is cut exactly between its statement
// and its commit; the others are cut wherever the outage finds them.
func TestIdempotencyHoldsAcrossAnOutage(t *testing.T) {
	p, store := proxiedStore(t, t.TempDir())
	gate := gateStatements(store)
	h := newHarnessWith(t, store, "")
	w := h.world()
	path := "/v1/branches/" + w.branch + "/messages"
	message := func(i int) map[string]any {
		return map[string]any{"role": "user", "content": fmt.Sprintf("outage message %d", i)}
	}
	key := func(i int) string { return fmt.Sprintf("outage-%s-%d", w.conv, i) }

	// Message 0 is held after its stored response, inside its transaction, while Neo4j goes.
	gate.arm("CompleteIdempotencyKey", 1)
	held := make(chan response, 1)
	go func() { held <- h.call("POST", path, message(0), "Idempotency-Key", key(0)) }()
	gate.waitHeld()

	// Messages 1..n race the outage, each writer on a branch of its own (message 0 holds
	// its branch's lock until it is released); Neo4j goes once each writer has written one.
	const writers, each = 6, 5
	paths := make([]string, writers)
	for g := range writers {
		paths[g] = "/v1/branches/" + str(h.must(201, "POST", "/v1/conversations", map[string]any{"title": fmt.Sprint("writer ", g)}), "branchId") + "/messages"
	}
	pathOf := func(i int) string {
		if i == 0 {
			return path
		}
		return paths[(i-1)/each]
	}
	var wg sync.WaitGroup
	wrote := make(chan struct{}, writers*each)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				i := 1 + g*each + j
				r := h.call("POST", pathOf(i), message(i), "Idempotency-Key", key(i))
				wrote <- struct{}{}
				if r.status != 201 {
					return // the outage found this writer; its later keys are tried only after it
				}
			}
		}()
	}
	for range writers {
		<-wrote
	}
	p.down()
	gate.release()
	first := <-held
	wg.Wait()
	if first.status == 201 {
		t.Logf("the held write answered 201 although Neo4j went away before its commit")
	}
	p.up(t)
	h.waitReady(30 * time.Second)

	for i := range 1 + writers*each {
		r := retryKeyed(h, 30*time.Second, "POST", pathOf(i), message(i), key(i))
		if r.status != 201 {
			t.Errorf("retry of key %d: got %d %s, want 201", i, r.status, r.body)
		}
	}
	for i := range 1 + writers*each {
		if n := cypherCount(t, `MATCH (m:Message {accountId: $a, content: $c}) RETURN count(m)`,
			map[string]any{"a": h.account, "c": message(i)["content"]}); n != 1 {
			t.Errorf("message %d exists %d times, want once", i, n)
		}
	}
	if n := cypherCount(t, `MATCH (k:IdempotencyKey {accountId: $a}) WHERE k.state <> 'done' RETURN count(k)`,
		map[string]any{"a": h.account}); n != 0 {
		t.Errorf("%d keys are not done after every retry answered", n)
	}
}

// Deleting a conversation or an artifact erases the stored responses carrying its data: a
// replay answers 404, never the deleted content, and the key nodes no longer hold it.
func TestReplaysAfterDeletionCarryNoDeletedData(t *testing.T) {
	h := newHarness(t)
	type keyed struct {
		method, path string
		body         any
		key          string
	}
	var writes []keyed
	do := func(method, path string, body any) map[string]any {
		k := keyed{method, path, body, "del-" + randomHex(8)}
		writes = append(writes, k)
		return h.must(201, method, path, body, "Idempotency-Key", k.key)
	}
	c := do("POST", "/v1/conversations", map[string]any{"title": "secret plans"})
	conv, branch := str(c, "id"), str(c, "branchId")
	part := str(do("POST", "/v1/conversations/"+conv+"/participants", map[string]any{"kind": "model", "name": "gpt"}), "id")
	msg := str(do("POST", "/v1/branches/"+branch+"/messages", map[string]any{"role": "user", "content": "the secret is 42"}), "id")
	run := str(do("POST", "/v1/branches/"+branch+"/runs", map[string]any{"participantId": part, "runtimeKind": "chat", "triggerMessageId": msg}), "id")
	call := str(do("POST", "/v1/runs/"+run+"/tool-calls", map[string]any{"tool": "vault", "arguments": map[string]any{"q": "secret"}}), "id")
	do("POST", "/v1/tool-calls/"+call+"/result", map[string]any{"status": "succeeded", "result": "secret 42",
		"memories": []map[string]any{{"summary": "the secret is 42"}}})
	do("POST", "/v1/runs/"+run+"/checkpoints", map[string]any{"state": map[string]any{"secret": 42}})
	do("POST", "/v1/assemblies", map[string]any{"branchId": branch, "participantId": part, "runId": run})

	// An artifact deleted on its own, in another conversation that stays.
	w := h.world()
	artKey := "art-" + randomHex(8)
	artBody := map[string]any{"status": "succeeded", "result": "artifact secret 43"}
	art := str(h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", artBody, "Idempotency-Key", artKey), "artifactId")
	h.must(204, "DELETE", "/v1/artifacts/"+art, nil)
	h.expectError(h.call("POST", "/v1/tool-calls/"+w.call+"/result", artBody, "Idempotency-Key", artKey), 404, "not_found", "Idempotency-Key")

	h.must(204, "DELETE", "/v1/conversations/"+conv, nil)
	for _, k := range writes {
		r := h.call(k.method, k.path, k.body, "Idempotency-Key", k.key)
		if r.status != 404 || strings.Contains(string(r.body), "secret") {
			t.Errorf("replay of %s %s after deletion: got %d %s, want 404", k.method, k.path, r.status, r.body)
		}
	}
	if n := cypherCount(t, `MATCH (k:IdempotencyKey {accountId: $a}) WHERE k.body CONTAINS 'secret' RETURN count(k)`,
		map[string]any{"a": h.account}); n != 0 {
		t.Errorf("%d stored responses still hold deleted data", n)
	}
}

// Every write racing a conversation's deletion answers 201 before it or 404 after, never
// 5xx, and what answered 404 wrote nothing; no blob is left that nothing references.
func TestWritesRacingADeletionAnswer404(t *testing.T) {
	dir := newBlobLocation(t)
	store := openStore(dir)
	defer store.Close(context.Background())
	h := newHarnessWith(t, store, "")
	statuses := map[int]int{}
	var mu sync.Mutex
	for range 4 {
		w := h.world()
		sub := str(h.must(201, "POST", "/v1/branches/"+w.branch+"/runs", map[string]any{"participantId": w.participant, "runtimeKind": "subagent", "parentRunId": w.run}), "id")
		writes := []func(i int) response{
			func(i int) response {
				return h.call("POST", "/v1/runs/"+w.run+"/checkpoints", map[string]any{"state": map[string]any{"step": i}})
			},
			func(i int) response {
				return h.call("POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": fmt.Sprintf("m%d", i)}, "Idempotency-Key", randomHex(8))
			},
			func(i int) response {
				call := h.call("POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "t", "arguments": map[string]any{"i": i}})
				if call.status != 201 {
					return call
				}
				return h.call("POST", "/v1/tool-calls/"+str(call.obj(t), "id")+"/result", map[string]any{"status": "succeeded", "result": bigResult(fmt.Sprint(w.conv, i))})
			},
			func(i int) response {
				return h.call("POST", "/v1/runs/"+w.run+"/skills", map[string]any{"loadedSkills": []string{fmt.Sprint("s", i)}})
			},
			func(i int) response {
				return h.call("POST", "/v1/conversations/"+w.conv+"/participants", map[string]any{"kind": "model", "name": fmt.Sprint("p", i)})
			},
			func(i int) response {
				return h.call("POST", "/v1/conversations/"+w.conv+"/branches", map[string]any{"parentBranchId": w.branch, "forkAfterMessageId": w.message, "name": fmt.Sprint("b", i)})
			},
			func(i int) response {
				return h.call("POST", "/v1/runs/"+sub+"/promote", map[string]any{"report": fmt.Sprint("r", i)})
			},
			func(i int) response {
				return h.call("POST", "/v1/assemblies", map[string]any{"branchId": w.branch, "participantId": w.participant, "runId": w.run})
			},
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		warm := make(chan struct{}, len(writes))
		for _, write := range writes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					r := write(i)
					mu.Lock()
					statuses[r.status]++
					mu.Unlock()
					if r.status >= 500 {
						t.Errorf("write racing the deletion answered %d %s", r.status, r.body)
					}
					if i == 0 {
						warm <- struct{}{}
					}
					select {
					case <-stop:
						return
					default:
					}
					if r.status == 404 {
						return
					}
				}
			}()
		}
		for range writes {
			<-warm
		}
		// Not fatal: the writers must stop before the store closes.
		if r := h.call("DELETE", "/v1/conversations/"+w.conv, nil); r.status != 204 {
			t.Errorf("deleting the conversation its writers race: got %d %s, want 204", r.status, r.body)
		}
		close(stop)
		wg.Wait()
		// Stored responses stay as erased tombstones (a replay answers 404); none holds data.
		if n := cypherCount(t, `MATCH (k:IdempotencyKey {conversationId: $c}) WHERE k.state <> 'erased' OR k.body IS NOT NULL RETURN count(k)`,
			map[string]any{"c": w.conv}); n != 0 {
			t.Errorf("%d stored responses of the deleted conversation were not erased", n)
		}
		if recs := cypherQuery(t, `MATCH (n {conversationId: $c}) WHERE NOT n:IdempotencyKey RETURN labels(n)[0] AS label, count(n)`, map[string]any{"c": w.conv}); len(recs) != 0 {
			for _, r := range recs {
				t.Errorf("%d %s nodes of the deleted conversation remain after its writers stopped", r.Values[1], r.Values[0])
			}
		}
	}
	t.Logf("statuses: %v", statuses)
	if statuses[404] == 0 {
		t.Errorf("no write met the deletion (statuses %v)", statuses)
	}
	if err := store.SweepBlobs(t.Context()); err != nil {
		t.Fatal(err)
	}
	if orphans := orphanBlobs(t, dir); len(orphans) > 0 {
		t.Errorf("%d blob files no node references", len(orphans))
	}
}

// Big tool results posted while Neo4j is away answer 503 and leave no blob behind once the
// sweeper has run after Neo4j came back.
func TestNoOrphanBlobsAfterAnOutage(t *testing.T) {
	dir := newBlobLocation(t)
	p, store := proxiedStore(t, dir)
	h := newHarnessWith(t, store, "")
	w := h.world()
	tag := "down "
	var calls []string
	for i := range 5 {
		calls = append(calls, str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "t", "callId": fmt.Sprint("c", i)}), "id"))
	}
	p.down()
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := h.call("POST", "/v1/tool-calls/"+call+"/result", map[string]any{"status": "succeeded", "result": bigResult(fmt.Sprint(tag, i))})
			if r.status != 503 {
				t.Errorf("result %d while Neo4j was away: got %d %s, want 503", i, r.status, r.body)
			}
		}()
	}
	wg.Wait()
	if len(orphanBlobs(t, dir)) == 0 {
		t.Fatal("no blob file was written while Neo4j was away: the test proves nothing")
	}
	p.up(t)
	h.waitReady(30 * time.Second)
	sweeper, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); store.RunBlobSweeper(sweeper, time.Hour) }()
	deadline := time.Now().Add(30 * time.Second)
	for len(orphanBlobs(t, dir)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	<-done
	if orphans := orphanBlobs(t, dir); len(orphans) > 0 {
		t.Errorf("%d blob files no node references 30 s after Neo4j came back", len(orphans))
	}
	// The calls are still pending and take their results now.
	for i, call := range calls {
		art := str(h.must(201, "POST", "/v1/tool-calls/"+call+"/result", map[string]any{"status": "succeeded", "result": bigResult(fmt.Sprint(tag, i))}), "artifactId")
		h.must(200, "GET", "/v1/artifacts/"+art+"/raw", nil)
	}
}

// A sweep never removes a referenced blob, nor one a write has claimed but not committed.
func TestSweepKeepsReferencedAndClaimedBlobs(t *testing.T) {
	store, _, gate, h := gatedHarness(t)
	w := h.world()
	committed := str(h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded", "result": bigResult("kept")}), "artifactId")
	call := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "t"}), "id")
	gate.arm("RecordToolResult", 1)
	recorded := make(chan response, 1)
	go func() {
		recorded <- h.call("POST", "/v1/tool-calls/"+call+"/result", map[string]any{"status": "succeeded", "result": bigResult("in flight")})
	}()
	gate.waitHeld()
	if err := store.SweepBlobs(t.Context()); err != nil {
		t.Fatal(err)
	}
	gate.release()
	r := <-recorded
	if r.status != 201 {
		t.Fatalf("result in flight during the sweep answered %d %s", r.status, r.body)
	}
	for _, art := range []string{committed, str(r.obj(t), "artifactId")} {
		h.must(200, "GET", "/v1/artifacts/"+art+"/raw", nil)
	}
}

// A body trickled in slower than the read timeout is cut there, with its connection.
func TestTrickledBodyIsCutAtTheReadTimeout(t *testing.T) {
	h := newHarness(t)
	timeouts := api.DefaultTimeouts
	timeouts.Read = 2 * time.Second
	srv := h.srv.HTTPServer("", timeouts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	w := h.world()
	body := `{"role":"user","content":"` + strings.Repeat("x", 200) + `"}`
	start := time.Now()
	fmt.Fprintf(conn, "POST /v1/branches/%s/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		w.branch, h.key, len(body))
	closed := make(chan time.Duration, 1)
	go func() {
		io.Copy(io.Discard, conn) // until the server closes the connection
		closed <- time.Since(start)
	}()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i < len(body); i++ {
		select {
		case d := <-closed:
			if d > timeouts.Read+3*time.Second {
				t.Errorf("connection closed after %v, want about the %v read timeout", d, timeouts.Read)
			}
			if n := cypherCount(t, `MATCH (m:Message {branchId: $b}) WHERE m.content STARTS WITH 'xxx' RETURN count(m)`, map[string]any{"b": w.branch}); n != 0 {
				t.Errorf("the cut request wrote %d messages", n)
			}
			return
		case <-tick.C:
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				d := time.Since(start)
				if d > timeouts.Read+3*time.Second {
					t.Errorf("writes failed only after %v", d)
				}
				return
			}
		}
		if time.Since(start) > 20*time.Second {
			break
		}
	}
	t.Errorf("the trickled request kept its connection for %v (read timeout %v)", time.Since(start), timeouts.Read)
}
