package integration

import (
	"context"

	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
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
