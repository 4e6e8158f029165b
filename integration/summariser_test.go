package integration

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/policy"
	"github.com/ctxgraph/ctxgraph/provider"
)

// summarisingPolicy is the default version with a model summariser: the version a team
// creates (POST /v1/policies) to have its results summarised.
func summarisingPolicy(t *testing.T, providerName, modelName string) policy.Version {
	t.Helper()
	v, err := policy.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	rules := *v.Promotion
	rules.Summarizer = &policy.Summarizer{Provider: providerName, Model: modelName}
	v.Name, v.Description, v.Promotion = "summarised", "The default, with a model summariser of tool results.", &rules
	return policy.Define(v)
}

// newSummariserHarness is a harness with the given providers whose account creates v's
// promotion rules over the server's default and makes that its default (DESIGN §8), so
// that its results are promoted, and summarised, under them.
func newSummariserHarness(t *testing.T, v policy.Version, providers []provider.Config) *harness {
	t.Helper()
	h := newHarnessFull(t, sharedStore, "", providers)
	created := h.must(http.StatusCreated, "POST", "/v1/policies", map[string]any{
		"name": v.Name, "basedOn": "default", "description": v.Description, "promotion": v.Promotion})
	h.must(http.StatusOK, "PUT", "/v1/policies/default", map[string]any{"policyVersion": created["id"]})
	return h
}

// waitSummaries waits for the summarisations the harness's server started.
func (h *harness) waitSummaries() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.summariser.Wait(ctx); err != nil {
		h.t.Fatalf("the summariser did not finish within a minute: %v", err)
	}
}

// extractionRuns lists the memory_extraction runs of a conversation with their status,
// error code, participant, provider and model, and the assemblies FOR_RUN each.
func extractionRuns(t *testing.T, conv string) []map[string]any {
	t.Helper()
	recs := cypherQuery(t, `MATCH (r:ModelRun {conversationId: $conv, runtimeKind: 'memory_extraction'})
		OPTIONAL MATCH (a:ContextAssembly)-[:FOR_RUN]->(r)
		RETURN r.id AS id, r.status AS status, r.errorCode AS errorCode, r.providerStatus AS providerStatus,
		       r.participantId AS participant, r.provider AS provider, r.model AS model,
		       collect(a.id) AS assemblies, collect(a.requestSha256) AS shas`, map[string]any{"conv": conv})
	out := make([]map[string]any, 0, len(recs))
	for _, rec := range recs {
		out = append(out, rec.AsMap())
	}
	return out
}

const invoiceSummary = "Invoice INV-2291 for ACME GmbH: 4,217.50 EUR, status paid on 2026-10-28."

// invoiceResult is too large to quote whole: its structural memory is a digest, which the
// summariser may improve on (a result quoted whole is never summarised).
var invoiceResult = func() map[string]any {
	lines := []any{map[string]any{"sku": "K-77", "qty": 3}, map[string]any{"sku": "K-78", "qty": 1}}
	for i := 100; i < 160; i++ {
		lines = append(lines, map[string]any{"sku": fmt.Sprintf("K-%d", i), "qty": i % 7, "note": "restocked from the Hamburg warehouse"})
	}
	return map[string]any{"invoice": "INV-2291", "customer": "ACME GmbH", "amount": "4,217.50 EUR",
		"status": "paid", "paidAt": "2026-10-28", "lines": lines}
}()

// The summariser end to end against an OpenAI-compatible server that answers a known
// summary: the structural memory is superseded by the summariser's, which keeps its
// provenance; the run is memory_extraction with its own assembly; later assemblies show
// the summary, not the structural memory.
func TestSummariserSupersedesTheStructuralMemory(t *testing.T) {
	fake := newProtocolServer(t, "/v1/chat/completions", func(n int, _ map[string]any) (int, map[string]string, any) {
		return 200, nil, openAIText(invoiceSummary)
	})
	v := summarisingPolicy(t, "openai", "gpt-4.1-mini")
	h := newSummariserHarness(t, v, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+fake.URL+`/v1", maxRetries: 0}
`))
	w := h.world()
	res := h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{
		"status": "succeeded", "result": invoiceResult, "privacyClass": "internal"})
	artifact := str(res, "artifactId")
	ids, _ := res["memoryIds"].([]any)
	if len(ids) != 1 {
		t.Fatalf("got memoryIds %v, want the structural memory", res["memoryIds"])
	}
	structuralID := ids[0].(string)
	h.waitSummaries()

	structural := h.must(200, "GET", "/v1/memories/"+structuralID, nil)
	by, _ := structural["supersededBy"].([]any)
	if str(structural, "promotionPolicy") != "promotion.structural" || len(by) != 1 {
		t.Fatalf("got structural memory %v, want it promotion.structural and superseded once", structural)
	}
	summary := h.must(200, "GET", "/v1/memories/"+by[0].(string), nil)
	if got, want := str(summary, "summary"), invoiceSummary; got != want {
		t.Errorf("got summary %q, want %q", got, want)
	}
	if got := str(summary, "promotionPolicy"); got != "promotion.summarizer" {
		t.Errorf("got promotionPolicy %q, want promotion.summarizer", got)
	}
	if got := str(summary, "confidenceSource"); got != "model:openai/gpt-4.1-mini" {
		t.Errorf("got confidenceSource %q, want model:openai/gpt-4.1-mini", got)
	}
	if got := summary["supersedes"]; !reflect.DeepEqual(got, []any{structuralID}) {
		t.Errorf("got supersedes %v, want [%s]", got, structuralID)
	}
	if got := summary["derivedFrom"]; !reflect.DeepEqual(got, []any{artifact}) {
		t.Errorf("got derivedFrom %v, want [%s]", got, artifact)
	}
	for _, k := range []string{"provenanceLocators", "privacyClass", "visibility", "freshnessClass", "safeSummary", "ownerParticipantId"} {
		if !reflect.DeepEqual(summary[k], structural[k]) {
			t.Errorf("got %s %v, want the structural memory's %v", k, summary[k], structural[k])
		}
	}

	// The run: memory_extraction by the artifact's owner, with the summariser's provider
	// and model, completed, with one assembly FOR_RUN it that records the body sent.
	runs := extractionRuns(t, w.conv)
	if len(runs) != 1 {
		t.Fatalf("got %d memory_extraction runs, want 1: %v", len(runs), runs)
	}
	run := runs[0]
	if run["status"] != "completed" || run["participant"] != w.participant || run["provider"] != "openai" || run["model"] != "gpt-4.1-mini" {
		t.Errorf("got run %v, want completed by %s with openai/gpt-4.1-mini", run, w.participant)
	}
	if shas := run["shas"].([]any); len(shas) != 1 || shas[0] != fake.sha256(0) {
		t.Errorf("got assemblies %v with request sha256 %v, want one recording %s", run["assemblies"], shas, fake.sha256(0))
	}
	asm := h.must(200, "GET", "/v1/assemblies/"+run["assemblies"].([]any)[0].(string), nil)
	req, _ := asm["request"].(map[string]any)
	if got := includedAs(asm)[artifact]; got != "raw" || str(req, "runtimeKind") != "memory_extraction" || str(req, "runId") != run["id"] {
		t.Errorf("got the artifact included as %q in assembly request %v, want raw in a memory_extraction assembly of run %v", got, req, run["id"])
	}

	// What the provider got: the instruction, the call and the raw result.
	if fake.count() != 1 {
		t.Fatalf("the provider got %d requests, want 1", fake.count())
	}
	body := string(fake.bodies[0])
	for _, want := range []string{"INV-2291", "4,217.50 EUR", "K-78", "sheet_read", "exactly"} {
		if !strings.Contains(body, want) {
			t.Errorf("the summariser's request does not hold %q: %s", want, body)
		}
	}

	// A later assembly shows the summary, not the structural memory.
	later := includedAs(h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "provider": "openai", "tokenBudget": 4000}))
	if _, ok := later[by[0].(string)]; !ok || later[structuralID] != "" {
		t.Errorf("got a later assembly including %v, want the summary %s and not the structural memory %s", later, by[0], structuralID)
	}

	// A memory the client writes afterwards from the same artifact replaces the summary too.
	client := h.must(201, "POST", "/v1/memories", map[string]any{"derivedFrom": []string{artifact}, "summary": "INV-2291 paid"})
	if got := h.must(200, "GET", "/v1/memories/"+by[0].(string), nil)["supersededBy"]; !reflect.DeepEqual(got, []any{str(client, "id")}) {
		t.Errorf("got the summary supersededBy %v, want the client's memory %s", got, str(client, "id"))
	}
}

// A summariser whose provider fails leaves the structural memory current; its run is
// recorded failed with the provider's error.
func TestSummariserProviderFailureKeepsTheStructuralMemory(t *testing.T) {
	fake := newProtocolServer(t, "/v1/chat/completions", func(n int, _ map[string]any) (int, map[string]string, any) {
		return 500, nil, map[string]any{"error": map[string]any{"message": "the summariser is down", "type": "server_error"}}
	})
	h := newSummariserHarness(t, summarisingPolicy(t, "openai", "gpt-4.1-mini"), providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+fake.URL+`/v1", maxRetries: 0}
`))
	w := h.world()
	res := h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{
		"status": "succeeded", "result": invoiceResult, "privacyClass": "internal"})
	structuralID := res["memoryIds"].([]any)[0].(string)
	h.waitSummaries()

	if fake.count() != 1 {
		t.Errorf("the provider got %d requests, want 1", fake.count())
	}
	runs := extractionRuns(t, w.conv)
	if len(runs) != 1 || runs[0]["status"] != "failed" || runs[0]["errorCode"] == nil || runs[0]["providerStatus"] != int64(500) {
		t.Fatalf("got runs %v, want one failed with the provider's 500", runs)
	}
	if len(runs[0]["assemblies"].([]any)) != 1 {
		t.Errorf("got assemblies %v, want the one its request was built from", runs[0]["assemblies"])
	}
	structural := h.must(200, "GET", "/v1/memories/"+structuralID, nil)
	if by, _ := structural["supersededBy"].([]any); len(by) != 0 {
		t.Fatalf("got the structural memory superseded by %v, want it current", by)
	}
	if n := cypherCount(t, `MATCH (m:ToolMemory {conversationId: $conv, promotionPolicy: 'promotion.summarizer'}) RETURN count(m)`,
		map[string]any{"conv": w.conv}); n != 0 {
		t.Errorf("got %d summariser memories, want none", n)
	}
	later := includedAs(h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "provider": "openai", "tokenBudget": 4000}))
	if _, ok := later[structuralID]; !ok {
		t.Errorf("got a later assembly including %v, want the structural memory %s", later, structuralID)
	}
}

// A result of a class the summariser's provider may not receive is never sent to it, and
// no run is recorded: secret never reaches any provider, google_derived not this one; nor is
// a result quoted whole, which a summary could only paraphrase.
func TestSummariserNeverSendsARestrictedClass(t *testing.T) {
	fake := newProtocolServer(t, "/v1/chat/completions", func(n int, _ map[string]any) (int, map[string]string, any) {
		return 200, nil, openAIText(invoiceSummary)
	})
	h := newSummariserHarness(t, summarisingPolicy(t, "openai", "gpt-4.1-mini"), providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+fake.URL+`/v1", maxRetries: 0}
`))
	w := h.world()
	// Two classes its provider may not receive, and a result small enough to be quoted whole
	// (a summary could only paraphrase it).
	for i, post := range []struct {
		class  string
		result any
	}{{"google_derived", invoiceResult}, {"secret", invoiceResult}, {"internal", map[string]any{"invoice": "INV-2291", "status": "paid"}}} {
		call := w.call
		if i > 0 {
			call = str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read",
				"arguments": map[string]any{"sheet": fmt.Sprintf("q%d", i)}}), "id")
		}
		res := h.must(201, "POST", "/v1/tool-calls/"+call+"/result", map[string]any{
			"status": "succeeded", "result": post.result, "privacyClass": post.class})
		if ids, _ := res["memoryIds"].([]any); len(ids) != 1 {
			t.Fatalf("%s: got memoryIds %v, want the structural memory", post.class, res["memoryIds"])
		}
	}
	h.waitSummaries()
	if fake.count() != 0 {
		t.Errorf("the provider got %d requests, want none: %s", fake.count(), fake.bodies[0])
	}
	if runs := extractionRuns(t, w.conv); len(runs) != 0 {
		t.Errorf("got memory_extraction runs %v, want none", runs)
	}
}

// The summariser against llm-katan, an OpenAI-compatible server nobody here wrote: its echo
// backend answers deterministically, so the test asserts on the structure, not the words.
func TestSummariserAgainstLLMKatan(t *testing.T) {
	k := startKatan(t)
	h := newSummariserHarness(t, summarisingPolicy(t, "openai", "ctxgraph-test"), k.providers(t, 0))
	w := h.world()
	before := k.requests(t)
	res := h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{
		"status": "succeeded", "result": invoiceResult, "privacyClass": "internal"})
	artifact, structuralID := str(res, "artifactId"), res["memoryIds"].([]any)[0].(string)
	h.waitSummaries()

	if got := k.requests(t) - before; got != 1 {
		t.Errorf("llm-katan got %d requests, want 1", got)
	}
	by, _ := h.must(200, "GET", "/v1/memories/"+structuralID, nil)["supersededBy"].([]any)
	if len(by) != 1 {
		t.Fatalf("got the structural memory superseded by %v, want the summariser's memory", by)
	}
	summary := h.must(200, "GET", "/v1/memories/"+by[0].(string), nil)
	t.Logf("llm-katan's summary: %q", str(summary, "summary"))
	if str(summary, "summary") == "" || str(summary, "promotionPolicy") != "promotion.summarizer" ||
		str(summary, "confidenceSource") != "model:openai/ctxgraph-test" || !reflect.DeepEqual(summary["derivedFrom"], []any{artifact}) {
		t.Errorf("got summary memory %v, want a promotion.summarizer memory of %s by openai/ctxgraph-test", summary, artifact)
	}
	runs := extractionRuns(t, w.conv)
	if len(runs) != 1 || runs[0]["status"] != "completed" || len(runs[0]["assemblies"].([]any)) != 1 {
		t.Errorf("got runs %v, want one completed memory_extraction run with its assembly", runs)
	}
}
