package lineage

import (
	"fmt"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// BenchmarkLineageCandidates builds the view of a 10,000-round single-branch lineage as an
// assembly right after a write does: per round a message, a tool call, its artifact and a
// memory, about 40,000 candidates.
func BenchmarkLineageCandidates(b *testing.B) {
	c := NewConversation("cnv_b", 0)
	const br = "br_main"
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	c.MergeRun(Run{ID: "run_1", Rev: 1, Status: "running"})
	seq := int64(0)
	add := func(kind model.RecordType, id string, base model.Candidate) {
		seq++
		base.ID, base.BranchID, base.Seq, base.InLineage = id, br, seq, true
		base.OwnerParticipantID, base.OwnerRunID = "pt_1", "run_1"
		c.Merge(&Record{Kind: kind, ID: id, ElementID: "4:x:" + id, BranchID: br, Seq: seq, Rev: seq,
			RecordedAt: t0.Add(time.Duration(seq) * time.Second), Baseline: 40, Base: base})
	}
	for i := 0; i < 10_000; i++ {
		add(model.TypeMessage, fmt.Sprintf("msg_%d", i), model.Candidate{Type: model.TypeMessage,
			Message: model.MessageFacts{Role: "user", Content: "look up the renewal of account " + fmt.Sprint(i)}})
		add(model.TypeToolCall, fmt.Sprintf("call_%d", i), model.Candidate{Type: model.TypeToolCall,
			Tool: model.ToolFacts{Name: "crm_lookup", Status: model.ToolPending},
			Call: model.CallFacts{CallID: fmt.Sprint(i), Arguments: `{"account":"a"}`}})
		add(model.TypeArtifact, fmt.Sprintf("art_%d", i), model.Candidate{Type: model.TypeArtifact,
			Tool:     model.ToolFacts{Name: "crm_lookup", Status: model.ToolSucceeded},
			Artifact: model.ArtifactFacts{ToolCallID: fmt.Sprintf("call_%d", i), ResultBytes: 2048}})
		add(model.TypeMemory, fmt.Sprintf("mem_%d", i), model.Candidate{Type: model.TypeMemory,
			Memory: model.MemoryFacts{Summary: "account renews in May", SourceArtifactIDs: []string{fmt.Sprintf("art_%d", i)}}})
	}
	lin := Lineage{ConversationID: "cnv_b", Branches: []Branch{{BranchID: br, Cutoff: OpenEnded}}}
	asOf := t0.Add(24 * time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		cands, _, _, _ := lineageCandidates(c, lin, asOf, map[string]string{"pt_1": "agent"})
		if len(cands) != int(seq) {
			b.Fatalf("%d candidates from %d records", len(cands), seq)
		}
	}
}
