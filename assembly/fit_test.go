package assembly

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// TestAnAssemblyFitsItsOwnSize asks for each generated assembly again with the tokens it
// used as the budget: the same request must come back. A request of n tokens fits a budget
// of n, so a fit that leaves something out there misjudged what its records cost. Requests
// with tool rounds are left out: a round's result and the line saying it is withheld stand
// in for each other, so no sum of prices is exact there, and the budget measures instead.
func TestAnAssemblyFitsItsOwnSize(t *testing.T) {
	v, err := policy.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{Now: func() time.Time { return time.Now() }}
	asked, differ := 0, 0
	for seed := range goldenAssemblies {
		g, req := generatedLineage(uint64(seed + 1))
		s.Graph = g
		first, err := s.compute(context.Background(), "acct", req, model.SnapshotOptions{}, v)
		if err != nil {
			t.Fatalf("seed %d: %v", seed+1, err)
		}
		if first.OverBudget || req.ToolRounds {
			continue
		}
		req.TokenBudget = first.Tokens.Assembled
		again, err := s.compute(context.Background(), "acct", req, model.SnapshotOptions{}, v)
		if err != nil {
			t.Fatalf("seed %d: %v", seed+1, err)
		}
		asked++
		a, _ := json.Marshal(struct{ M, I any }{first.Messages, first.Included})
		b, _ := json.Marshal(struct{ M, I any }{again.Messages, again.Included})
		if string(a) != string(b) {
			if differ < 3 {
				t.Errorf("seed %d: %d tokens at budget %d, but %d at budget %d; it now includes %s\nwhere it included %s",
					seed+1, first.Tokens.Assembled, first.Tokens.Budget, again.Tokens.Assembled, req.TokenBudget, b, a)
			}
			differ++
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d assemblies changed when asked again at their own size", differ, asked)
	}
}
