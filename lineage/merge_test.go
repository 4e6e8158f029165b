package lineage

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

// wholeRead is what a whole read of a conversation brings: on each branch, rounds
// of a message, a call, its artifact and a memory at consecutive seqs, listed a kind after
// another as the read's statements answer them.
func wholeRead(rounds int, branches ...string) []*Record {
	kinds := []model.RecordType{model.TypeMessage, model.TypeToolCall, model.TypeArtifact, model.TypeMemory}
	var out []*Record
	for k, kind := range kinds {
		for _, br := range branches {
			for i := range rounds {
				seq := int64(i*len(kinds) + k + 1)
				id := fmt.Sprintf("%s_%s_%d", kind, br, i)
				out = append(out, &Record{Kind: kind, ID: id, BranchID: br, Seq: seq, Rev: seq,
					Base: model.Candidate{Type: kind, ID: id, BranchID: br, Seq: seq}})
			}
		}
	}
	return out
}

// A whole read merges a kind after another; each branch's list ends in seq order with every
// record once, as merging the records one by one in seq order leaves it. A later read
// places a record the copy did not hold at its seq, and a changed record keeps its place.
func TestMergeKeepsEachBranchInSeqOrder(t *testing.T) {
	records := wholeRead(50, "br_main", "br_fork")
	bySeq := func(a, b *Record) int { return int(a.Seq - b.Seq) }
	byOne := NewConversation("cnv", 0)
	sorted := slices.Clone(records)
	slices.SortStableFunc(sorted, bySeq)
	for _, r := range sorted {
		copied := *r
		byOne.Merge(&copied)
	}
	// Held back from the whole read: a message in the middle of br_main.
	late := slices.IndexFunc(records, func(r *Record) bool { return r.BranchID == "br_main" && r.Seq == 101 })
	whole := NewConversation("cnv", 0)
	whole.Merge(append(slices.Clone(records[:late]), records[late+1:]...)...)
	changed := *records[late+1]
	changed.Rev = 1000
	held := *records[len(records)-1]
	whole.Merge(&held, &changed, records[late])
	for _, br := range []string{"br_main", "br_fork"} {
		got, want := whole.byBranch[br], byOne.byBranch[br]
		if !slices.EqualFunc(got, want, func(a, b *Record) bool { return a.ID == b.ID }) {
			t.Errorf("%s lists %d records, want %d in seq order", br, len(got), len(want))
		}
		if !slices.IsSortedFunc(got, bySeq) {
			t.Errorf("%s is not in seq order", br)
		}
	}
	if got := whole.byID[changed.ID]; got.Rev != 1000 {
		t.Errorf("the changed record reads rev %d, want 1000", got.Rev)
	}
}

// BenchmarkMergeWholeRead merges a whole read of 10,000 rounds on one branch into a new copy,
// listed a kind after another as the read answers it.
func BenchmarkMergeWholeRead(b *testing.B) {
	records := wholeRead(10_000, "br_main")
	for b.Loop() {
		c := NewConversation("cnv", 0)
		fresh := make([]*Record, len(records))
		for i, r := range records {
			copied := *r
			fresh[i] = &copied
		}
		c.Merge(fresh...)
	}
}
