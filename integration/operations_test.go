package integration

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ctxgraph/ctxgraph/api"
)

// One access-log line per request, naming method, route, status, latency, request id and
// account, and never the key or the body.
func TestAccessLogOneLinePerRequest(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	h := newHarness(t)
	h.srv = api.New(api.Config{Graph: sharedStore, Idempotency: sharedStore, Health: sharedStore, Assembler: h.asm,
		Assemblies: sharedStore, Keys: map[string]string{h.key: h.account}, Log: zap.New(core)})
	const secret = "TITLE-ONLY-IN-THE-BODY-5521"
	conv := h.must(201, "POST", "/v1/conversations", map[string]any{"title": secret})
	h.expectError(h.call("GET", "/v1/runs/run_nope", nil), 404, "not_found", "")
	h.expectError(h.callAs("", "GET", "/v1/conversations/"+str(conv, "id"), nil), 401, "unauthenticated", "")
	h.must(200, "GET", "/healthz", nil)

	var lines []observer.LoggedEntry
	for _, e := range logs.All() {
		if e.Message == "request" {
			lines = append(lines, e)
		}
		for _, f := range e.Context {
			if v := fmt.Sprint(f.Interface, f.String); strings.Contains(v, h.key) || strings.Contains(v, secret) {
				t.Errorf("a log line carries the key or the body: %v", e.ContextMap())
			}
		}
		if e.Stack != "" {
			t.Errorf("a log line carries a stack trace: %s", e.Message)
		}
	}
	want := []struct {
		method, route string
		status        int64
		account       string
		level         zapcore.Level
	}{
		{"POST", "/v1/conversations", 201, h.account, zap.InfoLevel},
		{"GET", "/v1/runs/{id}", 404, h.account, zap.InfoLevel},
		{"GET", "/v1/conversations/{id}", 401, "", zap.InfoLevel},
		{"GET", "/healthz", 200, "", zap.DebugLevel},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d access-log lines for %d requests", len(lines), len(want))
	}
	for i, w := range want {
		m := lines[i].ContextMap()
		if m["method"] != w.method || m["route"] != w.route || m["status"] != w.status || m["account"] != w.account ||
			lines[i].Level != w.level || m["requestId"] == "" || m["latencyMs"] == nil {
			t.Errorf("line %d: %v at %v, want %+v", i, m, lines[i].Level, w)
		}
	}
}

// GET /v1/conversations pages through an account's conversations, newest first.
func TestListConversationsNewestFirst(t *testing.T) {
	h := newHarness(t)
	var ids []string
	for day := 1; day <= 5; day++ {
		c := h.must(201, "POST", "/v1/conversations", map[string]any{"title": fmt.Sprintf("day %d", day), "at": fmt.Sprintf("2026-11-0%dT09:00:00Z", day)})
		ids = append(ids, str(c, "id"))
	}
	h.callAs(h.otherKey, "POST", "/v1/conversations", map[string]any{"title": "another account's"})
	h.must(204, "DELETE", "/v1/conversations/"+ids[2], nil)
	var listed []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("paging does not end")
		}
		page := h.must(200, "GET", "/v1/conversations?limit=2&cursor="+cursor, nil)
		for _, v := range page["conversations"].([]any) {
			listed = append(listed, str(v.(map[string]any), "id"))
		}
		next, _ := page["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if want := []string{ids[4], ids[3], ids[1], ids[0]}; fmt.Sprint(listed) != fmt.Sprint(want) {
		t.Fatalf("listed %v, want %v (newest first, the deleted one left out)", listed, want)
	}
	h.expectError(h.call("GET", "/v1/conversations?cursor=not-a-cursor", nil), 400, "invalid", "cursor")
	h.expectError(h.call("GET", "/v1/conversations?limit=0", nil), 400, "invalid", "limit")
	if other := h.callAs(h.otherKey, "GET", "/v1/conversations", nil).obj(t)["conversations"].([]any); len(other) != 1 {
		t.Fatalf("the other account lists %d conversations, want its own one", len(other))
	}
}

// An error quotes an id as the client meant it, not as the path escaped it.
func TestErrorsQuoteIdsAsSent(t *testing.T) {
	h := newHarness(t)
	for path, id := range map[string]string{"/v1/runs/run%2Fx": "run/x", "/v1/runs/run%41b": "runAb", "/v1/memories/mem%20%22q%22": `mem "q"`} {
		r := h.call("GET", path, nil)
		h.expectError(r, 404, "not_found", "")
		if msg := str(r.obj(t)["error"].(map[string]any), "message"); !strings.Contains(msg, fmt.Sprintf("%q", id)) {
			t.Errorf("GET %s: the error says %q, want it to quote %q", path, msg, id)
		}
	}
}
