package lineage

import (
	"fmt"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// The tallied count of an untraced assembly equals the walk a traced one makes, as records
// are appended, inserted before the end and recorded after asOf.
func TestExcludedTallyMatchesWalk(t *testing.T) {
	c := NewConversation("cnv_t", 0)
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	kinds := []model.RecordType{model.TypeMessage, model.TypeToolCall, model.TypeArtifact, model.TypeMemory, model.TypeCheckpoint, model.TypeSkills}
	n := 0
	add := func(branch string, seq int64, visibility model.Visibility) {
		n++
		kind := kinds[n%len(kinds)]
		c.Merge(&Record{Kind: kind, ID: fmt.Sprintf("r%d", n), ElementID: fmt.Sprintf("4:x:%d", n), BranchID: branch, Seq: seq,
			Rev: 1, RecordedAt: t0.Add(time.Duration(n) * time.Minute), Base: model.Candidate{Visibility: visibility}})
	}
	for i := int64(1); i <= 40; i++ {
		add("br_main", i*2, "branch")
		if i%3 == 0 {
			add("br_fork", i, "conversation")
		}
	}
	lineages := []Lineage{
		{Branches: []Branch{{BranchID: "br_main", Cutoff: OpenEnded}}},
		{Branches: []Branch{{BranchID: "br_fork", Cutoff: OpenEnded}, {BranchID: "br_main", Cutoff: 31}}},
	}
	check := func(step string, asOf time.Time) {
		t.Helper()
		for i, lin := range lineages {
			walked, _ := excludedRecords(c, lin, asOf, true)
			tallied, _ := excludedRecords(c, lin, asOf, false)
			if walked != tallied || walked == 0 {
				t.Fatalf("%s, lineage %d: tally %d, walk %d", step, i, tallied, walked)
			}
		}
	}
	late := t0.Add(24 * time.Hour)
	check("first", late)
	check("unchanged", late)
	for i := int64(41); i <= 45; i++ {
		add("br_main", i*2, "branch")
	}
	check("appended", late)
	add("br_main", 3, "branch") // between existing records
	check("inserted", late)
	check("as of a past time", t0.Add(30*time.Minute))
}
