package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/provider"
)

// The drop-in tests (DESIGN §9, issue 36) drive ctxgraph's vendor routes with the vendors'
// own clients, installed pinned by scripts/dropin-clients, exactly as an application that
// changed only its base URL and key would. The provider behind ctxgraph is an in-test
// protocol server whose scripted model (orderDesk) decides from the request it received,
// so what it answers proves what ctxgraph assembled; the tests then check the provider's
// requests and the graph through the API.

// The order id that only the application's search_orders tool returns: a later turn can
// answer with it only when ctxgraph put the tool's result (or its derived memory) in the
// request the provider received.
const dropInOrderID = "ord_7Q2X9"

var orderIDPattern = regexp.MustCompile(`ord_[A-Z0-9]{5}`)

// wireMessage is one message of a provider request, in either protocol, as the scripted
// model and the checks read it: role is system, user, assistant or tool.
type wireMessage struct {
	role   string
	text   string
	calls  []string // the tool call ids an assistant message makes
	callID string   // the call a tool message answers
}

// openAIWire reads a chat-completions request's messages.
func openAIWire(req map[string]any) []wireMessage {
	var out []wireMessage
	raw, _ := req["messages"].([]any)
	for _, v := range raw {
		m, _ := v.(map[string]any)
		w := wireMessage{role: str(m, "role"), callID: str(m, "tool_call_id")}
		switch c := m["content"].(type) {
		case string:
			w.text = c
		case []any:
			for _, p := range c {
				pm, _ := p.(map[string]any)
				w.text += str(pm, "text")
			}
		}
		calls, _ := m["tool_calls"].([]any)
		for _, tc := range calls {
			w.calls = append(w.calls, str(tc.(map[string]any), "id"))
		}
		out = append(out, w)
	}
	return out
}

// anthropicWire reads a Messages request: its system first, then each turn's blocks, a user
// turn's tool_result blocks as tool messages before its text.
func anthropicWire(req map[string]any) []wireMessage {
	var out []wireMessage
	switch s := req["system"].(type) {
	case string:
		out = append(out, wireMessage{role: "system", text: s})
	case []any:
		for _, b := range s {
			out = append(out, wireMessage{role: "system", text: str(b.(map[string]any), "text")})
		}
	}
	raw, _ := req["messages"].([]any)
	for _, v := range raw {
		m, _ := v.(map[string]any)
		role := str(m, "role")
		if text, ok := m["content"].(string); ok {
			out = append(out, wireMessage{role: role, text: text})
			continue
		}
		w := wireMessage{role: role}
		blocks, _ := m["content"].([]any)
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			switch str(bm, "type") {
			case "text":
				w.text += str(bm, "text")
			case "tool_use":
				w.calls = append(w.calls, str(bm, "id"))
			case "tool_result":
				// The result is a string or a list of text blocks.
				result, _ := bm["content"].(string)
				parts, _ := bm["content"].([]any)
				for _, p := range parts {
					result += str(p.(map[string]any), "text")
				}
				out = append(out, wireMessage{role: "tool", text: result, callID: str(bm, "tool_use_id")})
			}
		}
		if w.text != "" || len(w.calls) > 0 {
			out = append(out, w)
		}
	}
	return out
}

// deskReply is what the scripted model answers: a text, or one tool call.
type deskReply struct {
	text           string
	tool, toolArgs string
}

// orderDesk is the scripted model of the drop-in tests. It decides from the request it
// received, never from what the test knows: a tool result with a delivery date is answered
// with the date; a search result, with a track_order call when that tool is offered, else a
// text that does not repeat the order id; a user asking for the order id gets the id found
// anywhere in the request, or "unknown"; a user asking to find an order gets a search_orders
// call; anything else is echoed.
func orderDesk(msgs []wireMessage, tools []string, body string) deskReply {
	if len(msgs) == 0 {
		return deskReply{text: "unknown"}
	}
	last := msgs[len(msgs)-1]
	if last.role == "tool" {
		switch {
		case strings.Contains(last.text, "eta"):
			return deskReply{text: "It arrives on 2026-11-05."}
		case slices.Contains(tools, "track_order") && orderIDPattern.MatchString(last.text):
			return deskReply{tool: "track_order", toolArgs: fmt.Sprintf(`{"order_id":%q}`, orderIDPattern.FindString(last.text))}
		default:
			return deskReply{text: "Your latest order has shipped."}
		}
	}
	lower := strings.ToLower(last.text)
	switch {
	case last.role != "user":
		return deskReply{text: "unknown"}
	case strings.Contains(lower, "order id"):
		if id := orderIDPattern.FindString(body); id != "" {
			return deskReply{text: "Quote order " + id + "."}
		}
		return deskReply{text: "unknown"}
	case strings.Contains(lower, "find") && strings.Contains(lower, "order"):
		return deskReply{tool: "search_orders", toolArgs: `{"customer":"Ada Lovelace"}`}
	default:
		return deskReply{text: "You said: " + last.text}
	}
}

// newOpenAIDesk is an OpenAI-protocol provider whose model is orderDesk; the n-th request's
// tool call id is call_<n>.
func newOpenAIDesk(t *testing.T) *protocolServer {
	return newProtocolServer(t, "/v1/chat/completions", func(n int, req map[string]any) (int, map[string]string, any) {
		body, _ := json.Marshal(req)
		r := orderDesk(openAIWire(req), toolNames(req), string(body))
		if r.tool != "" {
			return 200, nil, openAIToolCall(fmt.Sprintf("call_%d", n), r.tool, r.toolArgs)
		}
		return 200, nil, openAIText(r.text)
	})
}

// newAnthropicDesk is an Anthropic-protocol provider whose model is orderDesk; the n-th
// request's tool_use id is toolu_<n>.
func newAnthropicDesk(t *testing.T) *protocolServer {
	return newProtocolServer(t, "/v1/messages", func(n int, req map[string]any) (int, map[string]string, any) {
		body, _ := json.Marshal(req)
		r := orderDesk(anthropicWire(req), toolNames(req), string(body))
		if r.tool != "" {
			var input map[string]any
			_ = json.Unmarshal([]byte(r.toolArgs), &input)
			return 200, nil, anthropicToolUse(fmt.Sprintf("toolu_%d", n), r.tool, input)
		}
		return 200, nil, anthropicText(r.text)
	})
}

// writeAnthropicStream sends a message as the Messages API's event sequence for a streamed
// request: message_start, each block's start, one delta and stop, message_delta with the
// stop reason and usage, message_stop.
func writeAnthropicStream(w http.ResponseWriter, message any) {
	msg := message.(map[string]any)
	var out strings.Builder
	event := func(name string, data map[string]any) {
		data["type"] = name
		b, _ := json.Marshal(data)
		fmt.Fprintf(&out, "event: %s\ndata: %s\n\n", name, b)
	}
	usage, _ := msg["usage"].(map[string]any)
	start := map[string]any{"id": msg["id"], "type": "message", "role": "assistant", "model": msg["model"], "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": usage["input_tokens"], "output_tokens": 1}}
	event("message_start", map[string]any{"message": start})
	blocks, _ := msg["content"].([]any)
	for i, b := range blocks {
		block := b.(map[string]any)
		if block["type"] == "tool_use" {
			input, _ := json.Marshal(block["input"])
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		} else {
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": block["text"]}})
		}
		event("content_block_stop", map[string]any{"index": i})
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usage["output_tokens"]}})
	event("message_stop", map[string]any{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	_, _ = io.WriteString(w, out.String())
}

// dropIn is one drop-in test's world: ctxgraph over HTTP with the scripted provider behind it.
type dropIn struct {
	h        *harness
	base     string
	provider *protocolServer
	// model is the provider's own name of the model the clients name.
	model string
	// explained are the assemblies already checked to resolve.
	explained map[string]bool
}

// newDropIn serves ctxgraph over HTTP with the provider named name (kind openai or
// anthropic) at p, listing model among its models.
func newDropIn(t *testing.T, p *protocolServer, name, model string) *dropIn {
	t.Helper()
	baseURL := p.URL
	if name == provider.KindOpenAI {
		baseURL += "/v1"
	}
	cfgs := providersFor(t, fmt.Sprintf(`providers:
  - {name: %[1]s, kind: %[1]s, baseURL: %[2]q, apiKeyEnv: DROPIN_PROVIDER_KEY, maxRetries: 0, models: [%[3]s]}
`, name, baseURL, model))
	h := newProviderHarness(t, cfgs...)
	srv := httptest.NewServer(h.srv)
	t.Cleanup(srv.Close)
	return &dropIn{h: h, base: srv.URL, provider: p, model: model, explained: map[string]bool{}}
}

// dropInClients installs the pinned clients (a no-op once they are) and returns the
// virtual environment's python and the directory of the Node clients.
func dropInClients(t *testing.T) (python, nodeDir string) {
	t.Helper()
	script := filepath.Join("..", "scripts", "dropin-clients")
	if out, err := exec.Command(script, "install").CombinedOutput(); err != nil {
		t.Fatalf("scripts/dropin-clients install: %v\n%s", err, out)
	}
	py, err := exec.Command(script, "python").Output()
	if err != nil {
		t.Fatalf("scripts/dropin-clients python: %v", err)
	}
	dir, err := exec.Command(script, "node-dir").Output()
	if err != nil {
		t.Fatalf("scripts/dropin-clients node-dir: %v", err)
	}
	return strings.TrimSpace(string(py)), strings.TrimSpace(string(dir))
}

// run runs one client program in dir against ctxgraph with the harness's key and decodes
// the JSON object it prints. The vendors' environment variables are left out, so that
// nothing but the program's own base URL and key reaches its SDK.
func (d *dropIn) run(t *testing.T, dir string, argv ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "ANTHROPIC_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "CTXGRAPH_BASE="+d.base, "CTXGRAPH_KEY="+d.h.key, "PYTHONWARNINGS=ignore::DeprecationWarning")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v; the provider got %d requests\nstderr:\n%s\nstdout:\n%s", strings.Join(argv, " "), err, d.provider.count(), stderr.String(), stdout.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("%s printed %q, not one JSON object: %v\nstderr:\n%s", strings.Join(argv, " "), stdout.String(), err, stderr.String())
	}
	t.Logf("%s observed %s", filepath.Base(argv[len(argv)-1]), stdout.String())
	return out
}

// answer is what one response's X-Ctxgraph-* headers name.
type answer struct {
	branch, run, assembly string
}

// answer reads the X-Ctxgraph-* headers a client observed and checks them: the branch, run
// and assembly present, the tokens as assembled/baseline, the run on that branch, and the
// assembly's record resolving (it reads back, and explaining what it included answers 200).
func (d *dropIn) answer(t *testing.T, what string, observed map[string]any) answer {
	t.Helper()
	headers, _ := observed["headers"].(map[string]any)
	a := answer{branch: str(headers, "x-ctxgraph-branch"), run: str(headers, "x-ctxgraph-run"), assembly: str(headers, "x-ctxgraph-assembly")}
	if a.branch == "" || a.run == "" || a.assembly == "" {
		t.Fatalf("%s: got X-Ctxgraph headers %v, want the branch, run and assembly", what, headers)
	}
	if tokens := str(headers, "x-ctxgraph-tokens"); !regexp.MustCompile(`^\d+/\d+$`).MatchString(tokens) {
		t.Errorf("%s: got X-Ctxgraph-Tokens %q, want assembled/baseline", what, tokens)
	}
	if !d.explained[a.assembly] {
		asm := d.h.must(200, "GET", "/v1/assemblies/"+a.assembly, nil)
		if ref := str(first(asm, "included"), "ref"); ref == "" {
			t.Errorf("%s: assembly %s included nothing to explain: %v", what, a.assembly, asm)
		} else {
			d.h.must(200, "GET", "/v1/assemblies/"+a.assembly+"/explain?ref="+ref, nil)
		}
		d.explained[a.assembly] = true
	}
	if run := d.h.must(200, "GET", "/v1/runs/"+a.run, nil); str(run, "branchId") != a.branch {
		t.Errorf("%s: run %s is on branch %s, the answer names %s", what, a.run, str(run, "branchId"), a.branch)
	}
	return a
}

// forkedFrom says whether branch is a fork of parent, as the conversation of run lists its
// branches.
func (d *dropIn) forkedFrom(t *testing.T, run, branch, parent string) bool {
	t.Helper()
	for _, b := range list(d.conversationOf(t, run)["branches"]) {
		if str(obj(b), "id") == branch {
			return str(obj(b), "parentBranchId") == parent
		}
	}
	return false
}

// conversationOf returns the conversation of a run, read through the API.
func (d *dropIn) conversationOf(t *testing.T, run string) map[string]any {
	t.Helper()
	conv := str(d.h.must(200, "GET", "/v1/runs/"+run, nil), "conversationId")
	return d.h.must(200, "GET", "/v1/conversations/"+conv, nil)
}

// userMessages are the user messages of a branch's history, in order.
func (d *dropIn) userMessages(t *testing.T, branch string) []string {
	t.Helper()
	var out []string
	hist := d.h.must(200, "GET", "/v1/branches/"+branch+"/history", nil)
	items, _ := hist["items"].([]any)
	for _, v := range items {
		it := v.(map[string]any)
		if it["type"] == "message" && it["role"] == "user" {
			out = append(out, str(it, "content"))
		}
	}
	return out
}

// derivedMemory returns the summary of the memory ctxgraph derived from the result of the
// tool call the provider named callID (DESIGN §7), failing the test when there is none, and
// the ids of the memory and its artifact.
func (d *dropIn) derivedMemory(t *testing.T, callID string) (summary, memory, artifact string) {
	t.Helper()
	recs := cypherQuery(t, `MATCH (c:ToolCall {accountId: $acct, callId: $call})-[:PRODUCED]->(a:ToolArtifact)<-[:DERIVED_FROM]-(m:ToolMemory)
		RETURN c.status AS status, m.summary AS summary, m.id AS memory, a.id AS artifact`, map[string]any{"acct": d.h.account, "call": callID})
	if len(recs) != 1 {
		t.Fatalf("tool call %s: got %d derived memories of its result, want one", callID, len(recs))
	}
	if status, _ := recs[0].Get("status"); status != "succeeded" {
		t.Errorf("tool call %s: got status %v, want succeeded", callID, status)
	}
	s, _ := recs[0].Get("summary")
	m, _ := recs[0].Get("memory")
	a, _ := recs[0].Get("artifact")
	summary, _ = s.(string)
	memory, _ = m.(string)
	artifact, _ = a.(string)
	return summary, memory, artifact
}

// checkRequests checks every request the provider received: the model by the provider's own
// name, each tool call answered by exactly one result right after it and each result
// answering a call before it, no user message twice, and the client's ctxgraph key in no
// header. It returns the requests read as wire messages.
func (d *dropIn) checkRequests(t *testing.T, read func(map[string]any) []wireMessage) [][]wireMessage {
	t.Helper()
	p := d.provider
	var all [][]wireMessage
	for n := range p.count() {
		if got := p.request(t, n)["model"]; got != d.model {
			t.Errorf("request %d: got model %v, want %s", n, got, d.model)
		}
		if strings.Contains(fmt.Sprint(p.headers[n]), d.h.key) {
			t.Errorf("request %d carried the client's ctxgraph key to the provider: %v", n, p.headers[n])
		}
		msgs := read(p.request(t, n))
		all = append(all, msgs)
		users := map[string]int{}
		for i, m := range msgs {
			if m.role == "user" && m.text != "" {
				if users[m.text]++; users[m.text] == 2 {
					t.Errorf("request %d holds the user message %q twice: %+v", n, m.text, msgs)
				}
			}
			if m.role == "tool" && (i == 0 || !answers(msgs[:i], m.callID)) {
				t.Errorf("request %d: the result of %q answers no call before it: %+v", n, m.callID, msgs)
			}
			if len(m.calls) == 0 {
				continue
			}
			var results []string
			for _, r := range msgs[i+1:] {
				if r.role != "tool" {
					break
				}
				results = append(results, r.callID)
			}
			for _, id := range m.calls {
				if c := count(results, id); c != 1 {
					t.Errorf("request %d: call %q is followed by %d results, want 1: %+v", n, id, c, msgs)
				}
			}
		}
	}
	return all
}

// answers says whether the tool results and text since the last assistant message with
// tool calls belong to a call with id.
func answers(before []wireMessage, id string) bool {
	for i := len(before) - 1; i >= 0; i-- {
		if before[i].role == "tool" {
			continue
		}
		return slices.Contains(before[i].calls, id)
	}
	return false
}

func count(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

// lastUser is the text of a request's last user message.
func lastUser(msgs []wireMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].role == "user" {
			return msgs[i].text
		}
	}
	return ""
}

// requestsFor returns the indexes of the provider's requests whose last user message is text.
func requestsFor(all [][]wireMessage, text string) []int {
	var out []int
	for n, msgs := range all {
		if lastUser(msgs) == text {
			out = append(out, n)
		}
	}
	return out
}

// refusals checks the errors a client's SDK raised for a key ctxgraph does not know and a
// model no provider serves: the SDK's own error classes for 401 and 404, from a body in the
// vendor's error shape that says why. errorOf finds the vendor's error object in the body the
// SDK kept.
func refusals(t *testing.T, errs map[string]any, errorOf func(body map[string]any) map[string]any) {
	t.Helper()
	for name, want := range map[string]struct {
		class  string
		status float64
	}{"bad_key": {"AuthenticationError", 401}, "unknown_model": {"NotFoundError", 404}} {
		got := obj(errs[name])
		if str(got, "class") != want.class || got["status"] != want.status || str(errorOf(obj(got["body"])), "message") == "" {
			t.Errorf("%s: the SDK raised %v, want %s (%v) with the vendor's error body and a message", name, got, want.class, want.status)
		}
	}
}

// idReached fails the test unless the user message question reached the provider exactly
// once, in a request that held the order id an earlier turn's tool returned.
func (d *dropIn) idReached(t *testing.T, all [][]wireMessage, question string) {
	t.Helper()
	asked := requestsFor(all, question)
	if len(asked) != 1 {
		t.Fatalf("%q reached the provider %d times, want once", question, len(asked))
	}
	if body := string(d.provider.bodies[asked[0]]); !strings.Contains(body, dropInOrderID) {
		t.Errorf("the provider request asking %q does not hold %s: %s", question, dropInOrderID, body)
	}
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestDropInOpenAISDK drives POST /v1/openai/chat/completions and GET /v1/openai/models
// with the official openai Python SDK (testdata/dropin/openai_sdk.py): a plain turn, a tool
// loop over three turns whose last needs the order id only the tool returned, a retried
// request, an edited earlier message, a streamed turn in a conversation of its own, and the
// SDK's errors for an unknown key and an unknown model.
func TestDropInOpenAISDK(t *testing.T) {
	python, _ := dropInClients(t)
	d := newDropIn(t, newOpenAIDesk(t), "openai", "gpt-4.1")
	out := d.run(t, "testdata/dropin", python, "openai_sdk.py")

	models := fmt.Sprint(out["models"])
	if !strings.Contains(models, "gpt-4.1") {
		t.Errorf("models: got %s, want the configured provider's gpt-4.1", models)
	}

	plain := obj(out["plain"])
	if got, want := str(plain, "content"), "You said: Hi, I am Ada Lovelace and I have a question about my orders."; got != want {
		t.Errorf("plain turn: got %q, want %q", got, want)
	}
	if usage := obj(plain["usage"]); usage["prompt_tokens"] != 120.0 {
		t.Errorf("plain turn: got usage %v, want what the provider reported (120 prompt tokens)", usage)
	}
	thread := d.answer(t, "plain turn", plain)

	// The tool loop: the provider's call reached the SDK with its id, the SDK's result was
	// paired with it, and the third turn's request held the id the tool returned.
	loop := obj(out["tools"])
	turns := list(loop["turns"])
	if len(turns) != 3 {
		t.Fatalf("tool loop: got %d turns, want 3", len(turns))
	}
	call := obj(first(obj(turns[0]), "tool_calls"))
	callID := str(call, "id")
	if str(call, "name") != "search_orders" || str(obj(turns[0]), "finish_reason") != "tool_calls" {
		t.Fatalf("tool loop turn 1: got %v, want a search_orders call", turns[0])
	}
	if got := str(obj(first(loop, "results")), "tool_call_id"); got != callID {
		t.Fatalf("tool loop: the SDK answered call %q, the provider made %q", got, callID)
	}
	if got := str(obj(turns[1]), "content"); got != "Your latest order has shipped." {
		t.Errorf("tool loop turn 2: got %q, want the answer to the tool's result", got)
	}
	if got := str(obj(turns[2]), "content"); got != "Quote order "+dropInOrderID+"." {
		t.Errorf("tool loop turn 3: got %q, want the order id the tool returned in turn 1", got)
	}
	var loopAnswers []answer
	for i, turn := range turns {
		a := d.answer(t, fmt.Sprintf("tool loop turn %d", i+1), obj(turn))
		if a.branch != thread.branch {
			t.Errorf("tool loop turn %d: got branch %s, want the thread's %s", i+1, a.branch, thread.branch)
		}
		loopAnswers = append(loopAnswers, a)
	}

	all := d.checkRequests(t, openAIWire)
	d.idReached(t, all, "I want to cancel it. Which order id should I quote?")
	for _, msgs := range all {
		if msgs[0].role != "system" || !strings.Contains(msgs[0].text, "You are the support assistant of an online shop.") &&
			!strings.Contains(msgs[0].text, "You answer questions about shipping.") {
			t.Errorf("a provider request does not open with the client's system message: %+v", msgs)
		}
	}

	// The tool's result was recorded through the result path: it has a derived memory that
	// quotes the id, and turn 3's assembly included the result or that memory.
	summary, memory, artifact := d.derivedMemory(t, callID)
	if !strings.Contains(summary, dropInOrderID) {
		t.Errorf("the derived memory %q does not quote %s", summary, dropInOrderID)
	}
	if got := includedAs(d.h.must(200, "GET", "/v1/assemblies/"+loopAnswers[2].assembly, nil)); got[memory] == "" && got[artifact] == "" {
		t.Errorf("turn 3's assembly included %v, want the tool's artifact %s or its memory %s", got, artifact, memory)
	}

	// The retry recorded nothing: the same run answered, the user message is on the branch once.
	retry := obj(out["retry"])
	a, b := d.answer(t, "retry, first", obj(retry["first"])), d.answer(t, "retry, second", obj(retry["second"]))
	if a != b || str(obj(retry["first"]), "content") != str(obj(retry["second"]), "content") {
		t.Errorf("retried request: got %+v %q then %+v %q, want the same answer of the same run", a,
			str(obj(retry["first"]), "content"), b, str(obj(retry["second"]), "content"))
	}
	t.Logf("the retried request reached the provider %d times", len(requestsFor(all, "Thanks, that is all for today.")))
	wantUsers := []string{"Hi, I am Ada Lovelace and I have a question about my orders.", "Find my latest order.",
		"I want to cancel it. Which order id should I quote?", "Thanks, that is all for today."}
	if got := d.userMessages(t, thread.branch); !slices.Equal(got, wantUsers) {
		t.Errorf("the thread's user messages: got %q, want each once: %q", got, wantUsers)
	}

	// The edited message forked the branch after the last message the lists share.
	edit := d.answer(t, "edited message", obj(out["edit"]))
	if edit.branch == thread.branch {
		t.Fatalf("edited message: got branch %s, the thread's own, want a fork", edit.branch)
	}
	if !d.forkedFrom(t, edit.run, edit.branch, thread.branch) {
		t.Errorf("edited message: branch %s is not a fork of %s", edit.branch, thread.branch)
	}
	if got, want := d.userMessages(t, edit.branch), []string{wantUsers[0], "Find my oldest order."}; !slices.Equal(got, want) {
		t.Errorf("the fork's user messages: got %q, want %q", got, want)
	}

	// The streamed turn: its text, the usage chunk, and a conversation of its own.
	stream := obj(out["stream"])
	if got := str(stream, "content"); got != "You said: Which carriers do you ship with?" || str(stream, "finish_reason") != "stop" {
		t.Errorf("streamed turn: got %q (%s), want the provider's text and stop", got, str(stream, "finish_reason"))
	}
	if obj(stream["usage"]) == nil {
		t.Errorf("streamed turn: got no usage chunk, want one (include_usage)")
	}
	streamed := d.answer(t, "streamed turn", stream)

	// The graph: the thread's conversation with its instructions, its runs, and the
	// streamed turn's conversation apart from it.
	conv := d.conversationOf(t, thread.run)
	if got := str(conv, "instructions"); got != "You are the support assistant of an online shop." {
		t.Errorf("conversation instructions: got %q, want the client's system message", got)
	}
	for _, r := range append(loopAnswers, thread, a, edit) {
		if got := str(d.h.must(200, "GET", "/v1/runs/"+r.run, nil), "conversationId"); got != str(conv, "id") {
			t.Errorf("run %s: got conversation %s, want %s", r.run, got, str(conv, "id"))
		}
	}
	if other := d.conversationOf(t, streamed.run); str(other, "id") == str(conv, "id") {
		t.Errorf("the streamed turn, without a thread key, joined the thread's conversation %s", str(conv, "id"))
	}

	// The openai SDK keeps the error object of {"error": {...}} as the body.
	refusals(t, obj(out["errors"]), func(body map[string]any) map[string]any { return body })
}

// TestDropInLangGraph runs LangGraph's prebuilt ReAct agent over langchain-openai's
// ChatOpenAI (testdata/dropin/langgraph_agent.py) through a two-step tool loop to its final
// answer, with a model named as a configured provider lists it.
func TestDropInLangGraph(t *testing.T) {
	python, _ := dropInClients(t)
	d := newDropIn(t, newOpenAIDesk(t), "openai", "gpt-4.1")
	out := d.run(t, "testdata/dropin", python, "langgraph_agent.py")

	msgs := list(out["messages"])
	var kinds, calls []string
	for _, m := range msgs {
		kinds = append(kinds, str(obj(m), "type"))
		for _, c := range list(obj(m)["tool_calls"]) {
			calls = append(calls, str(obj(c), "name")+":"+str(obj(c), "id"))
		}
	}
	if want := []string{"human", "ai", "tool", "ai", "tool", "ai"}; !slices.Equal(kinds, want) {
		t.Fatalf("agent messages: got %v, want %v", kinds, want)
	}
	if got := str(obj(msgs[len(msgs)-1]), "content"); got != "It arrives on 2026-11-05." {
		t.Errorf("agent's answer: got %q, want the delivery date track_order returned", got)
	}
	if len(calls) != 2 || !strings.HasPrefix(calls[0], "search_orders:") || !strings.HasPrefix(calls[1], "track_order:") {
		t.Fatalf("agent's tool calls: got %v, want search_orders then track_order", calls)
	}
	headers := list(out["headers"])
	if len(headers) != 3 {
		t.Fatalf("agent: got %d model calls' headers, want 3", len(headers))
	}
	var branch string
	for i, hd := range headers {
		a := d.answer(t, fmt.Sprintf("agent call %d", i+1), map[string]any{"headers": hd})
		if branch == "" {
			branch = a.branch
		} else if a.branch != branch {
			t.Errorf("agent call %d: got branch %s, want the conversation's %s", i+1, a.branch, branch)
		}
		if run := d.h.must(200, "GET", "/v1/runs/"+a.run, nil); str(run, "provider") != "openai" || str(run, "model") != "gpt-4.1" {
			t.Errorf("agent call %d: got run on %s/%s, want openai/gpt-4.1", i+1, str(run, "provider"), str(run, "model"))
		}
	}

	all := d.checkRequests(t, openAIWire)
	if len(all) != 3 {
		t.Errorf("the provider got %d requests, want 3 (one per model call)", len(all))
	}
	if got := d.userMessages(t, branch); !slices.Equal(got, []string{"Find my latest order and tell me when it will be delivered."}) {
		t.Errorf("the conversation's user messages: got %q, want the one question once", got)
	}
	for _, c := range calls {
		if summary, _, _ := d.derivedMemory(t, strings.SplitN(c, ":", 2)[1]); !strings.Contains(summary, dropInOrderID) {
			t.Errorf("%s: the derived memory %q does not quote %s", c, summary, dropInOrderID)
		}
	}
}

// TestDropInAnthropicSDK drives POST /v1/anthropic/v1/messages with the official anthropic
// Python SDK (testdata/dropin/anthropic_sdk.py): a tool loop (tool_use, tool_result, final
// text), a streamed turn (messages.stream) that needs the order id the tool returned, and
// the SDK's errors for an unknown key and an unknown model.
func TestDropInAnthropicSDK(t *testing.T) {
	python, _ := dropInClients(t)
	d := newDropIn(t, newAnthropicDesk(t), "anthropic", "claude-sonnet-4-5")
	out := d.run(t, "testdata/dropin", python, "anthropic_sdk.py")

	loop := obj(out["tools"])
	turns := list(loop["turns"])
	if len(turns) != 2 {
		t.Fatalf("tool loop: got %d turns, want 2", len(turns))
	}
	var use map[string]any
	for _, b := range list(obj(turns[0])["content"]) {
		if str(obj(b), "type") == "tool_use" {
			use = obj(b)
		}
	}
	if use == nil || str(use, "name") != "search_orders" || str(obj(turns[0]), "stop_reason") != "tool_use" {
		t.Fatalf("tool loop turn 1: got %v, want a search_orders tool_use", turns[0])
	}
	if got := str(obj(first(loop, "results")), "tool_use_id"); got != str(use, "id") {
		t.Fatalf("tool loop: the SDK answered %q, the provider used %q", got, str(use, "id"))
	}
	if got := str(obj(first(obj(turns[1]), "content")), "text"); got != "Your latest order has shipped." || str(obj(turns[1]), "stop_reason") != "end_turn" {
		t.Errorf("tool loop turn 2: got %q (%s), want the answer to the tool's result", got, str(obj(turns[1]), "stop_reason"))
	}
	if usage := obj(obj(turns[1])["usage"]); usage["input_tokens"] != 80.0 {
		t.Errorf("tool loop turn 2: got usage %v, want what the provider reported (80 input tokens)", usage)
	}

	stream := obj(out["stream"])
	want := "Quote order " + dropInOrderID + "."
	if got := str(stream, "text"); got != want {
		t.Errorf("streamed turn: got text %q, want %q", got, want)
	}
	if got := str(obj(first(stream, "final")), "text"); got != want || str(stream, "stop_reason") != "end_turn" {
		t.Errorf("streamed turn: got final message %q (%s), want %q and end_turn", got, str(stream, "stop_reason"), want)
	}

	thread := d.answer(t, "tool loop turn 1", obj(turns[0]))
	for what, o := range map[string]map[string]any{"tool loop turn 2": obj(turns[1]), "streamed turn": stream} {
		if a := d.answer(t, what, o); a.branch != thread.branch {
			t.Errorf("%s: got branch %s, want the conversation's %s (metadata.user_id)", what, a.branch, thread.branch)
		}
	}

	all := d.checkRequests(t, anthropicWire)
	d.idReached(t, all, "I want to cancel it. Which order id should I quote?")
	for n, msgs := range all {
		if msgs[0].role != "system" || !strings.Contains(msgs[0].text, "You are the support assistant of an online shop.") {
			t.Errorf("request %d: the client's system prompt is not in system: %+v", n, msgs)
		}
		if got := d.provider.headers[n].Get("X-Api-Key"); got != "value-of-DROPIN_PROVIDER_KEY" {
			t.Errorf("request %d: got x-api-key %q, want the provider's key", n, got)
		}
	}
	if got, want := d.userMessages(t, thread.branch), []string{"Find my latest order, please.", "I want to cancel it. Which order id should I quote?"}; !slices.Equal(got, want) {
		t.Errorf("the conversation's user messages: got %q, want each once: %q", got, want)
	}
	if summary, _, _ := d.derivedMemory(t, str(use, "id")); !strings.Contains(summary, dropInOrderID) {
		t.Errorf("the derived memory %q does not quote %s", summary, dropInOrderID)
	}
	if got := str(d.conversationOf(t, thread.run), "instructions"); got != "You are the support assistant of an online shop." {
		t.Errorf("conversation instructions: got %q, want the client's system prompt", got)
	}
	// The anthropic SDK keeps the whole {"type": "error", "error": {...}}.
	refusals(t, obj(out["errors"]), func(body map[string]any) map[string]any {
		if str(body, "type") != "error" {
			return nil
		}
		return obj(body["error"])
	})
}

// TestDropInVercelAISDK runs the Vercel AI SDK (testdata/dropin/node/vercel.mjs):
// generateText through a two-step tool loop to its final text, then streamText continuing
// the conversation it found by the hash of its first messages.
func TestDropInVercelAISDK(t *testing.T) {
	_, nodeDir := dropInClients(t)
	// The default model speaks the Responses API, chat() chat completions: an application
	// on either runs unchanged.
	for _, api := range []string{"chat", "responses"} {
		t.Run(api, func(t *testing.T) {
			t.Setenv("CTXGRAPH_VERCEL_API", api)
			vercelAISDK(t, nodeDir)
		})
	}
}

func vercelAISDK(t *testing.T, nodeDir string) {
	d := newDropIn(t, newOpenAIDesk(t), "openai", "gpt-4.1")
	out := d.run(t, nodeDir, "node", "vercel.mjs")

	gen := obj(out["generate"])
	if got := str(gen, "text"); got != "It arrives on 2026-11-05." {
		t.Errorf("generateText: got %q, want the delivery date track_order returned", got)
	}
	steps := list(gen["steps"])
	if len(steps) != 3 {
		t.Fatalf("generateText: got %d steps, want 3 (search, track, answer)", len(steps))
	}
	var branch string
	var callIDs []string
	for i, s := range steps {
		a := d.answer(t, fmt.Sprintf("generateText step %d", i+1), obj(s))
		if branch == "" {
			branch = a.branch
		} else if a.branch != branch {
			t.Errorf("generateText step %d: got branch %s, want the conversation's %s", i+1, a.branch, branch)
		}
		for _, c := range list(obj(s)["toolCalls"]) {
			callIDs = append(callIDs, str(obj(c), "id"))
		}
	}
	if len(callIDs) != 2 {
		t.Fatalf("generateText: got tool calls %v, want search_orders then track_order", callIDs)
	}

	stream := obj(out["stream"])
	if got := str(stream, "text"); got != "Quote order "+dropInOrderID+"." || str(stream, "finishReason") != "stop" {
		t.Errorf("streamText: got %q (%s), want the order id the first tool returned", got, str(stream, "finishReason"))
	}
	if a := d.answer(t, "streamText", stream); a.branch != branch {
		t.Errorf("streamText: got branch %s, want the conversation's %s (found by its first messages)", a.branch, branch)
	}

	all := d.checkRequests(t, openAIWire)
	d.idReached(t, all, "I want to cancel it. Which order id should I quote?")
	if len(all) != 4 {
		t.Errorf("the provider got %d requests, want 4 (three steps and the streamed turn)", len(all))
	}
	if got, want := d.userMessages(t, branch), []string{"Find my latest order and tell me when it will be delivered.",
		"I want to cancel it. Which order id should I quote?"}; !slices.Equal(got, want) {
		t.Errorf("the conversation's user messages: got %q, want each once: %q", got, want)
	}
	for _, id := range callIDs {
		if summary, _, _ := d.derivedMemory(t, id); !strings.Contains(summary, dropInOrderID) {
			t.Errorf("call %s: the derived memory %q does not quote %s", id, summary, dropInOrderID)
		}
	}
}
