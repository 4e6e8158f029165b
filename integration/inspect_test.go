package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

// diffRecords maps each record of a diff to its change and the other version's form (or
// reason, when it omits the record).
func diffRecords(d map[string]any) map[string][2]string {
	out := map[string][2]string{}
	for _, v := range d["records"].([]any) {
		r := v.(map[string]any)
		other := r["other"].(map[string]any)
		form := str(other, "as")
		if str(other, "outcome") == "omitted" {
			form = str(other, "reason")
		}
		out[str(r, "ref")] = [2]string{str(r, "change"), form}
	}
	return out
}

// POST /v1/assemblies/{id}/diff computes a recorded assembly's snapshot under another
// version, against the real graph: its own version changes nothing; strict-freshness turns
// the stale marker of a memory past its TTL into a stale omission; a version that withholds
// internal data from the provider turns a picker's raw handle into a reference. Bad input
// answers 400 naming the field (another account's version is as unknown as a missing one),
// another account's assembly 404, and a diff writes nothing.
func TestAssemblyDiffUnderAnotherVersion(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	art := str(h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded",
		"result": map[string]any{"eu": 3460000}, "privacyClass": "public", "at": "2026-11-01T09:00:04Z"}), "artifactId")
	mem := str(h.must(201, "POST", "/v1/memories", map[string]any{"derivedFrom": []string{art}, "summary": "EU Q3 revenue: 3.46M",
		"freshnessClass": "bounded", "observedAt": "2026-11-01T09:00:04Z", "revalidateWith": []string{"sheet_read"}}), "id")
	pick := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "pick_document",
		"arguments": map[string]any{"folder": "finance"}, "at": "2026-11-01T09:00:05Z"}), "id")
	handle := str(h.must(201, "POST", "/v1/tool-calls/"+pick+"/result", map[string]any{"status": "deferred",
		"result": map[string]any{"session": "pick_123"}, "privacyClass": "internal", "at": "2026-11-01T09:00:06Z"}), "artifactId")
	withheld := str(h.must(201, "POST", "/v1/policies", map[string]any{"name": "no-internal", "basedOn": "default",
		"providerClasses": map[string]any{"openai": []string{"public"}}}), "id")
	// Nineteen days on, the bounded memory (7 days) is stale.
	a := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "now": "2026-11-20T00:00:00Z"})
	id := str(a, "id")
	if got := includedAs(a); got[mem] != "stale_marker" || got[handle] != "raw" {
		t.Fatalf("the recorded assembly included %v, want %s as a stale marker and %s raw", got, mem, handle)
	}

	nodes := func() int64 {
		return cypherCount(t, `MATCH (n {accountId: $a}) RETURN count(n)`, map[string]any{"a": h.account})
	}
	before := nodes()
	for _, tc := range []struct {
		version   string
		identical bool
		want      map[string][2]string
	}{
		{str(a, "policyVersion"), true, map[string][2]string{mem: {"unchanged", "stale_marker"}, handle: {"unchanged", "raw"}}},
		{"strict-freshness", false, map[string][2]string{mem: {"only_recorded", "stale"}, handle: {"unchanged", "raw"}}},
		{withheld, false, map[string][2]string{mem: {"unchanged", "stale_marker"}, handle: {"changed", "reference"}}},
	} {
		d := h.must(200, "POST", "/v1/assemblies/"+id+"/diff", map[string]any{"policyVersion": tc.version})
		if d["identical"] != tc.identical || str(d, "assemblyId") != id || str(d, "now") != "2026-11-20T00:00:00Z" {
			t.Errorf("%s: identical %v, assembly %q, now %q; want %v, %s, the recorded now", tc.version, d["identical"], str(d, "assemblyId"), str(d, "now"), tc.identical, id)
		}
		got := diffRecords(d)
		for ref, want := range tc.want {
			if got[ref] != want {
				t.Errorf("%s: %s is %v, want %v", tc.version, ref, got[ref], want)
			}
		}
		changes := d["changes"].(map[string]any)
		recorded, other := d["recorded"].(map[string]any), d["other"].(map[string]any)
		if tc.identical && (changes["unchanged"] != float64(len(got)) || num(recorded["tokens"].(map[string]any), "assembled") != num(other["tokens"].(map[string]any), "assembled")) {
			t.Errorf("%s: changes %v, tokens %v and %v; want every record unchanged, the same tokens", tc.version, changes, recorded["tokens"], other["tokens"])
		}
		if str(recorded, "policyVersion") != str(a, "policyVersion") || !strings.Contains(str(other, "policyVersion"), "@") {
			t.Errorf("%s: versions %q and %q", tc.version, str(recorded, "policyVersion"), str(other, "policyVersion"))
		}
	}

	// Bad input names the field; the other account sees neither the assembly nor, by name,
	// the account's own version.
	h.expectError(h.call("POST", "/v1/assemblies/"+id+"/diff", map[string]any{}), 400, "invalid", "policyVersion")
	h.expectError(h.call("POST", "/v1/assemblies/"+id+"/diff", map[string]any{"policyVersion": 7}), 400, "invalid", "policyVersion")
	h.expectError(h.call("POST", "/v1/assemblies/"+id+"/diff", map[string]any{"policyVersion": "nonesuch"}), 400, "invalid", "policyVersion")
	h.expectError(h.callAs(h.otherKey, "POST", "/v1/assemblies/"+id+"/diff", map[string]any{"policyVersion": "default"}), 404, "not_found", "")
	h.expectError(h.call("POST", "/v1/assemblies/asm_unknown/diff", map[string]any{"policyVersion": "default"}), 404, "not_found", "")
	// Another account's own version is unknown here, as a version that does not exist is.
	theirs := h.callAs(h.otherKey, "POST", "/v1/policies", map[string]any{"name": "theirs-only", "basedOn": "default", "windowMessages": 3})
	if theirs.status != 201 {
		t.Fatalf("the other account's policy: %d %s", theirs.status, theirs.body)
	}
	h.expectError(h.call("POST", "/v1/assemblies/"+id+"/diff", map[string]any{"policyVersion": str(theirs.obj(t), "id")}), 400, "invalid", "policyVersion")
	h.expectError(h.call("POST", "/v1/assemblies/"+id+"/diff", map[string]any{"policyVersion": "theirs-only"}), 400, "invalid", "policyVersion")
	if after := nodes(); after != before {
		t.Errorf("diffs wrote %d nodes", after-before)
	}
}

// A run's model calls list each call's assembly with the sha256 of the request it sent,
// and the request route answers those exact bytes (their sha256 is the recorded one),
// access-checked; a record the sweep trimmed answers 410 there and in the diff. The
// conversations' list finds them by title, within the account.
func TestRunModelCallsAndTheRequestsTheySent(t *testing.T) {
	h := newHarness(t)
	conv := h.must(201, "POST", "/v1/conversations", map[string]any{"title": "Q3 revenue check"})
	h.must(201, "POST", "/v1/conversations", map[string]any{"title": "hotel booking"})
	p := str(h.must(201, "POST", "/v1/conversations/"+str(conv, "id")+"/participants", map[string]any{"kind": "model", "name": "dev"}), "id")
	h.must(201, "POST", "/v1/policies", map[string]any{"name": "keep-one", "basedOn": "default", "records": map[string]any{"keepPerBranch": 1, "sampleRate": 0}})
	turn := func(text string) (run, asm string) {
		g := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": str(conv, "branchId"), "participantIds": []string{p},
			"userMessage": map[string]any{"content": text}, "policyVersion": "keep-one"})
		r := g["runs"].([]any)[0].(map[string]any)
		return str(r, "runId"), str(r, "assemblyId")
	}
	run, asm := turn("What was Q3 revenue for EU?")

	calls := h.must(200, "GET", "/v1/runs/"+run+"/model-calls", nil)
	list := calls["modelCalls"].([]any)
	if len(list) != 1 || str(calls, "runId") != run {
		t.Fatalf("got model calls %v, want the run's one", calls)
	}
	call := list[0].(map[string]any)
	sha := str(call, "requestSha256")
	if str(call, "assemblyId") != asm || len(sha) != 64 || call["requestKept"] != true || str(call, "recordState") != "full" {
		t.Fatalf("got model call %v, want assembly %s with its request's sha256, kept, full", call, asm)
	}
	r := h.call("GET", "/v1/assemblies/"+asm+"/request", nil)
	sum := sha256.Sum256(r.body)
	if r.status != 200 || hex.EncodeToString(sum[:]) != sha || r.header.Get("X-Ctxgraph-Request-Sha256") != sha ||
		!strings.Contains(string(r.body), "What was Q3 revenue for EU?") {
		t.Fatalf("GET request: %d, sha256 %x, header %q, want the body whose sha256 is %s:\n%s", r.status, sum, r.header.Get("X-Ctxgraph-Request-Sha256"), sha, r.body)
	}
	h.expectError(h.callAs(h.otherKey, "GET", "/v1/assemblies/"+asm+"/request", nil), 404, "not_found", "")
	h.expectError(h.callAs(h.otherKey, "GET", "/v1/runs/"+run+"/model-calls", nil), 404, "not_found", "")
	plain := str(h.assemble(map[string]any{"branchId": str(conv, "branchId"), "participantId": p}), "id")
	h.expectError(h.call("GET", "/v1/assemblies/"+plain+"/request", nil), 404, "not_found", "")

	// Searching by title: the account's matching conversations only.
	h.callAs(h.otherKey, "POST", "/v1/conversations", map[string]any{"title": "Q3 revenue of theirs"})
	page := h.must(200, "GET", "/v1/conversations?title=q3%20REVENUE", nil)
	if got := page["conversations"].([]any); len(got) != 1 || str(got[0].(map[string]any), "id") != str(conv, "id") {
		t.Errorf("conversations titled like q3 revenue: %v, want the account's one", got)
	}
	h.expectError(h.call("GET", "/v1/conversations?title="+strings.Repeat("x", 201), nil), 400, "invalid", "title")

	// Two more turns, and the sweep trims the first's record, its request with it.
	turn("And for the US?")
	turn("Thanks.")
	sweepRecords(t, "test-"+randomHex(4), 2*time.Second)
	h.expectError(h.call("GET", "/v1/assemblies/"+asm+"/request", nil), 410, "gone", "")
	h.expectError(h.call("POST", "/v1/assemblies/"+asm+"/diff", map[string]any{"policyVersion": "strict-freshness"}), 410, "gone", "")
	call = h.must(200, "GET", "/v1/runs/"+run+"/model-calls", nil)["modelCalls"].([]any)[0].(map[string]any)
	if str(call, "recordState") != "trimmed" || call["requestKept"] != false || str(call, "requestSha256") != sha {
		t.Errorf("after the sweep the call reads %v, want trimmed, its body gone, its sha256 kept", call)
	}
	if n := cypherCount(t, `MATCH (a:ContextAssembly {id: $id}) WHERE a.requestBody IS NOT NULL RETURN count(a)`, map[string]any{"id": asm}); n != 0 {
		t.Errorf("the trimmed assembly still holds its request body")
	}
}
