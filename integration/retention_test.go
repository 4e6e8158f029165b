package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/cypher"
)

// sweepRecords runs the assembly records' sweep as holder with no grace, in small batches
// (one branch and one record a transaction, so that the sweep's loops run), taking over a
// lease a run of the suite before may have left (it lapses within its minute).
func sweepRecords(t *testing.T, holder string, lease time.Duration) (trimmed int) {
	t.Helper()
	deadline := time.Now().Add(70 * time.Second)
	start := time.Now()
	defer func() { t.Logf("the sweep as %s took %v", holder, time.Since(start)) }()
	for {
		n, held, err := sharedStore.SweepAssemblyRecords(t.Context(), cypher.RecordSweep{Holder: holder, Lease: lease, Branches: 1, Records: 1})
		if err != nil {
			t.Fatalf("sweeping assembly records: %v", err)
		}
		if held {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("the records' sweep lease stayed held by another holder")
		}
		time.Sleep(time.Second)
	}
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

	// Another server does not sweep while the lease is held; it takes a lapsed one over.
	if _, held, err := sharedStore.SweepAssemblyRecords(t.Context(), cypher.RecordSweep{Holder: "other-" + randomHex(4), Lease: time.Second, Branches: 1, Records: 1}); err != nil || held {
		t.Errorf("a second holder swept while the lease was held (held %v, %v)", held, err)
	}
	sweepRecords(t, holder, 500*time.Millisecond)
	time.Sleep(time.Second)

	if _, held, err := sharedStore.SweepAssemblyRecords(context.Background(), cypher.RecordSweep{Holder: "other-" + randomHex(4), Lease: time.Second, Branches: 1, Records: 1}); err != nil || !held {
		t.Errorf("a second holder could not take the lapsed lease over (held %v, %v)", held, err)
	}
}
