package cypher

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkLineageCandidates builds the view of a 10,000-round single-branch lineage as an
// assembly right after a write does (no Neo4j involved): per round a message, a tool call,
// its artifact and a memory, about 40,000 candidates.
func BenchmarkLineageCandidates(b *testing.B) {
	c := newConversationRecords("cnv_b")
	const br = "br_main"
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	run := c.run("run_1")
	*run = cachedRun{known: true, rev: 1, status: "running"}
	var list []*cachedRecord
	seq := int64(0)
	add := func(kind, id string, extra map[string]any) {
		seq++
		p := props{"id": id, "eid": "4:x:" + id, "branchId": br, "seq": seq, "rev": seq, "recordedAt": t0.Add(time.Duration(seq) * time.Second),
			"baselineTokens": int64(40), "participantId": "pt_1", "ownerParticipantId": "pt_1", "runId": "run_1", "ownerRunId": "run_1"}
		for k, v := range extra {
			p[k] = v
		}
		r := newCachedRecord(kind, p)
		r.ownerRun = run
		list = append(list, r)
	}
	for i := 0; i < 10_000; i++ {
		add(recMessage, fmt.Sprintf("msg_%d", i), map[string]any{"role": "user", "content": "look up the renewal of account " + fmt.Sprint(i)})
		add(recCall, fmt.Sprintf("call_%d", i), map[string]any{"tool": "crm_lookup", "callId": fmt.Sprint(i), "arguments": `{"account":"a"}`})
		add(recArtifact, fmt.Sprintf("art_%d", i), map[string]any{"toolCallId": fmt.Sprintf("call_%d", i), "tool": "crm_lookup", "status": "succeeded", "resultBytes": int64(2048)})
		add(recMemory, fmt.Sprintf("mem_%d", i), map[string]any{"summary": "account renews in May", "sourceArtifactIds": []any{fmt.Sprintf("art_%d", i)}})
	}
	c.byBranch[br] = list
	for _, r := range list {
		c.byID[r.id] = r
	}
	lin := lineage{ConversationID: "cnv_b", Branches: []lineageBranch{{BranchID: br, Cutoff: openEnded}}}
	asOf := t0.Add(24 * time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		cands, _, _ := lineageCandidates(c, lin, asOf, map[string]string{"pt_1": "agent"})
		if len(cands) != len(list) {
			b.Fatalf("%d candidates from %d records", len(cands), len(list))
		}
	}
}
