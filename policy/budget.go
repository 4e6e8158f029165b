package policy

import (
	"slices"
	"sort"

	"github.com/ctxgraph/ctxgraph/model"
)

// Prices are what the budget knows of a request's tokens before it measures one.
type Prices struct {
	// Costs[i] is the token cost of verdict i as rendered, Compact[i] that of its compact
	// form (recovery items). A memory that may be shown as one side of a conflict costs
	// its form as a lone memory, and Paired[i] more while a side it conflicts with is
	// included too (Conflicts; nil: no conflicts).
	Costs, Compact, Paired []int
	Conflicts              *Conflicts
	// Group[i] is the tool-round call whose result verdict i is part of (-1: none; nil
	// Group: no rounds). A call's cost includes the line saying its result is withheld,
	// Alone[k], which the first part of its result included replaces; each further part
	// costs the newline that joins it.
	Group, Alone []int
	// Fixed is the cost of everything else (per-request and per-message overhead).
	Fixed int
	// Head is the cost of the context block's own message, paid once while any verdict
	// with InBlock set is included (nil InBlock: none is).
	Head    int
	InBlock []bool
	// Clock is the cost of the block's heading, the clock its lines were judged by, paid
	// once while any verdict with Clocked set is included (nil Clocked: none is).
	Clock   int
	Clocked []bool
	// Priority, when set, is the verdicts' priority order (NewPriority, of the verdicts as
	// judged): the budget walks it instead of sorting what it considers.
	Priority *Priority
	// Sides, when set, are the positions of the verdicts that are sides of a conflict
	// (that name another side or are named as one): the only ones the budget's conflict
	// marks read or change. Nil: any verdict may be one.
	Sides []int
	// JudgedIn and Window, when set, say of each verdict whether the judge included it and
	// whether it tiered it in the window, as judged(i) would: the budget reads them there
	// rather than load a judged verdict for every record it left out.
	JudgedIn, Window []bool
	// Aggregate, when set, prices the summary line that counts the aggregated recovery
	// items among verdicts as it is rendered (0 when none is aggregated). Aggregated items
	// cost nothing each, so without it the fill leaves that line out of its estimate.
	Aggregate func(verdicts []Verdict) int
}

// Priority is a judgement's verdicts in the budget's priority order (higherPriority).
// higherPriority is a total order on a verdict's tier, relevance and record, which only
// the judge sets (the budget changes a tier only to leave a record out), so the order of
// any subset of the verdicts the budget considers is that subset of this order: computed
// once per judgement, it spares every assembly of the judgement its sorts.
type Priority struct {
	order []int
	rank  []int
}

// NewPriority orders verdicts by higherPriority.
func NewPriority(verdicts []Verdict) *Priority {
	order := make([]int, len(verdicts))
	for i := range order {
		order[i] = i
	}
	sortByPriority(order, verdicts)
	return priorityOf(order)
}

// sortByPriority puts idx, indices of verdicts, in higherPriority's order (a total order,
// so any sort gives the same).
func sortByPriority(idx []int, verdicts []Verdict) {
	sort.Slice(idx, func(x, y int) bool { return higherPriority(&verdicts[idx[x]], &verdicts[idx[y]]) })
}

// ExtendPriority orders verdicts by higherPriority knowing the order of a judgement they
// extend: was[i] is the index in parent's verdicts of a verdict whose tier, relevance and
// record are the same there (-1 for any other). Those keep their order relative to each
// other, so only the others are sorted, and merged in.
func ExtendPriority(parent *Priority, verdicts []Verdict, was []int) *Priority {
	now := make([]int, len(parent.order))
	for i := range now {
		now[i] = -1
	}
	var fresh []int
	for i, k := range was {
		if k >= 0 {
			now[k] = i
		} else {
			fresh = append(fresh, i)
		}
	}
	kept := make([]int, 0, len(verdicts)-len(fresh))
	for _, k := range parent.order {
		if i := now[k]; i >= 0 {
			kept = append(kept, i)
		}
	}
	sortByPriority(fresh, verdicts)
	order := make([]int, 0, len(verdicts))
	for len(kept) > 0 && len(fresh) > 0 {
		if higherPriority(&verdicts[fresh[0]], &verdicts[kept[0]]) {
			order, fresh = append(order, fresh[0]), fresh[1:]
		} else {
			order, kept = append(order, kept[0]), kept[1:]
		}
	}
	order = append(append(order, kept...), fresh...)
	if len(order) != len(verdicts) {
		return NewPriority(verdicts) // was named a parent's verdict twice
	}
	return priorityOf(order)
}

func priorityOf(order []int) *Priority {
	rank := make([]int, len(order))
	for r, i := range order {
		rank[i] = r
	}
	return &Priority{order: order, rank: rank}
}

// sort puts idx in priority order.
func (p *Priority) sort(idx []int) {
	slices.SortFunc(idx, func(a, b int) int { return p.rank[a] - p.rank[b] })
}

// Clocked says whether a record's line is read against the clock, so that the context block
// that shows it says when it was judged: a stale memory, whose marker says since when. A
// current memory, evidence, unresolved tool state (its line carries no time to compare) or a
// message needs no clock.
func Clocked(vd *Verdict) bool { return vd.StaleSince != nil }

// Conflicts indexes, for the verdicts that have a paired price, the sides each lists
// (sides, in whatever form they are shown: any included side marks it) and, for every
// side, the verdicts that list it (listers). It depends only on the judgement, so it is
// made once for every fit of it.
type Conflicts struct {
	sides, listers map[int][]int
}

// NewConflicts indexes the conflicts of the verdicts with paired[i] > 0.
func NewConflicts(verdicts []Verdict, paired []int) *Conflicts {
	// Only the memories a paired verdict names are looked up.
	index := map[string]int{}
	for i := range verdicts {
		if paired[i] != 0 {
			for _, id := range verdicts[i].Candidate.Memory.ConflictsWith {
				index[id] = -1
			}
		}
	}
	if len(index) > 0 {
		for i := range verdicts {
			if c := verdicts[i].Candidate; c.Type == model.TypeMemory {
				if _, named := index[c.ID]; named {
					index[c.ID] = i
				}
			}
		}
	}
	c := &Conflicts{sides: map[int][]int{}, listers: map[int][]int{}}
	for i := range verdicts {
		if paired[i] == 0 {
			continue
		}
		for _, id := range verdicts[i].Candidate.Memory.ConflictsWith {
			if k := index[id]; k >= 0 && !slices.Contains(c.sides[i], k) {
				c.sides[i] = append(c.sides[i], k)
				c.listers[k] = append(c.listers[k], i)
			}
		}
	}
	return c
}

// Moved is the index of the same conflicts after their verdicts moved: to[i] is where
// verdict i of c went. Every verdict with a paired price and every side must have moved.
func (c *Conflicts) Moved(to func(i int) int) *Conflicts {
	m := &Conflicts{sides: make(map[int][]int, len(c.sides)), listers: make(map[int][]int, len(c.listers))}
	move := func(from map[int][]int, into map[int][]int) {
		for i, ks := range from {
			moved := make([]int, len(ks))
			for n, k := range ks {
				moved[n] = to(k)
			}
			into[to(i)] = moved
		}
	}
	move(c.sides, m.sides)
	move(c.listers, m.listers)
	return m
}

// tally adds up the estimate of the records included so far.
type tally struct {
	p     *Prices
	used  int
	block bool
	clock bool
	// in says which verdicts are included (kept only when there are conflicts to price),
	// parts counts the included parts of each round call's result.
	in    []bool
	parts map[int]int
}

func newTally(verdicts []Verdict, p *Prices, used int) *tally {
	t := &tally{p: p, used: used}
	if p.Conflicts != nil {
		t.in = make([]bool, len(verdicts))
	}
	if p.Group != nil {
		t.parts = map[int]int{}
	}
	return t
}

// cost is what including verdict i adds: its cost, the block's head if it opens the
// block, and the conflict marks it brings to itself and to the included sides that were
// lone until then.
func (t *tally) cost(i int) int {
	c := t.p.Costs[i]
	if t.inBlock(i) && !t.block {
		c += t.p.Head
	}
	if t.clocked(i) && !t.clock {
		c += t.p.Clock
	}
	if t.in != nil {
		if t.paired(i) {
			c += t.p.Paired[i]
		}
		for _, k := range t.p.Conflicts.listers[i] {
			if t.in[k] && !t.paired(k) {
				c += t.p.Paired[k]
			}
		}
	}
	if g := t.p.group(i); g >= 0 {
		if t.parts[g] == 0 {
			c -= t.p.Alone[g]
		} else {
			c++
		}
	}
	return c
}

// group is the round call whose result verdict i is part of, or -1.
func (p *Prices) group(i int) int {
	if p.Group == nil {
		return -1
	}
	return p.Group[i]
}

// paired says whether verdict i, included, is shown as a side of a conflict.
func (t *tally) paired(i int) bool {
	for _, k := range t.p.Conflicts.sides[i] {
		if t.in[k] {
			return true
		}
	}
	return false
}

func (t *tally) add(i int) {
	t.used += t.cost(i)
	t.block = t.block || t.inBlock(i)
	t.clock = t.clock || t.clocked(i)
	if t.in != nil {
		t.in[i] = true
	}
	if g := t.p.group(i); g >= 0 {
		t.parts[g]++
	}
}

// tallyOf is the tally of the verdicts included now.
func tallyOf(verdicts []Verdict, p *Prices) *tally {
	t := newTally(verdicts, p, 0)
	for i := range verdicts {
		if verdicts[i].Included() {
			t.add(i)
		}
	}
	return t
}

func (t *tally) inBlock(i int) bool { return t.p.InBlock != nil && t.p.InBlock[i] }

func (t *tally) clocked(i int) bool { return t.p.Clocked != nil && t.p.Clocked[i] }

// Fit is the budget stage (DESIGN §4): it fits the judged records into budget tokens and
// changes their verdicts to say how, in one priority order (higherPriority). Protected
// recovery state that alone would overflow the budget is compacted, then aggregated
// (compactRecovery); the other included records fill what is left tier by tier, and the
// duplicates of raw sources trimmed on the way come back (fill); conflicts are settled
// among what survived. The prices are an estimate of the request (a memory's line grows
// with its conflict mark, a summary line of aggregated recovery is reserved for, not
// counted), so measure then renders the verdicts as they stand and counts the whole
// request: while that is over the budget the record of lowest priority is left out, or,
// with only protected records left, recovery shrunk further; then the records left out for
// the budget that the measured room may still hold are given back as judged(i) says the
// judge had them (refill). It returns the tokens of the last measure: over the budget only
// when nothing is left to cut. The shrinking of recovery changes p.Costs.
func Fit(verdicts []Verdict, judged func(i int) *Verdict, p Prices, budget int, measure func() int) int {
	var trims []int
	compactRecovery(verdicts, &p, budget)
	fill(verdicts, &p, budget, &trims)
	assembled := measure()
	for assembled > budget {
		if i := lowestPriority(verdicts); i >= 0 {
			vd := &verdicts[i]
			trims = append(trims, i)
			vd.Decision = omitIncluded(vd.Decision, model.PolicyBudget, RuleBudgetFinalFit, model.ReasonBudget)
			vd.Tier = tierNone
			markDraftConflicts(verdicts, p.Sides)
		} else if _, changed := shrinkRecovery(verdicts, p.Costs, p.Compact, assembled-budget); !changed {
			break
		}
		assembled = measure()
	}
	if assembled <= budget {
		assembled = refill(verdicts, judged, trims, &p, budget, assembled, measure)
	}
	return assembled
}

// judgedIn says whether the judge included verdict i.
func (p *Prices) judgedIn(i int, judged func(i int) *Verdict) bool {
	if p.JudgedIn != nil {
		return p.JudgedIn[i]
	}
	return judged(i).Included()
}

// window says whether the judge tiered verdict i in the window.
func (p *Prices) window(i int, judged func(i int) *Verdict) bool {
	if p.Window != nil {
		return p.Window[i]
	}
	return judged(i).Tier == TierWindow
}

// undoStep is a verdict's decision and tier before giveBack changed them.
type undoStep struct {
	i        int
	decision model.Decision
	tier     int
}

// refill gives back, in priority order, the records the budget left out that the measured
// room holds: the estimate that left them out can run high (a trimmed record's line, an
// aggregated summary), and a record that fits must not be lost to it. A record is tried
// when its price fits the room, and kept when the request, measured, stays within the
// budget; the window stays contiguous, so once a turn does not fit, no older one is tried.
// A raw body given back takes the place of the duplicates revived for it. It returns the
// tokens of the last measure of what it kept.
func refill(verdicts []Verdict, judged func(i int) *Verdict, trims []int, p *Prices, budget, assembled int, measure func() int) int {
	// Only a record the judge included whose price can come within the room is tried (a
	// round's result can cost less than its price by the withheld line it replaces; a
	// memory revived for a trimmed raw body was not included by the judge); the window's
	// are all kept, so that it stays contiguous.
	room := budget - assembled
	candidates := trims[:0]
	for _, i := range trims {
		if !p.judgedIn(i, judged) {
			continue
		}
		least := p.Costs[i]
		if g := p.group(i); g >= 0 {
			least -= p.Alone[g]
		}
		if least <= room || p.window(i, judged) {
			candidates = append(candidates, i)
		}
	}
	if len(candidates) == 0 {
		return assembled
	}
	t := tallyOf(verdicts, p)
	trims = candidates
	// In priority order, as the judge tiered them.
	if p.Priority != nil {
		p.Priority.sort(trims)
	} else {
		sort.SliceStable(trims, func(x, y int) bool { return higherPriority(judged(trims[x]), judged(trims[y])) })
	}
	windowClosed := false
	for _, i := range trims {
		window := judged(i).Tier == TierWindow
		if window && windowClosed {
			continue
		}
		if t.cost(i) > budget-assembled {
			windowClosed = windowClosed || window
			continue
		}
		undo := giveBack(verdicts, judged(i), i, p.Sides)
		if n := measure(); n <= budget {
			assembled = n
			t = tallyOf(verdicts, p) // giveBack may have left duplicates out again
			continue
		}
		for k := len(undo) - 1; k >= 0; k-- {
			u := undo[k]
			verdicts[u.i].Decision, verdicts[u.i].Tier = u.decision, u.tier
		}
		windowClosed = windowClosed || window
		assembled = measure()
	}
	return assembled
}

// giveBack includes verdict i again as the judge included it; when it is a raw body, the
// memories revived as its duplicates (or revived and trimmed since) are left out again as
// duplicates. It returns what it changed, conflict marks included, to undo. sides are
// Prices.Sides.
func giveBack(verdicts []Verdict, judged *Verdict, i int, sides []int) []undoStep {
	var undo []undoStep
	keep := func(k int) { undo = append(undo, undoStep{k, verdicts[k].Decision, verdicts[k].Tier}) }
	keep(i)
	if sides != nil {
		for _, k := range sides {
			keep(k) // markConflicts may change it
		}
	} else {
		for k := range verdicts {
			if c := verdicts[k].Candidate; c.Type == model.TypeMemory && len(c.Memory.ConflictsWith) > 0 {
				keep(k)
			}
		}
	}
	verdicts[i].Decision, verdicts[i].Tier = judged.Decision, judged.Tier
	if judged.Decision.As == model.AsRaw {
		id := verdicts[i].Candidate.ID
		raw := includedRaw(verdicts)
		for k := range verdicts {
			vd := &verdicts[k]
			sources := vd.Candidate.Memory.LiveSourceIDs
			revived := vd.Included() || vd.Decision.Reason == model.ReasonBudget
			if vd.RawDuplicate && revived && slices.Contains(sources, id) && allIn(sources, raw) {
				keep(k)
				vd.Decision = omit(vd.Candidate, model.PolicyRehydration, RuleRawSourceIncluded, model.ReasonDuplicate)
				vd.Tier = tierNone
			}
		}
	}
	markDraftConflicts(verdicts, sides)
	return undo
}

// fill fits the included records into the token budget in priority order: protected
// recovery state, the current message and directives always; then the conversation
// window, newest first and without gaps; then exact evidence, the run's checkpoint and
// skills; then memories ranked by relevance to the current user message, recency and
// confidence. Records that do not fit are turned into `budget` omissions. It returns the
// tokens used by its own estimate.
func fill(verdicts []Verdict, p *Prices, budget int, trims *[]int) int {
	t := newTally(verdicts, p, p.Fixed)
	for i := range verdicts {
		if vd := &verdicts[i]; vd.Included() && vd.Protected {
			t.add(i)
		}
	}
	if p.Aggregate != nil {
		t.used += p.Aggregate(verdicts)
	}
	windowClosed := false
	for _, i := range considered(verdicts, p.Priority) {
		vd := &verdicts[i]
		fits := t.used+t.cost(i) <= budget
		if vd.Tier == TierWindow {
			// The window stays contiguous: once an older turn does not fit, none before it goes in.
			fits = fits && !windowClosed
			windowClosed = windowClosed || !fits
		}
		if fits {
			t.add(i)
			continue
		}
		if trims != nil {
			*trims = append(*trims, i)
		}
		vd.Decision = omitIncluded(vd.Decision, model.PolicyBudget, budgetRules[vd.Tier], model.ReasonBudget)
		vd.Tier = tierNone
	}
	reviveDuplicates(verdicts, t, budget)
	markDraftConflicts(verdicts, p.Sides)
	return t.used
}

// considered lists the included records the budget may leave out, in priority order (the
// verdicts' own when none is given).
func considered(verdicts []Verdict, order *Priority) []int {
	if order == nil {
		order = NewPriority(verdicts)
	}
	var rest []int
	for _, i := range order.order {
		if vd := &verdicts[i]; vd.Included() && !vd.Protected {
			rest = append(rest, i)
		}
	}
	return rest
}

// reviveDuplicates brings back, within the budget, the memories left out as duplicates of
// raw sources that the budget then trimmed: the fact must not vanish with its evidence.
// Their prices must be given as their ordinary memory form.
func reviveDuplicates(verdicts []Verdict, t *tally, budget int) {
	raw := includedRaw(verdicts)
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
		if vd.Revival == nil {
			continue // no form to come back in: stays a duplicate
		}
		if t.p.Costs[i] > 0 && t.used+t.cost(i) <= budget {
			t.add(i)
			vd.Decision = *vd.Revival
			vd.Tier = TierMemory
			continue
		}
		vd.Decision = omit(vd.Candidate, model.PolicyBudget, RuleBudgetMemories, model.ReasonBudget)
	}
}

// includedRaw is the set of the artifacts included as raw bodies.
func includedRaw(verdicts []Verdict) map[string]bool {
	raw := map[string]bool{}
	for i := range verdicts {
		if vd := &verdicts[i]; vd.Included() && vd.Decision.As == model.AsRaw {
			raw[vd.Candidate.ID] = true
		}
	}
	return raw
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
func compactRecovery(verdicts []Verdict, p *Prices, budget int) int {
	t := newTally(verdicts, p, p.Fixed)
	for i := range verdicts {
		if vd := &verdicts[i]; vd.Included() && vd.Protected {
			t.add(i)
		}
	}
	// A tool round's call is answered as cheaply as its cheapest result part or the line
	// saying the result is withheld, whichever is shorter: its price holds the line.
	cheapest := map[int]int{}
	for i := range verdicts {
		g := p.group(i)
		if g < 0 || !verdicts[i].Included() || !verdicts[g].Included() || !verdicts[g].Protected {
			continue
		}
		if c, ok := cheapest[g]; !ok || p.Costs[i] < c {
			cheapest[g] = p.Costs[i]
		}
	}
	for g, c := range cheapest {
		if c < p.Alone[g] {
			t.used -= p.Alone[g] - c
		}
	}
	if t.used > budget {
		saved, _ := shrinkRecovery(verdicts, p.Costs, p.Compact, t.used-budget)
		t.used -= saved
	}
	return t.used
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

// markDraftConflicts marks the conflicts among the verdicts the budget works on, its own:
// among sides (Prices.Sides) when given, else among all.
func markDraftConflicts(verdicts []Verdict, sides []int) {
	if sides == nil {
		at := func(i int) *Verdict { return &verdicts[i] }
		markConflicts(len(verdicts), at, at)
		return
	}
	at := func(k int) *Verdict { return &verdicts[sides[k]] }
	markConflicts(len(sides), at, at)
}
