package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/generation"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/provider"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// protocolServer is an in-test server speaking a provider's protocol: it keeps every
// request exactly as received and answers what the test scripts.
type protocolServer struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	times    []time.Time
	answer   func(n int, req map[string]any) (status int, header map[string]string, body any)
	wantPath string
}

func newProtocolServer(t *testing.T, path string, answer func(n int, req map[string]any) (int, map[string]string, any)) *protocolServer {
	p := &protocolServer{answer: answer, wantPath: path}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		n := len(p.bodies)
		p.bodies, p.headers, p.times = append(p.bodies, body), append(p.headers, r.Header.Clone()), append(p.times, time.Now())
		p.mu.Unlock()
		if r.URL.Path != p.wantPath {
			http.Error(w, "unexpected path "+r.URL.Path, http.StatusNotFound)
			return
		}
		var req map[string]any
		_ = json.Unmarshal(body, &req)
		status, header, out := p.answer(n, req)
		for k, v := range header {
			w.Header().Set(k, v)
		}
		if stream, _ := req["stream"].(bool); stream && status == 200 {
			switch r.URL.Path {
			case "/v1/chat/completions":
				writeOpenAIStream(w, out)
				return
			case "/v1/messages":
				writeAnthropicStream(w, out)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(p.Close)
	return p
}

// openAIAt configures the provider openai as the server p, with key as its API key.
func openAIAt(t *testing.T, p *protocolServer, key string) []provider.Config {
	t.Helper()
	cfgs, err := provider.Parse([]byte(`providers:
  - {name: openai, kind: openai, baseURL: "`+p.URL+`/v1", apiKeyEnv: CTXGRAPH_TEST_OPENAI_KEY, maxRetries: 0}
`), func(k string) string { return map[string]string{"CTXGRAPH_TEST_OPENAI_KEY": key}[k] })
	if err != nil {
		t.Fatal(err)
	}
	return cfgs
}

// request returns the n-th request's body decoded.
func (p *protocolServer) request(t *testing.T, n int) map[string]any {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if n >= len(p.bodies) {
		t.Fatalf("the provider got %d requests, want at least %d", len(p.bodies), n+1)
	}
	var m map[string]any
	if err := json.Unmarshal(p.bodies[n], &m); err != nil {
		t.Fatalf("request %d is not JSON: %s", n, p.bodies[n])
	}
	return m
}

func (p *protocolServer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.bodies)
}

func (p *protocolServer) sha256(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	sum := sha256.Sum256(p.bodies[n])
	return hex.EncodeToString(sum[:])
}

// writeOpenAIStream sends a chat completion as the stream of chunks a streamed request gets:
// the message's text or tool calls in one delta, then the finish reason with the usage.
func writeOpenAIStream(w http.ResponseWriter, completion any) {
	c := completion.(map[string]any)
	choice := c["choices"].([]any)[0].(map[string]any)
	msg := choice["message"].(map[string]any)
	delta := map[string]any{"role": "assistant"}
	if text, ok := msg["content"].(string); ok {
		delta["content"] = text
	}
	if calls, ok := msg["tool_calls"].([]any); ok {
		indexed := make([]any, len(calls))
		for i, tc := range calls {
			m := maps.Clone(tc.(map[string]any))
			m["index"] = i
			indexed[i] = m
		}
		delta["tool_calls"] = indexed
	}
	chunk := func(choices []any, usage any) string {
		b, _ := json.Marshal(map[string]any{"id": c["id"], "object": "chat.completion.chunk", "created": 1, "model": c["model"],
			"choices": choices, "usage": usage})
		return "data: " + string(b) + "\n\n"
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	_, _ = io.WriteString(w, chunk([]any{map[string]any{"index": 0, "delta": delta}}, nil)+
		chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": choice["finish_reason"]}}, nil)+
		chunk([]any{}, c["usage"])+"data: [DONE]\n\n")
}

func openAIText(text string) any {
	return map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1-2025",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}},
		"usage":   map[string]any{"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129}}
}

func openAIToolCall(id, name, args string) any {
	return map[string]any{"id": "chatcmpl-0", "object": "chat.completion", "created": 1, "model": "gpt-4.1-2025",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant", "content": nil,
			"tool_calls": []any{map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}}}}},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 12, "total_tokens": 112}}
}

func anthropicText(text string) any {
	return map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "stop_reason": "end_turn",
		"content": []any{map[string]any{"type": "text", "text": text}}, "usage": map[string]any{"input_tokens": 80, "output_tokens": 7}}
}

func anthropicToolUse(id, name string, input map[string]any) any {
	return map[string]any{"id": "msg_0", "type": "message", "role": "assistant", "model": "claude-test", "stop_reason": "tool_use",
		"content": []any{map[string]any{"type": "text", "text": "Let me look."}, map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}},
		"usage":   map[string]any{"input_tokens": 70, "output_tokens": 15}}
}

// conversationWith makes a conversation with one participant per (name, provider, model).
func (h *harness) conversationWith(participants ...[3]string) (conv, branch string, ids []string) {
	h.t.Helper()
	c := h.must(201, "POST", "/v1/conversations", map[string]any{"title": "generations"})
	conv, branch = str(c, "id"), str(c, "branchId")
	for _, p := range participants {
		ids = append(ids, str(h.must(201, "POST", "/v1/conversations/"+conv+"/participants",
			map[string]any{"kind": "model", "name": p[0], "provider": p[1], "model": p[2]}), "id"))
	}
	return conv, branch, ids
}

var sheetTool = map[string]any{"name": "sheet_read", "description": "read a sheet",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"sheet": map[string]any{"type": "string"}}, "required": []any{"sheet"}}}

// messagesOf returns the request's messages.
func messagesOf(t *testing.T, req map[string]any) []map[string]any {
	t.Helper()
	raw, _ := req["messages"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, m := range raw {
		out = append(out, m.(map[string]any))
	}
	return out
}

func first(r map[string]any, k string) map[string]any {
	list, _ := r[k].([]any)
	if len(list) == 0 {
		return nil
	}
	m, _ := list[0].(map[string]any)
	return m
}

// sheetLoopKey is the key of sheetLoop's provider.
const sheetLoopKey = "sk-test-ctxgraph-4711"

// sheetLoop is a harness whose openai provider, a fake, asks for sheet_read on its first
// call and answers text after, with a conversation of one participant on it.
func sheetLoop(t *testing.T) (h *harness, fake *protocolServer, conv, branch string, ids []string) {
	t.Helper()
	fake = newProtocolServer(t, "/v1/chat/completions", func(n int, req map[string]any) (int, map[string]string, any) {
		if n == 0 {
			return 200, nil, openAIToolCall("call_abc", "sheet_read", `{"sheet":"q3"}`)
		}
		return 200, nil, openAIText("Q3 revenue was 4.2M in the north.")
	})
	t.Setenv("CTXGRAPH_TEST_OPENAI_KEY", sheetLoopKey)
	h = newProviderHarness(t, openAIAt(t, fake, sheetLoopKey)...)
	conv, branch, ids = h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
	return h, fake, conv, branch, ids
}

func TestGenerationToolLoopOpenAI(t *testing.T) {
	const key = sheetLoopKey
	h, fake, conv, branch, ids := sheetLoop(t)

	gen := h.must(201, "POST", "/v1/generations", map[string]any{
		"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "find the Q3 numbers"},
		"tools": []any{sheetTool}, "toolChoice": "auto",
	})
	run := first(gen, "runs")
	if run["status"] != "awaiting_tools" {
		t.Fatalf("first call: got run %v, want awaiting_tools", run)
	}
	call := first(run, "toolCalls")
	if call["callId"] != "call_abc" || call["tool"] != "sheet_read" {
		t.Fatalf("tool call handed back: %v", call)
	}
	runID, callID := str(run, "runId"), str(call, "id")

	// Request 1: the user message, the tool offered with its schema, the key only in the header.
	req0 := fake.request(t, 0)
	msgs := messagesOf(t, req0)
	if last := msgs[len(msgs)-1]; last["role"] != "user" || last["content"] != "find the Q3 numbers" {
		t.Fatalf("request 1 does not end with the user message: %v", msgs)
	}
	if tools, _ := req0["tools"].([]any); len(tools) != 1 || tools[0].(map[string]any)["function"].(map[string]any)["name"] != "sheet_read" {
		t.Fatalf("request 1 tools: %v", req0["tools"])
	}
	if got := fake.headers[0].Get("Authorization"); got != "Bearer "+key {
		t.Fatalf("Authorization header %q", got)
	}

	// Continuing before the result is in names the call.
	r := h.call("POST", "/v1/runs/"+runID+"/continue", map[string]any{"tools": []any{sheetTool}})
	h.expectError(r, 409, "conflict", "toolCalls")
	if !strings.Contains(string(r.body), callID) {
		t.Fatalf("409 does not name the call: %s", r.body)
	}
	if fake.count() != 1 {
		t.Fatalf("a refused continue called the provider")
	}

	h.must(201, "POST", "/v1/tool-calls/"+callID+"/result", map[string]any{
		"status": "succeeded", "result": map[string]any{"rows": []any{[]any{"north", 4.2}}}, "privacyClass": "internal"})
	done := h.must(200, "POST", "/v1/runs/"+runID+"/continue", map[string]any{"tools": []any{sheetTool}})
	run = first(done, "runs")
	if run["status"] != "completed" || first(done, "runs")["message"].(map[string]any)["content"] != "Q3 revenue was 4.2M in the north." {
		t.Fatalf("second call: %v", run)
	}

	// Request 2: the round in native form, the call then its result, nothing orphaned.
	msgs = messagesOf(t, fake.request(t, 1))
	pairs := 0
	for i, m := range msgs {
		calls, _ := m["tool_calls"].([]any)
		if len(calls) == 0 {
			continue
		}
		tc := calls[0].(map[string]any)
		if tc["id"] != "call_abc" || tc["function"].(map[string]any)["arguments"] != `{"sheet":"q3"}` {
			t.Fatalf("round call: %v", tc)
		}
		if i+1 >= len(msgs) || msgs[i+1]["role"] != "tool" || msgs[i+1]["tool_call_id"] != "call_abc" ||
			!strings.Contains(msgs[i+1]["content"].(string), "north") {
			t.Fatalf("the call is not followed by its result: %v", msgs)
		}
		pairs++
	}
	if pairs != 1 {
		t.Fatalf("request 2 holds %d tool rounds, want 1: %v", pairs, msgs)
	}
	for _, m := range msgs {
		if m["role"] == "system" && strings.Contains(m["content"].(string), "north") {
			t.Fatalf("the round's result is also in the context block: %v", m)
		}
	}

	// The graph: two assemblies FOR_RUN the run, each with the sha256 of the body sent;
	// the answer GENERATED_BY the run and REPLYING_TO the user message; no key anywhere.
	recs := cypherQuery(t, `MATCH (a:ContextAssembly)-[:FOR_RUN]->(r:ModelRun {id: $run}) RETURN a.requestSha256 AS sha ORDER BY a.createdAt`, map[string]any{"run": runID})
	if len(recs) != 2 {
		t.Fatalf("%d assemblies for the run, want 2", len(recs))
	}
	for i, rec := range recs {
		if got, _ := rec.Get("sha"); got != fake.sha256(i) {
			t.Fatalf("assembly %d records sha256 %v, the provider got %s", i, got, fake.sha256(i))
		}
	}
	if n := cypherCount(t, `MATCH (m:Message {role: 'assistant'})-[:GENERATED_BY]->(r:ModelRun {id: $run, status: 'completed'})
		MATCH (m)-[:REPLIES_TO]->(:Message {id: $user}) WHERE r.responseId = 'chatcmpl-1' AND r.inputTokens = 120 RETURN count(m)`,
		map[string]any{"run": runID, "user": str(gen, "userMessageId")}); n != 1 {
		t.Fatalf("the answer is not recorded GENERATED_BY its run: %d", n)
	}
	if n := keyedNodes(t, conv, "find the Q3 numbers"); n == 0 {
		t.Fatal("the probe for a key finds not even the user message")
	}
	if n := keyedNodes(t, conv, key); n != 0 {
		t.Fatalf("the provider key is in %d nodes of the graph", n)
	}
	for _, id := range []string{str(first(gen, "runs"), "assemblyId"), str(run, "assemblyId")} {
		if rep := h.must(200, "POST", "/v1/assemblies/"+id+"/replay", nil); rep["identical"] != true {
			t.Fatalf("assembly %s does not replay identical: %v", id, rep)
		}
	}
}

func providersFor(t *testing.T, yaml string) []provider.Config {
	t.Helper()
	cfgs, err := provider.Parse([]byte(yaml), func(name string) string { return "value-of-" + name })
	if err != nil {
		t.Fatal(err)
	}
	return cfgs
}

// A multi-model turn: one OpenAI-kind and one Anthropic-kind participant called
// concurrently, each in its own wire format, and a restricted tool result that never
// reaches the provider that may not receive it.
func TestGenerationMultiModelAndPrivacy(t *testing.T) {
	const secret = "GOOGLE-CALENDAR-SECRET-7731"
	oai := newProtocolServer(t, "/v1/chat/completions", func(n int, _ map[string]any) (int, map[string]string, any) {
		return 200, nil, openAIText("gpt's view")
	})
	ant := newProtocolServer(t, "/v1/messages", func(n int, _ map[string]any) (int, map[string]string, any) {
		if n == 0 {
			return 200, nil, anthropicToolUse("toolu_1", "calendar_read", map[string]any{"day": "monday"})
		}
		return 200, nil, anthropicText("claude's view")
	})
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+oai.URL+`/v1", maxRetries: 0}
  - {name: anthropic, kind: anthropic, baseURL: "`+ant.URL+`", maxRetries: 0, apiKeyEnv: ANT_KEY}
`)...)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"}, [3]string{"claude", "anthropic", "claude-test"})
	h.must(201, "POST", "/v1/branches/"+branch+"/messages", map[string]any{"role": "system", "content": "Answer in one sentence."})
	gen := h.must(201, "POST", "/v1/generations", map[string]any{
		"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "what is on monday?"},
		"tools": []any{map[string]any{"name": "calendar_read", "parameters": map[string]any{"type": "object"}}},
	})
	runs, _ := gen["runs"].([]any)
	if len(runs) != 2 || runs[0].(map[string]any)["status"] != "completed" || runs[1].(map[string]any)["status"] != "awaiting_tools" {
		t.Fatalf("multi-model turn: %v", runs)
	}
	if n := cypherCount(t, `MATCH (r:ModelRun {runtimeKind: 'multi_model'})-[:TRIGGERED_BY]->(:Message {id: $m}) RETURN count(r)`,
		map[string]any{"m": str(gen, "userMessageId")}); n != 2 {
		t.Fatalf("%d multi_model runs triggered by the user message, want 2", n)
	}
	claude := runs[1].(map[string]any)
	call := first(claude, "toolCalls")
	if call["callId"] != "toolu_1" {
		t.Fatalf("anthropic tool call: %v", call)
	}
	// Anthropic may not receive google_derived data: the round's result is the safe summary.
	h.must(201, "POST", "/v1/tool-calls/"+str(call, "id")+"/result", map[string]any{
		"status": "succeeded", "result": map[string]any{"events": []any{secret}}, "privacyClass": "google_derived",
		"memories": []any{map[string]any{"summary": "Monday: " + secret, "safeSummary": "one event on Monday", "privacyClass": "google_derived"}},
	})
	done := h.must(200, "POST", "/v1/runs/"+str(claude, "runId")+"/continue", map[string]any{})
	if first(done, "runs")["status"] != "completed" {
		t.Fatalf("continue: %v", done)
	}
	if hd := ant.headers[0]; hd.Get("X-Api-Key") != "value-of-ANT_KEY" || hd.Get("Authorization") != "" || hd.Get("Anthropic-Version") == "" {
		t.Fatalf("anthropic headers: %v", hd)
	}
	body := string(ant.bodies[1])
	if strings.Contains(body, secret) {
		t.Fatalf("the restricted body reached anthropic: %s", body)
	}
	req := ant.request(t, 1)
	if sys, _ := req["system"].([]any); len(sys) != 1 || !strings.Contains(sys[0].(map[string]any)["text"].(string), "Answer in one sentence.") {
		t.Fatalf("the system content is not in system: %s", body)
	}
	if strings.Contains(fmtMessages(req), "Answer in one sentence.") {
		t.Fatalf("the system content is also in a turn: %s", body)
	}
	msgs := messagesOf(t, req)
	if msgs[0]["role"] != "user" {
		t.Fatalf("the Messages request does not open with a user turn: %s", body)
	}
	for i := 1; i < len(msgs); i++ {
		if msgs[i]["role"] == msgs[i-1]["role"] {
			t.Fatalf("turns %d and %d are both %s: %s", i-1, i, msgs[i]["role"], body)
		}
	}
	var use, result map[string]any
	for _, m := range msgs {
		blocks, _ := m["content"].([]any)
		for _, b := range blocks {
			bm := b.(map[string]any)
			switch bm["type"] {
			case "tool_use":
				use = bm
			case "tool_result":
				result = bm
			}
		}
	}
	if use == nil || use["id"] != "toolu_1" || result == nil || result["tool_use_id"] != "toolu_1" {
		t.Fatalf("the round is not a tool_use answered by its tool_result: %s", body)
	}
	if !strings.Contains(body, "one event on Monday") {
		t.Fatalf("the round's result is not the safe summary: %s", body)
	}
	// The other participant saw neither the call nor its result (its run had completed).
	if strings.Contains(string(oai.bodies[0]), "calendar_read\",\"arguments") {
		t.Fatalf("gpt saw claude's call")
	}
}

// Retries on 429 honour Retry-After; a provider that keeps failing fails the run, kept on
// the run with its status, and a turn whose every run failed answers 502.
func TestGenerationProviderFailures(t *testing.T) {
	flaky := newProtocolServer(t, "/v1/chat/completions", func(n int, _ map[string]any) (int, map[string]string, any) {
		if n == 0 {
			return 429, map[string]string{"Retry-After": "1"}, map[string]any{"error": map[string]any{"message": "slow down", "type": "rate_limit"}}
		}
		return 200, nil, openAIText("after the wait")
	})
	broken := newProtocolServer(t, "/v1/messages", func(n int, _ map[string]any) (int, map[string]string, any) {
		return 500, nil, map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": "upstream exploded"}}
	})
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+flaky.URL+`/v1", maxRetries: 2}
  - {name: anthropic, kind: anthropic, baseURL: "`+broken.URL+`", maxRetries: 1}
`)...)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"}, [3]string{"claude", "anthropic", "claude-test"})

	gen := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[:1], "userMessage": map[string]any{"content": "hi"}})
	if first(gen, "runs")["status"] != "completed" || flaky.count() != 2 {
		t.Fatalf("429 then 200: %v after %d requests", gen, flaky.count())
	}
	if gap := flaky.times[1].Sub(flaky.times[0]); gap < 900*time.Millisecond {
		t.Fatalf("the retry came %v after the 429, before its Retry-After of 1 s", gap)
	}

	r := h.call("POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[1:], "userMessage": map[string]any{"content": "hi again"}})
	if r.status != 502 {
		t.Fatalf("every run failed: got %d %s, want 502", r.status, r.body)
	}
	body := r.obj(t)
	if e, _ := body["error"].(map[string]any); e["code"] != "provider_error" {
		t.Fatalf("502 error: %s", r.body)
	}
	failed := first(body, "runs")
	perr, _ := failed["error"].(map[string]any)
	if failed["status"] != "failed" || perr["providerStatus"] != float64(500) || perr["message"] != "upstream exploded" || broken.count() != 2 {
		t.Fatalf("failed run: %v (%d requests, want 2: one retry)", failed, broken.count())
	}
	if n := cypherCount(t, `MATCH (r:ModelRun {id: $id, status: 'failed', providerStatus: 500, errorCode: 'api_error'}) RETURN count(r)`,
		map[string]any{"id": str(failed, "runId")}); n != 1 {
		t.Fatalf("the failure is not kept on the run")
	}
	// A participant whose provider is not configured is refused before anything is written.
	_, branch2, other := h.conversationWith([3]string{"mistral", "mistral", "large"})
	h.expectError(h.call("POST", "/v1/generations", map[string]any{"branchId": branch2, "participantIds": other, "userMessage": map[string]any{"content": "x"}}),
		400, "invalid", "participantIds")
	if hist := h.must(200, "GET", "/v1/branches/"+branch2+"/history", nil); len(hist["items"].([]any)) != 0 {
		t.Fatalf("a refused turn wrote %v", hist["items"])
	}
}

func TestGenerationTimeout(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+slow.URL+`/v1", timeout: 300ms, maxRetries: 0}
`)...)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
	start := time.Now()
	r := h.call("POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "hi"}})
	if r.status != 502 || time.Since(start) > 1500*time.Millisecond {
		t.Fatalf("a provider slower than its timeout: %d after %v: %s", r.status, time.Since(start), r.body)
	}
	if e := first(r.obj(t), "runs")["error"].(map[string]any); e["code"] != "timeout" {
		t.Fatalf("timeout error: %v", e)
	}
}

// The echo provider streams its answer as deltas that add up to the recorded message, and
// an Idempotency-Key makes a retried turn answer the first result without a new run.
func TestGenerationEchoStreamAndIdempotency(t *testing.T) {
	h := newProviderHarness(t)
	_, branch, ids := h.conversationWith([3]string{"dev", "", ""})
	h.steps.take()
	r := h.call("POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "hello echo"}, "stream": true})
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", r.status, r.header)
	}
	want := []generation.Step{generation.StepResolve, generation.StepBeginTurn, generation.StepAssemble,
		generation.StepProvider, generation.StepRecordWait, generation.StepFinish}
	if got := h.steps.take(); !slices.Equal(got, want) {
		t.Errorf("observed steps %v, want %v", got, want)
	}
	var deltas strings.Builder
	var names []string
	var final map[string]any
	for _, block := range strings.Split(string(r.body), "\n\n") {
		name, data := sseEvent(block)
		if name == "" {
			continue
		}
		names = append(names, name)
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event %s data %q: %v", name, data, err)
		}
		switch name {
		case "message.delta":
			deltas.WriteString(m["text"].(string))
		case "run.completed":
			final = m
		}
	}
	if len(names) < 4 || names[0] != "run.started" || names[len(names)-2] != "run.completed" || names[len(names)-1] != "done" {
		t.Fatalf("events %v", names)
	}
	msg := final["message"].(map[string]any)
	if deltas.String() != msg["content"] || !strings.Contains(deltas.String(), "hello echo") {
		t.Fatalf("deltas %q do not add up to the message %q", deltas.String(), msg["content"])
	}
	if got := cypherCount(t, `MATCH (m:Message {id: $id}) WHERE m.content = $c RETURN count(m)`, map[string]any{"id": msg["id"], "c": deltas.String()}); got != 1 {
		t.Fatalf("the recorded message is not what was streamed")
	}

	streamed := map[string]any{"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "streamed once"}, "stream": true}
	sa := h.call("POST", "/v1/generations", streamed, "Idempotency-Key", "turn-s")
	sb := h.call("POST", "/v1/generations", streamed, "Idempotency-Key", "turn-s")
	if sa.status != 200 || sb.status != 200 || string(sa.body) != string(sb.body) || !strings.HasPrefix(sb.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("retried streamed turn: %d %s / %d %s %v", sa.status, sa.body, sb.status, sb.body, sb.header)
	}

	body := map[string]any{"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "once only"}}
	a := h.call("POST", "/v1/generations", body, "Idempotency-Key", "turn-1")
	b := h.call("POST", "/v1/generations", body, "Idempotency-Key", "turn-1")
	if a.status != 201 || b.status != 201 || string(a.body) != string(b.body) || b.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retried turn: %d %s / %d %s", a.status, a.body, b.status, b.body)
	}
	if n := cypherCount(t, `MATCH (m:Message {accountId: $acct, content: 'once only'}) RETURN count(m)`, map[string]any{"acct": h.account}); n != 1 {
		t.Fatalf("the retried turn wrote %d user messages", n)
	}
}

func fmtMessages(req map[string]any) string {
	b, _ := json.Marshal(req["messages"])
	return string(b)
}

// keyedNodes counts the nodes of a conversation with a property holding s, label by label
// (through their conversationId indexes), and the conversation itself.
func keyedNodes(t *testing.T, conv, s string) int64 {
	t.Helper()
	const holds = ` WHERE any(k IN keys(n) WHERE (n[k] IS :: STRING AND n[k] CONTAINS $s) OR
		(n[k] IS :: LIST<STRING NOT NULL> AND any(x IN n[k] WHERE x CONTAINS $s))) RETURN count(n)`
	n := cypherCount(t, `MATCH (n:Conversation {id: $conv})`+holds, map[string]any{"conv": conv, "s": s})
	for _, label := range []string{"Branch", "Checkpoint", "ContextAssembly", "Message", "ModelRun", "Participant",
		"PolicyDecision", "Schedule", "ScheduleTick", "SkillState", "ToolArtifact", "ToolCall", "ToolMemory"} {
		n += cypherCount(t, `MATCH (n:`+label+` {conversationId: $conv})`+holds, map[string]any{"conv": conv, "s": s})
	}
	return n
}

// sseEvent splits one server-sent event into its name and data.
func sseEvent(block string) (name, data string) {
	for _, line := range strings.Split(block, "\n") {
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			name = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = v
		}
	}
	return name, data
}

// jsonField is a string field of a JSON object.
func jsonField(t *testing.T, data, field string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("%q: %v", data, err)
	}
	s, _ := m[field].(string)
	return s
}

// jsonQuote is s as a JSON string, as it appears inside an encoded object (no HTML escaping).
func jsonQuote(s string) string {
	b, _ := model.EncodeJSON(s)
	return string(b)
}

// A client that disconnects mid-turn cancels its run, which is recorded as failed with code
// cancelled.
func TestGenerationClientDisconnectCancels(t *testing.T) {
	reached, cancelled := make(chan struct{}, 1), make(chan bool, 1)
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read to the end, or the server does not notice the connection close.
		_, _ = io.Copy(io.Discard, r.Body)
		reached <- struct{}{}
		select {
		case <-r.Context().Done():
			cancelled <- true
		case <-time.After(5 * time.Second):
			cancelled <- false
		}
	}))
	t.Cleanup(hung.Close)
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+hung.URL+`/v1", maxRetries: 0}
`)...)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
	srv := httptest.NewServer(h.srv)
	t.Cleanup(srv.Close)
	leave, done := make(chan struct{}), make(chan struct{})
	errLeft := errors.New("the client left")
	go func() {
		defer close(done)
		err := client.New(srv.URL, h.key).GenerateStream(t.Context(),
			client.GenerationRequest{BranchID: branch, ParticipantIDs: ids, UserMessage: &client.UserMessage{Content: "hang on"}},
			func(client.Event) error {
				// After its first event (run.started), the client goes away while the provider
				// has not answered.
				<-leave
				return errLeft
			})
		if !errors.Is(err, errLeft) {
			t.Errorf("the streamed turn: got %v, want it left after its first event", err)
		}
	}()
	select {
	case <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the provider was never called")
	}
	close(leave)
	if !<-cancelled {
		t.Fatal("the provider's request was not cancelled when the client went away")
	}
	<-done
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := cypherCount(t, `MATCH (r:ModelRun {branchId: $b, status: 'failed', errorCode: 'cancelled'}) RETURN count(r)`, map[string]any{"b": branch})
		if n == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run of a disconnected client is not recorded as cancelled")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two continuations of one run at once: while the first is inside its model call, the
// second is refused (409) and calls no model.
func TestGenerationConcurrentContinue(t *testing.T) {
	// The first continue's model call waits in the provider until the test has the second
	// continue's answer, so the two overlap however the machine schedules them. A second
	// continue that got past the refusal would call the model again and be answered at once.
	called, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	fake := newProtocolServer(t, "/v1/chat/completions", func(n int, _ map[string]any) (int, map[string]string, any) {
		switch n {
		case 0:
			return 200, nil, openAIToolCall("call_1", "sheet_read", `{"sheet":"q3"}`)
		case 1:
			close(called)
			<-release
		}
		return 200, nil, openAIText("done")
	})
	// Registered after the provider's server, so run before it closes (which waits for its
	// handlers).
	t.Cleanup(open)
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+fake.URL+`/v1", maxRetries: 0}
`)...)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
	run := first(h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
		"userMessage": map[string]any{"content": "go"}, "tools": []any{sheetTool}}), "runs")
	h.must(201, "POST", "/v1/tool-calls/"+str(first(run, "toolCalls"), "id")+"/result", map[string]any{"status": "succeeded", "result": 1})
	continuePath := "/v1/runs/" + str(run, "runId") + "/continue"
	held := make(chan response, 1)
	go func() { held <- h.call("POST", continuePath, map[string]any{}) }()
	select {
	case <-called:
	case <-time.After(10 * time.Second):
		t.Fatal("the first continue never called the model")
	}
	refused := h.call("POST", continuePath, map[string]any{})
	open()
	accepted := <-held
	if accepted.status != 200 || refused.status != 409 || fake.count() != 2 {
		t.Fatalf("the continue in its model call answered %d, the one sent meanwhile %d, after %d provider calls; want 200 and 409 after 2: %s",
			accepted.status, refused.status, fake.count(), refused.body)
	}
	// The refused one is told to wait for the other's lease, not the 15 minutes a claim
	// without one held.
	if wait, err := strconv.Atoi(refused.header.Get("Retry-After")); err != nil || wait < 1 || wait > int(model.DefaultRunLease/time.Second) {
		t.Fatalf("the refused continue says Retry-After %q, want 1 to %v", refused.header.Get("Retry-After"), model.DefaultRunLease)
	}
	if n := cypherCount(t, `MATCH (:Message {role: 'assistant'})-[:GENERATED_BY]->(:ModelRun {id: $r}) RETURN count(*)`, map[string]any{"r": str(run, "runId")}); n != 1 {
		t.Fatalf("%d answers recorded for the run", n)
	}
}

// A provider that echoes the key in its error: neither the answer nor the run keeps it.
func TestGenerationProviderErrorNeverCarriesTheKey(t *testing.T) {
	const key = "sk-proj-Zx81Qq0secretsecret"
	fake := newProtocolServer(t, "/v1/chat/completions", func(int, map[string]any) (int, map[string]string, any) {
		return 401, nil, map[string]any{"error": map[string]any{"type": "invalid_request_error", "code": "invalid_api_key",
			"message": "Incorrect API key provided: " + key + " (sk-proj-****cret)."}}
	})
	cfgs, err := provider.Parse([]byte(`providers:
  - {name: openai, kind: openai, baseURL: "`+fake.URL+`/v1", apiKeyEnv: K, maxRetries: 0}
`), func(string) string { return key })
	if err != nil {
		t.Fatal(err)
	}
	h := newProviderHarness(t, cfgs...)
	conv, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
	r := h.call("POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "hi"}})
	if r.status != 502 || strings.Contains(string(r.body), "sk-") || !strings.Contains(string(r.body), "Incorrect API key provided") {
		t.Fatalf("the provider's error as answered: %d %s", r.status, r.body)
	}
	if n := keyedNodes(t, conv, "sk-"); n != 0 {
		t.Fatalf("%d nodes keep something of the key", n)
	}
}

// TestGenerationKeyHoldsWhileTheTurnRuns retries a generation with its Idempotency-Key while
// the first is still waiting for its provider, for many times its lease: the server renews
// the key's hold and the run's lease, so the retry is told the first is in progress (with
// a Retry-After within the lease) and calls no provider, and no sweep interrupts the run;
// once the first answers, a retry answers its result.
func TestGenerationKeyHoldsWhileTheTurnRuns(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	openai := newProtocolServer(t, "/v1/chat/completions", func(n int, _ map[string]any) (int, map[string]string, any) {
		<-release
		return 200, nil, openAIText("the slow answer")
	})
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+openai.URL+`/v1", apiKeyEnv: OPENAI_KEY, maxRetries: 0}
`)...)
	cfg := h.cfg
	cfg.RunLease = 600 * time.Millisecond
	h.wire(cfg)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
	body := map[string]any{"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "take your time"}}
	firstDone := make(chan response, 1)
	go func() { firstDone <- h.call("POST", "/v1/generations", body, "Idempotency-Key", "turn-1") }()
	waitUntil(t, "the provider is called", func() bool { return openai.count() == 1 })

	// Registered after the provider's server, so run before it closes (which waits for
	// its handlers).
	t.Cleanup(open)
	time.Sleep(5 * cfg.RunLease)
	busy := h.call("POST", "/v1/generations", body, "Idempotency-Key", "turn-1")
	h.expectError(busy, 409, "conflict", "Idempotency-Key")
	if got := busy.header.Get("Retry-After"); got != "1" {
		t.Fatalf("the retry of a turn in flight says Retry-After %q, want 1 (its lease is %v)", got, cfg.RunLease)
	}
	open()
	first := <-firstDone
	if first.status != 201 || strings.Contains(string(first.body), "interrupted") {
		t.Fatalf("the first generation: %d %s", first.status, first.body)
	}
	again := h.call("POST", "/v1/generations", body, "Idempotency-Key", "turn-1")
	if again.status != 201 || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.body, first.body) {
		t.Fatalf("a retry after the first answered: %d %s %s", again.status, again.header, again.body)
	}
	if n := openai.count(); n != 1 {
		t.Fatalf("the provider was called %d times, want once", n)
	}
}

// A generation's user message replies to the latest message of its branch's lineage: on a
// fork with no message of its own, the message it was forked after; then its own latest.
// (BeginTurn writes it in one statement, reading no lineage.)
func TestGenerationRepliesToTheLatestOfTheLineage(t *testing.T) {
	h := newHarness(t)
	conv, main, ids := h.conversationWith([3]string{"echo", "echo", ""})
	one := str(h.must(201, "POST", "/v1/branches/"+main+"/messages", map[string]any{"role": "user", "content": "one"}), "id")
	h.must(201, "POST", "/v1/branches/"+main+"/messages", map[string]any{"role": "user", "content": "two"})
	fork := str(h.must(201, "POST", "/v1/conversations/"+conv+"/branches",
		map[string]any{"parentBranchId": main, "forkAfterMessageId": one, "name": "after-one"}), "id")
	parentOf := func(id string) string {
		recs := cypherQuery(t, `MATCH (m:Message {id: $id})-[:REPLIES_TO]->(p) RETURN p.id AS id`, map[string]any{"id": id})
		if len(recs) != 1 {
			t.Fatalf("message %s replies to %d messages, want 1", id, len(recs))
		}
		return recs[0].AsMap()["id"].(string)
	}
	turn := func(branch, content string) map[string]any {
		return h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
			"userMessage": map[string]any{"content": content}})
	}
	g1 := turn(fork, "on the fork")
	if got := parentOf(str(g1, "userMessageId")); got != one {
		t.Errorf("the fork's first user message replies to %s, want the message it was forked after, %s", got, one)
	}
	answer := str(first(g1, "runs")["message"].(map[string]any), "id")
	g2 := turn(fork, "again on the fork")
	if got := parentOf(str(g2, "userMessageId")); got != answer {
		t.Errorf("the fork's second user message replies to %s, want its own latest message, %s", got, answer)
	}
	if got := parentOf(answer); got != str(g1, "userMessageId") {
		t.Errorf("the answer replies to %s, want the user message %s", got, str(g1, "userMessageId"))
	}
}

// openAIToolCalls is a completion asking for the calls, each an (id, name, arguments).
func openAIToolCalls(calls ...[3]string) any {
	list := make([]any, len(calls))
	for i, c := range calls {
		list[i] = map[string]any{"id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": c[2]}}
	}
	return map[string]any{"id": "chatcmpl-0", "object": "chat.completion", "created": 1, "model": "gpt-4.1-2025",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant", "content": nil,
			"tool_calls": list}}},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 12, "total_tokens": 112}}
}

// The tool calls a model asks for are written with its call's record: every call as the
// client's own request writes one (the same properties, REQUESTED by the run, in order at
// the branch's next seqs), the run released with the call counted; and an answer with a
// call that cannot be written (two calls with one callId) writes none of them.
func TestGenerationWritesTheRequestedToolCallsWithTheModelCall(t *testing.T) {
	const key = "sk-test-ctxgraph-4712"
	fake := newProtocolServer(t, "/v1/chat/completions", func(n int, req map[string]any) (int, map[string]string, any) {
		msgs := messagesOf(t, req)
		if msgs[len(msgs)-1]["content"] == "twice" {
			return 200, nil, openAIToolCalls([3]string{"call_same", "sheet_read", `{"sheet":"q1"}`}, [3]string{"call_same", "quote_get", `{}`})
		}
		return 200, nil, openAIToolCalls([3]string{"call_a", "sheet_read", `{"sheet":"q3"}`}, [3]string{"call_b", "quote_get", `{}`})
	})
	t.Setenv("CTXGRAPH_TEST_OPENAI_KEY", key)
	h := newProviderHarness(t, openAIAt(t, fake, key)...)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
	declared := map[string]any{"name": "sheet_read", "parameters": sheetTool["parameters"], "freshnessClass": "volatile", "staleAfter": "1h",
		"retention": map[string]any{"class": "delete_after", "after": "24h"}}
	quoteTool := map[string]any{"name": "quote_get", "parameters": map[string]any{"type": "object"}}

	gen := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
		"userMessage": map[string]any{"content": "find the Q3 numbers"}, "tools": []any{declared, quoteTool}})
	run := first(gen, "runs")
	runID := str(run, "runId")
	calls, _ := run["toolCalls"].([]any)
	if run["status"] != "awaiting_tools" || len(calls) != 2 {
		t.Fatalf("got run %v, want awaiting_tools with two calls", run)
	}
	recs := cypherQuery(t, `MATCH (r:ModelRun {id: $run})-[:REQUESTED]->(t:ToolCall) RETURN t ORDER BY t.seq`, map[string]any{"run": runID})
	if len(recs) != 2 {
		t.Fatalf("got %d calls REQUESTED by the run, want 2", len(recs))
	}
	nodes := make([]neo4j.Node, 2)
	for i, rec := range recs {
		nodes[i] = rec.Values[0].(neo4j.Node)
		p, want := nodes[i].Props, calls[i].(map[string]any)
		args, _ := json.Marshal(want["arguments"])
		if p["id"] != want["id"] || p["callId"] != want["callId"] || p["tool"] != want["tool"] || p["arguments"] != string(args) || p["status"] != "pending" {
			t.Errorf("call %d: got %v, want the call answered %v, pending", i, p, want)
		}
	}
	if a, b := nodes[0].Props, nodes[1].Props; b["seq"].(int64) != a["seq"].(int64)+1 || b["rev"].(int64) != a["rev"].(int64)+1 {
		t.Errorf("got seqs %v, %v and revs %v, %v, want the branch's next ones in the order asked", a["seq"], b["seq"], a["rev"], b["rev"])
	}
	if p := nodes[0].Props; p["freshnessClass"] != "volatile" || p["staleAfter"] != "1h" || p["retentionClass"] != "delete_after" || p["retentionAfter"] != "24h" {
		t.Errorf("got the declared call %v, want the tool's freshness and retention", p)
	}
	if n := cypherCount(t, `MATCH (r:ModelRun {id: $run, status: 'running', modelCalls: 1, lastAssemblyId: $asm, responseId: 'chatcmpl-0', inputTokens: 100})
		WHERE r.leaseUntil IS NULL AND r.stepClaim IS NULL
		MATCH (:ContextAssembly {id: $asm})-[:FOR_RUN]->(r) RETURN count(r)`, map[string]any{"run": runID, "asm": str(run, "assemblyId")}); n != 1 {
		t.Errorf("the model call is not recorded on its run (counted, released) and assembly")
	}
	// A call the client records itself has the same properties.
	own := h.must(201, "POST", "/v1/runs/"+runID+"/tool-calls", map[string]any{"tool": "quote_get", "callId": "call_c", "arguments": map[string]any{}})
	recs = cypherQuery(t, `MATCH (t:ToolCall {id: $id}) RETURN t`, map[string]any{"id": str(own, "id")})
	if got, want := slices.Sorted(maps.Keys(nodes[1].Props)), slices.Sorted(maps.Keys(recs[0].Values[0].(neo4j.Node).Props)); !slices.Equal(got, want) {
		t.Errorf("got properties %v on a call the model asked for, want %v as on the client's", got, want)
	}

	r := h.call("POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
		"userMessage": map[string]any{"content": "twice"}, "tools": []any{declared, quoteTool}})
	h.expectError(r, 409, "conflict", "callId")
	if n := cypherCount(t, `MATCH (u:Message {content: 'twice', branchId: $branch})<-[:TRIGGERED_BY]-(r:ModelRun)
		WHERE r.modelCalls IS NULL AND NOT EXISTS { (r)-[:REQUESTED]->() } RETURN count(r)`, map[string]any{"branch": branch}); n != 1 {
		t.Errorf("an answer with two calls of one callId wrote some of them or the model call")
	}
}

// branchParticipantReads is how many times this process has read a branch's participants
// from the graph (BranchParticipants).
// anotherServer is a server of the harness's configuration with a store of its own, so
// with copies of its own, over the same Neo4j.
func (h *harness) anotherServer() *harness {
	h.t.Helper()
	other := *h
	cfg := h.cfg
	cfg.Store = openStore(h.t.TempDir())
	store := cfg.Store
	h.t.Cleanup(func() { _ = store.Close(context.Background()) })
	other.wire(cfg)
	return &other
}

func branchParticipantReads() int64 { return cypher.QueryTimes()["BranchParticipants"].Runs }

// A turn's participants are resolved from the assembler's copy of the conversation when it
// knows them, read when it does not (a participant added since), and a copy that outlived
// its conversation's deletion (made by another server) writes nothing: the turn answers 404.
func TestGenerationResolvesFromTheAssemblersCopy(t *testing.T) {
	h := newProviderHarness(t)
	conv, branch, ids := h.conversationWith([3]string{"dev", "", ""})
	turn := func(participants []string, content string) response {
		return h.call("POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": participants,
			"userMessage": map[string]any{"content": content}})
	}
	steps := []struct {
		name         string
		participants func() []string
		wantReads    int64
	}{
		{"the first turn: no copy yet, read", func() []string { return ids }, 1},
		{"the next turn: the copy knows the branch and the participant", func() []string { return ids }, 0},
		{"a participant added since: read", func() []string {
			added := str(h.must(201, "POST", "/v1/conversations/"+conv+"/participants", map[string]any{"kind": "model", "name": "dev2"}), "id")
			return append(ids, added)
		}, 1},
	}
	for i, s := range steps {
		participants := s.participants()
		before := branchParticipantReads()
		if r := turn(participants, fmt.Sprintf("turn %d", i)); r.status != 201 {
			t.Fatalf("%s: got status %d (%s), want 201", s.name, r.status, r.body)
		}
		if got := branchParticipantReads() - before; got != s.wantReads {
			t.Errorf("%s: got %d reads of the branch's participants, want %d", s.name, got, s.wantReads)
		}
	}

	// Another server deletes the conversation; this one still holds its copy.
	other := h.anotherServer()
	other.must(204, "DELETE", "/v1/conversations/"+conv, nil)
	h.expectError(turn(ids, "after the deletion"), 404, "not_found", "")
	// The turn's first write (its user message and run, one statement) found no branch.
	if n := cypherCount(t, `MATCH (m:Message {content: 'after the deletion'}) RETURN count(m)`, nil); n != 0 {
		t.Errorf("a turn on a deleted conversation wrote %d nodes", n)
	}
}

// A turn's first statement (its user message and run) also reads what changed in the
// conversation since the assembler's copy, so the turn's first assembly reads nothing of
// its own once the copy exists; a write another server made between two turns comes in
// with that read (a replay would not show its absence: it reads as of the assembly's asOf),
// and every assembly replays identical from a fresh read.
func TestGenerationAssemblesFromItsTurnsRead(t *testing.T) {
	h := newProviderHarness(t)
	_, branch, ids := h.conversationWith([3]string{"dev", "", ""})
	// A read of the conversation: what changed since a copy (ConversationRecords), or the
	// whole of it (ConversationHead, then its records).
	reads := func() int64 {
		q := cypher.QueryTimes()
		return q["ConversationRecords"].Runs + q["ConversationHead"].Runs
	}
	turn := func(content string) string {
		t.Helper()
		out := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
			"userMessage": map[string]any{"content": content}})
		return str(out["runs"].([]any)[0].(map[string]any), "assemblyId")
	}
	var assemblies []string
	before := reads()
	assemblies = append(assemblies, turn("the first turn: no copy yet"))
	if got := reads() - before; got != 1 {
		t.Errorf("the first turn read the conversation %d times, want 1", got)
	}
	before = reads()
	assemblies = append(assemblies, turn("the second turn"))
	if got := reads() - before; got != 0 {
		t.Errorf("the second turn's assembly read the conversation %d times, want 0 (its turn's read)", got)
	}

	// Another server writes on the branch.
	other := h.anotherServer()
	elsewhere := str(other.must(201, "POST", "/v1/branches/"+branch+"/messages",
		map[string]any{"role": "user", "content": "written through another server"}), "id")
	before = reads()
	third := turn("the third turn")
	assemblies = append(assemblies, third)
	if got := reads() - before; got != 0 {
		t.Errorf("the third turn's assembly read the conversation %d times, want 0 (its turn's read)", got)
	}
	included := map[string]bool{}
	for _, inc := range h.must(200, "GET", "/v1/assemblies/"+third, nil)["included"].([]any) {
		included[str(inc.(map[string]any), "ref")] = true
	}
	if !included[elsewhere] {
		t.Errorf("the third turn's assembly left out the message another server wrote before it (%s)", elsewhere)
	}
	for _, id := range assemblies {
		if rep := h.must(200, "POST", "/v1/assemblies/"+id+"/replay", nil); rep["identical"] != true {
			t.Errorf("assembly %s: replayed from a fresh read it differs: %v", id, rep["differences"])
		}
	}
}

// A continue's claim of its run (ClaimRunStep) also reads what changed since the
// assembler's copy, as a turn's first statement does: the step's assembly reads nothing of
// its own, and a tool result posted through another server comes in with that read.
func TestGenerationContinuesFromItsClaimsRead(t *testing.T) {
	h, _, _, branch, ids := sheetLoop(t)
	reads := func() int64 { return cypher.QueryTimes()["ConversationRecords"].Runs }
	run := first(h.must(201, "POST", "/v1/generations", map[string]any{
		"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "find the Q3 numbers"},
		"tools": []any{sheetTool}, "toolChoice": "auto",
	}), "runs")
	if run["status"] != "awaiting_tools" {
		t.Fatalf("first call: got run %v, want awaiting_tools", run)
	}
	runID, callID := str(run, "runId"), str(first(run, "toolCalls"), "id")

	// The result goes through another server: this one's copy does not hold it.
	artifact := str(h.anotherServer().must(201, "POST", "/v1/tool-calls/"+callID+"/result", map[string]any{
		"status": "succeeded", "result": map[string]any{"rows": []any{[]any{"north", 4.2}}}}), "artifactId")
	before, statements := reads(), cypher.QueryTimes()
	done := first(h.must(200, "POST", "/v1/runs/"+runID+"/continue", map[string]any{}), "runs")
	if done["status"] != "completed" {
		t.Fatalf("continue: got run %v, want completed", done)
	}
	if got := reads() - before; got != 0 {
		t.Errorf("the continue's assembly read the conversation %d times, want 0 (its claim's read)", got)
	}
	// Its claim is all it reads of the graph before the model call but the raw body of the
	// round's result (LocateRecords, for the judge: the copy holds no raw bodies); the run,
	// its calls' results and the participant come with the claim or from the copy. Then
	// the record and the answer.
	ran := map[string]int64{}
	for name, q := range cypher.QueryTimes() {
		if n := q.Runs - statements[name].Runs; n > 0 {
			ran[name] = n
		}
	}
	// ErasedAccounts is no statement of the step: any request reads the erased accounts
	// again once they are 2 s old.
	delete(ran, "ErasedAccounts")
	if want := map[string]int64{"ClaimRunStep": 1, "LocateRecords": 1, "RecordAssemblies": 1, "FinishTurn": 1}; !maps.Equal(ran, want) {
		t.Errorf("the continue ran the statements %v, want %v", ran, want)
	}
	asm := str(done, "assemblyId")
	included := map[string]bool{}
	for _, inc := range h.must(200, "GET", "/v1/assemblies/"+asm, nil)["included"].([]any) {
		included[str(inc.(map[string]any), "ref")] = true
	}
	if !included[artifact] {
		t.Errorf("the continue's assembly left out the result posted through another server (%s): %v", artifact, included)
	}
	if rep := h.must(200, "POST", "/v1/assemblies/"+asm+"/replay", nil); rep["identical"] != true {
		t.Errorf("the continue's assembly replayed from a fresh read differs: %v", rep["differences"])
	}
}

// A continue the claim refuses, because a call of its run waits for its result, writes
// nothing: not on a running run, nor on one a lease sweep ended as interrupted, which the
// claim would otherwise reopen.
func TestRefusedContinueWritesNothing(t *testing.T) {
	h, fake, _, branch, ids := sheetLoop(t)
	run := first(h.must(201, "POST", "/v1/generations", map[string]any{
		"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "find the Q3 numbers"},
		"tools": []any{sheetTool}, "toolChoice": "auto",
	}), "runs")
	runID := str(run, "runId")
	state := func() map[string]any {
		return cypherQuery(t, `MATCH (r:ModelRun {id: $r}) MATCH (b:Branch {id: r.branchId})
			RETURN properties(r) AS run, b.rev AS rev`, map[string]any{"r": runID})[0].AsMap()
	}
	refused := func(what string) {
		t.Helper()
		before := state()
		h.expectError(h.call("POST", "/v1/runs/"+runID+"/continue", map[string]any{}), 409, "conflict", "toolCalls")
		if after := state(); !reflect.DeepEqual(after, before) {
			t.Errorf("%s: the refused continue changed the run or its branch:\n%v\nnow\n%v", what, before, after)
		}
	}
	refused("running")
	// As a lease sweep ends a run whose server died (EndLapsedRuns).
	cypherQuery(t, `MATCH (r:ModelRun {id: $r}) SET r.status = 'failed', r.errorCode = 'interrupted',
		r.errorMessage = 'its server stopped', r.endedAt = datetime(), r.endRecordedAt = datetime()`, map[string]any{"r": runID})
	refused("interrupted")
	if fake.count() != 1 {
		t.Errorf("the provider was called %d times, want once (the generation)", fake.count())
	}
}

// The writes that run under a request's Idempotency-Key (a keyed turn's first write, one
// statement or, for a branch submission, a transaction; a drop-in call's chain and answer)
// write nothing once a retry has taken the key over,
// and answer a conflict naming the key; while the request holds it, they write and keep
// what they wrote under it.
func TestKeyedWritesStopOnceARetryTookTheKey(t *testing.T) {
	h := newHarness(t)
	ctx := t.Context()
	_, branch, ids := h.conversationWith([3]string{"dev", "", ""})
	claimKey := func(key string) *model.IdempotencyClaim {
		t.Helper()
		claim, _, err := sharedStore.ClaimIdempotencyKey(ctx, h.account, key, "hash-"+key, time.Minute)
		if err != nil || claim == nil {
			t.Fatalf("claiming %s: %v %v", key, claim, err)
		}
		return claim
	}
	// As a retry takes a key over (ClaimIdempotencyKey): the claim becomes the retry's.
	takeOver := func(claim *model.IdempotencyClaim) {
		cypherQuery(t, `MATCH (k:IdempotencyKey {accountId: $a, claim: $c}) SET k.claim = 'retry of ' + $c`,
			map[string]any{"a": h.account, "c": claim.Claim})
	}
	keyOf := func(claim *model.IdempotencyClaim) map[string]any {
		recs := cypherQuery(t, `MATCH (k:IdempotencyKey {accountId: $a}) WHERE k.claim IN [$c, 'retry of ' + $c]
			RETURN k.state AS state, k.userMessageId AS message, k.body IS NOT NULL AS answered`, map[string]any{"a": h.account, "c": claim.Claim})
		if len(recs) != 1 {
			t.Fatalf("key %s: %d nodes", claim.Key, len(recs))
		}
		return recs[0].AsMap()
	}
	// A turn with parents is a branch submission, begun in a transaction of several
	// statements (RecordKeyedTurn keeps its ids); one without, in one statement.
	turn := func(claim *model.IdempotencyClaim, content string, parents ...string) error {
		_, _, err := sharedStore.BeginTurn(model.WithTurnKey(ctx, claim), h.account,
			&model.NewMessage{BranchID: branch, Role: "user", Content: content, ParentMessageIDs: parents},
			[]model.NewRun{{BranchID: branch, ParticipantID: ids[0], RuntimeKind: model.RuntimeChat}})
		return err
	}
	messages := func(content string) int64 {
		return cypherCount(t, `MATCH (m:Message {branchId: $b, content: $c}) RETURN count(m)`, map[string]any{"b": branch, "c": content})
	}
	conflictOnKey := func(what string, err error) {
		t.Helper()
		var me *model.Error
		if !errors.As(err, &me) || me.Kind != model.KindConflict || me.Field != "Idempotency-Key" {
			t.Errorf("%s after a retry took the key: got %v, want a conflict on Idempotency-Key", what, err)
		}
	}

	held := claimKey("turn-held-" + randomHex(4))
	if err := turn(held, "a keyed turn"); err != nil {
		t.Fatalf("a keyed turn: %v", err)
	}
	if k := keyOf(held); k["message"] == nil || messages("a keyed turn") != 1 {
		t.Errorf("a keyed turn wrote %d messages and kept %v under its key, want its message kept", messages("a keyed turn"), k)
	}
	lost := claimKey("turn-lost-" + randomHex(4))
	takeOver(lost)
	conflictOnKey("a turn", turn(lost, "a turn whose key was taken"))
	if n := messages("a turn whose key was taken"); n != 0 {
		t.Errorf("a turn whose key was taken over wrote %d messages", n)
	}
	parent := str(h.must(201, "POST", "/v1/branches/"+branch+"/messages", map[string]any{"role": "user", "content": "a parent"}), "id")
	held = claimKey("submission-held-" + randomHex(4))
	if err := turn(held, "a keyed submission", parent); err != nil {
		t.Fatalf("a keyed branch submission: %v", err)
	}
	if k := keyOf(held); k["message"] == nil || messages("a keyed submission") != 1 {
		t.Errorf("a keyed branch submission wrote %d messages and kept %v under its key, want its message kept", messages("a keyed submission"), k)
	}
	lost = claimKey("submission-lost-" + randomHex(4))
	takeOver(lost)
	conflictOnKey("a branch submission", turn(lost, "a submission whose key was taken", parent))
	if n := messages("a submission whose key was taken"); n != 0 {
		t.Errorf("a branch submission whose key was taken over wrote %d messages", n)
	}

	chain := func(claim *model.IdempotencyClaim, sha string) error {
		claim.Status = 200
		return sharedStore.RecordChain(model.WithIdempotencyClaim(ctx, claim), h.account, model.ChainRecord{
			Points: []model.ChainPoint{{SHA256: sha, Length: 1, BranchID: branch}},
			Head:   model.ChainHead{BranchID: branch, SHA256: sha, Length: 1}, Answer: map[string]any{"answer": sha}})
	}
	points := func(sha string) int64 {
		return cypherCount(t, `MATCH (p:ChainPoint {sha256: $s}) RETURN count(p)`, map[string]any{"s": sha})
	}
	held = claimKey("chain-held-" + randomHex(4))
	if err := chain(held, "sha-held-"+held.Key); err != nil {
		t.Fatalf("a keyed chain: %v", err)
	}
	if k := keyOf(held); k["state"] != "done" || k["answered"] != true || points("sha-held-"+held.Key) != 1 || !held.Answered {
		t.Errorf("a keyed chain left its key %v and %d points (answered %v), want the answer stored with its point", k, points("sha-held-"+held.Key), held.Answered)
	}
	lost = claimKey("chain-lost-" + randomHex(4))
	takeOver(lost)
	conflictOnKey("a chain", chain(lost, "sha-lost-"+lost.Key))
	if k := keyOf(lost); k["answered"] == true || points("sha-lost-"+lost.Key) != 0 {
		t.Errorf("a chain whose key was taken over left its key %v and %d points, want nothing written", k, points("sha-lost-"+lost.Key))
	}
}
