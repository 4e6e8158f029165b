package policy

import (
	"sort"

	"github.com/ctxgraph/ctxgraph/model"
)

// Fit is the budget stage (DESIGN §4): it fits the judged records into budget tokens and
// changes their verdicts to say how, in one priority order (higherPriority). Protected
// recovery state that alone would overflow the budget is compacted, then aggregated
// (compactRecovery); the other included records fill what is left tier by tier, and the
// duplicates of raw sources trimmed on the way come back (fill); conflicts are settled
// among what survived. Since the tokens of lines joined can differ by a token or two from
// the sum of their costs, measure then renders the verdicts as they stand and counts the
// whole request, and while that is over the budget the record of lowest priority is left
// out, or, with only protected records left, recovery shrunk further. costs[i] is the
// token cost of verdict i as rendered and compactCosts[i] that of its compact form; fixed
// is the cost of everything else (instructions, per-message overhead). It returns the
// tokens of the last measure: over the budget only when nothing is left to cut.
func Fit(verdicts []Verdict, costs, compactCosts []int, fixed, budget int, measure func() int) int {
	compactRecovery(verdicts, costs, compactCosts, fixed, budget)
	fill(verdicts, costs, fixed, budget)
	assembled := measure()
	for assembled > budget {
		if i := lowestPriority(verdicts); i >= 0 {
			vd := &verdicts[i]
			vd.Decision = omit(vd.Candidate, model.PolicyBudget, RuleBudgetFinalFit, model.ReasonBudget)
			vd.Tier = tierNone
			markConflicts(verdicts)
		} else if _, changed := shrinkRecovery(verdicts, costs, compactCosts, assembled-budget); !changed {
			break
		}
		assembled = measure()
	}
	return assembled
}

// fill fits the included records into the token budget in priority order: protected
// recovery state, the current message and directives always; then the conversation
// window, newest first and without gaps; then exact evidence, the run's checkpoint and
// skills; then memories ranked by relevance to the current user message, recency and
// confidence. Records that do not fit are turned into `budget` omissions. It returns the
// tokens used by its own estimate (the sum of costs).
func fill(verdicts []Verdict, costs []int, fixed, budget int) int {
	used := fixed
	var rest []int
	for i := range verdicts {
		vd := &verdicts[i]
		if !vd.Included() {
			continue
		}
		if vd.Protected {
			used += costs[i]
			continue
		}
		rest = append(rest, i)
	}
	sort.SliceStable(rest, func(x, y int) bool { return higherPriority(&verdicts[rest[x]], &verdicts[rest[y]]) })
	windowClosed := false
	for _, i := range rest {
		vd := &verdicts[i]
		fits := used+costs[i] <= budget
		if vd.Tier == TierWindow {
			// The window stays contiguous: once an older turn does not fit, none before it goes in.
			fits = fits && !windowClosed
			windowClosed = windowClosed || !fits
		}
		if fits {
			used += costs[i]
			continue
		}
		vd.Decision = omit(vd.Candidate, model.PolicyBudget, budgetRules[vd.Tier], model.ReasonBudget)
		vd.Tier = tierNone
	}
	used = reviveDuplicates(verdicts, costs, used, budget)
	markConflicts(verdicts)
	return used
}

// reviveDuplicates brings back, within the budget, the memories left out as duplicates of
// raw sources that the budget then trimmed: the fact must not vanish with its evidence.
// costs of such memories must be given as their ordinary memory form.
func reviveDuplicates(verdicts []Verdict, costs []int, used, budget int) int {
	raw := map[string]bool{}
	for i := range verdicts {
		vd := &verdicts[i]
		if vd.Included() && vd.Decision.As == model.AsRaw {
			raw[vd.Candidate.ID] = true
		}
	}
	var revived []int
	for i := range verdicts {
		vd := &verdicts[i]
		if vd.RawDuplicate && !vd.Included() && !allIn(vd.Candidate.Memory.LiveSourceIDs, raw) {
			revived = append(revived, i)
		}
	}
	sort.SliceStable(revived, func(x, y int) bool { return higherPriority(&verdicts[revived[x]], &verdicts[revived[y]]) })
	for _, i := range revived {
		vd := &verdicts[i]
		if costs[i] > 0 && used+costs[i] <= budget {
			used += costs[i]
			vd.Decision = include(vd.Candidate, model.PolicyMemory, RuleMemoryCurrent.And(RuleRawSourceTrimmed), model.AsMemory, "")
			vd.Tier = TierMemory
			continue
		}
		vd.Decision = omit(vd.Candidate, model.PolicyBudget, RuleBudgetMemories, model.ReasonBudget)
	}
	return used
}

// higherPriority orders unprotected records for the budget: a before b when the budget
// keeps a rather than b. It is a total order (ids break the last ties), so that the
// record fill leaves out first and the one the final trim gives up first are the same.
func higherPriority(a, b *Verdict) bool {
	if a.Tier != b.Tier {
		return a.Tier < b.Tier
	}
	ca, cb := a.Candidate, b.Candidate
	if a.Tier == TierMemory {
		if a.Relevance != b.Relevance {
			return a.Relevance > b.Relevance
		}
		if ca.Depth != cb.Depth || ca.Seq != cb.Seq {
			return lineageLess(cb, ca)
		}
		if confidence(ca) != confidence(cb) {
			return confidence(ca) > confidence(cb)
		}
		return ca.ID < cb.ID
	}
	// Everything else: newest first.
	return lineageLess(cb, ca)
}

// lowestPriority is the unprotected included record the budget gives up first: the last
// of them in higherPriority's order, or -1 when there is none.
func lowestPriority(verdicts []Verdict) int {
	lowest := -1
	for i := range verdicts {
		vd := &verdicts[i]
		if !vd.Included() || vd.Protected {
			continue
		}
		if lowest < 0 || higherPriority(&verdicts[lowest], vd) {
			lowest = i
		}
	}
	return lowest
}

func confidence(c *model.Candidate) float64 {
	if c.Memory.Confidence == nil {
		return 0.5
	}
	return *c.Memory.Confidence
}

// budgetRules are the rules of the records fill leaves out, by tier.
var budgetRules = [tierNone + 1]model.Rule{TierWindow: RuleBudgetWindow, TierEvidence: RuleBudgetEvidence,
	TierRuntime: RuleBudgetRuntimeState, TierMemory: RuleBudgetMemories}

// AggregateReserve is the cost set aside for the summary line of aggregated recovery items.
const AggregateReserve = 80

// compactRecovery keeps protected recovery state within the budget when it alone would
// overflow it: recovery is never omitted, but shrinkRecovery compacts and then aggregates
// the oldest items until the protected records fit. It returns the protected records' total
// cost.
func compactRecovery(verdicts []Verdict, costs, compactCosts []int, fixed, budget int) int {
	protected := fixed
	for i := range verdicts {
		if vd := &verdicts[i]; vd.Included() && vd.Protected {
			protected += costs[i]
		}
	}
	if protected > budget {
		saved, _ := shrinkRecovery(verdicts, costs, compactCosts, protected-budget)
		protected -= saved
	}
	return protected
}

// shrinkRecovery frees at least over tokens of included recovery items, or as many as it
// can, oldest first (the newest unresolved state keeps its exact arguments longest): first
// it switches items, one by one, to their compact form (tool, status, call id and error
// code, without arguments or message; costs[i] becomes compactCosts[i]); when that is not
// enough it aggregates items, one by one: they cost nothing each and are counted together in
// one summary line (tool, status, error code and how many), for which AggregateReserve
// tokens are set aside the first time — items whose compact form is no shorter only after
// all the others. It returns the tokens saved by its own estimate and whether it changed
// any item; it changes at least one when it can, even for over <= 0.
func shrinkRecovery(verdicts []Verdict, costs, compactCosts []int, over int) (saved int, changed bool) {
	// items can shrink line by line; stiff ones (whose compact form is no shorter) keep
	// their own line unless aggregating every other item still leaves too much.
	var items, stiff []int
	aggregated := false
	for i := range verdicts {
		vd := &verdicts[i]
		switch {
		case !vd.Included() || vd.Decision.As != model.AsRecovery:
		case vd.Aggregated:
			aggregated = true
		case vd.Compact || compactCosts[i] < costs[i]:
			items = append(items, i)
		default:
			stiff = append(stiff, i)
		}
	}
	oldestFirst := func(idx []int) {
		sort.SliceStable(idx, func(x, y int) bool {
			return lineageLess(verdicts[idx[x]].Candidate, verdicts[idx[y]].Candidate)
		})
	}
	oldestFirst(items)
	oldestFirst(stiff)
	for _, i := range items {
		if changed && saved >= over {
			return saved, changed
		}
		if vd := &verdicts[i]; !vd.Compact {
			saved += costs[i] - compactCosts[i]
			costs[i] = compactCosts[i]
			vd.Compact, changed = true, true
			vd.Decision.Rule = vd.Decision.Rule.And(RuleRecoveryCompacted)
		}
	}
	for _, i := range append(items, stiff...) {
		if changed && saved >= over {
			return saved, changed
		}
		if !aggregated {
			saved -= AggregateReserve
			aggregated = true
		}
		saved += costs[i]
		costs[i] = 0
		verdicts[i].Aggregated, changed = true, true
		verdicts[i].Decision.Rule = verdicts[i].Decision.Rule.And(RuleRecoveryAggregated)
	}
	return saved, changed
}
