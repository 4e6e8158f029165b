package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

// Every route that takes a body rejects a key it has no field for, with 400 naming it, and
// writes nothing; the misspelt title of issue 18 made an untitled conversation. The drop-in
// routes speak a vendor's protocol, whose SDKs send fields ctxgraph does not read
// (`parallel_tool_calls`, `store`, `service_tier`…): they ignore them, as the vendors'
// compatible servers do, and still write nothing for a body they refuse.
func TestUnknownFieldsAreRejectedOnEveryRoute(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	before := cypherCount(t, `MATCH (n {accountId: $a}) RETURN count(n)`, map[string]any{"a": h.account})
	withBody := 0
	for _, route := range h.srv.Routes() {
		method, path, _ := strings.Cut(route, " ")
		if method != "POST" && method != "PATCH" || path == "/v1/assemblies/{id}/replay" {
			continue // no body
		}
		if strings.HasPrefix(path, "/v1/openai/") || strings.HasPrefix(path, "/v1/anthropic/") {
			r := h.call(method, path, map[string]any{"titel": "x"})
			if r.status != 400 {
				t.Errorf("%s %s with no messages: got %d %s, want 400", method, path, r.status, r.body)
			}
			continue
		}
		withBody++
		path = strings.ReplaceAll(path, "{id}", idFor(w, path))
		h.expectError(h.call(method, path, map[string]any{"titel": "x"}), 400, "invalid", "titel")
	}
	if withBody < 12 {
		t.Errorf("checked %d routes with a body, want every one (at least 12)", withBody)
	}
	// A misspelt key inside a list names its place.
	h.expectError(h.call("POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded",
		"memories": []map[string]any{{"summary": "ok"}, {"summary": "ok", "confidense": 0.5}}}), 400, "invalid", "memories[1].confidense")
	if after := cypherCount(t, `MATCH (n {accountId: $a}) RETURN count(n)`, map[string]any{"a": h.account}); after != before {
		t.Errorf("rejected requests wrote %d nodes", after-before)
	}
}

// idFor is a real id of w for the {id} of path, by the route's first segment.
func idFor(w world, path string) string {
	switch {
	case strings.HasPrefix(path, "/v1/conversations/"):
		return w.conv
	case strings.HasPrefix(path, "/v1/branches/"):
		return w.branch
	case strings.HasPrefix(path, "/v1/runs/"):
		return w.run
	case strings.HasPrefix(path, "/v1/tool-calls/"):
		return w.call
	}
	return "unknown"
}

// An exact artifact that is not the conversation's (unknown, or another account's) answers
// 404 naming exactArtifactIds; a zero budget is a 400; a budget below what the protected
// state needs says so instead of overrunning silently.
func TestAssemblyRequestsSayWhatTheyCannotDo(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	o := newHarness(t)
	ow := o.world()
	otherArt := str(o.must(201, "POST", "/v1/tool-calls/"+ow.call+"/result", map[string]any{"status": "succeeded", "result": "theirs"}), "artifactId")
	base := map[string]any{"branchId": w.branch, "participantId": w.participant, "runId": w.run}
	with := func(k string, v any) map[string]any {
		out := map[string]any{k: v}
		for kk, vv := range base {
			out[kk] = vv
		}
		return out
	}
	for _, ids := range [][]string{{"art_does_not_exist"}, {otherArt}} {
		h.expectError(h.call("POST", "/v1/assemblies", with("exactArtifactIds", ids)), 404, "not_found", "exactArtifactIds")
	}
	h.expectError(h.call("POST", "/v1/assemblies", with("tokenBudget", 0)), 400, "invalid", "tokenBudget")

	// The run's call is pending: protected. A budget of one token cannot hold it.
	a := h.must(201, "POST", "/v1/assemblies", with("tokenBudget", 1))
	tokens := a["tokens"].(map[string]any)
	if a["overBudget"] != true || num(tokens, "protected") != num(tokens, "assembled") || num(tokens, "assembled") <= 1 {
		t.Errorf("budget 1 with a pending call: got overBudget %v, tokens %v; want overBudget and protected = assembled > 1", a["overBudget"], tokens)
	}
	if got := includedAs(a)[w.call]; got != "recovery" {
		t.Errorf("the pending call under budget 1: included as %q, want recovery (never trimmed)", got)
	}
	fits := h.must(201, "POST", "/v1/assemblies", with("tokenBudget", 8000))
	if _, ok := fits["overBudget"]; ok {
		t.Errorf("an assembly within its budget says overBudget: %v", fits["overBudget"])
	}
}

func num(m map[string]any, k string) float64 {
	f, _ := m[k].(float64)
	return f
}

// A pending call whose tool answered with a handle (an envelope id) keeps it in its
// recovery state, on its branch and on a fork made after it: the request never says there
// is no result, and carries the id a resume needs.
func TestPendingCallKeepsItsHandleAcrossAFork(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	art := str(h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "pending",
		"result": map[string]any{"envelopeId": "env-7731", "state": "sent"}}), "artifactId")
	after := str(h.must(201, "POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "is it signed yet?"}), "id")
	fork := str(h.must(201, "POST", "/v1/conversations/"+w.conv+"/branches",
		map[string]any{"parentBranchId": w.branch, "forkAfterMessageId": after, "name": "retry-path"}), "id")
	for _, branch := range []string{w.branch, fork} {
		a := h.must(201, "POST", "/v1/assemblies", map[string]any{"branchId": branch, "participantId": w.participant, "runId": w.run, "trace": true})
		text := messagesText(a)
		if !strings.Contains(text, "env-7731") || strings.Contains(text, "no result yet") {
			t.Errorf("branch %s: the request lost the handle or says there is none:\n%s", branch, text)
		}
		if got := includedAs(a)[art]; got != "raw" {
			t.Errorf("branch %s: the handle's artifact is included as %q, want raw", branch, got)
		}
		ex := h.must(200, "GET", "/v1/assemblies/"+str(a, "id")+"/explain?ref="+art, nil)
		if str(ex, "rule") != "recovery.handle_raw" {
			t.Errorf("branch %s: explain says %v, want rule recovery.handle_raw", branch, ex)
		}
	}
}

func messagesText(a map[string]any) string {
	var b strings.Builder
	for _, m := range a["messages"].([]any) {
		b.WriteString(str(m.(map[string]any), "content") + "\n")
	}
	return b.String()
}

// A child that read Google data promotes its report beside a google_derived memory (with a
// safe summary of its own): the parent resumes, on a provider that may not see Google data,
// with its child's answer. The report takes the class the promotion names, else the
// strictest promoted artifact's; memories do not restrict it.
func TestChildReportReachesTheParentBesideRestrictedMemories(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	child := str(h.must(201, "POST", "/v1/branches/"+w.branch+"/runs", map[string]any{"participantId": w.participant, "runtimeKind": "subagent", "parentRunId": w.run}), "id")
	call := str(h.must(201, "POST", "/v1/runs/"+child+"/tool-calls", map[string]any{"tool": "gmail_search", "arguments": map[string]any{"q": "invoice"}}), "id")
	res := h.must(201, "POST", "/v1/tool-calls/"+call+"/result", map[string]any{"status": "succeeded", "privacyClass": "google_derived",
		"result":   map[string]any{"from": "billing@acme.test", "total": "4,210 EUR"},
		"memories": []map[string]any{{"summary": "ACME invoice from billing@acme.test: 4,210 EUR", "safeSummary": "an ACME invoice was found"}}})
	mem := res["memoryIds"].([]any)[0].(string)
	h.must(200, "PATCH", "/v1/runs/"+child, map[string]any{"status": "completed"})

	// Promoted beside the memory only: the report is not restricted by it.
	plain := str(h.must(201, "POST", "/v1/runs/"+child+"/promote", map[string]any{"memoryIds": []string{mem},
		"report": "Found the ACME invoice; the total is in the promoted memory."}), "reportId")
	// With the artifact, the report takes its class; the promotion may name a class and a
	// safe summary instead.
	strict := str(h.must(201, "POST", "/v1/runs/"+child+"/promote", map[string]any{"artifactIds": []string{str(res, "artifactId")},
		"report": "Quoted the invoice: billing@acme.test, 4,210 EUR."}), "reportId")
	named := str(h.must(201, "POST", "/v1/runs/"+child+"/promote", map[string]any{"artifactIds": []string{str(res, "artifactId")},
		"report": "Invoice total 4,210 EUR from billing@acme.test.", "privacyClass": "google_derived", "safeSummary": "the child found the invoice total"}), "reportId")
	for id, want := range map[string]string{plain: model.DefaultPrivacyClass, strict: "google_derived", named: "google_derived"} {
		if got := str(h.must(200, "GET", "/v1/memories/"+id, nil), "privacyClass"); got != want {
			t.Errorf("report %s: privacy class %q, want %q", id, got, want)
		}
	}

	a := h.must(201, "POST", "/v1/assemblies", map[string]any{"branchId": w.branch, "participantId": w.participant, "runId": w.run,
		"runtimeKind": "parent_resume", "provider": "openai", "trace": true})
	as := includedAs(a)
	if as[plain] != "memory" || as[named] != "safe_summary" || as[mem] != "safe_summary" {
		t.Errorf("parent resume for openai: reports %s=%q, %s=%q, memory %q; want the plain report as memory, the named one and the memory as safe_summary",
			plain, as[plain], named, as[named], as[mem])
	}
	if text := messagesText(a); strings.Contains(text, "billing@acme.test") {
		t.Errorf("Google data reached openai:\n%s", text)
	}
}

// Omissions are visible to Cypher: every assembly counts them by reason in properties
// (omittedWindow, ...; 0 included), and a traced one links every omitted record with
// OMITTED {reason, rule}, agreeing with omittedRefs and explain.
func TestOmissionsAreVisibleInTheGraph(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	for i := range 12 {
		h.must(201, "POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": fmt.Sprint("older turn ", i)})
	}
	fork := str(h.must(201, "POST", "/v1/conversations/"+w.conv+"/branches",
		map[string]any{"parentBranchId": w.branch, "forkAfterMessageId": w.message, "name": "side"}), "id")
	h.must(201, "POST", "/v1/branches/"+fork+"/messages", map[string]any{"role": "user", "content": "on the side branch"})
	for _, trace := range []bool{false, true} {
		a := h.must(201, "POST", "/v1/assemblies", map[string]any{"branchId": w.branch, "participantId": w.participant, "trace": trace})
		id := str(a, "id")
		omitted := a["omitted"].(map[string]any)
		for _, reason := range model.OmissionReasons {
			want, _ := omitted[reason].(float64)
			got := cypherCount(t, "MATCH (a:ContextAssembly {id: $id}) RETURN a."+model.OmittedCountProperty(reason), map[string]any{"id": id})
			if got != int64(want) {
				t.Errorf("trace %v: %s = %d, want %v as in omitted", trace, model.OmittedCountProperty(reason), got, want)
			}
		}
		edges := cypherQuery(t, `MATCH (:ContextAssembly {id: $id})-[o:OMITTED]->(n) RETURN n.id, o.reason, o.rule`, map[string]any{"id": id})
		if !trace {
			if len(edges) != 0 {
				t.Errorf("an untraced assembly has %d OMITTED edges, want none", len(edges))
			}
			continue
		}
		refs := a["omittedRefs"].([]any)
		if len(edges) != len(refs) || len(refs) == 0 {
			t.Fatalf("traced: %d OMITTED edges for %d omitted refs, want one each (and some)", len(edges), len(refs))
		}
		reasons := map[string]string{}
		for _, r := range refs {
			reasons[str(r.(map[string]any), "ref")] = str(r.(map[string]any), "reason")
		}
		for _, e := range edges {
			ref, reason, rule := e.Values[0].(string), e.Values[1].(string), e.Values[2].(string)
			ex := h.must(200, "GET", "/v1/assemblies/"+id+"/explain?ref="+ref, nil)
			if reasons[ref] != reason || str(ex, "reason") != reason || str(ex, "rule") != rule {
				t.Errorf("%s: OMITTED {%s, %s}, omittedRefs %s, explain {%s, %s}; want one story", ref, reason, rule, reasons[ref], str(ex, "reason"), str(ex, "rule"))
			}
		}
	}
}
