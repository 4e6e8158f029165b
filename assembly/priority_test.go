package assembly

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// The budget walks a judgement's priority order (policy.Priority, computed once per
// judgement) instead of sorting what it considers in each assembly: over the golden test's
// generated lineages, under budgets from a tenth of what they include to all of it, it
// leaves out, gives back and counts exactly what sorting does.
func TestBudgetInPriorityOrderIsBudgetSorting(t *testing.T) {
	v, err := policy.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{Now: func() time.Time { return time.Now() }}
	fits := 0
	for seed := uint64(1); seed <= goldenAssemblies; seed++ {
		g, req := generatedLineage(seed)
		s.Graph = g
		req = completed(req, g.snap, v)
		fits += compareFits(t, s, v, req, g.snap, fmt.Sprintf("seed %d", seed))
	}
	// Judgements extended from the judgement before a write, whose order is extended too.
	g := newCopyGraph(300)
	s = NewService(g)
	for i := range 40 {
		g.write(i)
		req := completed(g.request(), model.Snapshot{}, v)
		req.PolicyVersion = v.ID
		if _, err := s.compute(t.Context(), "acct", req, model.SnapshotOptions{}, v); err != nil {
			t.Fatal(err)
		}
		snap, err := g.LineageSnapshot(t.Context(), "acct", req, model.SnapshotOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fits += compareFits(t, s, v, completed(req, snap, v), snap, fmt.Sprintf("after write %d", i))
	}
	if g.extended < 20 {
		t.Fatalf("%d views extended: the path meant was not exercised", g.extended)
	}
	t.Logf("%d fits compared", fits)
}

// compareFits fits the judgement of a snapshot under budgets from a tenth of what it
// includes to all of it, in priority order and sorting, and fails on any difference; it
// returns how many fits it compared.
func compareFits(t *testing.T, s *Service, v policy.Version, req model.AssemblyRequest, snap model.Snapshot, what string) int {
	t.Helper()
	tk := MustTokenizer(EncodingForModel(req.Model))
	var timings model.Timings
	j, err := s.judgement(t.Context(), "acct", v, req, snap, tk, &timings)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if j.priority == nil {
		t.Fatalf("%s: the judgement has no priority order", what)
	}
	first, _ := leadOf(snap.Instructions, tk)
	whole, _ := budgetDraft(j, req, snap, tk, first)
	total := whole.measure()
	fits := 0
	for _, budget := range []int{total / 10, total / 3, total * 2 / 3, total} {
		ordered, prices := budgetDraft(j, req, snap, tk, first)
		got := fit(j, &ordered, prices, budget)
		sorting, prices := budgetDraft(j, req, snap, tk, first)
		prices.Priority = nil
		want := fit(j, &sorting, prices, budget)
		if got != want || !reflect.DeepEqual(ordered.verdicts, sorting.verdicts) || !reflect.DeepEqual(ordered.messages, sorting.messages) {
			for k := range sorting.verdicts {
				if !reflect.DeepEqual(ordered.verdicts[k], sorting.verdicts[k]) {
					t.Fatalf("%s, budget %d: in priority order %d tokens, sorting %d; first difference at %s:\n%s\nsorting:\n%s",
						what, budget, got, want, sorting.verdicts[k].Candidate.ID, describe(ordered.verdicts[k]), describe(sorting.verdicts[k]))
				}
			}
			t.Fatalf("%s, budget %d: in priority order %d tokens, sorting %d", what, budget, got, want)
		}
		fits++
	}
	return fits
}
