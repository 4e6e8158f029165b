package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/provider"
)

// katan is an llm-katan server (scripts/llm-katan): a provider nobody here wrote, speaking
// the OpenAI and Anthropic protocols with its echo backend.
type katan struct {
	base string
}

// startKatan runs llm-katan with extra arguments until the test ends.
func startKatan(t *testing.T, args ...string) katan {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	script, err := filepath.Abs(filepath.Join("..", "scripts", "llm-katan"))
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(t.TempDir(), "llm-katan.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, append([]string{"serve", strconv.Itoa(port)}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
	})
	k := katan{base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	deadline := time.Now().Add(3 * time.Minute) // the first start installs it
	for {
		resp, err := http.Get(k.base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return k
			}
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("llm-katan did not start on port %d: %s", port, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var katanRequests = regexp.MustCompile(`(?m)^llm_katan_requests_total\{[^}]*\} (\d+)`)

// requests reads llm_katan_requests_total from its /metrics.
func (k katan) requests(t *testing.T) int {
	t.Helper()
	resp, err := http.Get(k.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := katanRequests.FindSubmatch(body)
	if m == nil {
		t.Fatalf("no llm_katan_requests_total in %s", body)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// providers are the two provider entries of one llm-katan, named as the policies know them.
func (k katan) providers(t *testing.T, retries int) []provider.Config {
	t.Helper()
	cfgs, err := provider.Parse([]byte(fmt.Sprintf(`providers:
  - {name: openai, kind: openai, baseURL: "%[1]s/v1", apiKeyEnv: KATAN_KEY, maxRetries: %[2]d, timeout: 20s}
  - {name: anthropic, kind: anthropic, baseURL: "%[1]s", apiKeyEnv: KATAN_KEY, maxRetries: %[2]d, timeout: 20s}
`, k.base, retries)), func(string) string { return "katan-test-key" })
	if err != nil {
		t.Fatal(err)
	}
	return cfgs
}

// End to end against llm-katan: a single turn, the tool loop through continue, a
// multi-model turn over both protocols, a streamed turn, an idempotent retry.
func TestGenerationAgainstLLMKatan(t *testing.T) {
	k := startKatan(t)
	h := newProviderHarness(t, k.providers(t, 0)...)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "ctxgraph-test"}, [3]string{"claude", "anthropic", "ctxgraph-test"})

	one := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[:1],
		"userMessage": map[string]any{"content": "say something"}})
	if r := first(one, "runs"); r["status"] != "completed" || r["message"].(map[string]any)["content"] == "" {
		t.Fatalf("single turn: %v", r)
	}

	// Its echo backend calls the first tool of any request that offers tools.
	loop := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[:1],
		"userMessage": map[string]any{"content": "read the q3 sheet"}, "tools": []any{sheetTool}})
	run := first(loop, "runs")
	call := first(run, "toolCalls")
	if run["status"] != "awaiting_tools" || call["tool"] != "sheet_read" {
		t.Fatalf("tool call: %v", run)
	}
	h.must(201, "POST", "/v1/tool-calls/"+str(call, "id")+"/result", map[string]any{"status": "succeeded", "result": map[string]any{"north": 4.2}})
	// The run keeps its tools, which llm-katan would call again: this continue offers none.
	done := first(h.must(200, "POST", "/v1/runs/"+str(run, "runId")+"/continue", map[string]any{"tools": []any{}}), "runs")
	if done["status"] != "completed" {
		t.Fatalf("continue after the result: %v", done)
	}

	both := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
		"userMessage": map[string]any{"content": "both of you"}})
	for _, r := range both["runs"].([]any) {
		if rr := r.(map[string]any); rr["status"] != "completed" {
			t.Fatalf("multi-model turn: %v", rr)
		}
	}

	r := h.call("POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[:1],
		"userMessage": map[string]any{"content": "stream it"}, "stream": true})
	var text strings.Builder
	var final string
	for _, block := range strings.Split(string(r.body), "\n\n") {
		name, data := sseEvent(block)
		switch name {
		case "message.delta":
			text.WriteString(jsonField(t, data, "text"))
		case "run.completed":
			final = data
		}
	}
	if final == "" || text.Len() == 0 || !strings.Contains(final, jsonQuote(text.String())) {
		t.Fatalf("streamed deltas %q do not make the recorded message %s", text.String(), final)
	}

	before := k.requests(t)
	body := map[string]any{"branchId": branch, "participantIds": ids[1:], "userMessage": map[string]any{"content": "only once"}}
	a := h.call("POST", "/v1/generations", body, "Idempotency-Key", "katan-1")
	b := h.call("POST", "/v1/generations", body, "Idempotency-Key", "katan-1")
	if a.status != 201 || string(a.body) != string(b.body) {
		t.Fatalf("retried turn: %d %s / %s", a.status, a.body, b.body)
	}
	if after := k.requests(t); after != before+1 {
		t.Fatalf("llm-katan counted %d requests for a turn and its retry, want 1", after-before)
	}
}

// A provider that always fails: every attempt counted, the run failed with the provider's
// status, the turn 502.
func TestGenerationAgainstFailingLLMKatan(t *testing.T) {
	k := startKatan(t, "--error-rate", "1.0")
	h := newProviderHarness(t, k.providers(t, 1)...)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "ctxgraph-test"})
	r := h.call("POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "x"}})
	if r.status != 502 {
		t.Fatalf("got %d %s, want 502", r.status, r.body)
	}
	run := first(r.obj(t), "runs")
	if e, _ := run["error"].(map[string]any); run["status"] != "failed" || e["providerStatus"] != float64(500) {
		t.Fatalf("failed run: %v", run)
	}
}

// streamedTurn is what a streamed generation or continue answered: its events' names in
// order, the text of its message.delta events, its tool_call events' calls and the run
// object it ended with.
type streamedTurn struct {
	names     []string
	text      string
	toolCalls []map[string]any
	end       map[string]any
}

func streamTurn(t *testing.T, h *harness, path string, body map[string]any) streamedTurn {
	t.Helper()
	body["stream"] = true
	r := h.call("POST", path, body)
	if r.status != 200 && r.status != 201 {
		t.Fatalf("streamed %s: %d %s", path, r.status, r.body)
	}
	var out streamedTurn
	var text strings.Builder
	for _, block := range strings.Split(string(r.body), "\n\n") {
		name, data := sseEvent(block)
		if name == "" {
			continue
		}
		out.names = append(out.names, name)
		var m map[string]any
		_ = json.Unmarshal([]byte(data), &m)
		switch name {
		case "message.delta":
			text.WriteString(str(m, "text"))
		case "tool_call":
			call, _ := m["toolCall"].(map[string]any)
			out.toolCalls = append(out.toolCalls, call)
		case "run.completed", "run.awaiting_tools", "run.failed":
			out.end = m
		}
	}
	out.text = text.String()
	return out
}

// Streamed turns whose model calls tools, against llm-katan. Its openai protocol answers a
// streamed request that offers tools with one JSON completion, not an event stream: the
// call it makes is still a tool call, and the run awaits its result rather than completing
// with an empty answer. Once a result is recorded the conversation names an artifact, so
// ctxgraph offers its recall tool, which llm-katan calls until it is withdrawn: the
// streamed turn answers those rounds itself and streams the last call's text.
func TestStreamedToolCallsAgainstLLMKatan(t *testing.T) {
	k := startKatan(t)
	h := newProviderHarness(t, k.providers(t, 0)...)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "ctxgraph-test"})

	loop := streamTurn(t, h, "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
		"userMessage": map[string]any{"content": "read the q3 sheet"}, "tools": []any{sheetTool}})
	if loop.end == nil || loop.end["status"] != "awaiting_tools" || len(loop.toolCalls) != 1 || loop.toolCalls[0]["tool"] != "sheet_read" {
		t.Fatalf("streamed tool call: got events %v, calls %v, end %v; want one sheet_read call and the run awaiting it", loop.names, loop.toolCalls, loop.end)
	}
	call := first(loop.end, "toolCalls")
	// Too large to be quoted whole in its memory: later calls are offered its recall.
	rows := make([]any, 200)
	for i := range rows {
		rows[i] = map[string]any{"region": fmt.Sprintf("r%d", i), "q3": i * 7, "forecast": i * 6}
	}
	h.must(201, "POST", "/v1/tool-calls/"+str(call, "id")+"/result", map[string]any{"status": "succeeded", "result": map[string]any{"rows": rows}})

	for _, tc := range []struct {
		name, path     string
		body           map[string]any
		recalls, calls int
	}{
		// The run keeps its tools, which llm-katan would call again: this continue offers
		// none. Its latest round goes back raw, so nothing is there to recall.
		{"continue", "/v1/runs/" + str(loop.end, "runId") + "/continue", map[string]any{"tools": []any{}}, 0, 1},
		// The round is now an earlier turn's, shown as its digest naming the artifact:
		// recall.maxRounds (3) recalls, then the call without the tool.
		{"generation", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
			"userMessage": map[string]any{"content": "how do the figures compare?"}}, 3, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := k.requests(t)
			got := streamTurn(t, h, tc.path, tc.body)
			calls := k.requests(t) - before
			if got.end == nil || got.end["status"] != "completed" {
				t.Fatalf("got events %v ending %v, want the run completed", got.names, got.end)
			}
			msg, _ := got.end["message"].(map[string]any)
			if got.text == "" || str(msg, "content") != got.text {
				t.Fatalf("got deltas %q and message %v, want the deltas to make the recorded message", got.text, msg)
			}
			for _, c := range got.toolCalls {
				if c["answeredBy"] != "ctxgraph" || c["tool"] != "ctxgraph_recall" {
					t.Errorf("got tool call %v, want only recalls answered by ctxgraph", c)
				}
			}
			if len(got.toolCalls) != tc.recalls || calls != tc.calls {
				t.Errorf("got %d recalls in %d model calls, want %d in %d", len(got.toolCalls), calls, tc.recalls, tc.calls)
			}
		})
	}
}
