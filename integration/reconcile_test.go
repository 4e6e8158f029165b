package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The drop-in endpoints' reconciliation (DESIGN §9), driven with raw HTTP as a vendor SDK
// sends it: the whole list every call. The provider behind ctxgraph is an in-test OpenAI
// server whose scripted model calls search_orders when asked to find an order, answers a
// tool result with "Found it.", and otherwise says what the last message was.

// orderModel is the scripted model.
func orderModel(n int, req map[string]any) (int, map[string]string, any) {
	msgs, _ := req["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	content, _ := last["content"].(string)
	switch {
	case last["role"] == "tool":
		return 200, nil, openAIText("Found it.")
	case last["role"] == "user" && strings.Contains(content, "find"):
		return 200, nil, openAIToolCall(fmt.Sprintf("call_%d", n), "search_orders", `{"customer": "acme"}`)
	}
	return 200, nil, openAIText("You said: " + content)
}

const ordersResult = `{"orders": [{"id": "ord_7Q2X9", "total": "1,240.50", "status": "shipped"}]}`

var searchOrdersTool = map[string]any{"type": "function", "function": map[string]any{"name": "search_orders", "description": "find a customer's orders",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"customer": map[string]any{"type": "string"}}}}}

// chatClient is an OpenAI-SDK-like client: it keeps its list and sends it whole.
type chatClient struct {
	h        *harness
	key      string
	body     map[string]any
	messages []any
	headers  []string
}

func newChatClient(h *harness, extra map[string]any, headers ...string) *chatClient {
	body := map[string]any{"model": "openai/gpt-4.1", "tools": []any{searchOrdersTool}}
	for k, v := range extra {
		body[k] = v
	}
	return &chatClient{h: h, key: h.key, body: body, headers: headers}
}

// send sends the list with msgs appended and, when the call succeeds, appends its answer as
// an SDK application does.
func (c *chatClient) send(msgs ...map[string]any) (response, map[string]any) {
	c.h.t.Helper()
	for _, m := range msgs {
		c.messages = append(c.messages, m)
	}
	body := map[string]any{"messages": c.messages}
	for k, v := range c.body {
		body[k] = v
	}
	r := c.h.callAs(c.key, "POST", "/v1/openai/chat/completions", body, c.headers...)
	if r.status != 200 {
		return r, nil
	}
	answer := r.obj(c.h.t)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	c.messages = append(c.messages, answer)
	return r, answer
}

func user(text string) map[string]any { return map[string]any{"role": "user", "content": text} }

func toolMessage(callID, content string) map[string]any {
	return map[string]any{"role": "tool", "tool_call_id": callID, "content": content}
}

func mustOK(t *testing.T, r response) {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("got status %d, want 200; body %s", r.status, r.body)
	}
}

func TestDropInToolLoopRecordsOnlyTheNewTail(t *testing.T) {
	fake := newProtocolServer(t, "/v1/chat/completions", orderModel)
	h := newProviderHarness(t, openAIAt(t, fake, "sk-test")...)
	c := newChatClient(h, map[string]any{"user": "u-" + randomHex(4)})
	c.messages = []any{map[string]any{"role": "system", "content": "You are the order desk."}}

	r1, a1 := c.send(user("please find acme's latest order"))
	mustOK(t, r1)
	calls, _ := a1["tool_calls"].([]any)
	if len(calls) != 1 {
		t.Fatalf("turn one: got answer %v, want one tool call", a1)
	}
	callID := calls[0].(map[string]any)["id"].(string)
	r2, a2 := c.send(toolMessage(callID, ordersResult))
	mustOK(t, r2)
	if a2["content"] != "Found it." {
		t.Fatalf("turn two: got %v, want the model's answer to the result", a2)
	}
	r3, _ := c.send(user("what was the total of that order, and its id?"))
	mustOK(t, r3)

	branch := r1.header.Get("X-Ctxgraph-Branch")
	for i, r := range []response{r2, r3} {
		if got := r.header.Get("X-Ctxgraph-Branch"); got != branch {
			t.Errorf("call %d: got branch %s, want %s (the list continues it)", i+2, got, branch)
		}
	}
	if r1.header.Get("X-Ctxgraph-Run") != r2.header.Get("X-Ctxgraph-Run") {
		t.Errorf("the tool result's call got run %s, want the run that asked for it (%s): a continue", r2.header.Get("X-Ctxgraph-Run"), r1.header.Get("X-Ctxgraph-Run"))
	}
	if r3.header.Get("X-Ctxgraph-Run") == r2.header.Get("X-Ctxgraph-Run") {
		t.Errorf("a new user message got the old run %s, want a new turn", r3.header.Get("X-Ctxgraph-Run"))
	}
	for _, r := range []response{r1, r2, r3} {
		if tokens := r.header.Get("X-Ctxgraph-Tokens"); !strings.Contains(tokens, "/") {
			t.Errorf("got X-Ctxgraph-Tokens %q, want assembled/baseline", tokens)
		}
		h.must(200, "GET", "/v1/assemblies/"+r.header.Get("X-Ctxgraph-Assembly"), nil)
	}

	// What the provider received: the system message first, the call paired with its
	// result, each user message once, and on turn three the id turn one's tool returned.
	if fake.count() != 3 {
		t.Fatalf("the provider got %d calls, want 3", fake.count())
	}
	second := messagesOf(t, fake.request(t, 1))
	if second[0]["role"] != "system" || !strings.Contains(fmt.Sprint(second[0]["content"]), "order desk") {
		t.Errorf("got first message %v, want the client's system message as the instructions", second[0])
	}
	pairs := 0
	for i, m := range second {
		if m["role"] == "tool" && m["tool_call_id"] == callID {
			prev := second[i-1]
			if tc, _ := prev["tool_calls"].([]any); len(tc) == 1 && tc[0].(map[string]any)["id"] == callID {
				pairs++
			}
		}
	}
	if pairs != 1 {
		t.Errorf("call two: got %d intact pairs of call %s and its result, want 1: %v", pairs, callID, second)
	}
	third, _ := json.Marshal(fake.request(t, 2))
	if !strings.Contains(string(third), "ord_7Q2X9") {
		t.Errorf("call three: the request lacks ord_7Q2X9, which turn one's tool returned: %s", third)
	}
	if n := strings.Count(string(third), "please find acme"); n != 1 {
		t.Errorf("call three: got turn one's user message %d times, want once", n)
	}

	// The graph: each user message once on the branch, the result's derived memory.
	hist := h.must(200, "GET", "/v1/branches/"+branch+"/history", nil)
	users := 0
	for _, it := range hist["items"].([]any) {
		if m := it.(map[string]any); m["role"] == "user" {
			users++
		}
	}
	if users != 2 {
		t.Errorf("history: got %d user messages, want 2", users)
	}
	asm := h.must(200, "GET", "/v1/assemblies/"+r3.header.Get("X-Ctxgraph-Assembly"), nil)
	memories := 0
	for _, it := range asm["included"].([]any) {
		if it.(map[string]any)["type"] == "memory" {
			memories++
		}
	}
	if memories == 0 {
		t.Errorf("turn three's assembly includes no memory (the result's derived one): %s", mustJSON(asm["included"]))
	}

	// The same list again is a retry: its answer, nothing recorded, no provider call.
	c.messages = c.messages[:len(c.messages)-1]
	again, _ := c.send()
	mustOK(t, again)
	if again.header.Get("Idempotent-Replayed") != "true" || again.header.Get("X-Ctxgraph-Run") != r3.header.Get("X-Ctxgraph-Run") {
		t.Errorf("a repeated list: got run %s (replayed %q), want run %s replayed", again.header.Get("X-Ctxgraph-Run"),
			again.header.Get("Idempotent-Replayed"), r3.header.Get("X-Ctxgraph-Run"))
	}
	if fake.count() != 3 {
		t.Errorf("a repeated list called the provider: %d calls, want 3", fake.count())
	}
}

func TestDropInEditedMessageForks(t *testing.T) {
	fake := newProtocolServer(t, "/v1/chat/completions", orderModel)
	h := newProviderHarness(t, openAIAt(t, fake, "sk-test")...)
	thread := map[string]any{"metadata": map[string]any{"ctxgraph_thread": "t-" + randomHex(4)}}
	c := newChatClient(h, thread)
	r1, _ := c.send(user("hello, I am Ada"))
	mustOK(t, r1)
	r2, _ := c.send(user("I like tea"))
	mustOK(t, r2)
	main := r1.header.Get("X-Ctxgraph-Branch")

	// The second user message edited: the list parts from the branch after turn one's answer.
	edited := newChatClient(h, thread)
	edited.messages = slices.Clone(c.messages[:2])
	r3, _ := edited.send(user("I like coffee"))
	mustOK(t, r3)
	fork := r3.header.Get("X-Ctxgraph-Branch")
	if fork == main || fork == "" {
		t.Fatalf("an edited message: got branch %q, want a fork of %s", fork, main)
	}
	sent, _ := json.Marshal(fake.request(t, 2))
	if strings.Contains(string(sent), "tea") || !strings.Contains(string(sent), "Ada") {
		t.Errorf("the fork's call: got %s, want turn one without the edited-away message", sent)
	}
	// Both threads go on where they are.
	r4, _ := edited.send(user("with milk"))
	mustOK(t, r4)
	r5, _ := c.send(user("green tea"))
	mustOK(t, r5)
	if r4.header.Get("X-Ctxgraph-Branch") != fork || r5.header.Get("X-Ctxgraph-Branch") != main {
		t.Errorf("got branches %s and %s, want the fork %s and the main branch %s", r4.header.Get("X-Ctxgraph-Branch"),
			r5.header.Get("X-Ctxgraph-Branch"), fork, main)
	}
	// The same thread key with a list that shares nothing: a branch of its own, inheriting
	// nothing.
	other := newChatClient(h, thread)
	r6, _ := other.send(user("a different matter entirely"))
	mustOK(t, r6)
	root := r6.header.Get("X-Ctxgraph-Branch")
	if root == main || root == fork {
		t.Errorf("a list sharing nothing went to branch %s, want a new one", root)
	}
	items := h.must(200, "GET", "/v1/branches/"+root+"/history", nil)["items"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["content"] != "a different matter entirely" {
		t.Errorf("the new branch's history: got %v, want its question and answer alone", items)
	}
	for branch, want := range map[string]int{main: 3, fork: 3} {
		users := 0
		for _, it := range h.must(200, "GET", "/v1/branches/"+branch+"/history", nil)["items"].([]any) {
			if it.(map[string]any)["role"] == "user" {
				users++
			}
		}
		if users != want {
			t.Errorf("branch %s: got %d user messages in its lineage, want %d", branch, users, want)
		}
	}
}

func TestDropInProviderFailureRetriedRecordsOnce(t *testing.T) {
	fake := newProtocolServer(t, "/v1/chat/completions", func(n int, req map[string]any) (int, map[string]string, any) {
		if n == 0 {
			return 500, nil, map[string]any{"error": map[string]any{"message": "overloaded"}}
		}
		return orderModel(n, req)
	})
	h := newProviderHarness(t, openAIAt(t, fake, "sk-test")...)
	c := newChatClient(h, map[string]any{"user": "u-" + randomHex(4)})
	r1, _ := c.send(user("hello"))
	if r1.status != 502 {
		t.Fatalf("a failed provider: got %d, want 502; body %s", r1.status, r1.body)
	}
	if e, _ := r1.obj(t)["error"].(map[string]any); e["type"] != "api_error" {
		t.Errorf("got error %s, want OpenAI's error object of type api_error", r1.body)
	}
	r2, a2 := c.send()
	mustOK(t, r2)
	if a2["content"] != "You said: hello" {
		t.Errorf("the retry: got %v, want the answer to the recorded message", a2)
	}
	users := 0
	for _, it := range h.must(200, "GET", "/v1/branches/"+r2.header.Get("X-Ctxgraph-Branch")+"/history", nil)["items"].([]any) {
		if it.(map[string]any)["role"] == "user" {
			users++
		}
	}
	if users != 1 {
		t.Errorf("got %d user messages after a failed call and its retry, want 1", users)
	}
}

func TestDropInRefusesBadListsAndOtherAccounts(t *testing.T) {
	fake := newProtocolServer(t, "/v1/chat/completions", orderModel)
	h := newProviderHarness(t, openAIAt(t, fake, "sk-test")...)
	before := len(h.must(200, "GET", "/v1/conversations", nil)["conversations"].([]any))
	cases := []struct {
		name  string
		body  map[string]any
		param string
	}{
		{"a result of no call", map[string]any{"model": "openai/gpt-4.1", "messages": []any{user("a"), toolMessage("call_x", "{}")}}, "messages[1].tool_call_id"},
		{"an unknown model", map[string]any{"model": "nope/x", "messages": []any{user("a")}}, "model"},
		{"no messages", map[string]any{"model": "openai/gpt-4.1", "messages": []any{}}, "messages"},
		{"an image part", map[string]any{"model": "openai/gpt-4.1", "messages": []any{map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "image_url", "image_url": map[string]any{"url": "x"}}}}}}, "messages[0].content[0].type"},
	}
	for _, tc := range cases {
		r := h.call("POST", "/v1/openai/chat/completions", tc.body)
		e, _ := r.obj(t)["error"].(map[string]any)
		if r.status/100 != 4 || e["param"] != tc.param {
			t.Errorf("%s: got %d %s, want a 4xx naming %s", tc.name, r.status, r.body, tc.param)
		}
	}
	if after := len(h.must(200, "GET", "/v1/conversations", nil)["conversations"].([]any)); after != before {
		t.Errorf("refused requests wrote %d conversations, want none", after-before)
	}
	if fake.count() != 0 {
		t.Errorf("refused requests called the provider %d times", fake.count())
	}

	// Another account's key with the same thread key gets a conversation of its own, and
	// cannot name this account's branch.
	thread := map[string]any{"user": "shared-" + randomHex(4)}
	mine, _ := newChatClient(h, thread).send(user("my secret is 42"))
	mustOK(t, mine)
	theirs := newChatClient(h, thread)
	theirs.key = h.otherKey
	r, _ := theirs.send(user("my secret is 42"))
	mustOK(t, r)
	if r.header.Get("X-Ctxgraph-Branch") == mine.header.Get("X-Ctxgraph-Branch") {
		t.Errorf("two accounts' threads of one key share branch %s", r.header.Get("X-Ctxgraph-Branch"))
	}
	probe := newChatClient(h, nil, "X-Ctxgraph-Branch", mine.header.Get("X-Ctxgraph-Branch"))
	probe.key = h.otherKey
	pr, _ := probe.send(user("what is the secret?"))
	if pr.status != 404 {
		t.Errorf("another account naming the branch: got %d %s, want 404", pr.status, pr.body)
	}
	if fake.count() != 2 {
		t.Errorf("got %d provider calls, want 2: the refused probe called the provider", fake.count())
	}
}

// A drop-in client that goes away mid-stream cancels the provider's call, and its run is
// recorded failed with code cancelled; the same list sent again answers it, its user
// message recorded once.
func TestDropInClientGoneCancels(t *testing.T) {
	reached, cancelled := make(chan struct{}, 1), make(chan bool, 1)
	var calls atomic.Int32
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if calls.Add(1) > 1 {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(openAIText("back again"))
			return
		}
		reached <- struct{}{}
		select {
		case <-r.Context().Done():
			cancelled <- true
		case <-time.After(5 * time.Second):
			cancelled <- false
		}
	}))
	t.Cleanup(provider.Close)
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+provider.URL+`/v1", maxRetries: 0}
`)...)
	srv := httptest.NewServer(h.srv)
	t.Cleanup(srv.Close)
	list := map[string]any{"model": "openai/gpt-4.1", "user": "u-" + randomHex(4), "stream": true,
		"messages": []any{user("hang on")}}
	ctx, leave := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/openai/chat/completions", bytes.NewReader(mustJSON(list)))
	req.Header.Set("Authorization", "Bearer "+h.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	branch := resp.Header.Get("X-Ctxgraph-Branch")
	select {
	case <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the provider was never called")
	}
	leave()
	resp.Body.Close()
	if !<-cancelled {
		t.Fatal("the provider's request was not cancelled when the client went away")
	}
	waitUntil(t, "the run recorded cancelled", func() bool {
		return cypherCount(t, `MATCH (r:ModelRun {branchId: $b, status: 'failed', errorCode: 'cancelled'}) RETURN count(r)`, map[string]any{"b": branch}) == 1
	})
	// The cancelled call releases its key as it ends; a client that sends the list again
	// meanwhile is told 409 with Retry-After, and follows it, as the SDKs do.
	list["stream"] = false
	var again response
	waitUntil(t, "the list sent again answered", func() bool {
		again = h.call("POST", "/v1/openai/chat/completions", list)
		return again.status != 409
	})
	mustOK(t, again)
	if again.header.Get("X-Ctxgraph-Branch") != branch {
		t.Errorf("the list sent again went to branch %s, want %s", again.header.Get("X-Ctxgraph-Branch"), branch)
	}
	users := 0
	for _, it := range h.must(200, "GET", "/v1/branches/"+branch+"/history", nil)["items"].([]any) {
		if it.(map[string]any)["role"] == "user" {
			users++
		}
	}
	if users != 1 {
		t.Errorf("got %d user messages after a cancelled call and the list again, want 1", users)
	}
}

// The Responses protocol as the Vercel AI SDK's default OpenAI model speaks it: the items
// of earlier answers sent back by reference; and as `client.responses.create` may, a list
// continued from a previous response. Both record only the new tail on one branch.
func TestDropInResponsesByReferenceAndPreviousResponse(t *testing.T) {
	fake := newProtocolServer(t, "/v1/chat/completions", orderModel)
	h := newProviderHarness(t, openAIAt(t, fake, "sk-test")...)
	tool := map[string]any{"type": "function", "name": "search_orders", "parameters": map[string]any{"type": "object"}}
	send := func(body map[string]any) (response, map[string]any) {
		t.Helper()
		body["model"], body["tools"] = "openai/gpt-4.1", []any{tool}
		r := h.call("POST", "/v1/openai/responses", body)
		if r.status != 200 {
			t.Fatalf("got %d %s", r.status, r.body)
		}
		return r, r.obj(t)
	}
	outputOf := func(o map[string]any) map[string]any { return o["output"].([]any)[0].(map[string]any) }
	for _, byPrevious := range []bool{false, true} {
		name := map[bool]string{false: "by reference", true: "by previous response"}[byPrevious]
		thread := "u-" + randomHex(4)
		input := []any{map[string]any{"role": "developer", "content": "You are the order desk."},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "please find acme's latest order"}}}}
		r1, o1 := send(map[string]any{"input": input, "user": thread})
		call := outputOf(o1)
		if call["type"] != "function_call" || call["name"] != "search_orders" {
			t.Fatalf("%s, turn one: got %v, want a function call", name, o1["output"])
		}
		result := map[string]any{"type": "function_call_output", "call_id": call["call_id"], "output": ordersResult}
		var r2 response
		var o2 map[string]any
		if byPrevious {
			r2, o2 = send(map[string]any{"previous_response_id": o1["id"], "input": []any{result}})
		} else {
			input = append(input, map[string]any{"type": "item_reference", "id": call["id"]}, result)
			r2, o2 = send(map[string]any{"input": input, "user": thread})
		}
		answer := outputOf(o2)
		if answer["type"] != "message" || r2.header.Get("X-Ctxgraph-Run") != r1.header.Get("X-Ctxgraph-Run") {
			t.Errorf("%s, turn two: got %v on run %s, want the answer of run %s continued", name, answer, r2.header.Get("X-Ctxgraph-Run"), r1.header.Get("X-Ctxgraph-Run"))
		}
		question := map[string]any{"role": "user", "content": "what was the total of that order, and its id?"}
		var r3 response
		if byPrevious {
			r3, _ = send(map[string]any{"previous_response_id": o2["id"], "input": []any{question}})
		} else {
			input = append(input, map[string]any{"type": "item_reference", "id": answer["id"]}, question)
			r3, _ = send(map[string]any{"input": input, "user": thread})
		}
		branch := r1.header.Get("X-Ctxgraph-Branch")
		if r2.header.Get("X-Ctxgraph-Branch") != branch || r3.header.Get("X-Ctxgraph-Branch") != branch {
			t.Errorf("%s: got branches %s, %s, %s, want one", name, branch, r2.header.Get("X-Ctxgraph-Branch"), r3.header.Get("X-Ctxgraph-Branch"))
		}
		sent, _ := json.Marshal(fake.request(t, fake.count()-1))
		if !strings.Contains(string(sent), "ord_7Q2X9") || strings.Count(string(sent), "please find acme") != 1 {
			t.Errorf("%s, turn three: the request lacks ord_7Q2X9 or repeats turn one: %s", name, sent)
		}
		users := 0
		for _, it := range h.must(200, "GET", "/v1/branches/"+branch+"/history", nil)["items"].([]any) {
			if it.(map[string]any)["role"] == "user" {
				users++
			}
		}
		if users != 2 {
			t.Errorf("%s: got %d user messages on the branch, want 2", name, users)
		}
	}
	// A reference to an item ctxgraph did not answer is refused, naming it.
	r := h.call("POST", "/v1/openai/responses", map[string]any{"model": "openai/gpt-4.1",
		"input": []any{map[string]any{"type": "item_reference", "id": "rs_elsewhere"}}})
	if e, _ := r.obj(t)["error"].(map[string]any); r.status != 400 || e["param"] != "input[0].id" {
		t.Errorf("an unknown reference: got %d %s, want 400 naming input[0].id", r.status, r.body)
	}
}
