package integration

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/browser"
)

// The server serves the stylesheet and the guide to Neo4j Browser, and every query of the
// guide runs on the real Neo4j against a conversation with a generation, a tool call, its
// artifact and memory, and a traced assembly, the steps that walk a conversation finding
// what they show.
func TestBrowserGuideQueriesRun(t *testing.T) {
	h := newProviderHarness(t)
	for path, want := range map[string][]byte{"/browser/ctxgraph.grass": browser.Style, "/browser/guide.html": browser.Guide} {
		r := h.callAs("", "GET", path, nil)
		if r.status != 200 || string(r.body) != string(want) || r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("GET %s: %d, CORS %q", path, r.status, r.header.Get("Access-Control-Allow-Origin"))
		}
	}
	// Browser's :guide asks for the guide uncached (Pragma, Cache-Control): a preflighted fetch.
	pre := h.callAs("", "OPTIONS", "/browser/guide.html", nil, "Origin", "http://127.0.0.1:7474",
		"Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "pragma,cache-control")
	if allow := strings.ToLower(pre.header.Get("Access-Control-Allow-Headers")); pre.status != 204 ||
		pre.header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(allow, "pragma") || !strings.Contains(allow, "cache-control") {
		t.Errorf("OPTIONS /browser/guide.html: %d, origin %q, headers %q; Browser's :guide could not fetch it",
			pre.status, pre.header.Get("Access-Control-Allow-Origin"), allow)
	}
	w := h.world()
	art := str(h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded", "result": map[string]any{"rows": 3}}), "artifactId")
	h.must(201, "POST", "/v1/memories", map[string]any{"derivedFrom": []string{art}, "summary": "three rows"})
	echoBot := str(h.must(201, "POST", "/v1/conversations/"+w.conv+"/participants", map[string]any{"kind": "model", "name": "echo-bot", "provider": "echo"}), "id")
	h.must(201, "POST", "/v1/generations", map[string]any{"branchId": w.branch, "participantIds": []string{echoBot}, "userMessage": map[string]any{"content": "and Q4?"}})
	// A call still without its result: a recovery decision keeps it.
	h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "calendar_read", "arguments": map[string]any{"day": "monday"}})
	h.must(201, "POST", "/v1/assemblies", map[string]any{"branchId": w.branch, "participantId": w.participant, "trace": true})

	blocks := regexp.MustCompile(`(?s)<pre class="[^"]*runnable[^"]*">(.*?)</pre>`).FindAllStringSubmatch(string(browser.Guide), -1)
	ran := 0
	for _, b := range blocks {
		query := html.UnescapeString(b[1])
		if strings.HasPrefix(query, ":") {
			continue // a Browser command, not Cypher
		}
		ran++
		rows := cypherQuery(t, query, map[string]any{"conv": w.conv})
		// The schedule step shows nothing for a conversation without schedules; the
		// first finds the newest conversation of the whole database.
		if len(rows) == 0 && !strings.Contains(query, "ScheduleTick") {
			t.Errorf("the guide's query found nothing for a conversation that has it:\n%s", query)
		}
	}
	if ran < 8 {
		t.Fatalf("ran %d of the guide's queries", ran)
	}
}
