package integration

import (
	"os"
	"os/exec"
	"testing"
	"time"
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
