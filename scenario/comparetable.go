package scenario

import (
	"fmt"
	"strings"

	"github.com/ctxgraph/ctxgraph/peers"
)

// CompareSummary renders, per budget and strategy, the totals over every compared
// assembly: tokens sent, checks passed, leaks, orphaned tool pairs, the assemblies whose
// every check passed, the requests that counted more tokens than the budget, and the
// requests with nothing but system text.
func CompareSummary(comps []Comparison) string {
	var b strings.Builder
	b.WriteString("| budget | strategy | tokens sent | checks passed | leaks | orphaned tool pairs | assemblies passing every check | requests over the budget | empty requests |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, kind := range []string{BudgetOwn, BudgetCtxgraph} {
		for _, s := range peers.Strategies {
			tokens, passed, total, leaks, orphans, clean, over, empty, n := 0, 0, 0, 0, 0, 0, 0, 0, 0
			for _, c := range comps {
				r, ok := c.row(s, kind)
				if !ok {
					continue
				}
				n++
				tokens, passed, total = tokens+r.Tokens, passed+r.Passed, total+r.Total
				leaks, orphans = leaks+len(r.Leaks), orphans+r.Orphans
				if r.Passed == r.Total {
					clean++
				}
				if r.Tokens > r.Budget {
					over++
				}
				if r.Empty {
					empty++
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d of %d | %d | %d | %d of %d | %d | %d |\n", budgetText(kind), s, tokens, passed, total, leaks, orphans, clean, n, over, empty)
		}
	}
	return b.String()
}

// CompareLegend reads CompareTable's cells.
const CompareLegend = "Per assembly: tokens sent · checks passed/of all · L leaks · O orphaned tool pairs · empty: nothing but system text, which no provider accepts."

// CompareTable renders one row per assembly and budget, one column per strategy: tokens
// sent, checks passed of all, leaks (L), orphaned tool pairs (O), and "empty" for a request
// with nothing but system text.
func CompareTable(comps []Comparison) string {
	var b strings.Builder
	b.WriteString("| scenario | assembly | budget |")
	for _, s := range peers.Strategies {
		b.WriteString(" " + cell(s) + " |")
	}
	b.WriteString("\n|---|---|---:|" + strings.Repeat("---:|", len(peers.Strategies)) + "\n")
	for _, c := range comps {
		for _, kind := range []string{BudgetOwn, BudgetCtxgraph} {
			budget := c.OwnBudget
			if kind == BudgetCtxgraph {
				budget = c.CtxgraphTokens
			}
			fmt.Fprintf(&b, "| %s | %s | %d (%s) |", cell(c.Scenario), cell(c.Assembly), budget, kind)
			for _, s := range peers.Strategies {
				r, _ := c.row(s, kind)
				fmt.Fprintf(&b, " %d · %d/%d", r.Tokens, r.Passed, r.Total)
				if len(r.Leaks) > 0 {
					fmt.Fprintf(&b, " · L%d", len(r.Leaks))
				}
				if r.Orphans > 0 {
					fmt.Fprintf(&b, " · O%d", r.Orphans)
				}
				if r.Empty {
					b.WriteString(" · empty")
				}
				b.WriteString(" |")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// CompareLosses lists, per assembly and budget, the checks the strategies failed: each
// expected string lost, each leak sent, the orphaned tool pairs; strategies that failed
// alike share a line.
func CompareLosses(comps []Comparison) string {
	var b strings.Builder
	for _, c := range comps {
		for _, kind := range []string{BudgetOwn, BudgetCtxgraph} {
			var order []string
			by := map[string][]string{}
			for _, s := range peers.Strategies {
				r, _ := c.row(s, kind)
				var parts []string
				if len(r.Missing) > 0 {
					parts = append(parts, "lost "+quoteAll(r.Missing))
				}
				if len(r.Leaks) > 0 {
					parts = append(parts, "leaked "+quoteAll(r.Leaks))
				}
				if r.Orphans > 0 {
					parts = append(parts, fmt.Sprintf("%d orphaned tool pair%s", r.Orphans, map[bool]string{true: "s"}[r.Orphans > 1]))
				}
				if len(parts) == 0 {
					continue
				}
				loss := strings.Join(parts, "; ")
				if by[loss] == nil {
					order = append(order, loss)
				}
				by[loss] = append(by[loss], s)
			}
			for _, loss := range order {
				fmt.Fprintf(&b, "- %s %s, at %s, %s: %s\n", c.Scenario, c.Assembly, budgetText(kind), strings.Join(by[loss], ", "), loss)
			}
		}
	}
	return b.String()
}

// Target is one of the comparison's targets and whether the run met it.
type Target struct {
	Name string
	Met  bool
	// Detail gives the figures, and every assembly that missed it.
	Detail string
}

// CompareTargets checks the comparison's targets: ctxgraph passes every check of every
// assembly (the scenario's full expectations, the text checks and the tool pairing); at
// ctxgraph's own token count no peer strategy passes more checks; ctxgraph sends no more
// tokens than the cheapest peer request, at either budget, that passes as many checks. Two
// more are read beside them: the refit (ctxgraph given its own count as the budget) against
// the peers at that budget, and the replay against the server's baseline, which it must
// count exactly or it is not the baseline.
func CompareTargets(comps []Comparison) []Target {
	every := Target{Name: "ctxgraph passes every check of every scenario", Met: true}
	more := Target{Name: "at ctxgraph's own token count, no peer strategy passes more checks", Met: true}
	fewer := Target{Name: "ctxgraph sends no more tokens than the best peer that passes as many checks", Met: true}
	refit := Target{Name: "given its own token count as the budget (the refit), ctxgraph passes as many checks as any peer at that budget", Met: true}
	replay := Target{Name: "the replay counts exactly the server's baseline (tokens.baseline)", Met: true}
	var everyMiss, moreMiss, fewerMiss, refitMiss, replayMiss []string
	passedAll, compared := 0, 0
	for _, c := range comps {
		name := c.Scenario + " " + c.Assembly
		mine, _ := c.row(peers.StrategyCtxgraph, BudgetOwn)
		if len(c.CtxgraphFailures) > 0 || mine.Passed < mine.Total {
			everyMiss = append(everyMiss, fmt.Sprintf("%s (%d expectation failures, %d of %d checks)", name, len(c.CtxgraphFailures), mine.Passed, mine.Total))
		} else {
			passedAll++
		}
		if c.ReplayBaseline != c.Baseline {
			replayMiss = append(replayMiss, fmt.Sprintf("%s (replay %d, baseline %d)", name, c.ReplayBaseline, c.Baseline))
		}
		for _, r := range c.Rows {
			if r.Strategy == peers.StrategyCtxgraph {
				continue
			}
			if r.BudgetKind == BudgetCtxgraph && r.Passed > mine.Passed {
				moreMiss = append(moreMiss, fmt.Sprintf("%s: %s passes %d, ctxgraph %d", name, r.Strategy, r.Passed, mine.Passed))
			}
			if r.BudgetKind == BudgetCtxgraph && r.Passed > c.Refit.Passed {
				refitMiss = append(refitMiss, fmt.Sprintf("%s: %s passes %d, the refit %d", name, r.Strategy, r.Passed, c.Refit.Passed))
			}
			if r.Passed >= mine.Passed {
				compared++
				if r.Tokens < mine.Tokens {
					fewerMiss = append(fewerMiss, fmt.Sprintf("%s: %s at %s passes %d with %d tokens, ctxgraph %d with %d",
						name, r.Strategy, budgetText(r.BudgetKind), r.Passed, r.Tokens, mine.Passed, mine.Tokens))
				}
			}
		}
	}
	every.Met, every.Detail = len(everyMiss) == 0, fmt.Sprintf("%d of %d assemblies", passedAll, len(comps))+missText(everyMiss)
	more.Met, more.Detail = len(moreMiss) == 0, fmt.Sprintf("%d assemblies compared", len(comps))+missText(moreMiss)
	fewer.Met, fewer.Detail = len(fewerMiss) == 0, fmt.Sprintf("%d peer requests passed as many checks as ctxgraph", compared)+missText(fewerMiss)
	refit.Met, refit.Detail = len(refitMiss) == 0, fmt.Sprintf("%d assemblies compared", len(comps))+missText(refitMiss)
	replay.Met, replay.Detail = len(replayMiss) == 0, fmt.Sprintf("%d assemblies", len(comps))+missText(replayMiss)
	return []Target{every, more, fewer, refit, replay}
}

// CompareRefits lists the assemblies whose refit (ctxgraph again, with its own token count
// as the budget) sent other tokens or passed other checks than the assembly.
func CompareRefits(comps []Comparison) string {
	var b strings.Builder
	for _, c := range comps {
		mine, _ := c.row(peers.StrategyCtxgraph, BudgetOwn)
		r := c.Refit
		if r.Tokens == mine.Tokens && r.Passed == mine.Passed {
			continue
		}
		fmt.Fprintf(&b, "- %s %s: budget %d: %d tokens, %d of %d checks (assembly: %d tokens, %d of %d)", c.Scenario, c.Assembly,
			r.Budget, r.Tokens, r.Passed, r.Total, mine.Tokens, mine.Passed, mine.Total)
		if len(r.Missing) > 0 {
			b.WriteString("; lost " + quoteAll(r.Missing))
		}
		if len(r.Leaks) > 0 {
			b.WriteString("; leaked " + quoteAll(r.Leaks))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func missText(miss []string) string {
	if len(miss) == 0 {
		return ""
	}
	return "; missed by " + strings.Join(miss, "; ")
}

func (c Comparison) row(strategy, kind string) (Row, bool) {
	for _, r := range c.Rows {
		if r.Strategy == strategy && r.BudgetKind == kind {
			return r, true
		}
	}
	return Row{}, false
}

func budgetText(kind string) string {
	if kind == BudgetCtxgraph {
		return "ctxgraph's tokens"
	}
	return "scenario's budget"
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
