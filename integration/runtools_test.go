package integration

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// quoteTool declares its results' freshness: the run keeps the declaration with the tool.
var quoteTool = map[string]any{"name": "quote_get", "description": "get a stock quote",
	"parameters":     map[string]any{"type": "object", "properties": map[string]any{"symbol": map[string]any{"type": "string"}}},
	"freshnessClass": "volatile", "staleAfter": "30m", "revalidateWith": []any{"quote_get"},
	"retention": map[string]any{"class": "redact_after", "after": "720h"}}

// offeredTools returns the client tools an OpenAI request offers, by name, in order:
// ctxgraph's own recall, which policy adds per call, is left out.
func offeredTools(req map[string]any) (names []string, byName map[string]map[string]any) {
	byName = map[string]map[string]any{}
	list, _ := req["tools"].([]any)
	for _, t := range list {
		fn := t.(map[string]any)["function"].(map[string]any)
		if name := fn["name"].(string); name != "ctxgraph_recall" {
			names, byName[name] = append(names, name), fn
		}
	}
	return names, byName
}

// wantOffered fails unless the request offers exactly the tools want, each with its
// description and parameters as the client declared them.
func wantOffered(t *testing.T, what string, req map[string]any, want ...map[string]any) {
	t.Helper()
	names, byName := offeredTools(req)
	var wantNames []string
	for _, w := range want {
		wantNames = append(wantNames, w["name"].(string))
	}
	if !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("%s: got tools %v, want %v", what, names, wantNames)
	}
	for _, w := range want {
		fn := byName[w["name"].(string)]
		if fn["description"] != w["description"] || !sameJSON(fn["parameters"], w["parameters"]) {
			t.Fatalf("%s: tool %s is offered as %v, want %v", what, w["name"], fn, w)
		}
	}
}

func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb)
}

// runTools returns the names of the tools GET /v1/runs/{id} says the run keeps.
func runTools(h *harness, runID string) (names []string, run map[string]any) {
	run = h.must(200, "GET", "/v1/runs/"+runID, nil)
	list, _ := run["tools"].([]any)
	for _, t := range list {
		names = append(names, t.(map[string]any)["name"].(string))
	}
	return names, run
}

func openAIHarness(t *testing.T, answer func(n int, req map[string]any) (int, map[string]string, any)) (*harness, *protocolServer) {
	fake := newProtocolServer(t, "/v1/chat/completions", answer)
	return newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+fake.URL+`/v1", apiKeyEnv: OPENAI_KEY, maxRetries: 0}
`)...), fake
}

// A tool loop of three rounds whose continues name no tools: every provider call is
// offered the tools the generation offered, with their schemas and the tool choice, and
// the calls of later rounds keep the tools' freshness declarations.
func TestRunToolsReusedByContinue(t *testing.T) {
	const rounds = 3
	h, fake := openAIHarness(t, func(n int, _ map[string]any) (int, map[string]string, any) {
		if n < rounds {
			return 200, nil, openAIToolCall(fmt.Sprintf("call_%d", n), "quote_get", `{"symbol":"ACME"}`)
		}
		return 200, nil, openAIText("ACME trades at 12.")
	})
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
	gen := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
		"userMessage": map[string]any{"content": "watch ACME"}, "tools": []any{sheetTool, quoteTool}, "toolChoice": "auto"})
	run := first(gen, "runs")
	runID := str(run, "runId")
	offered := func(n int) {
		t.Helper()
		req := fake.request(t, n)
		wantOffered(t, fmt.Sprintf("provider call %d", n), req, sheetTool, quoteTool)
		if req["tool_choice"] != "auto" {
			t.Fatalf("provider call %d: got tool_choice %v, want auto", n, req["tool_choice"])
		}
	}
	offered(0)
	for round := 0; round < rounds; round++ {
		if str(run, "status") != "awaiting_tools" {
			t.Fatalf("round %d: got run %v, want awaiting_tools", round, run)
		}
		call := first(run, "toolCalls")
		tc := h.must(200, "GET", "/v1/tool-calls/"+str(call, "id"), nil)
		if !sameJSON(tc["freshness"], map[string]any{"freshnessClass": "volatile", "staleAfter": "30m", "revalidateWith": []any{"quote_get"}}) {
			t.Fatalf("round %d: the call keeps freshness %v, want quote_get's declaration", round, tc["freshness"])
		}
		if !sameJSON(tc["retention"], quoteTool["retention"]) {
			t.Fatalf("round %d: the call keeps retention %v, want quote_get's declaration", round, tc["retention"])
		}
		res := h.must(201, "POST", "/v1/tool-calls/"+str(call, "id")+"/result", map[string]any{
			"status": "succeeded", "result": map[string]any{"symbol": "ACME", "price": 12 + round}})
		// The result names no retention: its tool's declaration gives it.
		if a := h.must(200, "GET", "/v1/artifacts/"+str(res, "artifactId"), nil); str(a, "retentionSource") != "tool" || !sameJSON(a["retention"], quoteTool["retention"]) {
			t.Fatalf("round %d: the result's artifact keeps retention %v from %q, want quote_get's declaration", round, a["retention"], str(a, "retentionSource"))
		}
		run = first(h.must(200, "POST", "/v1/runs/"+runID+"/continue", map[string]any{}), "runs")
		offered(round + 1)
	}
	if str(run, "status") != "completed" {
		t.Fatalf("after %d rounds: got run %v, want completed", rounds, run)
	}
	if fake.count() != rounds+1 {
		t.Fatalf("the provider got %d calls, want %d", fake.count(), rounds+1)
	}

	names, got := runTools(h, runID)
	if !reflect.DeepEqual(names, []string{"sheet_read", "quote_get"}) || str(got, "toolChoice") != "auto" {
		t.Fatalf("GET run: got tools %v and toolChoice %q, want sheet_read, quote_get and auto", names, str(got, "toolChoice"))
	}
	kept := got["tools"].([]any)[1].(map[string]any)
	for _, k := range []string{"description", "parameters", "freshnessClass", "staleAfter", "revalidateWith", "retention"} {
		if !sameJSON(kept[k], quoteTool[k]) {
			t.Errorf("GET run: quote_get keeps %s %v, want %v", k, kept[k], quoteTool[k])
		}
	}
}

// A continue that names tools replaces the run's, for that call and the next continue
// without tools; one that names only a choice keeps the run's tools; an empty list
// offers none; a choice naming a tool the run is not offered is refused.
func TestRunToolsNamedByContinue(t *testing.T) {
	h, fake := openAIHarness(t, func(n int, _ map[string]any) (int, map[string]string, any) {
		switch n {
		case 0:
			return 200, nil, openAIToolCall("call_0", "sheet_read", `{"sheet":"q3"}`)
		case 1, 2:
			return 200, nil, openAIToolCall(fmt.Sprintf("call_%d", n), "quote_get", `{"symbol":"ACME"}`)
		}
		return 200, nil, openAIText("done")
	})
	_, branch, ids := h.conversationWith([3]string{"gpt", "openai", "gpt-4.1"})
	gen := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids,
		"userMessage": map[string]any{"content": "q3 and ACME"}, "tools": []any{sheetTool}, "toolChoice": "sheet_read"})
	run := first(gen, "runs")
	runID := str(run, "runId")
	answer := func(run map[string]any) {
		t.Helper()
		if str(run, "status") != "awaiting_tools" {
			t.Fatalf("got run %v, want awaiting_tools", run)
		}
		h.must(201, "POST", "/v1/tool-calls/"+str(first(run, "toolCalls"), "id")+"/result", map[string]any{
			"status": "succeeded", "result": map[string]any{"ok": true}})
	}
	answer(run)

	// A choice naming a tool the run is not offered: 400, and no provider call.
	r := h.call("POST", "/v1/runs/"+runID+"/continue", map[string]any{"toolChoice": "quote_get"})
	h.expectError(r, 400, "invalid", "toolChoice")
	if fake.count() != 1 {
		t.Fatalf("a refused continue called the provider: %d calls", fake.count())
	}

	// Named tools replace the run's; the run's choice named sheet_read, so it goes.
	run = first(h.must(200, "POST", "/v1/runs/"+runID+"/continue", map[string]any{"tools": []any{quoteTool}}), "runs")
	req := fake.request(t, 1)
	wantOffered(t, "the continue naming quote_get", req, quoteTool)
	if _, ok := req["tool_choice"]; ok {
		t.Fatalf("the continue naming tools without a choice sent tool_choice %v", req["tool_choice"])
	}
	if names, got := runTools(h, runID); !reflect.DeepEqual(names, []string{"quote_get"}) || str(got, "toolChoice") != "" {
		t.Fatalf("GET run after the continue naming quote_get: got %v and toolChoice %q", names, str(got, "toolChoice"))
	}
	answer(run)

	// The next continue without tools reuses the latest; a choice named alone keeps them.
	run = first(h.must(200, "POST", "/v1/runs/"+runID+"/continue", map[string]any{"toolChoice": "required"}), "runs")
	req = fake.request(t, 2)
	wantOffered(t, "the continue after the one naming quote_get", req, quoteTool)
	if req["tool_choice"] != "required" {
		t.Fatalf("the continue naming only a choice: got tool_choice %v, want required", req["tool_choice"])
	}
	if names, got := runTools(h, runID); !reflect.DeepEqual(names, []string{"quote_get"}) || str(got, "toolChoice") != "required" {
		t.Fatalf("GET run after the continue naming required: got %v and toolChoice %q", names, str(got, "toolChoice"))
	}
	answer(run)

	// An empty list offers none, and the run keeps none.
	run = first(h.must(200, "POST", "/v1/runs/"+runID+"/continue", map[string]any{"tools": []any{}}), "runs")
	if str(run, "status") != "completed" {
		t.Fatalf("the continue offering no tools: got %v, want completed", run)
	}
	if names, _ := offeredTools(fake.request(t, 3)); len(names) != 0 {
		t.Fatalf("the continue with tools []: the provider was offered %v", names)
	}
	if names, got := runTools(h, runID); len(names) != 0 || str(got, "toolChoice") != "" {
		t.Fatalf("GET run after tools []: got %v and toolChoice %q, want none", names, str(got, "toolChoice"))
	}
}

// Subagent runs keep their own tools: a child's call after its tool result is offered the
// child's tools, never the parent's; the parent's resume is offered the parent's.
func TestRunToolsOfSubagentsAndResume(t *testing.T) {
	const rawRows = "RAW-SHEET-ROWS-552"
	h, fake := openAIHarness(t, scouts(rawRows))
	_, branch, ids := h.conversationWith([3]string{"lead", "openai", "m-lead"}, [3]string{"web", "openai", "m-web"},
		[3]string{"sheet", "openai", "m-sheet"})
	delegate := map[string]any{"name": "delegate", "description": "hand work to scouts", "parameters": map[string]any{"type": "object"}}
	parent := first(h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[:1],
		"userMessage": map[string]any{"content": "Brief me on e-bike pilots."}, "tools": []any{delegate}}), "runs")
	parentRun := str(parent, "runId")
	fan := h.must(201, "POST", "/v1/runs/"+parentRun+"/subagents", map[string]any{"children": []any{
		map[string]any{"participantId": ids[1], "task": "find evaluations"},
		map[string]any{"participantId": ids[2], "task": "read the pilots sheet", "tools": []any{sheetTool}},
	}})
	web, sheet := fan["runs"].([]any)[0].(map[string]any), fan["runs"].([]any)[1].(map[string]any)
	if str(sheet, "status") != "awaiting_tools" || str(web, "status") != "completed" {
		t.Fatalf("children: web %v, sheet %v", web, sheet)
	}
	if names, _ := runTools(h, str(sheet, "runId")); !reflect.DeepEqual(names, []string{"sheet_read"}) {
		t.Fatalf("GET the sheet child: got tools %v, want sheet_read", names)
	}
	if names, _ := runTools(h, str(web, "runId")); len(names) != 0 {
		t.Fatalf("GET the web child: got tools %v, want none", names)
	}
	h.must(201, "POST", "/v1/tool-calls/"+str(first(sheet, "toolCalls"), "id")+"/result", map[string]any{
		"status": "succeeded", "result": map[string]any{"rows": rawRows}})
	if done := first(h.must(200, "POST", "/v1/runs/"+str(sheet, "runId")+"/continue", map[string]any{}), "runs"); str(done, "status") != "completed" {
		t.Fatalf("the sheet child's continue: %v", done)
	}
	sheets := fake.requestsFor(t, "m-sheet")
	if len(sheets) != 2 {
		t.Fatalf("the sheet child made %d calls, want 2", len(sheets))
	}
	wantOffered(t, "the sheet child's call after its result", sheets[1], sheetTool)
	if names, _ := offeredTools(fake.requestsFor(t, "m-web")[0]); len(names) != 0 {
		t.Fatalf("the web child was offered %v, want none", names)
	}

	if resumed := first(h.must(200, "POST", "/v1/runs/"+parentRun+"/resume", map[string]any{}), "runs"); str(resumed, "status") != "completed" {
		t.Fatalf("resume: %v", resumed)
	}
	leads := fake.requestsFor(t, "m-lead")
	wantOffered(t, "the parent's resume", leads[len(leads)-1], delegate)
	if names, _ := runTools(h, parentRun); !reflect.DeepEqual(names, []string{"delegate"}) {
		t.Fatalf("GET the parent: got tools %v, want delegate", names)
	}
}
