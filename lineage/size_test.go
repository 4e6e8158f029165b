package lineage

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/extract"
	"github.com/ctxgraph/ctxgraph/model"
)

// sizedConversation builds a copy of rounds rounds as the seeded benchmark conversations
// have them: a user message, a tool call, its artifact, a memory and the answer, with
// strings made anew for each record as a read from Neo4j makes them.
func sizedConversation(rounds int) *Conversation {
	c := NewConversation("cnv_size", 0)
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var seq int64
	text := func(prefix string, i, n int) string {
		return fmt.Sprintf("%s %d %s", prefix, i, strings.Repeat("x", n))
	}
	add := func(kind model.RecordType, id string, base model.Candidate) {
		seq++
		base.ID, base.BranchID, base.Seq, base.Type = id, "br_main", seq, kind
		base.OwnerRunID, base.OwnerParticipantID, base.Visibility = fmt.Sprintf("run_%d", seq/5), "pt_1", model.VisibilityBranch
		c.Merge(&Record{Kind: kind, ID: id, ElementID: fmt.Sprintf("4:0f3a:%d", seq), BranchID: "br_main", Seq: seq, Rev: seq,
			RecordedAt: t0.Add(time.Duration(seq) * time.Second), Baseline: 40, Base: base})
	}
	for i := range rounds {
		add(model.TypeMessage, fmt.Sprintf("msg_u%d", i), model.Candidate{Message: model.MessageFacts{Role: "user", Content: text("what about", i, 120),
			Stated: []model.StatedValue{{Text: fmt.Sprint(i), Locator: "bytes=11-14"}}}})
		add(model.TypeToolCall, fmt.Sprintf("call_%d", i), model.Candidate{Tool: model.ToolFacts{Name: "search", Status: "ok"},
			Call: model.CallFacts{CallID: fmt.Sprintf("toolu_%d", i), Arguments: text(`{"q":`, i, 40)}})
		add(model.TypeArtifact, fmt.Sprintf("art_%d", i), model.Candidate{Tool: model.ToolFacts{Name: "search", Status: "ok"},
			Artifact: model.ArtifactFacts{ToolCallID: fmt.Sprintf("call_%d", i), ResultBytes: 4000}})
		add(model.TypeMemory, fmt.Sprintf("mem_%d", i), model.Candidate{Memory: model.MemoryFacts{Summary: text("search found", i, 200),
			SafeSummary: text("search returned", i, 40), FreshnessClass: "session", SourceArtifactIDs: []string{fmt.Sprintf("art_%d", i)},
			LiveSourceIDs: []string{fmt.Sprintf("art_%d", i)}}})
		add(model.TypeMessage, fmt.Sprintf("msg_a%d", i), model.Candidate{Message: model.MessageFacts{Role: "assistant", Content: text("the answer is", i, 300)}})
	}
	return c
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// The bytes a copy is charged follow the heap it holds: within a third either way, for its
// records and for the view built on them. The bound on the caches is only as good as this.
func TestSizeEstimateFollowsTheHeap(t *testing.T) {
	before := liveHeap()
	c := sizedConversation(4000)
	records := liveHeap() - before
	estimate := c.Bytes()
	t.Logf("records: estimated %d bytes, heap %d (%.2f)", estimate, records, float64(estimate)/float64(records))
	if ratio := float64(estimate) / float64(records); ratio < 0.67 || ratio > 1.33 {
		t.Errorf("records: estimated %d bytes, the heap grew by %d (ratio %.2f)", estimate, records, ratio)
	}

	lin := Lineage{Branches: []Branch{{BranchID: "br_main", Cutoff: OpenEnded}}}
	before = liveHeap()
	var snap model.Snapshot
	c.RLock()
	if _, err := c.Select(lin, model.AssemblyRequest{BranchID: "br_main", AsOf: time.Now()}, model.SnapshotOptions{}, map[string]string{}, &snap); err != nil {
		t.Fatal(err)
	}
	c.RUnlock()
	view := liveHeap() - before
	viewEstimate := c.Bytes() - estimate
	t.Logf("view: estimated %d bytes, heap %d (%.2f)", viewEstimate, view, float64(viewEstimate)/float64(view))
	if ratio := float64(viewEstimate) / float64(view); ratio < 0.67 || ratio > 1.33 {
		t.Errorf("view: estimated %d bytes, the heap grew by %d (ratio %.2f)", viewEstimate, view, ratio)
	}
	runtime.KeepAlive(c)
	runtime.KeepAlive(snap)
}

// The cache drops the least recently used copies while they hold more than its limit in
// bytes, and keeps none larger than the whole limit, without dropping the others for it.
func TestCacheHoldsItsLimitInBytes(t *testing.T) {
	one := sizedConversation(100).Bytes()
	rc := NewCache(3*one + one/2)
	for i := range 5 {
		c := sizedConversation(100)
		c.id = fmt.Sprintf("cnv_%d", i)
		rc.Store("acc_1", []Fork{{ID: fmt.Sprintf("br_%d", i)}}, c)
	}
	st := rc.Stats()
	if len(rc.convs) != 3 || st.Dropped != 2 || st.Bytes != 3*one || st.Limit != 3*one+one/2 {
		t.Fatalf("five copies of %d bytes in a cache of %d: %d kept, %d dropped, %d bytes held", one, st.Limit, len(rc.convs), st.Dropped, st.Bytes)
	}
	for i, want := range []bool{false, false, true, true, true} {
		c, known := rc.Lookup("acc_1", fmt.Sprintf("br_%d", i))
		if (c != nil) != want || known != want {
			t.Errorf("copy %d: kept %v (branch known %v), want %v", i, c != nil, known, want)
		}
	}
	big := sizedConversation(400)
	big.id = "cnv_big"
	rc.Store("acc_1", []Fork{{ID: "br_big"}}, big)
	if c, _ := rc.Lookup("acc_1", "br_big"); c != nil || len(rc.convs) != 3 || rc.Stats().Bytes > rc.Stats().Limit {
		t.Errorf("a copy larger than the limit: kept %v, %d copies left (want the 3 before), %d bytes held of %d",
			c != nil, len(rc.convs), rc.Stats().Bytes, rc.Stats().Limit)
	}
}

// The copy works out each memory's terms once, when it takes the record, and again when the
// record changes: a view's memories carry the terms of their summaries as they stand.
func TestTheCopyWorksOutEachMemorysTerms(t *testing.T) {
	c := NewConversation("cnv_terms", 0)
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	memory := func(rev int64, summary string) *Record {
		return &Record{Kind: model.TypeMemory, ID: "mem_1", ElementID: "4:0f3a:1", BranchID: "br_main", Seq: 1, Rev: rev,
			RecordedAt: t0, Base: model.Candidate{Type: model.TypeMemory, ID: "mem_1", BranchID: "br_main", Seq: 1,
				Visibility: model.VisibilityBranch, Memory: model.MemoryFacts{Summary: summary}}}
	}
	lin := Lineage{ConversationID: "cnv_terms", Branches: []Branch{{BranchID: "br_main", Cutoff: OpenEnded}}}
	for i, summary := range []string{"Acme renewal: EUR 340k, renewal in May", "Acme churned; the renewal is off"} {
		rev := int64(i + 1)
		c.Merge(memory(rev, summary))
		c.Advance("br_main", rev)
		var snap model.Snapshot
		if _, err := c.Select(lin, model.AssemblyRequest{BranchID: "br_main", AsOf: t0.Add(time.Hour)}, model.SnapshotOptions{}, map[string]string{}, &snap); err != nil {
			t.Fatal(err)
		}
		if len(snap.Candidates) != 1 {
			t.Fatalf("the view holds %d candidates, want the memory", len(snap.Candidates))
		}
		if got, want := snap.Candidates[0].Memory.Terms, extract.Terms(summary); !slices.Equal(got, want) || got == nil {
			t.Errorf("at rev %d the memory's terms are %q, want %q", rev, got, want)
		}
	}
}
