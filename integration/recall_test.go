package integration

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// toolNames lists the names of the tools a request offered, in either protocol (OpenAI's
// tools[].function.name, Anthropic's tools[].name).
func toolNames(req map[string]any) []string {
	var out []string
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		if fn, ok := tm["function"].(map[string]any); ok {
			tm = fn
		}
		out = append(out, str(tm, "name"))
	}
	return out
}

// script answers each model call in turn with the next of answers, made from the request it
// got (so that an answer can name an id the request showed), and fails on a call too many.
type script struct {
	mu      sync.Mutex
	answers []func(req map[string]any) any
}

func (s *script) answer(t *testing.T) func(n int, req map[string]any) (int, map[string]string, any) {
	return func(n int, req map[string]any) (int, map[string]string, any) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if n >= len(s.answers) {
			t.Errorf("model call %d was not scripted", n)
			return 500, nil, map[string]any{"error": map[string]any{"message": "unscripted"}}
		}
		return 200, nil, s.answers[n](req)
	}
}

// artifactNamed finds the artifact id a request's messages name after prefix.
func artifactNamed(req map[string]any, within string) string {
	b, _ := json.Marshal(req["messages"])
	text := string(b)
	i := strings.Index(text, within)
	if i < 0 {
		return ""
	}
	j := strings.Index(text[i:], "art_")
	if j < 0 {
		return ""
	}
	id := text[i+j:]
	end := strings.IndexFunc(id, func(r rune) bool { return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z') })
	return id[:end]
}

// TestRecallWithinAGeneration: a value deep in an earlier turn's 200-row result is not in
// its digest; the model recalls it by JSON Pointer and ctxgraph answers within the same
// generation (the client never sees that round trip), records it as a call and an artifact
// of the run, and the next model call carries the value under rehydration.model_requested.
// A recall of another participant's private artifact is refused without its body.
func TestRecallWithinAGeneration(t *testing.T) {
	const private = "PRIVATE-SCRATCH-5512"
	var recalled, otherArt string
	s := &script{}
	fake := newProtocolServer(t, "/v1/chat/completions", s.answer(t))
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+fake.URL+`/v1", maxRetries: 0}
`)...)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"}, [3]string{"other", "openai", "gpt-4.1"})
	s.answers = []func(map[string]any) any{
		func(map[string]any) any { return openAIToolCall("call_1", "sheet_read", `{"sheet":"q3"}`) },
		func(map[string]any) any { return openAIText("The sheet has 200 SKUs.") },
		// The other participant reads a private scratch note.
		func(map[string]any) any { return openAIToolCall("call_o", "sheet_read", `{"sheet":"scratch"}`) },
		func(map[string]any) any { return openAIText("Noted.") },
		// The second turn: the value is not in the digest; the model recalls it.
		func(req map[string]any) any {
			recalled = artifactNamed(req, "sheet_read")
			return openAIToolCall("call_r1", "ctxgraph_recall", fmt.Sprintf(`{"artifactId":%q,"pointer":"/rows/173"}`, recalled))
		},
		func(req map[string]any) any {
			return openAIToolCall("call_r2", "ctxgraph_recall", fmt.Sprintf(`{"artifactId":%q}`, otherArt))
		},
		func(map[string]any) any { return openAIText("SKU-0173 costs 183.") },
	}
	gen := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[:1],
		"userMessage": map[string]any{"content": "read the q3 sheet"}, "tools": []any{sheetTool}})
	run := first(gen, "runs")
	h.must(201, "POST", "/v1/tool-calls/"+str(first(run, "toolCalls"), "id")+"/result", map[string]any{"status": "succeeded",
		"privacyClass": "internal", "result": rowsResult(200)})
	h.must(200, "POST", "/v1/runs/"+str(run, "runId")+"/continue", map[string]any{"tools": []any{sheetTool}})

	gen = h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[1:],
		"userMessage": map[string]any{"content": "note the scratch sheet"}, "tools": []any{sheetTool}})
	run = first(gen, "runs")
	otherArt = str(h.must(201, "POST", "/v1/tool-calls/"+str(first(run, "toolCalls"), "id")+"/result", map[string]any{"status": "succeeded",
		"result": map[string]any{"note": private}}), "artifactId")
	h.must(200, "POST", "/v1/runs/"+str(run, "runId")+"/continue", map[string]any{"tools": []any{sheetTool}})

	gen = h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[:1],
		"userMessage": map[string]any{"content": "what does SKU-0173 cost?"}, "tools": []any{sheetTool}})
	run = first(gen, "runs")
	if calls, _ := run["toolCalls"].([]any); run["status"] != "completed" || len(calls) != 0 {
		t.Fatalf("recall turn: got run %v, want it completed with no call handed to the client", run)
	}
	if recalled == "" {
		t.Fatalf("the second turn's request named no artifact to recall: %s", fake.bodies[4])
	}
	// The recall was offered after the client's tool, and its answer went back to the model.
	if got := toolNames(fake.request(t, 4)); strings.Join(got, ",") != "sheet_read,ctxgraph_recall" {
		t.Errorf("recall turn tools: got %v, want sheet_read then ctxgraph_recall", got)
	}
	next := string(fake.bodies[5])
	if !strings.Contains(next, `SKU-0173`) || !strings.Contains(next, `183`) {
		t.Errorf("the call after the recall does not carry row 173: %s", next)
	}
	last := string(fake.bodies[6])
	if strings.Contains(last, private) || !strings.Contains(last, "refused") {
		t.Errorf("the recall of another participant's artifact: got %s, want it refused without the body", last)
	}
	// Each recall is a call and an artifact of the run, included in the model call after it
	// by the rule that decided it: the answer with its source's class, the refusal as such.
	rules := map[string]string{}
	for _, rec := range cypherQuery(t, `MATCH (a:ContextAssembly)-[:FOR_RUN]->(:ModelRun {id: $run}) RETURN a.id AS id ORDER BY a.createdAt`,
		map[string]any{"run": str(run, "runId")}) {
		id, _ := rec.Get("id")
		a := h.must(200, "GET", "/v1/assemblies/"+id.(string), nil)
		for _, inc := range a["included"].([]any) {
			m := inc.(map[string]any)
			if m["type"] != "artifact" || m["as"] != "raw" {
				continue
			}
			ex := h.must(200, "GET", "/v1/assemblies/"+str(a, "id")+"/explain?ref="+str(m, "ref"), nil)
			art := h.must(200, "GET", "/v1/artifacts/"+str(m, "ref"), nil)
			rules[str(ex, "rule")] = str(art, "tool") + " " + str(art, "privacyClass") + " " + str(art, "status")
		}
	}
	want := map[string]string{"rehydration.model_requested": "ctxgraph_recall internal succeeded", "rehydration.recall_refused": "ctxgraph_recall public failed"}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("the recalls in the last request: got %v, want %v", rules, want)
	}
}

// TestRecallIsOfferedWithinLimits: a client tool may not take the recall tool's name;
// toolChoice none never offers it; a model that recalls every time gets the tool
// withdrawn after recall.maxRounds, and the stream marks the recalls answered by ctxgraph.
func TestRecallIsOfferedWithinLimits(t *testing.T) {
	s := &script{}
	fake := newProtocolServer(t, "/v1/chat/completions", s.answer(t))
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+fake.URL+`/v1", maxRetries: 0}
`)...)
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
	h.expectError(h.call("POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
		"userMessage": map[string]any{"content": "hi"}, "tools": []any{map[string]any{"name": "ctxgraph_recall"}}}), 400, "invalid", "tools[0].name")

	var art string
	recalls := 0
	recall := func(req map[string]any) any {
		recalls++
		return openAIToolCall(fmt.Sprintf("call_r%d", recalls), "ctxgraph_recall", fmt.Sprintf(`{"artifactId":%q,"pointer":"/rows/1"}`, art))
	}
	s.answers = []func(map[string]any) any{
		func(map[string]any) any { return openAIToolCall("call_1", "sheet_read", `{"sheet":"q3"}`) },
		func(map[string]any) any { return openAIText("Read.") },
		func(req map[string]any) any {
			if tools := toolNames(req); strings.Join(tools, ",") != "sheet_read" {
				t.Errorf("toolChoice none: got tools %v, want the client's alone", tools)
			}
			return openAIText("No tools.")
		},
		func(req map[string]any) any { art = artifactNamed(req, "sheet_read"); return recall(req) },
		recall, recall,
		func(req map[string]any) any {
			if tools := toolNames(req); strings.Contains(strings.Join(tools, ","), "ctxgraph_recall") {
				t.Errorf("after 3 recalls in a row: got tools %v, want ctxgraph_recall withdrawn", tools)
			}
			return openAIText("Enough recalling.")
		},
	}
	run := first(h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
		"userMessage": map[string]any{"content": "read q3"}, "tools": []any{sheetTool}}), "runs")
	h.must(201, "POST", "/v1/tool-calls/"+str(first(run, "toolCalls"), "id")+"/result", map[string]any{"status": "succeeded", "result": rowsResult(200)})
	h.must(200, "POST", "/v1/runs/"+str(run, "runId")+"/continue", map[string]any{"tools": []any{sheetTool}})
	h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
		"userMessage": map[string]any{"content": "say hi"}, "tools": []any{sheetTool}, "toolChoice": "none"})

	r := h.call("POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
		"userMessage": map[string]any{"content": "row 1 again and again"}, "tools": []any{sheetTool}, "stream": true})
	if r.status != 200 {
		t.Fatalf("stream: got %d %s", r.status, r.body)
	}
	answered := 0
	for _, block := range strings.Split(string(r.body), "\n\n") {
		if name, data := sseEvent(block); name == "tool_call" {
			if !strings.Contains(data, `"answeredBy":"ctxgraph"`) {
				t.Errorf("tool_call event of a recall: got %s, want it marked answered by ctxgraph", data)
			}
			answered++
		}
	}
	if answered != 3 || !strings.Contains(string(r.body), "Enough recalling.") {
		t.Errorf("stream: got %d recall events, want 3 and the final answer: %s", answered, r.body)
	}
	if fake.count() != 7 {
		t.Errorf("provider calls: got %d, want 7", fake.count())
	}
}
