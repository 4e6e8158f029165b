package policy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

// A judgement's priority order extended from its parent's (ExtendPriority) is the order
// sorting its verdicts gives (NewPriority), over generated judgements extended again and
// again: verdicts dropped, added anywhere, and changed in tier or relevance, with ties on
// every key but the record's id.
func TestExtendedPriorityIsSorted(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 9))
		n := 0
		verdict := func() Verdict {
			n++
			c := &model.Candidate{Type: []model.RecordType{model.TypeMessage, model.TypeMemory, model.TypeArtifact}[r.IntN(3)],
				ID: fmt.Sprintf("r%03d_%d", r.IntN(50), n), Depth: int64(r.IntN(2)), Seq: int64(r.IntN(40))}
			if r.IntN(3) == 0 {
				conf := float64(r.IntN(3)) / 2
				c.Memory.Confidence = &conf
			}
			return Verdict{Candidate: c, Tier: r.IntN(tierNone + 1), Relevance: r.IntN(3)}
		}
		verdicts := make([]Verdict, r.IntN(60))
		for i := range verdicts {
			verdicts[i] = verdict()
		}
		p := NewPriority(verdicts)
		for step := range 8 {
			var next []Verdict
			var was []int
			for i := range verdicts {
				switch r.IntN(10) {
				case 0: // dropped
					continue
				case 1: // judged again: another tier or relevance
					vd := verdicts[i]
					vd.Tier, vd.Relevance = r.IntN(tierNone+1), r.IntN(3)
					next, was = append(next, vd), append(was, -1)
				default:
					next, was = append(next, verdicts[i]), append(was, i)
				}
				if r.IntN(8) == 0 {
					next, was = append(next, verdict()), append(was, -1)
				}
			}
			got := ExtendPriority(p, next, was)
			want := NewPriority(next)
			if !slices.Equal(got.order, want.order) || !slices.Equal(got.rank, want.rank) {
				t.Fatalf("seed %d, step %d: extended order %v, sorted %v", seed, step, got.order, want.order)
			}
			verdicts, p = next, got
		}
	}
}
