package scenario

import (
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/peers"
)

// comparison builds a comparison whose rows at both budgets are the given (tokens, passed)
// per strategy, out of 3 checks each.
func comparison(rows map[string][2]int) Comparison {
	c := Comparison{Scenario: "s", Assembly: "a1", OwnBudget: 8000, CtxgraphTokens: rows[peers.StrategyCtxgraph][0],
		Baseline: 900, ReplayBaseline: 900}
	for _, kind := range []string{BudgetOwn, BudgetCtxgraph} {
		for s, v := range rows {
			c.Rows = append(c.Rows, Row{Strategy: s, BudgetKind: kind, Budget: 100, Tokens: v[0],
				Outcome: peers.Outcome{Passed: v[1], Total: 3}})
		}
	}
	c.Refit, _ = c.row(peers.StrategyCtxgraph, BudgetCtxgraph)
	return c
}

func TestCompareTargets(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows map[string][2]int
		// met lists, per target, whether it is met.
		met []bool
	}{
		{"ctxgraph passes all, peers lose", map[string][2]int{peers.StrategyCtxgraph: {100, 3}, peers.StrategyReplay: {900, 1}, peers.StrategyLangChain: {20, 2}},
			[]bool{true, true, true, true, true}},
		{"a peer passes as many with fewer tokens", map[string][2]int{peers.StrategyCtxgraph: {100, 3}, peers.StrategyLangChain: {20, 3}},
			[]bool{true, true, false, true, true}},
		{"a peer passes more", map[string][2]int{peers.StrategyCtxgraph: {100, 2}, peers.StrategyReplay: {900, 3}},
			[]bool{false, false, true, false, true}},
	} {
		got := CompareTargets([]Comparison{comparison(tc.rows)})
		if len(got) != len(tc.met) {
			t.Fatalf("%s: got %d targets, want %d", tc.name, len(got), len(tc.met))
		}
		for i, target := range got {
			if target.Met != tc.met[i] {
				t.Errorf("%s: %q: got met %v, want %v (%s)", tc.name, target.Name, target.Met, tc.met[i], target.Detail)
			}
		}
	}
}

func TestCompareLossesGroupsStrategies(t *testing.T) {
	c := Comparison{Scenario: "s", Assembly: "a1"}
	for _, s := range []string{peers.StrategyReplay, peers.StrategyLangChain} {
		c.Rows = append(c.Rows, Row{Strategy: s, BudgetKind: BudgetOwn, Outcome: peers.Outcome{Leaks: []string{"SECRET"}}})
	}
	got := CompareLosses([]Comparison{c})
	want := `- s a1, at scenario's budget, history replay, LangChain trim_messages: leaked "SECRET"` + "\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !strings.Contains(CompareTable([]Comparison{c}), "L1") {
		t.Errorf("the table does not mark the leak: %s", CompareTable([]Comparison{c}))
	}
}
