package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

func TestValidationNamesTheFieldAndWritesNothing(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	cases := []struct {
		name, method, path string
		body               any
		status             int
		code, field        string
	}{
		{"bad runtime kind", "POST", "/v1/branches/" + w.branch + "/runs", map[string]any{"participantId": w.participant, "runtimeKind": "batch"}, 400, "invalid", "runtimeKind"},
		{"missing participant", "POST", "/v1/branches/" + w.branch + "/runs", map[string]any{"runtimeKind": "chat"}, 400, "invalid", "participantId"},
		{"bad role", "POST", "/v1/branches/" + w.branch + "/messages", map[string]any{"role": "tool", "content": "x"}, 400, "invalid", "role"},
		{"empty user content", "POST", "/v1/branches/" + w.branch + "/messages", map[string]any{"role": "user"}, 400, "invalid", "content"},
		{"wrong JSON type", "POST", "/v1/branches/" + w.branch + "/messages", `{"role": "user", "content": 42}`, 400, "invalid", "content"},
		{"malformed time", "POST", "/v1/branches/" + w.branch + "/messages", map[string]any{"role": "user", "content": "x", "at": "yesterday"}, 400, "invalid", "at"},
		{"not JSON", "POST", "/v1/conversations", `{"title": `, 400, "invalid", ""},
		{"bad participant kind", "POST", "/v1/conversations/" + w.conv + "/participants", map[string]any{"kind": "robot", "name": "r"}, 400, "invalid", "kind"},
		{"bad tool status", "POST", "/v1/tool-calls/" + w.call + "/result", map[string]any{"status": "done"}, 400, "invalid", "status"},
		{"bad privacy class", "POST", "/v1/tool-calls/" + w.call + "/result", map[string]any{"status": "succeeded", "privacyClass": "Top Secret!"}, 400, "invalid", "privacyClass"},
		{"nested memory field", "POST", "/v1/tool-calls/" + w.call + "/result", map[string]any{"status": "succeeded", "memories": []map[string]any{{"summary": "ok"}, {"freshnessClass": "stale"}}}, 400, "invalid", "memories[1].summary"},
		{"bad run status", "PATCH", "/v1/runs/" + w.run, map[string]any{"status": "paused"}, 400, "invalid", "status"},
		{"unknown participant", "POST", "/v1/branches/" + w.branch + "/runs", map[string]any{"participantId": "pt_nope", "runtimeKind": "chat"}, 404, "not_found", "participantId"},
		{"unknown trigger", "POST", "/v1/branches/" + w.branch + "/runs", map[string]any{"participantId": w.participant, "runtimeKind": "chat", "triggerMessageId": "msg_nope"}, 404, "not_found", "triggerMessageId"},
		{"retry of unknown call", "POST", "/v1/runs/" + w.run + "/tool-calls", map[string]any{"tool": "t", "retryOf": "tc_nope"}, 404, "not_found", "retryOf"},
		{"unknown route", "GET", "/v1/nothing-here", nil, 404, "not_found", ""},
		{"wrong method", "PUT", "/v1/conversations/" + w.conv, nil, 405, "method_not_allowed", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			h.expectError(h.call(tc.method, tc.path, tc.body), tc.status, tc.code, tc.field)
		})
	}
	h.t = t
	// None of the refused writes left anything behind.
	got := transcript(h.must(200, "GET", "/v1/branches/"+w.branch+"/history", nil))
	if strings.Join(got, "|") != "message:find the Q3 numbers|tool_call:sheet_read" {
		t.Errorf("got history %v after refused writes, want it unchanged", got)
	}
	if call := h.must(200, "GET", "/v1/tool-calls/"+w.call, nil); str(call, "status") != "pending" {
		t.Errorf("got call status %q after refused results, want pending", str(call, "status"))
	}
}

func TestAuthenticationAndAccountIsolation(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	h.expectError(h.callAs("", "GET", "/v1/conversations/"+w.conv, nil), 401, "unauthenticated", "")
	h.expectError(h.callAs("not-a-key", "GET", "/v1/conversations/"+w.conv, nil), 401, "unauthenticated", "")

	// Every id of the first account answers the other account exactly like an unknown id.
	art := str(h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded", "result": "r",
		"memories": []map[string]any{{"summary": "m"}}}), "artifactId")
	mem := str(h.must(200, "GET", "/v1/artifacts/"+art, nil), "id")
	reads := []struct{ method, path string }{
		{"GET", "/v1/conversations/" + w.conv}, {"GET", "/v1/branches/" + w.branch + "/history"},
		{"GET", "/v1/runs/" + w.run}, {"GET", "/v1/tool-calls/" + w.call}, {"GET", "/v1/artifacts/" + art},
		{"GET", "/v1/artifacts/" + art + "/raw"}, {"DELETE", "/v1/artifacts/" + mem}, {"DELETE", "/v1/conversations/" + w.conv},
	}
	for _, r := range reads {
		other := h.callAs(h.otherKey, r.method, r.path, nil)
		unknown := h.callAs(h.otherKey, r.method, strings.Replace(r.path, "_", "_0000", 1), nil)
		if other.status != 404 || unknown.status != 404 {
			t.Errorf("%s %s as another account: got %d (unknown id: %d), want 404 for both", r.method, r.path, other.status, unknown.status)
		}
		if strings.Contains(string(other.body), "another account") {
			t.Errorf("%s %s: the error reveals another account: %s", r.method, r.path, other.body)
		}
	}
	writes := []struct {
		path  string
		body  any
		field string
	}{
		{"/v1/branches/" + w.branch + "/messages", map[string]any{"role": "user", "content": "hi"}, ""},
		{"/v1/branches/" + w.branch + "/runs", map[string]any{"participantId": w.participant, "runtimeKind": "chat"}, ""},
		{"/v1/runs/" + w.run + "/tool-calls", map[string]any{"tool": "t"}, ""},
		{"/v1/conversations/" + w.conv + "/participants", map[string]any{"kind": "model", "name": "x"}, ""},
		{"/v1/memories", map[string]any{"derivedFrom": []string{art}, "summary": "stolen"}, "derivedFrom"},
	}
	for _, wr := range writes {
		h.expectError(h.callAs(h.otherKey, "POST", wr.path, wr.body), 404, "not_found", wr.field)
	}
	// The other account's own conversation cannot borrow this account's participant.
	c := h.callAs(h.otherKey, "POST", "/v1/conversations", map[string]any{"title": "mine"})
	otherBranch := str(c.obj(t), "branchId")
	h.expectError(h.callAs(h.otherKey, "POST", "/v1/branches/"+otherBranch+"/runs", map[string]any{"participantId": w.participant, "runtimeKind": "chat"}), 404, "not_found", "participantId")
	if got := transcript(h.must(200, "GET", "/v1/branches/"+w.branch+"/history", nil)); len(got) != 2 {
		t.Errorf("got history %v, want the other account's attempts to have written nothing", got)
	}
}

func TestIdempotentRetryReturnsTheFirstResult(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	body := map[string]any{"role": "user", "content": "exactly once"}
	first := h.call("POST", "/v1/branches/"+w.branch+"/messages", body, "Idempotency-Key", "msg-once-1")
	second := h.call("POST", "/v1/branches/"+w.branch+"/messages", body, "Idempotency-Key", "msg-once-1")
	if first.status != 201 || second.status != 201 || string(first.body) != string(second.body) {
		t.Fatalf("got %d %s then %d %s, want the same 201 body twice", first.status, first.body, second.status, second.body)
	}
	if second.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry is not marked Idempotent-Replayed")
	}
	if got := transcript(h.must(200, "GET", "/v1/branches/"+w.branch+"/history", nil)); len(got) != 3 {
		t.Errorf("got history %v, want one new message", got)
	}
	h.expectError(h.call("POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "different"}, "Idempotency-Key", "msg-once-1"), 409, "conflict", "Idempotency-Key")
	// Keys are per account: the other account may use the same key for its own write.
	if r := h.callAs(h.otherKey, "POST", "/v1/conversations", map[string]any{"title": "x"}, "Idempotency-Key", "msg-once-1"); r.status != 201 {
		t.Errorf("got %d for another account's use of the key, want 201", r.status)
	}
	// A failed request does not hold the key: its retry runs again.
	h.expectError(h.call("POST", "/v1/branches/"+w.branch+"/runs", map[string]any{"participantId": "pt_nope", "runtimeKind": "chat"}, "Idempotency-Key", "run-1"), 404, "not_found", "participantId")
	h.must(201, "POST", "/v1/branches/"+w.branch+"/runs", map[string]any{"participantId": w.participant, "runtimeKind": "chat"}, "Idempotency-Key", "run-1")
}

func TestOversizeBodyIs413(t *testing.T) {
	h := newHarnessWith(t, sharedStore, "64K")
	w := h.world()
	big := `{"status":"succeeded","result":"` + strings.Repeat("x", 70<<10) + `"}`
	r := h.call("POST", "/v1/tool-calls/"+w.call+"/result", big)
	h.expectError(r, 413, "too_large", "")
	if msg := str(r.obj(t)["error"].(map[string]any), "message"); !strings.Contains(msg, "64K") || !strings.Contains(msg, "CTXGRAPH_MAX_BODY") {
		t.Errorf("the 413 says %q: it should name the limit and its setting", msg)
	}
	if call := h.must(200, "GET", "/v1/tool-calls/"+w.call, nil); str(call, "status") != "pending" {
		t.Errorf("got status %q after a refused body, want pending", str(call, "status"))
	}
}

func TestFailureHalfWayThroughAWriteWritesNothing(t *testing.T) {
	store := openStore(blobDir)
	defer store.Close(context.Background())
	var armed sync.Mutex
	fail := false
	store.AfterStatement = func(query string) error {
		armed.Lock()
		defer armed.Unlock()
		if fail && query == "RecordToolResult" {
			return errors.New("injected failure after the artifact was created")
		}
		return nil
	}
	h := newHarnessWith(t, store, "")
	w := h.world()
	armed.Lock()
	fail = true
	armed.Unlock()
	// The result is large enough for the blob store: the failed write must not leave it there.
	bigResult := strings.Repeat("row-only-in-this-failed-write,", 3000)
	h.expectError(h.call("POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded", "result": bigResult,
		"memories": []map[string]any{{"summary": "derived"}}}), 500, "internal", "")
	call := h.must(200, "GET", "/v1/tool-calls/"+w.call, nil)
	if str(call, "status") != "pending" || call["artifactIds"] != nil {
		t.Fatalf("got call %v after the failed write, want pending with no artifact", call)
	}
	resultJSON, _ := json.Marshal(bigResult)
	sum := sha256.Sum256(resultJSON)
	if ref := "sha256:" + hex.EncodeToString(sum[:]); blobStored(t, blobDir, ref) {
		t.Errorf("the failed write left its blob %s in the store", ref)
	}
	armed.Lock()
	fail = false
	armed.Unlock()
	out := h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded", "result": "rows"})
	art := h.must(200, "GET", "/v1/artifacts/"+str(out, "artifactId"), nil)
	// The branch's seq counter was rolled back too: the artifact takes the seq right after the
	// call (message 1, run 2, call 3), as if the failed write had never happened.
	if art["seq"].(float64) != 4 {
		t.Errorf("got artifact seq %v, want 4", art["seq"])
	}
}

func TestDeletedConversationStaysDeleted(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	h.must(204, "DELETE", "/v1/conversations/"+w.conv, nil)
	late := []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/branches/" + w.branch + "/messages", map[string]any{"role": "user", "content": "late"}},
		{"POST", "/v1/branches/" + w.branch + "/runs", map[string]any{"participantId": w.participant, "runtimeKind": "chat"}},
		{"POST", "/v1/runs/" + w.run + "/tool-calls", map[string]any{"tool": "t"}},
		{"POST", "/v1/tool-calls/" + w.call + "/result", map[string]any{"status": "succeeded", "result": "late"}},
		{"PATCH", "/v1/runs/" + w.run, map[string]any{"status": "completed"}},
		{"POST", "/v1/runs/" + w.run + "/checkpoints", map[string]any{"state": map[string]any{}}},
		{"POST", "/v1/runs/" + w.run + "/skills", map[string]any{"loadedSkills": []string{"x"}}},
		{"POST", "/v1/conversations/" + w.conv + "/participants", map[string]any{"kind": "model", "name": "x"}},
	}
	for _, l := range late {
		if r := h.call(l.method, l.path, l.body); r.status != 404 {
			t.Errorf("late %s %s: got %d %s, want 404", l.method, l.path, r.status, r.body)
		}
	}
	h.expectError(h.call("GET", "/v1/branches/"+w.branch+"/history", nil), 404, "not_found", "")
}

// flakyProxy forwards TCP to Neo4j and can be cut and restored, so that a test sees Neo4j
// become unreachable and come back while the service keeps running.
type flakyProxy struct {
	target string
	mu     sync.Mutex
	ln     net.Listener
	addr   string
	conns  []net.Conn
}

func (p *flakyProxy) up(t *testing.T) {
	ln, err := net.Listen("tcp", p.addrOr("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
}

func (p *flakyProxy) addrOr(def string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.addr != "" {
		return p.addr
	}
	return def
}

func (p *flakyProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func TestNeo4jUnreachableIs503AndRecoversWithoutRestart(t *testing.T) {
	target := strings.TrimPrefix(strings.TrimPrefix(neo4jServer.URI, "bolt://"), "neo4j://")
	if strings.Contains(target, "://") {
		t.Fatalf("cannot proxy %s", neo4jServer.URI)
	}
	p := &flakyProxy{target: target}
	p.up(t)
	store := openStoreAt("bolt://"+p.addr, blobDir)
	defer store.Close(context.Background())
	h := newHarnessWith(t, store, "")
	h.must(200, "GET", "/readyz", nil)
	if err := store.RoundTrip(t.Context()); err != nil {
		t.Fatalf("RETURN 1 through the proxy: %v", err)
	}
	w := h.world()

	p.down()
	if err := store.RoundTrip(t.Context()); model.KindOf(err) != model.KindUnavailable {
		t.Errorf("RETURN 1 while Neo4j is away: got %v, want an unavailable error", err)
	}
	start := time.Now()
	h.expectError(h.call("POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "while down"}), 503, "unavailable", "")
	if elapsed := time.Since(start); elapsed > 15*time.Second {
		t.Errorf("503 took %v, want the driver to give up within seconds", elapsed)
	}
	if unavailable, _ := store.Neo4jErrors(); unavailable == 0 {
		t.Error("the store counted no unavailability (ctxgraph_neo4j_errors_total) while Neo4j was away")
	}
	h.expectError(h.call("GET", "/readyz", nil), 503, "unavailable", "")
	h.expectError(h.call("GET", "/v1/conversations/"+w.conv, nil), 503, "unavailable", "")
	h.must(200, "GET", "/healthz", nil)

	p.up(t)
	h.waitReady(20 * time.Second)
	h.must(201, "POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "after recovery"})
	if got := transcript(h.must(200, "GET", "/v1/branches/"+w.branch+"/history", nil)); len(got) != 3 {
		t.Errorf("got history %v, want the write made while Neo4j was away to be absent", got)
	}
}
