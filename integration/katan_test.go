package integration

import (
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
