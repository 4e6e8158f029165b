package integration

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// checkStory asks explain about every record an assembly included and fails the test on
// any answer that tells another story, then replays the assembly and wants it identical.
func (h *harness) checkStory(assemblyID string) {
	h.t.Helper()
	a := h.must(200, "GET", "/v1/assemblies/"+assemblyID, nil)
	included, _ := a["included"].([]any)
	if len(included) == 0 {
		h.t.Errorf("assembly %s included nothing", assemblyID)
	}
	for _, v := range included {
		inc := v.(map[string]any)
		ref := str(inc, "ref")
		ex := h.must(200, "GET", "/v1/assemblies/"+assemblyID+"/explain?ref="+url.QueryEscape(ref), nil)
		if str(ex, "outcome") != "included" || str(ex, "as") != str(inc, "as") || str(ex, "rule") == "" {
			h.t.Errorf("assembly %s: explain %s says %v, the record says included as %s", assemblyID, ref, ex, str(inc, "as"))
		}
	}
	omitted, _ := a["omittedRefs"].([]any) // listed when the assembly was traced
	for _, v := range omitted {
		om := v.(map[string]any)
		ex := h.must(200, "GET", "/v1/assemblies/"+assemblyID+"/explain?ref="+url.QueryEscape(str(om, "ref")), nil)
		if str(ex, "outcome") != "omitted" || str(ex, "reason") != str(om, "reason") {
			h.t.Errorf("assembly %s: explain %s says %v, the trace says omitted for %s", assemblyID, str(om, "ref"), ex, str(om, "reason"))
		}
	}
	if rep := h.must(200, "POST", "/v1/assemblies/"+assemblyID+"/replay", nil); rep["identical"] != true {
		h.t.Errorf("assembly %s replays with differences %v", assemblyID, rep["differences"])
	}
}

// A three-speaker, two-round discussion: every request keeps the directive, labels every
// earlier answer with its speaker, and holds only its speaker's private tool state.
func TestDiscussionLabelsDirectivesAndPrivateState(t *testing.T) {
	openai := newProtocolServer(t, "/v1/chat/completions", func(n int, req map[string]any) (int, map[string]string, any) {
		return 200, nil, openAIText(fmt.Sprintf("turn %d from %s", n, req["model"]))
	})
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+openai.URL+`/v1", apiKeyEnv: OPENAI_KEY, maxRetries: 0}
`)...)
	_, branch, ids := h.conversationWith([3]string{"ada", "openai", "m-ada"}, [3]string{"bo", "openai", "m-bo"}, [3]string{"cy", "openai", "m-cy"})
	// Ada's private tool state: a lookup of her own, with a memory of it.
	const secret = "ADA-PRIVATE-7731"
	run := str(h.must(201, "POST", "/v1/branches/"+branch+"/runs", map[string]any{"participantId": ids[0], "runtimeKind": "chat"}), "id")
	call := str(h.must(201, "POST", "/v1/runs/"+run+"/tool-calls", map[string]any{"tool": "notes_read", "arguments": map[string]any{"page": 1}}), "id")
	h.must(201, "POST", "/v1/tool-calls/"+call+"/result", map[string]any{"status": "succeeded", "result": map[string]any{"note": secret},
		"memories": []any{map[string]any{"summary": "Ada's own note says " + secret}}})
	h.must(200, "PATCH", "/v1/runs/"+run, map[string]any{"status": "completed"})

	const directive = "Moderator: argue for or against shipping on Friday, one point each."
	out := h.must(201, "POST", "/v1/discussions", map[string]any{"branchId": branch, "participantIds": ids,
		"directive": directive, "topic": map[string]any{"content": "Ship on Friday?"}, "rounds": 2})
	runs := out["runs"].([]any)
	if len(runs) != 6 || str(out, "directiveMessageId") == "" || str(out, "userMessageId") == "" {
		t.Fatalf("discussion answered %v", out)
	}
	names := map[string]string{ids[0]: "ada", ids[1]: "bo", ids[2]: "cy"}
	var answers []string // the answers so far, as "speaker: text"
	previous := str(out, "userMessageId")
	for i, v := range runs {
		r := v.(map[string]any)
		speaker := ids[i%3]
		if str(r, "participantId") != speaker || str(r, "status") != "completed" {
			t.Fatalf("run %d: %v, want %s completed", i, r, names[speaker])
		}
		req := openai.request(t, i)
		if req["model"] != "m-"+names[speaker] {
			t.Fatalf("request %d went to %v, want m-%s", i, req["model"], names[speaker])
		}
		msgs := messagesOf(t, req)
		var system, labelled []string
		for _, m := range msgs {
			text, _ := m["content"].(string)
			switch m["role"] {
			case "system":
				system = append(system, text)
			case "assistant":
				if m["name"] == nil {
					t.Errorf("request %d: an assistant message without its speaker: %v", i, m)
				}
				labelled = append(labelled, fmt.Sprintf("%v: %s", m["name"], text))
			}
		}
		if !strings.Contains(strings.Join(system, "\n"), directive) {
			t.Errorf("request %d (%s) lost the directive: system %q", i, names[speaker], system)
		}
		for _, a := range answers {
			if !slices.Contains(labelled, a) {
				t.Errorf("request %d (%s) lacks the labelled answer %q: %q", i, names[speaker], a, labelled)
			}
		}
		body := string(openai.bodies[i])
		if speaker != ids[0] && strings.Contains(body, secret) {
			t.Errorf("request %d (%s) holds Ada's private tool state: %s", i, names[speaker], body)
		}
		if speaker == ids[0] && !strings.Contains(body, secret) {
			t.Errorf("request %d (ada) lacks her own private state: %s", i, body)
		}
		// The discussion is one thread: each run answers the message before it.
		if got := str(h.must(200, "GET", "/v1/runs/"+str(r, "runId"), nil), "triggerMessageId"); got != previous {
			t.Errorf("run %d was triggered by %s, want %s", i, got, previous)
		}
		msg := r["message"].(map[string]any)
		previous = str(msg, "id")
		answers = append(answers, names[speaker]+": "+str(msg, "content"))
		h.checkStory(str(r, "assemblyId"))
	}
}

// requestsFor returns the requests the server received for model, in order.
func (p *protocolServer) requestsFor(t *testing.T, model string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i := 0; i < p.count(); i++ {
		if req := p.request(t, i); req["model"] == model {
			out = append(out, req)
		}
	}
	return out
}

// A fan-out to three subagents, one of which fails at its provider and one of which loops
// through a tool: the parent cannot resume while a child waits for its tool, and its
// resume request then holds both reports and the compact failure, and none of the
// children's tasks, answers or raw tool results.
func TestSubagentsFanOutFailureAndResume(t *testing.T) {
	const rawRows = "RAW-SHEET-ROWS-991"
	openai := newProtocolServer(t, "/v1/chat/completions", scouts(rawRows))
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+openai.URL+`/v1", apiKeyEnv: OPENAI_KEY, maxRetries: 0}
`)...)
	_, branch, ids := h.conversationWith([3]string{"lead", "openai", "m-lead"}, [3]string{"web", "openai", "m-web"},
		[3]string{"sheet", "openai", "m-sheet"}, [3]string{"pdf", "openai", "m-pdf"})
	delegate := map[string]any{"name": "delegate", "parameters": map[string]any{"type": "object"}}
	turn := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[:1],
		"userMessage": map[string]any{"content": "Brief me on e-bike pilots."}, "tools": []any{delegate}})
	parent := first(turn, "runs")
	if str(parent, "status") != "awaiting_tools" {
		t.Fatalf("the lead's turn: %v", parent)
	}
	parentRun := str(parent, "runId")
	h.expectError(h.call("POST", "/v1/runs/"+parentRun+"/resume", map[string]any{}), 409, "conflict", "")

	const webTask, sheetTask = "TASK-WEB: find pilot evaluations", "TASK-SHEET: read the pilots sheet"
	fan := h.must(201, "POST", "/v1/runs/"+parentRun+"/subagents", map[string]any{"children": []any{
		map[string]any{"participantId": ids[1], "task": webTask},
		map[string]any{"participantId": ids[2], "task": sheetTask, "tools": []any{sheetTool}},
		map[string]any{"participantId": ids[3], "task": "TASK-PDF: extract the PDF tables"},
	}})
	children := fan["runs"].([]any)
	status := map[string]string{}
	for _, v := range children {
		r := v.(map[string]any)
		status[names(ids)[str(r, "participantId")]] = str(r, "status")
		run := h.must(200, "GET", "/v1/runs/"+str(r, "runId"), nil)
		if str(run, "parentRunId") != parentRun || str(run, "runtimeKind") != "subagent" {
			t.Errorf("child run %v is not a subagent CHILD_OF %s", run, parentRun)
		}
	}
	if status["web"] != "completed" || status["sheet"] != "awaiting_tools" || status["pdf"] != "failed" {
		t.Fatalf("children: %v", status)
	}
	sheet := children[1].(map[string]any)
	r := h.call("POST", "/v1/runs/"+parentRun+"/resume", map[string]any{})
	h.expectError(r, 409, "conflict", "children")
	if !strings.Contains(string(r.body), str(sheet, "runId")) {
		t.Fatalf("the 409 does not name the running child %s: %s", str(sheet, "runId"), r.body)
	}
	h.must(201, "POST", "/v1/tool-calls/"+str(first(sheet, "toolCalls"), "id")+"/result", map[string]any{
		"status": "succeeded", "result": map[string]any{"rows": rawRows}})
	if done := first(h.must(200, "POST", "/v1/runs/"+str(sheet, "runId")+"/continue", map[string]any{}), "runs"); str(done, "status") != "completed" {
		t.Fatalf("the sheet scout's continue: %v", done)
	}

	resumed := first(h.must(200, "POST", "/v1/runs/"+parentRun+"/resume", map[string]any{}), "runs")
	if str(resumed, "status") != "completed" || str(resumed, "runId") != parentRun {
		t.Fatalf("resume: %v", resumed)
	}
	leads := openai.requestsFor(t, "m-lead")
	req := fmtMessages(leads[len(leads)-1])
	for _, want := range []string{"WEB-REPORT", "SHEET-REPORT", "The subagent failed", "waiting_for_subagents"} {
		if !strings.Contains(req, want) {
			t.Errorf("the resume request lacks %q: %s", want, req)
		}
	}
	for _, never := range []string{rawRows, webTask, sheetTask, "TASK-PDF"} {
		if strings.Contains(req, never) {
			t.Errorf("the resume request holds a child's workspace (%q): %s", never, req)
		}
	}
	// A child sees its own task, never a sibling's.
	web := fmtMessages(openai.requestsFor(t, "m-web")[0])
	if !strings.Contains(web, webTask) || strings.Contains(web, sheetTask) {
		t.Errorf("the web scout's request: %s", web)
	}
	a := h.must(200, "GET", "/v1/assemblies/"+str(resumed, "assemblyId"), nil)
	if str(a["request"].(map[string]any), "runtimeKind") != "parent_resume" {
		t.Errorf("the resume's assembly: %v", a["request"])
	}
	for _, v := range append(children, resumed) {
		h.checkStory(str(v.(map[string]any), "assemblyId"))
	}
}

// scouts scripts the models of a fan-out: m-lead delegates with a tool call until its
// request holds a subagent report, then merges; m-web reports; m-sheet reads its sheet
// with a tool, then reports once its request holds rawRows; any other model fails at its
// provider.
func scouts(rawRows string) func(n int, req map[string]any) (int, map[string]string, any) {
	return func(n int, req map[string]any) (int, map[string]string, any) {
		msgs := fmtMessages(req)
		switch req["model"] {
		case "m-lead":
			if strings.Contains(msgs, "Subagent report") {
				return 200, nil, openAIText("Brief: merged the scouts' reports.")
			}
			return 200, nil, openAIToolCall("call_delegate", "delegate", `{"scouts":3}`)
		case "m-web":
			return 200, nil, openAIText("WEB-REPORT: median 1.6 trips per bike per day.")
		case "m-sheet":
			if strings.Contains(msgs, rawRows) {
				return 200, nil, openAIText("SHEET-REPORT: six pilots in the sheet.")
			}
			return 200, nil, openAIToolCall("call_sheet", "sheet_read", `{"sheet":"pilots"}`)
		}
		return 500, nil, map[string]any{"error": map[string]any{"message": "pdf scout exploded", "type": "server_error"}}
	}
}

func names(ids []string) map[string]string {
	return map[string]string{ids[0]: "lead", ids[1]: "web", ids[2]: "sheet", ids[3]: "pdf"}
}

// A discussion continued on a fork: a fork after the first round's last answer, discussed
// on, sees the first round and its own directive, and never what the main branch said
// after the fork point; the main branch never sees the fork's discussion.
func TestDiscussionContinuedOnAFork(t *testing.T) {
	openai := newProtocolServer(t, "/v1/chat/completions", func(n int, req map[string]any) (int, map[string]string, any) {
		return 200, nil, openAIText(fmt.Sprintf("answer %d from %s", n, req["model"]))
	})
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+openai.URL+`/v1", apiKeyEnv: OPENAI_KEY, maxRetries: 0}
`)...)
	conv, branch, ids := h.conversationWith([3]string{"ada", "openai", "m-ada"}, [3]string{"bo", "openai", "m-bo"})
	round := h.must(201, "POST", "/v1/discussions", map[string]any{"branchId": branch, "participantIds": ids,
		"directive": "MAIN-DIRECTIVE: one point each.", "topic": map[string]any{"content": "Ship on Friday?"}})
	runs := round["runs"].([]any)
	forkAfter := str(runs[len(runs)-1].(map[string]any)["message"].(map[string]any), "id")
	// The main branch goes on after the fork point.
	h.must(201, "POST", "/v1/discussions", map[string]any{"branchId": branch, "participantIds": ids,
		"directive": "MAIN-LATER: now argue the opposite."})
	mainLater := openai.count()
	fork := str(h.must(201, "POST", "/v1/conversations/"+conv+"/branches",
		map[string]any{"parentBranchId": branch, "forkAfterMessageId": forkAfter, "name": "what-if"}), "id")
	onFork := h.must(201, "POST", "/v1/discussions", map[string]any{"branchId": fork, "participantIds": ids,
		"directive": "FORK-DIRECTIVE: assume the release slips a week.", "rounds": 2})
	if n := len(onFork["runs"].([]any)); n != 4 {
		t.Fatalf("the fork's discussion ran %d runs, want 4", n)
	}
	for i := mainLater; i < openai.count(); i++ {
		body := string(openai.bodies[i])
		for _, want := range []string{"MAIN-DIRECTIVE", "FORK-DIRECTIVE", "Ship on Friday?", "answer 1 from m-bo"} {
			if !strings.Contains(body, want) {
				t.Errorf("fork request %d lacks %q: %s", i, want, body)
			}
		}
		if strings.Contains(body, "MAIN-LATER") || strings.Contains(body, "answer 2 from") || strings.Contains(body, "answer 3 from") {
			t.Errorf("fork request %d holds what main said after the fork: %s", i, body)
		}
	}
	for _, v := range onFork["runs"].([]any) {
		h.checkStory(str(v.(map[string]any), "assemblyId"))
	}
	// Back on main, nothing of the fork's discussion.
	h.must(201, "POST", "/v1/discussions", map[string]any{"branchId": branch, "participantIds": ids[:1], "directive": "MAIN-LAST"})
	if last := string(openai.bodies[openai.count()-1]); strings.Contains(last, "FORK-DIRECTIVE") || !strings.Contains(last, "MAIN-LATER") {
		t.Errorf("main's request after the fork's discussion: %s", last)
	}
}
