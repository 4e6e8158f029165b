package integration

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/model"
)

// assemblyWorld is a small conversation with one completed tool round (a memory), a
// superseded memory, and a failed retryable call.
type assemblyWorld struct {
	world
	memOld, memNew, failedCall, artifact string
}

func (h *harness) assemblyWorld() assemblyWorld {
	h.t.Helper()
	w := assemblyWorld{world: h.world()}
	res := h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{
		"status": "succeeded", "result": map[string]any{"rows": "EU,4.2M;US,7.9M"}, "privacyClass": "internal", "at": "2026-11-01T09:00:04Z",
		"memories": []map[string]any{{"summary": "Q3 revenue: EU 4.1M (preliminary)", "freshnessClass": "durable"}}})
	w.artifact = str(res, "artifactId")
	w.memOld = res["memoryIds"].([]any)[0].(string)
	w.memNew = str(h.must(201, "POST", "/v1/memories", map[string]any{"derivedFrom": []string{w.artifact},
		"summary": "Q3 revenue: EU 4.2M (final)", "supersedes": []string{w.memOld}, "freshnessClass": "durable", "at": "2026-11-01T09:00:05Z"}), "id")
	w.failedCall = str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "export_xlsx",
		"arguments": map[string]any{"idempotencyKey": "exp-7781"}, "at": "2026-11-01T09:00:06Z"}), "id")
	h.must(201, "POST", "/v1/tool-calls/"+w.failedCall+"/result", map[string]any{"status": "failed", "retryable": true,
		"error": map[string]any{"code": "QUOTA_EXCEEDED", "message": "retry after 60 s"}, "privacyClass": "internal", "at": "2026-11-01T09:00:07Z"})
	h.must(201, "POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "assistant", "content": "EU Q3 was 4.2M; the export failed.", "runId": w.run, "at": "2026-11-01T09:00:08Z"})
	h.must(200, "PATCH", "/v1/runs/"+w.run, map[string]any{"status": "completed", "at": "2026-11-01T09:00:09Z"})
	return w
}

func (h *harness) assemble(body map[string]any) map[string]any {
	h.t.Helper()
	return h.must(201, "POST", "/v1/assemblies", body)
}

func includedAs(a map[string]any) map[string]string {
	out := map[string]string{}
	for _, v := range a["included"].([]any) {
		inc := v.(map[string]any)
		out[str(inc, "ref")] = str(inc, "as")
	}
	return out
}

func TestAssemblyRecordExplainAndReplay(t *testing.T) {
	h := newHarness(t)
	w := h.assemblyWorld()
	a := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "tokenBudget": 4000,
		"now": "2026-11-01T10:00:00Z", "trace": true})
	got := includedAs(a)
	if got[w.memNew] != "memory" || got[w.failedCall] != "recovery" || got[w.memOld] != "" || got[w.artifact] != "" {
		t.Fatalf("got included %v, want the final memory, the failed call as recovery, not the superseded memory or the raw artifact", got)
	}
	if str(a, "policyVersion") == "" || !strings.HasPrefix(str(a, "policyVersion"), "default@") || str(a, "assemblerVersion") == "" {
		t.Errorf("got policy %q assembler %q, want the default version id with its hash", str(a, "policyVersion"), str(a, "assemblerVersion"))
	}
	tokens := a["tokens"].(map[string]any)
	if tokens["assembled"].(float64) <= 0 || tokens["baseline"].(float64) <= tokens["assembled"].(float64) {
		t.Errorf("got tokens %v, want 0 < assembled < baseline", tokens)
	}
	for _, k := range []string{"graph", "policy", "serialize"} {
		if _, ok := a["timingsMs"].(map[string]any)[k]; !ok {
			t.Errorf("timingsMs lacks %s", k)
		}
	}
	text := string(mustJSON(a["messages"]))
	for _, want := range []string{"QUOTA_EXCEEDED", "exp-7781", "EU 4.2M (final)"} {
		if !strings.Contains(text, want) {
			t.Errorf("messages lack %q: %s", want, text)
		}
	}
	if strings.Contains(text, "4.1M") || strings.Contains(text, "EU,4.2M;US,7.9M") {
		t.Errorf("messages carry the superseded figure or the raw rows: %s", text)
	}

	// The record reads back as answered.
	rec := h.must(200, "GET", "/v1/assemblies/"+str(a, "id"), nil)
	if string(mustJSON(rec["included"])) != string(mustJSON(a["included"])) {
		t.Errorf("the stored record's included list differs from the response")
	}

	// Explain: the superseded memory, with its provenance path to the participant.
	ex := h.must(200, "GET", "/v1/assemblies/"+str(a, "id")+"/explain?ref="+w.memOld, nil)
	if str(ex, "outcome") != "omitted" || str(ex, "reason") != "superseded" || str(ex, "rule") == "" || str(ex, "policyVersion") != str(a, "policyVersion") {
		t.Errorf("got explanation %v, want omitted superseded with its rule and the policy version", ex)
	}
	var path []string
	for _, s := range ex["provenancePath"].([]any) {
		path = append(path, str(s.(map[string]any), "type"))
	}
	if strings.Join(path, ">") != "ToolMemory>ToolArtifact>ToolCall>ModelRun>Participant" {
		t.Errorf("got provenance path %v, want memory > artifact > call > run > participant", path)
	}
	h.expectError(h.call("GET", "/v1/assemblies/"+str(a, "id")+"/explain", nil), 400, "invalid", "ref")
	h.expectError(h.call("GET", "/v1/assemblies/"+str(a, "id")+"/explain?ref=mem_nope", nil), 404, "not_found", "ref")

	// Writes after the assembly do not change its replay: asOf cuts the snapshot.
	h.must(201, "POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "and the US figure?"})
	h.must(201, "POST", "/v1/memories", map[string]any{"derivedFrom": []string{w.artifact}, "summary": "Q3 revenue: EU 4.3M (restated)", "supersedes": []string{w.memNew}})
	rep := h.must(200, "POST", "/v1/assemblies/"+str(a, "id")+"/replay", nil)
	if rep["identical"] != true {
		t.Errorf("replay after later writes got differences %v, want identical", rep["differences"])
	}
	// A fresh assembly sees the new state.
	b := includedAs(h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "now": "2026-11-01T10:00:00Z"}))
	if b[w.memNew] != "" {
		t.Errorf("a new assembly still includes the memory that was superseded since: %v", b)
	}

	// Another account sees none of it.
	h.expectError(h.callAs(h.otherKey, "GET", "/v1/assemblies/"+str(a, "id"), nil), 404, "not_found", "")
	h.expectError(h.callAs(h.otherKey, "POST", "/v1/assemblies", map[string]any{"branchId": w.branch, "participantId": w.participant}), 404, "not_found", "branchId")
}

func TestAssemblyRequestErrors(t *testing.T) {
	h := newHarness(t)
	w := h.assemblyWorld()
	cases := []struct {
		name        string
		body        map[string]any
		status      int
		code, field string
	}{
		{"unknown policy", map[string]any{"branchId": w.branch, "participantId": w.participant, "policyVersion": "lenient@v9"}, 400, "invalid", "policyVersion"},
		{"missing branch", map[string]any{"participantId": w.participant}, 400, "invalid", "branchId"},
		{"bad runtime kind", map[string]any{"branchId": w.branch, "participantId": w.participant, "runtimeKind": "batch"}, 400, "invalid", "runtimeKind"},
		{"negative budget", map[string]any{"branchId": w.branch, "participantId": w.participant, "tokenBudget": -1}, 400, "invalid", "tokenBudget"},
		{"bad now", map[string]any{"branchId": w.branch, "participantId": w.participant, "now": "noon"}, 400, "invalid", "now"},
		{"unknown participant", map[string]any{"branchId": w.branch, "participantId": "pt_nope"}, 404, "not_found", "participantId"},
		{"unknown run", map[string]any{"branchId": w.branch, "participantId": w.participant, "runId": "run_nope"}, 404, "not_found", "runId"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			h.expectError(h.call("POST", "/v1/assemblies", tc.body), tc.status, tc.code, tc.field)
		})
	}
	h.t = t
	pol := h.must(200, "GET", "/v1/policies", nil)
	var names []string
	for _, v := range pol["policies"].([]any) {
		names = append(names, str(v.(map[string]any), "name"))
	}
	if strings.Join(names, ",") != "default,strict-freshness" {
		t.Errorf("got policies %v, want default and strict-freshness", names)
	}
	strict := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "policyVersion": "strict-freshness"})
	if !strings.HasPrefix(str(strict, "policyVersion"), "strict-freshness@") {
		t.Errorf("got policy %q, want strict-freshness@<hash>", str(strict, "policyVersion"))
	}
}

func TestAssemblyStaysWithinTheBudgetAndKeepsRecovery(t *testing.T) {
	h := newHarness(t)
	w := h.assemblyWorld()
	for _, budget := range []int{60, 120, 400, 4000} {
		a := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "tokenBudget": budget, "now": "2026-11-01T10:00:00Z"})
		tokens := a["tokens"].(map[string]any)
		got := includedAs(a)
		if got[w.failedCall] != "recovery" {
			t.Errorf("budget %d: the failed call is not kept as recovery: %v", budget, got)
		}
		// Recovery and the current message are protected; everything else must fit.
		if budget >= 120 && tokens["assembled"].(float64) > float64(budget) {
			t.Errorf("budget %d: got %v assembled tokens", budget, tokens["assembled"])
		}
	}
}

func TestForkSeesCallsAsTheyWereAtTheForkPoint(t *testing.T) {
	h := newHarness(t)
	w := h.world() // user message, run, pending call
	m2 := str(h.must(201, "POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "assistant", "content": "Reading the sheet…", "runId": w.run}), "id")
	fork := str(h.must(201, "POST", "/v1/conversations/"+w.conv+"/branches", map[string]any{"parentBranchId": w.branch, "forkAfterMessageId": m2, "name": "before-result"}), "id")
	h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded", "result": map[string]any{"rows": 12}, "privacyClass": "internal"})

	onMain := includedAs(h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant}))
	if onMain[w.call] == "recovery" {
		t.Errorf("on main the call has its result; got it as recovery: %v", onMain)
	}
	onFork := h.assemble(map[string]any{"branchId": fork, "participantId": w.participant})
	if includedAs(onFork)[w.call] != "recovery" || !strings.Contains(string(mustJSON(onFork["messages"])), "A1:F200") {
		t.Errorf("on the fork the result was never recorded; got %v, want the call as recovery with its arguments", includedAs(onFork))
	}
}

func TestOpenCallsBeyondTheBudgetAreCompactedNeverDropped(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	calls := []string{w.call}
	for i := 0; i < 15; i++ {
		id := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "crm_lookup",
			"arguments": map[string]any{"query": strings.Repeat("account renewal status ", 12), "page": i}}), "id")
		calls = append(calls, id)
	}
	// In full, the open calls alone overflow the budget; compacted they fit.
	const budget = 800
	full := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "tokenBudget": 100000})
	if n := full["tokens"].(map[string]any)["assembled"].(float64); n <= budget {
		t.Fatalf("the full forms take %v tokens; the test needs them to overflow %d", n, budget)
	}
	a := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "tokenBudget": budget})
	got := includedAs(a)
	for _, c := range calls {
		if got[c] != "recovery" {
			t.Errorf("open call %s: got %q, want recovery", c, got[c])
		}
	}
	if n := a["tokens"].(map[string]any)["assembled"].(float64); n > budget {
		t.Errorf("got %v assembled tokens, want at most the budget %d", n, budget)
	}
	if !strings.Contains(string(mustJSON(a["messages"])), "details withheld for the budget") {
		t.Errorf("no open call was compacted although the full forms overflow the budget")
	}

	// Tighter still: even one line per call overflows, so the oldest are counted in one
	// summary line — every call still included, the total within the budget.
	const tight = 250
	b := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "tokenBudget": tight})
	got = includedAs(b)
	for _, c := range calls {
		if got[c] != "recovery" {
			t.Errorf("budget %d: open call %s: got %q, want recovery", tight, c, got[c])
		}
	}
	if n := b["tokens"].(map[string]any)["assembled"].(float64); n > tight {
		t.Errorf("budget %d: got %v assembled tokens", tight, n)
	}
	if text := string(mustJSON(b["messages"])); !strings.Contains(text, "older open calls, details withheld for the budget: crm_lookup pending") {
		t.Errorf("budget %d: no summary line of aggregated open calls in %s", tight, text)
	}
	ex := h.must(200, "GET", "/v1/assemblies/"+str(b, "id")+"/explain?ref="+calls[1], nil)
	if !strings.Contains(str(ex, "rule"), "+budget.recovery_aggregated") || str(ex, "outcome") != "included" {
		t.Errorf("explain of an aggregated call: got %v", ex)
	}
}

// TestAssemblyEdgesMatchTheRecord checks the graph side of a recorded assembly as a Browser
// reader finds it: one INCLUDED edge per included record, with its form, in order, for every
// kind of record (the run's skills and checkpoint too); and one ABOUT edge from each stored
// policy decision to each record it lists, written once however many assemblies the decision
// constrains. The edges are linked by the element ids the assembler read; with the record
// cache off they are looked up in the graph instead, which must link the same records.
func TestAssemblyEdgesMatchTheRecord(t *testing.T) {
	noCache := openStore(blobDir)
	defer noCache.Close(context.Background())
	noCache.SetRecordCache(0)
	for _, tc := range []struct {
		name  string
		store *cypher.Store
	}{{"cached", sharedStore}, {"no cache", noCache}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessWith(t, tc.store, "")
			w := h.assemblyWorld()
			run := str(h.must(201, "POST", "/v1/branches/"+w.branch+"/runs", map[string]any{"participantId": w.participant,
				"runtimeKind": "chat", "at": "2026-11-01T09:00:10Z"}), "id")
			h.must(201, "POST", "/v1/runs/"+run+"/skills", map[string]any{"loadedSkills": []string{"xlsx"}, "at": "2026-11-01T09:00:11Z"})
			h.must(201, "POST", "/v1/runs/"+run+"/checkpoints", map[string]any{"state": map[string]any{"step": 1}, "at": "2026-11-01T09:00:12Z"})
			a := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "runId": run, "tokenBudget": 4000,
				"now": "2026-11-01T10:00:00Z"})
			var want []string
			forms := map[string]bool{}
			for _, v := range a["included"].([]any) {
				inc := v.(map[string]any)
				want = append(want, str(inc, "ref")+" as "+str(inc, "as"))
				forms[str(inc, "as")] = true
			}
			if !forms["skills"] || !forms["checkpoint"] {
				t.Fatalf("got included %v, want the run's skills and checkpoint among them", want)
			}
			edges, err := tc.store.IncludedEdges(t.Context(), h.account, str(a, "id"))
			if err != nil {
				t.Fatal(err)
			}
			got := refsOf(edges)
			if len(want) < 3 || !reflect.DeepEqual(got, want) {
				t.Errorf("INCLUDED edges:\n got %v\nwant %v", got, want)
			}

			rec, err := tc.store.Assembly(t.Context(), h.account, str(a, "id"))
			if err != nil {
				t.Fatal(err)
			}
			wantAbout := decisionsOf(rec.Decisions)
			if !slices.Contains(wantAbout, w.failedCall+" recovery included recovery.unresolved_failed") {
				t.Fatalf("stored decisions %v: want the failed call's recovery among them", wantAbout)
			}
			// The same request again makes the same decisions: the second assembly links the
			// stored ones, which keep their ABOUT edges as they were.
			again := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "runId": run, "tokenBudget": 4000,
				"now": "2026-11-01T10:00:00Z"})
			for _, id := range []string{str(a, "id"), str(again, "id")} {
				about, err := tc.store.DecisionEdges(t.Context(), h.account, id)
				if err != nil {
					t.Fatal(err)
				}
				if got := decisionsOf(about); !reflect.DeepEqual(got, wantAbout) {
					t.Errorf("assembly %s: ABOUT edges of its decisions:\n got %v\nwant %v", id, got, wantAbout)
				}
			}
		})
	}
}

// decisionsOf lists decisions as "ref policy outcome rule", sorted.
func decisionsOf(ds []model.Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Ref+" "+string(d.Policy)+" "+d.Outcome+" "+string(d.Rule))
	}
	slices.Sort(out)
	return out
}

// TestConcurrentAssemblyRecords holds both of the store's record writers in their first
// transactions while more assemblies are submitted, so that those are written as one batch:
// each batched record gets its own INCLUDED edges, and a record that cannot be written (a
// duplicate id, another account's conversation, a request that has ended) fails alone while
// the others in its batch are written.
func TestConcurrentAssemblyRecords(t *testing.T) {
	for _, tc := range []struct {
		name      string
		duplicate bool
	}{{"batch commits", false}, {"batch fails and is written one by one", true}} {
		t.Run(tc.name, func(t *testing.T) {
			store := openStore(blobDir)
			defer store.Close(context.Background())
			h := newHarnessWith(t, store, "")
			w := h.assemblyWorld()
			first := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "tokenBudget": 4000,
				"now": "2026-11-01T10:00:00Z"})
			tmpl, err := store.Assembly(t.Context(), h.account, str(first, "id"))
			if err != nil {
				t.Fatal(err)
			}
			if len(tmpl.Included) < 3 {
				t.Fatalf("the template assembly included %d records, want at least 3", len(tmpl.Included))
			}
			// Without its decisions: a decision is MERGEd by its content, so the second
			// writer would wait for the lock the held first one has on it and never reach
			// the gate.
			tmpl.Decisions = nil

			gate := gateStatements(store)
			gate.arm("RecordAssemblies", 2)
			type submission struct {
				name, account, id string
				ctx               context.Context
				included          []model.IncludedItem
				want              model.Kind // "" for written
			}
			ended, cancel := context.WithCancel(t.Context())
			cancel()
			var subs []*submission
			for i := range 10 {
				// Each record names a different prefix of the template's records, so that
				// edges linked to the wrong assembly of the batch would show.
				n := 1 + i%len(tmpl.Included)
				subs = append(subs, &submission{name: fmt.Sprintf("record %d", i), account: h.account, ctx: t.Context(),
					id: fmt.Sprintf("asm_batch_%s_%d", randomHex(6), i), included: tmpl.Included[:n]})
			}
			subs[4].name, subs[4].account, subs[4].want = "another account's conversation", "acct-other-"+randomHex(4), model.KindNotFound
			subs[6].name, subs[6].ctx, subs[6].want = "an ended request", ended, model.KindUnavailable
			if tc.duplicate {
				subs[8].name, subs[8].id, subs[8].want = "a duplicate id", tmpl.ID, model.KindConflict
			}

			errs := make([]error, len(subs))
			var wg sync.WaitGroup
			submit := func(i int) {
				defer wg.Done()
				a := tmpl
				a.ID, a.Included, a.CreatedAt = subs[i].id, subs[i].included, time.Now().UTC()
				doc, err := model.EncodeJSON(a)
				if err != nil {
					t.Error(err)
				}
				errs[i] = store.RecordAssembly(subs[i].ctx, subs[i].account, a, doc)
			}
			// The first two occupy both writers; the rest queue behind them.
			for i := range 2 {
				wg.Add(1)
				go submit(i)
				gate.waitHeld()
			}
			for i := 2; i < len(subs); i++ {
				wg.Add(1)
				go submit(i)
			}
			waitUntil(t, "the records to queue behind the two held", func() bool { return store.QueuedRows("RecordAssemblies") == len(subs)-2 })
			gate.release()
			wg.Wait()

			for i, sub := range subs {
				got := model.Kind("")
				if errs[i] != nil {
					got = model.KindOf(errs[i])
				}
				if got != sub.want {
					t.Errorf("%s: got %q (%v), want %q", sub.name, got, errs[i], sub.want)
				}
				if sub.want == model.KindConflict {
					continue
				}
				if sub.want != "" {
					if _, err := store.Assembly(t.Context(), h.account, sub.id); model.KindOf(err) != model.KindNotFound {
						t.Errorf("%s: reading it back got %v, want not found: it must not be written", sub.name, err)
					}
					continue
				}
				edges, err := store.IncludedEdges(t.Context(), h.account, sub.id)
				if err != nil {
					t.Fatalf("%s: reading its edges: %v", sub.name, err)
				}
				if !reflect.DeepEqual(refsOf(edges), refsOf(sub.included)) {
					t.Errorf("%s: INCLUDED edges\n got %v\nwant %v", sub.name, refsOf(edges), refsOf(sub.included))
				}
			}
			if n := gate.runs.Load(); n < 3 {
				t.Errorf("RecordAssemblies ran %d times, want the two held and at least one batch", n)
			}
		})
	}
}

// refsOf lists included records as "ref as form".
func refsOf(items []model.IncludedItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Ref+" as "+it.As)
	}
	return out
}

// A write is stamped before it commits: one that commits after an assembly's read carries a
// time before the assembly's asOf, and the replay still sees what the assembly saw.
func TestReplayLeavesOutWritesCommittedAfterTheRead(t *testing.T) {
	store := openStore(blobDir)
	defer store.Close(context.Background())
	h := newHarnessWith(t, store, "")
	w := h.world()
	gate := gateStatements(store)
	gate.arm("AppendMessage", 1)
	written := make(chan response, 1)
	go func() {
		written <- h.call("POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "stamped before the read, committed after it"})
	}()
	gate.waitHeld()
	time.Sleep(10 * time.Millisecond) // the assembly's asOf is well after the message's stamp
	a := h.must(201, "POST", "/v1/assemblies", map[string]any{"branchId": w.branch, "participantId": w.participant})
	gate.release()
	if r := <-written; r.status != 201 {
		t.Fatalf("the held message: %d %s", r.status, r.body)
	}
	if rep := h.must(200, "POST", "/v1/assemblies/"+str(a, "id")+"/replay", nil); rep["identical"] != true {
		t.Fatalf("the replay sees a write the assembly's read did not: %v", rep["differences"])
	}
	later := h.must(201, "POST", "/v1/assemblies", map[string]any{"branchId": w.branch, "participantId": w.participant})
	if fmt.Sprint(later["included"]) == fmt.Sprint(a["included"]) {
		t.Fatalf("an assembly after the commit does not see the message either: %v", later["included"])
	}
}
