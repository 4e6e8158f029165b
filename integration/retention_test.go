package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/cypher"
)

// untilHeld runs a sweep until it holds its lease, which a run of the suite before may
// have left (it lapses within seconds).
func untilHeld(t *testing.T, sweep func() (held bool, err error)) {
	t.Helper()
	deadline := time.Now().Add(70 * time.Second)
	for {
		held, err := sweep()
		if err != nil {
			t.Fatalf("sweeping: %v", err)
		}
		if held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweep's lease stayed held by another holder")
		}
		time.Sleep(time.Second)
	}
}

// sweepRecords runs the assembly records' sweep as holder with no grace, in small batches
// (one branch and one record a transaction, so that the sweep's loops run).
func sweepRecords(t *testing.T, holder string, lease time.Duration) (trimmed int) {
	t.Helper()
	untilHeld(t, func() (held bool, err error) {
		trimmed, held, err = sharedStore.SweepAssemblyRecords(t.Context(), cypher.Sweep{Holder: holder, Lease: lease, Branches: 1, Records: 1})
		return held, err
	})
	return trimmed
}

// An assembly's full record is kept while it is among the latest keepPerBranch of its
// branch, or when it is traced, sampled or of a failed run; the sweep trims the others to
// their counts, and their explain, replay and reading answer 410 (DESIGN §10). A record of a
// run that has not ended waits for the run.
func TestAssemblyRecordsBeyondTheLatestAreTrimmed(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	h.must(201, "POST", "/v1/policies", map[string]any{"name": "keep-three", "basedOn": "default",
		"records": map[string]any{"keepPerBranch": 3, "sampleRate": 0}})
	run := func() string {
		return str(h.must(201, "POST", "/v1/branches/"+w.branch+"/runs", map[string]any{"participantId": w.participant, "runtimeKind": "chat"}), "id")
	}
	failing, running, completing := run(), run(), run()
	assemble := func(extra map[string]any) string {
		body := map[string]any{"branchId": w.branch, "participantId": w.participant, "policyVersion": "keep-three"}
		for k, v := range extra {
			body[k] = v
		}
		return str(h.assemble(body), "id")
	}
	plain1 := assemble(nil)
	traced := assemble(map[string]any{"trace": true})
	ofFailed := assemble(map[string]any{"runId": failing})
	ofRunning := assemble(map[string]any{"runId": running})
	ofCompleted := assemble(map[string]any{"runId": completing})
	plain2 := assemble(nil)
	latest := []string{assemble(nil), assemble(nil), assemble(nil)}
	h.must(200, "PATCH", "/v1/runs/"+failing, map[string]any{"status": "failed"})
	h.must(200, "PATCH", "/v1/runs/"+completing, map[string]any{"status": "completed"})

	assemblies := func() cypher.FootprintRow {
		t.Helper()
		rows, err := sharedStore.ConversationFootprint(t.Context(), h.account, w.conv)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Label == "ContextAssembly" {
				return r
			}
		}
		t.Fatalf("no ContextAssembly in the footprint %+v", rows)
		return cypher.FootprintRow{}
	}
	before := assemblies()
	// Short leases, so that the next run of the suite does not wait for this one's.
	holder := "test-" + randomHex(4)
	if n := sweepRecords(t, holder, 2*time.Second); n < 3 {
		t.Errorf("the sweep trimmed %d records, want at least this branch's 3", n)
	}
	trimmed := func(id string) {
		t.Helper()
		for _, r := range []response{h.call("GET", "/v1/assemblies/"+id, nil), h.call("GET", "/v1/assemblies/"+id+"/explain?ref="+w.message, nil),
			h.call("POST", "/v1/assemblies/"+id+"/replay", nil)} {
			h.expectError(r, 410, "gone", "")
			if !strings.Contains(string(r.body), "keepPerBranch") {
				t.Errorf("assembly %s: the 410 does not say why: %s", id, r.body)
			}
		}
		rec := cypherQuery(t, `MATCH (a:ContextAssembly {id: $id}) RETURN a.recordState, a.record IS NULL, a.assembledTokens > 0,
			COUNT { (a)-[:INCLUDED|OMITTED]->() } + COUNT { (:PolicyDecision)-[:CONSTRAINS]->(a) }`, map[string]any{"id": id})[0].Values
		if rec[0] != "trimmed" || rec[1] != true || rec[2] != true || rec[3] != int64(0) {
			t.Errorf("assembly %s after the sweep: state %v, record gone %v, tokens kept %v, %v edges left; want trimmed, true, true, 0", id, rec[0], rec[1], rec[2], rec[3])
		}
	}
	whole := func(id, state string) {
		t.Helper()
		h.must(200, "GET", "/v1/assemblies/"+id+"/explain?ref="+w.message, nil)
		if rep := h.must(200, "POST", "/v1/assemblies/"+id+"/replay", nil); rep["identical"] != true {
			t.Errorf("assembly %s: replay not identical: %v", id, rep)
		}
		if got := cypherQuery(t, `MATCH (a:ContextAssembly {id: $id}) RETURN a.recordState`, map[string]any{"id": id})[0].Values[0]; got != state {
			t.Errorf("assembly %s: record state %v, want %s", id, got, state)
		}
	}
	for _, id := range []string{plain1, ofCompleted, plain2} {
		trimmed(id)
	}
	if after := assemblies(); after.Nodes != before.Nodes || after.Relationships >= before.Relationships || after.Bytes >= before.Bytes {
		t.Errorf("the assemblies' footprint: %+v before the sweep, %+v after; want the same nodes with fewer relationships and bytes", before, after)
	}
	whole(traced, "kept")
	whole(ofFailed, "kept")
	whole(ofRunning, "full")
	for _, id := range latest {
		whole(id, "full")
	}
	if got := cypherQuery(t, `MATCH (a:ContextAssembly {id: $id}) RETURN a.recordKept`, map[string]any{"id": ofFailed})[0].Values[0]; got != "failed_run" {
		t.Errorf("the failed run's assembly is kept as %v, want failed_run", got)
	}

	// The running run ends; the branch's next assembly brings the sweep back to it.
	h.must(200, "PATCH", "/v1/runs/"+running, map[string]any{"status": "completed"})
	assemble(nil)
	sweepRecords(t, holder, 2*time.Second)
	trimmed(ofRunning)
	trimmed(latest[0])
	whole(latest[1], "full")
}

// sweepRetention runs the retention sweep as holder, two artifacts a round.
func sweepRetention(t *testing.T, holder string) (done cypher.Retained) {
	t.Helper()
	untilHeld(t, func() (held bool, err error) {
		done, held, err = sharedStore.SweepRetention(t.Context(), cypher.Sweep{Holder: holder, Lease: 2 * time.Second, Records: 2})
		return held, err
	})
	return done
}

// An artifact's retention comes from its result, else its tool's declaration, else the
// policy by tool name (DESIGN §10). When it runs out, redact_after takes the body and keeps
// the artifact's id, hashes, sizes, tool and arguments and its memories (their provenance
// marked redacted); delete_after takes the artifact with the memories derived only from it.
// Either way the assembly records and the stored responses that carried the body raw are
// trimmed and erased, and no later assembly sends it.
func TestArtifactRetentionRedactsAndDeletes(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	const secret = `{"rows":"EU,4.2M;US,7.9M","figure":"secret-77"}`
	for _, bad := range []map[string]any{{"class": "forever"}, {"class": "redact_after"}, {"class": "keep", "after": "1h"}, {"class": "delete_after", "after": "-1h"}} {
		h.expectError(h.call("POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded", "result": map[string]any{}, "retention": bad}),
			400, "invalid", "retention")
	}
	res := h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded", "result": json.RawMessage(secret),
		"privacyClass": "internal", "retention": map[string]any{"class": "redact_after", "after": "1ms"}})
	redacted, memory := str(res, "artifactId"), res["memoryIds"].([]any)[0].(string)
	if a := h.must(200, "GET", "/v1/artifacts/"+redacted, nil); str(a, "retentionSource") != "result" || a["retainUntil"] == nil || a["redactedAt"] != nil {
		t.Fatalf("the artifact before the sweep: %v", a)
	}

	// A second call whose result goes whole, and a memory derived from both artifacts.
	call2 := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "arguments": map[string]any{"sheet": "q4"}}), "id")
	res2 := h.must(201, "POST", "/v1/tool-calls/"+call2+"/result", map[string]any{"status": "succeeded", "result": map[string]any{"q4": "9.1M"},
		"privacyClass": "internal", "retention": map[string]any{"class": "delete_after", "after": "1ms"}})
	deleted, onlyDeleted := str(res2, "artifactId"), res2["memoryIds"].([]any)[0].(string)
	// And a third, kept, with a memory of its own and of the one that will be deleted.
	call3 := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "arguments": map[string]any{"sheet": "fy"}}), "id")
	kept := str(h.must(201, "POST", "/v1/tool-calls/"+call3+"/result", map[string]any{"status": "succeeded", "result": map[string]any{"fy": "30M"},
		"privacyClass": "internal"}), "artifactId")
	both := str(h.must(201, "POST", "/v1/memories", map[string]any{"derivedFrom": []string{deleted, kept}, "summary": "Q4 against the year"}), "id")

	// The body goes raw into an assembly, answered to a keyed request.
	body := map[string]any{"branchId": w.branch, "participantId": w.participant, "exactArtifactIds": []string{redacted}}
	raw := h.must(201, "POST", "/v1/assemblies", body, "Idempotency-Key", "asm-raw-"+randomHex(4))
	if includedAs(raw)[redacted] != "raw" {
		t.Fatalf("the exact artifact went %q, want raw", includedAs(raw)[redacted])
	}
	key := "asm-raw-keyed-" + randomHex(4)
	keyed := h.must(201, "POST", "/v1/assemblies", body, "Idempotency-Key", key)

	time.Sleep(5 * time.Millisecond)
	done := sweepRetention(t, "test-"+randomHex(4))
	if done.Redacted < 1 || done.Deleted < 1 || done.Memories < 1 || done.Assemblies < 2 {
		t.Errorf("the sweep did %+v, want at least one redaction, one deletion, its memory and the two assemblies", done)
	}

	a := h.must(200, "GET", "/v1/artifacts/"+redacted, nil)
	if a["redactedAt"] == nil || str(a, "resultSha256") == "" || a["resultBytes"].(float64) != float64(len(secret)) || str(a, "tool") != "sheet_read" {
		t.Errorf("the redacted artifact: %v; want redactedAt with its hashes, sizes and tool kept", a)
	}
	rawBody := h.must(200, "GET", "/v1/artifacts/"+redacted+"/raw", nil)
	if rawBody["result"] != nil || rawBody["redactedAt"] == nil || rawBody["arguments"] == nil {
		t.Errorf("the redacted artifact's payloads: %v; want its arguments, no result, and when it went", rawBody)
	}
	for _, id := range []string{str(raw, "id"), str(keyed, "id")} {
		h.expectError(h.call("GET", "/v1/assemblies/"+id, nil), 410, "gone", "")
	}
	if again := h.call("POST", "/v1/assemblies", body, "Idempotency-Key", key); strings.Contains(string(again.body), "secret-77") || again.status == 201 && !strings.Contains(string(again.body), `"redacted"`) {
		t.Errorf("replaying the keyed assembly: %d %s; want the body nowhere", again.status, again.body)
	}

	// Later assemblies send nothing of the body; the memory stands in, its provenance marked.
	after := h.must(201, "POST", "/v1/assemblies", body)
	if as, ok := includedAs(after)[redacted]; ok {
		t.Errorf("after redaction the exact artifact went %q, want it omitted", as)
	}
	if includedAs(after)[memory] != "memory" {
		t.Errorf("after redaction the memories went %v; want %s included as memory (%v)", includedAs(after), memory,
			h.must(200, "GET", "/v1/assemblies/"+str(after, "id")+"/explain?ref="+memory, nil))
	}
	ex := h.must(200, "GET", "/v1/assemblies/"+str(after, "id")+"/explain?ref="+redacted, nil)
	if str(ex, "reason") != "redacted" || str(ex, "rule") != "provenance.body_redacted" {
		t.Errorf("explaining the redacted artifact: %v", ex)
	}
	ex = h.must(200, "GET", "/v1/assemblies/"+str(after, "id")+"/explain?ref="+memory, nil)
	marked := false
	for _, s := range ex["provenancePath"].([]any) {
		step := s.(map[string]any)
		marked = marked || str(step, "id") == redacted && str(step, "name") == "redacted"
	}
	if !marked {
		t.Errorf("the memory's provenance path %v does not mark %s redacted", ex["provenancePath"], redacted)
	}

	// delete_after: the artifact and the memory derived only from it are gone; a memory with
	// another source stays, marked provenance-broken.
	h.expectError(h.call("GET", "/v1/artifacts/"+deleted, nil), 404, "not_found", "")
	h.expectError(h.call("GET", "/v1/memories/"+onlyDeleted, nil), 404, "not_found", "")
	if m := h.must(200, "GET", "/v1/memories/"+both, nil); m["provenanceBroken"] != true {
		t.Errorf("the memory of both artifacts after one was deleted: %v", m)
	}
	if n := cypherCount(t, `MATCH (n {accountId: $a}) WHERE n.id IN $ids RETURN count(n)`, map[string]any{"a": h.account, "ids": []string{deleted, onlyDeleted}}); n != 0 {
		t.Errorf("%d of the deleted artifact and its memory are still in the graph", n)
	}
}

// Without a retention of its own, a result takes its tool's declaration's (runtools_test),
// else the policy's rule for its tool.
func TestArtifactRetentionFromThePolicy(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	h.must(201, "POST", "/v1/policies", map[string]any{"name": "short-sheets", "basedOn": "default",
		"retention": map[string]any{"tools": map[string]any{"sheet_read": map[string]any{"class": "delete_after", "after": "24h"}}}})
	h.expectError(h.call("POST", "/v1/policies", map[string]any{"name": "bad-retention", "basedOn": "default",
		"retention": map[string]any{"tools": map[string]any{"sheet_read": map[string]any{"class": "soon"}}}}), 400, "invalid", "retention")
	h.must(200, "PUT", "/v1/policies/default", map[string]any{"policyVersion": "short-sheets"})
	art := str(h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded", "result": map[string]any{"ok": true}}), "artifactId")
	a := h.must(200, "GET", "/v1/artifacts/"+art, nil)
	ret, _ := a["retention"].(map[string]any)
	if str(a, "retentionSource") != "policy" || ret["class"] != "delete_after" || ret["after"] != "24h" || a["retainUntil"] == nil {
		t.Errorf("a result of sheet_read under short-sheets: %v", a)
	}
}

// POST /v1/artifacts/{id}/erase takes the artifact and everything derived only from it: its
// memories, the records that included its body raw, the stored responses that carried any
// of them; dryRun answers the same list and writes nothing; another account's copy of the
// same body (one blob) stays (DESIGN §10).
func TestEraseArtifactTakesWhatDerivesOnlyFromIt(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	// Over the inline limit: the body is a blob, shared by content with the other account's.
	big := fmt.Sprintf(`{"rows":%q,"figure":"erase-me-42"}`, strings.Repeat("EU,4.2M;US,7.9M;", 5000))
	res := h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded", "result": json.RawMessage(big),
		"privacyClass": "internal"}, "Idempotency-Key", "erase-result-"+randomHex(4))
	art, derived := str(res, "artifactId"), res["memoryIds"].([]any)[0].(string)
	call2 := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "arguments": map[string]any{"sheet": "q4"}}), "id")
	other := str(h.must(201, "POST", "/v1/tool-calls/"+call2+"/result", map[string]any{"status": "succeeded", "result": map[string]any{"q4": "9.1M"}}), "artifactId")
	memKey := "erase-mem-" + randomHex(4)
	only := str(h.must(201, "POST", "/v1/memories", map[string]any{"derivedFrom": []string{art}, "summary": "the figure is erase-me-42"}, "Idempotency-Key", memKey), "id")
	both := str(h.must(201, "POST", "/v1/memories", map[string]any{"derivedFrom": []string{art, other}, "summary": "Q3 against Q4"}), "id")
	asmKey := "erase-asm-" + randomHex(4)
	// A blob-sized body goes raw under a version that allows it.
	h.must(201, "POST", "/v1/policies", map[string]any{"name": "wide-raw", "basedOn": "default", "rehydrationBytes": 1 << 20})
	asmBody := map[string]any{"branchId": w.branch, "participantId": w.participant, "exactArtifactIds": []string{art}, "tokenBudget": 200000,
		"policyVersion": "wide-raw"}
	asm := h.must(201, "POST", "/v1/assemblies", asmBody, "Idempotency-Key", asmKey)
	if includedAs(asm)[art] != "raw" {
		t.Fatalf("the artifact went %q, want raw", includedAs(asm)[art])
	}

	// The other account holds the same body.
	o := &harness{t: t, key: h.otherKey, srv: h.srv, cfg: h.cfg}
	ow := o.world()
	oart := str(o.must(201, "POST", "/v1/tool-calls/"+ow.call+"/result", map[string]any{"status": "succeeded", "result": json.RawMessage(big)}), "artifactId")
	h.expectError(h.call("POST", "/v1/artifacts/"+oart+"/erase", map[string]any{"dryRun": true}), 404, "not_found", "")
	h.expectError(h.call("POST", "/v1/artifacts/"+art+"/erase", map[string]any{"dryRun": "yes"}), 400, "invalid", "dryRun")

	plan := h.must(200, "POST", "/v1/artifacts/"+art+"/erase", map[string]any{"dryRun": true})
	check := func(what string, got map[string]any) {
		t.Helper()
		ids := func(k string) []string {
			var out []string
			for _, v := range got[k].([]any) {
				out = append(out, v.(string))
			}
			slices.Sort(out)
			return out
		}
		wantMem := []string{derived, only}
		slices.Sort(wantMem)
		if !slices.Equal(ids("memories"), wantMem) || !slices.Equal(ids("brokenMemories"), []string{both}) ||
			!slices.Equal(ids("trimmedAssemblies"), []string{str(asm, "id")}) || got["responses"].(float64) < 3 || len(ids("blobs")) == 0 {
			t.Errorf("%s: %v; want memories %v, broken [%s], trimmed [%s], 3 or more responses and its blob", what, got, wantMem, both, str(asm, "id"))
		}
	}
	check("dry run", plan)
	for _, path := range []string{"/v1/artifacts/" + art + "/raw", "/v1/memories/" + only, "/v1/memories/" + derived, "/v1/assemblies/" + str(asm, "id")} {
		h.must(200, "GET", path, nil)
	}

	check("erasure", h.must(200, "POST", "/v1/artifacts/"+art+"/erase", nil))
	for _, path := range []string{"/v1/artifacts/" + art, "/v1/memories/" + only, "/v1/memories/" + derived} {
		h.expectError(h.call("GET", path, nil), 404, "not_found", "")
	}
	h.expectError(h.call("GET", "/v1/assemblies/"+str(asm, "id"), nil), 410, "gone", "")
	if m := h.must(200, "GET", "/v1/memories/"+both, nil); m["provenanceBroken"] != true {
		t.Errorf("the memory of both after the erasure: %v", m)
	}
	for _, replay := range []response{h.call("POST", "/v1/assemblies", asmBody, "Idempotency-Key", asmKey),
		h.call("POST", "/v1/memories", map[string]any{"derivedFrom": []string{art}, "summary": "the figure is erase-me-42"}, "Idempotency-Key", memKey)} {
		if replay.status < 400 || strings.Contains(string(replay.body), "EU,4.2M") {
			t.Errorf("a keyed replay after the erasure answered %d %s", replay.status, clipBody(replay.body))
		}
	}
	if n := cypherCount(t, `MATCH (n {accountId: $a}) WHERE n.id IN $ids RETURN count(n)`, map[string]any{"a": h.account, "ids": []string{art, only, derived}}); n != 0 {
		t.Errorf("%d erased nodes are still in the graph", n)
	}
	// The other account's artifact, and the blob it shares, are untouched.
	if raw := o.must(200, "GET", "/v1/artifacts/"+oart+"/raw", nil); !strings.Contains(fmt.Sprint(raw["result"]), "erase-me-42") {
		t.Errorf("the other account's copy of the body is gone: %v", raw["result"])
	}
	// A later assembly sends nothing of it.
	later := h.must(201, "POST", "/v1/assemblies", map[string]any{"branchId": w.branch, "participantId": w.participant, "tokenBudget": 100000})
	if b, _ := json.Marshal(later["messages"]); strings.Contains(string(b), "erase-me-42") {
		t.Errorf("an assembly after the erasure still sends the body's values")
	}
}

func clipBody(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// accountNodes counts an account's nodes by label.
func accountNodes(t *testing.T, account string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, r := range cypherQuery(t, `MATCH (n) WHERE n.accountId = $a RETURN labels(n)[0], count(*)`, map[string]any{"a": account}) {
		out[r.Values[0].(string)] = r.Values[1].(int64)
	}
	return out
}

// blobFile reports whether the blob a reference names is in the suite's blob store.
func blobFile(t *testing.T, ref string) bool {
	t.Helper()
	return blobStored(t, blobDir, ref)
}

// fillAccount gives an account a conversation with a generation, tool results (one body
// shared with another account, one its own, both blobs), memories, an assembly, a schedule,
// stored responses and a policy version of its own made its default; it returns the blob
// references of the two bodies.
func fillAccount(h *harness, shared string) (sharedRef, ownRef string) {
	h.t.Helper()
	w := h.world()
	echo := str(h.must(201, "POST", "/v1/conversations/"+w.conv+"/participants", map[string]any{"kind": "model", "name": "echo-bot", "provider": "echo"}), "id")
	res := h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded", "result": json.RawMessage(shared)},
		"Idempotency-Key", "fill-"+randomHex(4))
	call2 := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "arguments": map[string]any{"sheet": "own"}}), "id")
	own := fmt.Sprintf(`{"own":%q}`, strings.Repeat(randomHex(8), 10000))
	res2 := h.must(201, "POST", "/v1/tool-calls/"+call2+"/result", map[string]any{"status": "succeeded", "result": json.RawMessage(own)})
	h.must(201, "POST", "/v1/memories", map[string]any{"derivedFrom": []string{str(res, "artifactId"), str(res2, "artifactId")}, "summary": "both bodies"},
		"Idempotency-Key", "fill-mem-"+randomHex(4))
	h.must(201, "POST", "/v1/assemblies", map[string]any{"branchId": w.branch, "participantId": w.participant}, "Idempotency-Key", "fill-asm-"+randomHex(4))
	h.must(201, "POST", "/v1/generations", map[string]any{"branchId": w.branch, "participantIds": []string{echo}, "userMessage": map[string]any{"content": "hello"}})
	h.must(201, "POST", "/v1/conversations/"+w.conv+"/schedules", map[string]any{"cron": "0 0 1 1 *", "participantIds": []string{echo}, "prompt": "new year"})
	h.must(201, "POST", "/v1/policies", map[string]any{"name": "fill-" + randomHex(3), "basedOn": "default", "windowMessages": 4})
	a := h.must(200, "GET", "/v1/artifacts/"+str(res, "artifactId"), nil)
	b := h.must(200, "GET", "/v1/artifacts/"+str(res2, "artifactId"), nil)
	return str(a, "resultRef"), str(b, "resultRef")
}

// DELETE /v1/account takes every node and blob of the key's account, and nothing of
// another's: the other account's counts are the same before and after, and a body both
// held stays on disk (DESIGN §10). The erased account's key answers 410 from then on, and
// asked again the erasure finds nothing left.
func TestEraseAccountLeavesOtherAccountsAlone(t *testing.T) {
	grace := sharedStore.ErasureGrace
	sharedStore.ErasureGrace = 200 * time.Millisecond
	defer func() { sharedStore.ErasureGrace = grace }()
	h := newHarness(t)
	o := &harness{t: t, key: h.otherKey, srv: h.srv, cfg: h.cfg, account: h.cfg.Keys[h.otherKey]}
	shared := fmt.Sprintf(`{"rows":%q}`, strings.Repeat("EU,4.2M;US,7.9M;", 5000))
	sharedRef, ownRef := fillAccount(h, shared)
	sharedRef2, otherOwnRef := fillAccount(o, shared)
	if sharedRef != sharedRef2 || sharedRef == "" || !blobFile(t, ownRef) || !blobFile(t, otherOwnRef) {
		t.Fatalf("blobs: shared %q and %q, own %q and %q", sharedRef, sharedRef2, ownRef, otherOwnRef)
	}
	before, otherBefore := accountNodes(t, h.account), accountNodes(t, o.account)
	for _, label := range []string{"Conversation", "Message", "ModelRun", "ToolCall", "ToolArtifact", "ToolMemory", "ContextAssembly", "Schedule", "IdempotencyKey", "PolicyVersion"} {
		if before[label] == 0 || otherBefore[label] == 0 {
			t.Fatalf("no %s to erase: %v, %v", label, before, otherBefore)
		}
	}

	erased := h.must(200, "DELETE", "/v1/account", nil)
	deleted := erased["deleted"].(map[string]any)
	for label, n := range before {
		if got, _ := deleted[label].(float64); int64(got) != n {
			t.Errorf("the erasure says %v %s went, there were %d", deleted[label], label, n)
		}
	}
	if after := accountNodes(t, h.account); len(after) != 1 || after["AccountErasure"] != 1 {
		t.Errorf("the erased account's nodes: %v; want its AccountErasure alone", after)
	}
	if otherAfter := accountNodes(t, o.account); !reflect.DeepEqual(otherAfter, otherBefore) {
		t.Errorf("the other account's nodes: %v before, %v after", otherBefore, otherAfter)
	}
	if blobFile(t, ownRef) || !blobFile(t, sharedRef) || !blobFile(t, otherOwnRef) {
		t.Errorf("blobs after the erasure: its own %v (want gone), the shared one %v and the other's %v (want kept)",
			blobFile(t, ownRef), blobFile(t, sharedRef), blobFile(t, otherOwnRef))
	}
	h.expectError(h.call("GET", "/v1/conversations", nil), 410, "gone", "")
	h.expectError(h.call("POST", "/v1/conversations", map[string]any{"title": "again"}), 410, "gone", "")
	again := h.must(200, "DELETE", "/v1/account", nil)
	for label, n := range again["deleted"].(map[string]any) {
		t.Errorf("erasing again found %v %s", n, label)
	}
	o.must(200, "GET", "/v1/conversations", nil)
}

// 32 writers on two ctxgraph server processes race an artifact's erasure on one and the
// account's erasure on the other: no request answers a 5xx, and once the account's erasure
// has answered nothing of the account is left — no node but its AccountErasure, no blob of a
// body it wrote (DESIGN §10: nothing comes back).
func TestErasuresRacingWritersBringNothingBack(t *testing.T) {
	bin := buildServer(t)
	h := newHarness(t)
	procs := []serverProcess{h.startServer(bin, "CTXGRAPH_SWEEP_INTERVAL=0"), h.startServer(bin, "CTXGRAPH_SWEEP_INTERVAL=0")}
	caller := func(p serverProcess) func(method, path string, body any) response {
		c := client.New(p.base, h.key)
		return func(method, path string, body any) response {
			var resp client.Response
			if err := c.Do(context.Background(), method, path, body, &resp); err != nil {
				var refused *client.Error
				if !errors.As(err, &refused) {
					return response{status: 599, body: []byte(err.Error())}
				}
			}
			return response{status: resp.Status, body: resp.Body}
		}
	}
	servers := []func(method, path string, body any) response{caller(procs[0]), caller(procs[1])}
	for _, p := range procs {
		waitUp(t, caller(p))
	}
	// Each writer on a conversation of its own, as agents are: writers of one branch wait
	// for each other's locks, which is not what this test is about.
	worlds, arts := make([]world, 32), make([]string, 32)
	for i := range worlds {
		worlds[i] = h.world()
		arts[i] = str(h.must(201, "POST", "/v1/tool-calls/"+worlds[i].call+"/result", map[string]any{"status": "succeeded", "result": map[string]any{"q3": "4.2M"}}), "artifactId")
	}
	art := arts[0]

	var mu sync.Mutex
	var bodies []string // every body a writer sent as a result (each its own blob)
	statuses := map[int]int{}
	var fivexx []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, art := worlds[i], arts[i]
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				call := servers[(i+n)%2]
				var r response
				switch n % 5 {
				case 0:
					r = call("POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": fmt.Sprintf("writer %d, %d", i, n)})
				case 1:
					requested := call("POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "arguments": map[string]any{"n": n, "w": i}})
					r = requested
					if requested.status == 201 {
						var c map[string]any
						_ = json.Unmarshal(requested.body, &c)
						body := fmt.Sprintf(`{"writer":%d,"n":%d,"rows":%q}`, i, n, strings.Repeat(randomHex(8), 5000))
						mu.Lock()
						bodies = append(bodies, body)
						mu.Unlock()
						r = call("POST", "/v1/tool-calls/"+str(c, "id")+"/result", map[string]any{"status": "succeeded", "result": json.RawMessage(body)})
					}
				case 2:
					r = call("POST", "/v1/memories", map[string]any{"derivedFrom": []string{art}, "summary": fmt.Sprintf("note %d %d", i, n)})
				case 3:
					r = call("POST", "/v1/assemblies", map[string]any{"branchId": w.branch, "participantId": w.participant})
				case 4:
					r = call("POST", "/v1/conversations", map[string]any{"title": fmt.Sprintf("writer %d, %d", i, n)})
				}
				mu.Lock()
				statuses[r.status]++
				if r.status >= 500 {
					fivexx = append(fivexx, fmt.Sprintf("%d %s", r.status, clipBody(r.body)))
				}
				mu.Unlock()
				if r.status == 410 {
					time.Sleep(20 * time.Millisecond) // refused: no need to hammer
				}
			}
		}()
	}
	time.Sleep(time.Second)
	mu.Lock()
	t.Logf("before the erasures: %v", statuses)
	mu.Unlock()
	erase := servers[0]("POST", "/v1/artifacts/"+art+"/erase", nil)
	account := servers[1]("DELETE", "/v1/account", nil)
	time.Sleep(time.Second) // the writers go on against the erased account
	close(stop)
	wg.Wait()

	if erase.status != 200 && erase.status != 404 && erase.status != 410 {
		t.Errorf("the artifact's erasure answered %d %s", erase.status, clipBody(erase.body))
	}
	if account.status != 200 {
		t.Fatalf("the account's erasure answered %d %s", account.status, clipBody(account.body))
	}
	t.Logf("the writers' answers by status: %v; %d result bodies sent; the account's erasure: %s", statuses, len(bodies), clipBody(account.body))
	if len(fivexx) > 0 {
		t.Errorf("%d answers were 5xx, the first: %v", len(fivexx), fivexx[:min(3, len(fivexx))])
	}
	if statuses[410] == 0 {
		t.Errorf("no writer was refused after the erasure: %v", statuses)
	}
	if left := accountNodes(t, h.account); len(left) != 1 || left["AccountErasure"] != 1 {
		t.Errorf("after the erasure the account still has %v", left)
	}
	kept := 0
	for _, b := range bodies {
		sum := sha256.Sum256([]byte(b))
		if blobFile(t, "sha256:"+hex.EncodeToString(sum[:])) {
			kept++
		}
	}
	if kept > 0 {
		t.Errorf("%d of %d result bodies the account wrote are still on disk", kept, len(bodies))
	}
}

// A server killed mid-sweep leaves its lease to lapse: another server's sweep is refused
// until then, and then takes the work over and finishes it (DESIGN §10).
func TestSweepLeaseOfAKilledServerIsTakenOver(t *testing.T) {
	bin := buildServer(t)
	h := newHarness(t)
	w := h.world()
	const n = 300
	for i := range n {
		call := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "arguments": map[string]any{"i": i}}), "id")
		h.must(201, "POST", "/v1/tool-calls/"+call+"/result", map[string]any{"status": "succeeded", "result": map[string]any{"i": i},
			"retention": map[string]any{"class": "redact_after", "after": "1ms"}})
	}
	due := func() int64 {
		return cypherCount(t, `MATCH (a:ToolArtifact {conversationId: $c}) WHERE a.redactedAt IS NULL AND a.retainUntil IS NOT NULL RETURN count(a)`,
			map[string]any{"c": w.conv})
	}
	if got := due(); got != n {
		t.Fatalf("%d artifacts due, want %d", got, n)
	}
	lease := func() (holder string, until time.Time) {
		recs := cypherQuery(t, `MATCH (l:SweepLease {name: 'artifact-retention'}) RETURN l.holder, l.until`, nil)
		if len(recs) == 0 || recs[0].Values[0] == nil {
			return "", time.Time{}
		}
		return recs[0].Values[0].(string), recs[0].Values[1].(time.Time)
	}
	p := h.startServer(bin, "CTXGRAPH_SWEEP_INTERVAL=100ms", "CTXGRAPH_SWEEP_LEASE=4s")
	var holder string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if hd, until := lease(); until.After(time.Now()) && strings.Contains(hd, "/") && due() < n {
			holder = hd
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never held the retention sweep's lease with work under way (%d due)", due())
		}
	}
	p.kill()
	left := due()
	if left == 0 {
		t.Skipf("the server finished its sweep before it was killed: no lease left to take over")
	}
	other := "other-" + randomHex(4)
	if _, held, err := sharedStore.SweepRetention(t.Context(), cypher.Sweep{Holder: other, Lease: 2 * time.Second, Records: 50}); err != nil || held {
		t.Fatalf("another holder swept while the killed server's lease held (held %v, %v)", held, err)
	}
	if hd, _ := lease(); hd != holder {
		t.Fatalf("the lease is %q's, want the killed server's %q", hd, holder)
	}
	start := time.Now()
	var done cypher.Retained
	untilHeld(t, func() (held bool, err error) {
		done, held, err = sharedStore.SweepRetention(t.Context(), cypher.Sweep{Holder: other, Lease: 20 * time.Second, Records: 50})
		return held, err
	})
	t.Logf("%d of %d left when %s was killed; the lease lapsed and %s redacted %d after %v", left, n, holder, other, done.Redacted, time.Since(start).Round(time.Millisecond))
	if got := due(); got != 0 || done.Redacted != int(left) {
		t.Errorf("after the takeover %d are still due, and the sweep redacted %d of the %d left", got, done.Redacted, left)
	}
}

// waitUp waits until a server answers a request of the harness's account.
func waitUp(t *testing.T, call func(method, path string, body any) response) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); call("GET", "/v1/conversations", nil).status != 200; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server did not answer within 30 s")
		}
	}
}

// The exact request a model call sent (kept for the inspector) holds the raw bodies it
// included: a redaction takes them from it too, and nothing of the account holds the body
// but the memories derived from it, which stay (DESIGN §10).
func TestRedactionTakesTheBodyFromTheRequestsSent(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	echo := str(h.must(201, "POST", "/v1/conversations/"+w.conv+"/participants", map[string]any{"kind": "model", "name": "echo-bot", "provider": "echo"}), "id")
	run := str(h.must(201, "POST", "/v1/branches/"+w.branch+"/runs", map[string]any{"participantId": echo, "runtimeKind": "chat", "triggerMessageId": w.message}), "id")
	call := str(h.must(201, "POST", "/v1/runs/"+run+"/tool-calls", map[string]any{"tool": "sheet_read", "arguments": map[string]any{"sheet": "q3"}}), "id")
	artifact := str(h.must(201, "POST", "/v1/tool-calls/"+call+"/result", map[string]any{"status": "succeeded",
		"result": map[string]any{"figure": "secret-88"}, "privacyClass": "internal", "retention": map[string]any{"class": "redact_after", "after": "1ms"}}), "artifactId")
	h.must(200, "PATCH", "/v1/runs/"+run, map[string]any{"status": "completed"})
	gen := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": w.branch, "participantIds": []string{echo},
		"userMessage": map[string]any{"content": "the figure?"}, "exactArtifactIds": []string{artifact}})
	sentBy := str(first(gen, "runs"), "assemblyId")
	if sent := h.call("GET", "/v1/assemblies/"+sentBy+"/request", nil); sent.status != 200 || !strings.Contains(string(sent.body), "secret-88") {
		t.Fatalf("the model call's request before the sweep: %d %s; want it to hold the body", sent.status, sent.body)
	}
	time.Sleep(5 * time.Millisecond)
	if done := sweepRetention(t, "test-"+randomHex(4)); done.Redacted < 1 {
		t.Fatalf("the sweep did %+v, want the redaction", done)
	}
	gone := h.call("GET", "/v1/assemblies/"+sentBy+"/request", nil)
	h.expectError(gone, 410, "gone", "")
	if !strings.Contains(string(gone.body), "redacted") {
		t.Errorf("the 410 does not say the record went with a redaction: %s", gone.body)
	}
	if n := cypherCount(t, `MATCH (n {accountId: $a}) WHERE NOT n:ToolMemory AND any(k IN keys(n) WHERE
			n[k] IS :: STRING AND n[k] CONTAINS 'secret-88' OR n[k] IS :: LIST<STRING> AND any(x IN n[k] WHERE x CONTAINS 'secret-88')) RETURN count(n)`,
		map[string]any{"a": h.account}); n != 0 {
		recs := cypherQuery(t, `MATCH (n {accountId: $a}) WHERE NOT n:ToolMemory WITH n, [k IN keys(n) WHERE
			n[k] IS :: STRING AND n[k] CONTAINS 'secret-88' OR n[k] IS :: LIST<STRING> AND any(x IN n[k] WHERE x CONTAINS 'secret-88')] AS ks
			WHERE size(ks) > 0 RETURN labels(n), n.id, ks`, map[string]any{"a": h.account})
		t.Fatalf("%d nodes of the account still hold the redacted body: %v", n, recs[0].Values)
	}
}
