package policy

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

// fitItem is one included verdict handed to Fit, with its serialised cost.
type fitItem struct {
	id         string
	tier       int
	protected  bool
	seq, depth int64
	relevance  int
	confidence *float64
	cost       int
}

func conf(f float64) *float64 { return &f }

func (it fitItem) verdict() Verdict {
	kind := model.TypeMemory
	as := model.AsMemory
	switch it.tier {
	case TierProtected:
		kind, as = model.TypeToolCall, model.AsRecovery
	case TierWindow:
		kind, as = model.TypeMessage, model.AsMessage
	case TierEvidence:
		kind, as = model.TypeArtifact, model.AsRaw
	case TierRuntime:
		kind, as = model.TypeCheckpoint, model.AsCheckpoint
	}
	c := model.Candidate{Type: kind, ID: it.id, Seq: it.seq, Depth: it.depth, InLineage: true,
		Memory: model.MemoryFacts{Confidence: it.confidence}}
	return Verdict{Candidate: &c, Decision: include(&c, "test", "test.included", as, ""), Tier: it.tier,
		Protected: it.protected, Relevance: it.relevance}
}

func TestFit(t *testing.T) {
	cases := []struct {
		name   string
		items  []fitItem
		fixed  int
		budget int
		// wantBudget maps each record omitted for the budget to its rule; every other
		// record stays included.
		wantBudget map[string]model.Rule
		wantUsed   int
	}{
		{
			name: "everything fits",
			items: []fitItem{
				{id: "p", tier: TierProtected, protected: true, cost: 10},
				{id: "w", tier: TierWindow, seq: 1, cost: 10},
				{id: "m", tier: TierMemory, seq: 2, cost: 10},
			},
			fixed: 5, budget: 100, wantUsed: 35,
		},
		{
			name: "protected records are never trimmed, even over budget",
			items: []fitItem{
				{id: "recovery", tier: TierProtected, protected: true, cost: 500},
				{id: "current", tier: TierProtected, protected: true, seq: 9, cost: 50},
				{id: "w", tier: TierWindow, seq: 1, cost: 1},
				{id: "m", tier: TierMemory, seq: 2, cost: 1},
			},
			fixed: 10, budget: 100,
			wantBudget: map[string]model.Rule{"w": "budget.tier_window", "m": "budget.tier_memories"},
			wantUsed:   560,
		},
		{
			name: "the fixed cost counts against the budget",
			items: []fitItem{
				{id: "w", tier: TierWindow, seq: 1, cost: 10},
			},
			fixed: 95, budget: 100,
			wantBudget: map[string]model.Rule{"w": "budget.tier_window"},
			wantUsed:   95,
		},
		{
			name: "the window stays contiguous: an older turn is not kept when a newer one was dropped",
			items: []fitItem{
				{id: "w1", tier: TierWindow, seq: 1, cost: 5},
				{id: "w2", tier: TierWindow, seq: 2, cost: 50},
				{id: "w3", tier: TierWindow, seq: 3, cost: 10},
				{id: "m", tier: TierMemory, seq: 4, cost: 5},
			},
			budget:     20,
			wantBudget: map[string]model.Rule{"w2": "budget.tier_window", "w1": "budget.tier_window"},
			wantUsed:   15,
		},
		{
			name: "the window fills newest first, across the lineage",
			items: []fitItem{
				{id: "ancestor", tier: TierWindow, seq: 9, depth: 1, cost: 10},
				{id: "branch", tier: TierWindow, seq: 1, depth: 0, cost: 10},
			},
			budget:     10,
			wantBudget: map[string]model.Rule{"ancestor": "budget.tier_window"},
			wantUsed:   10,
		},
		{
			name: "tiers fill in order: window, evidence, runtime state, memories",
			items: []fitItem{
				{id: "m", tier: TierMemory, seq: 1, cost: 10},
				{id: "r", tier: TierRuntime, seq: 2, cost: 10},
				{id: "e", tier: TierEvidence, seq: 3, cost: 10},
				{id: "w", tier: TierWindow, seq: 4, cost: 10},
			},
			budget:     20,
			wantBudget: map[string]model.Rule{"r": "budget.tier_runtime_state", "m": "budget.tier_memories"},
			wantUsed:   20,
		},
		{
			name: "evidence that does not fit is a budget omission",
			items: []fitItem{
				{id: "e", tier: TierEvidence, seq: 1, cost: 30},
			},
			budget:     20,
			wantBudget: map[string]model.Rule{"e": "budget.tier_evidence"},
			wantUsed:   0,
		},
		{
			name: "memories rank by relevance before recency",
			items: []fitItem{
				{id: "relevant-old", tier: TierMemory, seq: 1, relevance: 2, cost: 10},
				{id: "irrelevant-new", tier: TierMemory, seq: 9, relevance: 0, cost: 10},
			},
			budget:     10,
			wantBudget: map[string]model.Rule{"irrelevant-new": "budget.tier_memories"},
			wantUsed:   10,
		},
		{
			name: "memories of equal relevance rank by recency",
			items: []fitItem{
				{id: "old", tier: TierMemory, seq: 1, relevance: 1, confidence: conf(0.99), cost: 10},
				{id: "new", tier: TierMemory, seq: 2, relevance: 1, confidence: conf(0.1), cost: 10},
			},
			budget:     10,
			wantBudget: map[string]model.Rule{"old": "budget.tier_memories"},
			wantUsed:   10,
		},
		{
			name: "recency follows the lineage: a branch memory is newer than an ancestor's higher seq",
			items: []fitItem{
				{id: "ancestor", tier: TierMemory, seq: 9, depth: 1, cost: 10},
				{id: "branch", tier: TierMemory, seq: 1, depth: 0, cost: 10},
			},
			budget:     10,
			wantBudget: map[string]model.Rule{"ancestor": "budget.tier_memories"},
			wantUsed:   10,
		},
		{
			name: "memories of equal relevance and recency rank by confidence",
			items: []fitItem{
				{id: "unsure", tier: TierMemory, seq: 1, confidence: conf(0.3), cost: 10},
				{id: "sure", tier: TierMemory, seq: 1, confidence: conf(0.9), cost: 10},
			},
			budget:     10,
			wantBudget: map[string]model.Rule{"unsure": "budget.tier_memories"},
			wantUsed:   10,
		},
		{
			name: "an unknown confidence ranks as 0.5",
			items: []fitItem{
				{id: "low", tier: TierMemory, seq: 1, confidence: conf(0.4), cost: 10},
				{id: "unknown", tier: TierMemory, seq: 1, cost: 10},
				{id: "high", tier: TierMemory, seq: 1, confidence: conf(0.6), cost: 10},
			},
			budget:     20,
			wantBudget: map[string]model.Rule{"low": "budget.tier_memories"},
			wantUsed:   20,
		},
		{
			name: "fully tied memories fall back to id order, so the fit is deterministic",
			items: []fitItem{
				{id: "m-b", tier: TierMemory, seq: 1, cost: 10},
				{id: "m-a", tier: TierMemory, seq: 1, cost: 10},
			},
			budget:     10,
			wantBudget: map[string]model.Rule{"m-b": "budget.tier_memories"},
			wantUsed:   10,
		},
		{
			name: "fully tied window turns fall back to id order, the greater id counting as newer",
			items: []fitItem{
				{id: "w-a", tier: TierWindow, seq: 1, cost: 10},
				{id: "w-b", tier: TierWindow, seq: 1, cost: 10},
			},
			budget:     10,
			wantBudget: map[string]model.Rule{"w-a": "budget.tier_window"},
			wantUsed:   10,
		},
		{
			name: "a memory that does not fit leaves room for a smaller, lower-ranked one",
			items: []fitItem{
				{id: "big", tier: TierMemory, seq: 1, relevance: 3, cost: 50},
				{id: "small", tier: TierMemory, seq: 2, relevance: 1, cost: 5},
			},
			budget:     10,
			wantBudget: map[string]model.Rule{"big": "budget.tier_memories"},
			wantUsed:   5,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vds := make([]Verdict, len(tc.items))
			costs := make([]int, len(tc.items))
			for i, it := range tc.items {
				vds[i], costs[i] = it.verdict(), it.cost
			}
			used := fill(vds, &Prices{Costs: costs, Fixed: tc.fixed}, tc.budget, nil)
			if used != tc.wantUsed {
				t.Errorf("got %d tokens used, want %d", used, tc.wantUsed)
			}
			for _, vd := range vds {
				id := vd.Candidate.ID
				rule, dropped := tc.wantBudget[id]
				switch {
				case dropped && (vd.Included() || vd.Decision.Reason != model.ReasonBudget || vd.Decision.Rule != rule):
					t.Errorf("%s: got %s reason %q rule %q, want omitted reason %q rule %q", id, vd.Decision.Outcome, vd.Decision.Reason, vd.Decision.Rule, model.ReasonBudget, rule)
				case !dropped && !vd.Included():
					t.Errorf("%s: got omitted reason %q rule %q, want included", id, vd.Decision.Reason, vd.Decision.Rule)
				}
				if dropped && vd.Decision.Policy != model.PolicyBudget {
					t.Errorf("%s: got decision policy %q, want %q", id, vd.Decision.Policy, model.PolicyBudget)
				}
			}
		})
	}
}

// TestFitTrimsInTheOrderItFills: when the whole request counts more than the sum of its
// costs, the final trim gives up first the record that fill would have left out first,
// down to the last tiebreaks (confidence, then id), whatever the verdicts' order.
func TestFitTrimsInTheOrderItFills(t *testing.T) {
	shared := func(id string, c float64) fitItem {
		// Conversation-visible memories of two other branches can share depth and seq.
		return fitItem{id: id, tier: TierMemory, depth: -1, seq: 1, confidence: conf(c), cost: 10}
	}
	cases := []struct {
		name     string
		items    []fitItem
		wantTrim string
	}{
		{"a lower confidence goes first", []fitItem{shared("m-b", 0.9), shared("m-a", 0.3), shared("m-c", 0.9)}, "m-a"},
		{"at equal confidence the larger id goes first", []fitItem{shared("m-b", 0.9), shared("m-c", 0.9)}, "m-c"},
		{"a memory before evidence", []fitItem{{id: "e", tier: TierEvidence, seq: 9, cost: 10}, shared("m-b", 0.9)}, "m-b"},
		{"the oldest turn of the window first", []fitItem{{id: "w2", tier: TierWindow, seq: 2, cost: 10}, {id: "w1", tier: TierWindow, seq: 1, cost: 10}}, "w1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vds := make([]Verdict, len(tc.items))
			costs := make([]int, len(tc.items))
			budget := 0
			for i, it := range tc.items {
				vds[i], costs[i] = it.verdict(), it.cost
				budget += it.cost
			}
			// Joined, the lines count one token more than their costs: one record must go.
			measure := func() int {
				n := 1
				for i := range vds {
					if vds[i].Included() {
						n += costs[i]
					}
				}
				return n
			}
			if got, want := Fit(vds, judgedAs(vds), Prices{Costs: costs, Compact: costs}, budget, measure), budget-10+1; got != want {
				t.Errorf("got %d tokens, want %d", got, want)
			}
			for _, vd := range vds {
				trimmed := vd.Candidate.ID == tc.wantTrim
				if trimmed != !vd.Included() {
					t.Errorf("%s: got included %v, want %v", vd.Candidate.ID, vd.Included(), !trimmed)
				}
				if trimmed && vd.Decision.Rule != "budget.final_fit" {
					t.Errorf("%s: got rule %q, want %q", vd.Candidate.ID, vd.Decision.Rule, "budget.final_fit")
				}
			}
		})
	}
}

func TestFitLeavesOmittedRecordsAlone(t *testing.T) {
	c := model.Candidate{Type: model.TypeMemory, ID: "old"}
	vds := []Verdict{{Candidate: &c, Decision: omit(&c, model.PolicySupersession, RuleReplacedByEligible, model.ReasonSuperseded), Tier: tierNone}}
	used := fill(vds, &Prices{Costs: []int{1000}, Fixed: 3}, 10, nil)
	if used != 3 {
		t.Errorf("got %d tokens used, want %d (an omitted record costs nothing)", used, 3)
	}
	if got := vds[0].Decision.Reason; got != model.ReasonSuperseded {
		t.Errorf("got reason %q, want %q", got, model.ReasonSuperseded)
	}
}

// judgeAndFit runs the whole policy pipeline over a snapshot with a cost per record.
func judgeAndFit(t *testing.T, req Request, cands []model.Candidate, cost map[string]int, budget int) map[string]model.Decision {
	t.Helper()
	vds := draftOf(Judge(mustResolve(t, ""), req, cands))
	costs := make([]int, len(vds))
	for i, vd := range vds {
		costs[i] = cost[vd.Candidate.ID]
	}
	fill(vds, &Prices{Costs: costs}, budget, nil)
	out := map[string]model.Decision{}
	for _, vd := range vds {
		out[vd.Candidate.ID] = vd.Decision
	}
	return out
}

func TestJudgeThenFit(t *testing.T) {
	req := baseRequest()
	cands := []model.Candidate{
		message("u1", 1, "user"),
		message("a2", 2, "assistant"),
		toolCall("c3", 3, "failed"),
		message("u4", 4, "user"),
		memory("m5", 5),
	}
	cost := map[string]int{"u1": 10, "a2": 10, "c3": 400, "u4": 50, "m5": 10}
	got := judgeAndFit(t, req, cands, cost, 100)
	wantAs := map[string]string{"c3": model.AsRecovery, "u4": model.AsMessage}
	wantBudget := []string{"a2", "m5", "u1"}
	for id, as := range wantAs {
		if d := got[id]; d.Outcome != OutcomeIncluded || d.As != as {
			t.Errorf("%s: got %s as %q reason %q, want included as %q (protected)", id, d.Outcome, d.As, d.Reason, as)
		}
	}
	var dropped []string
	for id, d := range got {
		if d.Reason == model.ReasonBudget {
			dropped = append(dropped, id)
		}
	}
	sort.Strings(dropped)
	if !reflect.DeepEqual(dropped, wantBudget) {
		t.Errorf("got %v omitted for the budget, want %v", dropped, wantBudget)
	}
}

// TestFitLoneConflictSurvivor holds the budget to DESIGN §4: "when two or more sides of a
// conflict are included, each is included as: conflict; a lone surviving side takes its
// ordinary form". The budget decides last which sides survive.
func TestFitLoneConflictSurvivor(t *testing.T) {

	req := baseRequest()
	cands := []model.Candidate{
		message("u1", 1, "user", func(c *model.Candidate) { c.Message.Content = "hotel prices" }),
		memory("m1", 2, conflictsWith("m2"), func(c *model.Candidate) { c.Memory.Summary = "hotel prices are high" }),
		memory("m2", 3, conflictsWith("m1"), func(c *model.Candidate) { c.Memory.Summary = "rooms are cheap" }),
	}
	got := judgeAndFit(t, req, cands, map[string]int{"u1": 5, "m1": 10, "m2": 10}, 15)
	if d := got["m2"]; d.Reason != model.ReasonBudget {
		t.Fatalf("m2: got %s reason %q, want omitted for the budget", d.Outcome, d.Reason)
	}
	if d := got["m1"]; d.Outcome != OutcomeIncluded || d.As != model.AsMemory {
		t.Errorf("m1: got %s as %q (rule %q), want included as %q", d.Outcome, d.As, d.Rule, model.AsMemory)
	}
}

func TestCompactRecoveryKeepsEveryOpenCallWithinTheBudget(t *testing.T) {
	mk := func(id string, seq int64) Verdict {
		c := model.Candidate{Type: model.TypeToolCall, ID: id, Seq: seq, InLineage: true,
			Tool: model.ToolFacts{Name: "t", Status: model.ToolPending}}
		return Verdict{Candidate: &c, Protected: true, Tier: TierProtected,
			Decision: model.Decision{Ref: id, Type: c.Type, Outcome: OutcomeIncluded, As: model.AsRecovery, Rule: "recovery.unresolved_pending"}}
	}
	cases := []struct {
		name        string
		budget      int
		wantCompact []bool
		wantTotal   int
	}{
		{"everything fits", 1000, []bool{false, false, false}, 10 + 300},
		{"oldest compacted first", 250, []bool{true, false, false}, 10 + 20 + 200},
		{"all compacted", 100, []bool{true, true, true}, 10 + 60},
		{"still over: aggregated, never omitted", 20, []bool{true, true, true}, 10 + AggregateReserve},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vs := []Verdict{mk("c3", 3), mk("c1", 1), mk("c2", 2)}
			costs := []int{100, 100, 100}
			compact := []int{20, 20, 20}
			total := compactRecovery(vs, &Prices{Costs: costs, Compact: compact, Fixed: 10}, tc.budget)
			if total != tc.wantTotal {
				t.Errorf("got total %d, want %d", total, tc.wantTotal)
			}
			// Index 1 is the oldest (seq 1), then index 2, then index 0.
			order := []int{1, 2, 0}
			for k, i := range order {
				if vs[i].Compact != tc.wantCompact[k] || !vs[i].Included() {
					t.Errorf("%s: got compact %v included %v, want compact %v and included", vs[i].Candidate.ID, vs[i].Compact, vs[i].Included(), tc.wantCompact[k])
				}
			}
		})
	}

	// Ten open calls whose compact lines alone overflow: the oldest are aggregated until the
	// rest and the summary line fit; every one stays included.
	var vs []Verdict
	var costs, compact []int
	for i := 1; i <= 10; i++ {
		vs = append(vs, mk(fmt.Sprintf("c%02d", i), int64(i)))
		costs, compact = append(costs, 100), append(compact, 30)
	}
	if total := compactRecovery(vs, &Prices{Costs: costs, Compact: compact, Fixed: 10}, 250); total != 10+5*30+AggregateReserve {
		t.Errorf("got total %d, want %d", total, 10+5*30+AggregateReserve)
	}
	for i, vd := range vs {
		if !vd.Included() || !vd.Compact || vd.Aggregated != (i < 5) {
			t.Errorf("%s: included %v compact %v aggregated %v; want included, compact, aggregated %v",
				vd.Candidate.ID, vd.Included(), vd.Compact, vd.Aggregated, i < 5)
		}
		if vd.Aggregated && !strings.HasSuffix(string(vd.Decision.Rule), "+budget.recovery_aggregated") {
			t.Errorf("%s: rule %q does not say it was aggregated", vd.Candidate.ID, vd.Decision.Rule)
		}
	}
	// An open call whose compact form is no shorter keeps its own line while aggregating the
	// others suffices, and is aggregated last when it does not.
	for _, tc := range []struct {
		budget, wantAggregated int
		wantStiffAggregated    bool
	}{{250, 6, false}, {30, 10, true}} {
		vs := []Verdict{mk("stiff", 0)}
		costs, compact := []int{20}, []int{20}
		for i := 1; i <= 10; i++ {
			vs = append(vs, mk(fmt.Sprintf("c%02d", i), int64(i)))
			costs, compact = append(costs, 100), append(compact, 30)
		}
		compactRecovery(vs, &Prices{Costs: costs, Compact: compact, Fixed: 10}, tc.budget)
		aggregated := 0
		for _, vd := range vs[1:] {
			if vd.Aggregated {
				aggregated++
			}
		}
		if aggregated != tc.wantAggregated || vs[0].Aggregated != tc.wantStiffAggregated || vs[0].Compact {
			t.Errorf("budget %d: %d others aggregated, the stiff call aggregated %v compact %v; want %d, %v, not compact",
				tc.budget, aggregated, vs[0].Aggregated, vs[0].Compact, tc.wantAggregated, tc.wantStiffAggregated)
		}
	}
}

// TestFitGivesBackWhatTheMeasureHolds: the prices run high (the request, measured, counts
// five tokens less than their sum), so fill leaves out records the budget holds; refill
// gives them back in priority order while the measured request stays within the budget,
// keeps the window contiguous, and leaves out what does not fit.
func TestFitGivesBackWhatTheMeasureHolds(t *testing.T) {
	items := []fitItem{
		{id: "now", tier: TierWindow, seq: 9, protected: true, cost: 10},
		{id: "w8", tier: TierWindow, seq: 8, cost: 10},
		{id: "w7", tier: TierWindow, seq: 7, cost: 30},
		{id: "w6", tier: TierWindow, seq: 6, cost: 4},
		{id: "m-big", tier: TierMemory, seq: 3, relevance: 2, cost: 9},
		{id: "m-small", tier: TierMemory, seq: 2, relevance: 1, cost: 4},
	}
	vds := make([]Verdict, len(items))
	costs := make([]int, len(items))
	for i, it := range items {
		vds[i], costs[i] = it.verdict(), it.cost
	}
	measures := 0
	measure := func() int {
		measures++
		n := -5
		for i := range vds {
			if vds[i].Included() {
				n += costs[i]
			}
		}
		return n
	}
	// Estimated: now and w8 20, w7 (30) does not fit and closes the window, m-big would make
	// 29, m-small makes 24. Measured, that is 19: m-big (9) is tried again and, measured,
	// makes 28; w7 is over the room, and w6 is behind it.
	got := Fit(vds, judgedAs(vds), Prices{Costs: costs, Compact: costs}, 28, measure)
	want := map[string]bool{"now": true, "w8": true, "w7": false, "w6": false, "m-big": true, "m-small": true}
	for _, vd := range vds {
		if vd.Included() != want[vd.Candidate.ID] {
			t.Errorf("%s: got included %v, want %v (%s)", vd.Candidate.ID, vd.Included(), want[vd.Candidate.ID], vd.Decision.Rule)
		}
	}
	if got != 28 {
		t.Errorf("got %d tokens, want 28", got)
	}
	if vds[4].Decision.Rule != "test.included" {
		t.Errorf("m-big given back with rule %q, want its judged rule", vds[4].Decision.Rule)
	}
	// One measure after fill, one for m-big.
	if measures != 2 {
		t.Errorf("got %d measures, want 2", measures)
	}
}

// TestFitPricesTheAggregateLine: recovery items aggregated to fit cost nothing each, and
// the one line that counts them is priced by Prices.Aggregate, so the fill leaves out for
// their tier the records that line leaves no room for, instead of the final fit finding
// them out one measure at a time.
func TestFitPricesTheAggregateLine(t *testing.T) {
	items := []fitItem{
		{id: "now", tier: TierWindow, seq: 20, protected: true, cost: 10},
		{id: "w19", tier: TierWindow, seq: 19, cost: 10},
		{id: "m1", tier: TierMemory, seq: 3, relevance: 2, cost: 20},
		{id: "m2", tier: TierMemory, seq: 2, relevance: 1, cost: 20},
	}
	for i := 1; i <= 10; i++ {
		items = append(items, fitItem{id: fmt.Sprintf("c%02d", i), tier: TierProtected, seq: int64(i), protected: true, cost: 100})
	}
	var vds []Verdict
	var costs, compact []int
	for _, it := range items {
		vds, costs = append(vds, it.verdict()), append(costs, it.cost)
		if it.tier == TierProtected {
			compact = append(compact, 95)
		} else {
			compact = append(compact, it.cost)
		}
	}
	const line = AggregateReserve + 10 // the summary line as rendered
	aggregate := func(vs []Verdict) int {
		for i := range vs {
			if vs[i].Included() && vs[i].Aggregated {
				return line
			}
		}
		return 0
	}
	measures := 0
	measure := func() int {
		measures++
		n := aggregate(vds)
		for i := range vds {
			if vds[i].Included() {
				n += costs[i]
			}
		}
		return n
	}
	// The ten calls (1,000) are all compacted (950) and the seven oldest aggregated, which
	// leaves 10 + 3 × 95 and the line: 385 of 400. w19 fits; neither memory does.
	got := Fit(vds, judgedAs(vds), Prices{Costs: costs, Compact: compact, Aggregate: aggregate}, 400, measure)
	if got != 395 {
		t.Errorf("got %d tokens, want 395", got)
	}
	for _, vd := range vds {
		memory := vd.Candidate.Type == model.TypeMemory
		if vd.Included() == memory {
			t.Errorf("%s: got included %v (%s), want %v", vd.Candidate.ID, vd.Included(), vd.Decision.Rule, !memory)
		}
		if memory && vd.Decision.Rule != RuleBudgetMemories {
			t.Errorf("%s: left out by %q, want %s: the fill has no room for it", vd.Candidate.ID, vd.Decision.Rule, RuleBudgetMemories)
		}
	}
	// The fill's estimate is what the request measures: one measure, nothing cut after it.
	if measures != 1 {
		t.Errorf("got %d measures, want 1", measures)
	}
}

// TestFitPricesWhatRecordsBringAlong: the context block's head is paid once, by the first
// record shown in it; a memory shown as a side of a conflict pays its mark only while
// another side is in, and brings the mark to that side too; the first part of a tool
// round's result takes the place of the line saying it is withheld.
func TestFitPricesWhatRecordsBringAlong(t *testing.T) {
	cases := []struct {
		name    string
		items   []fitItem
		prices  func(p *Prices)
		budget  int
		want    []bool
		wantEst int
	}{
		{"the head once", []fitItem{
			{id: "now", tier: TierWindow, seq: 9, protected: true, cost: 10},
			{id: "m1", tier: TierMemory, seq: 2, relevance: 2, cost: 5},
			{id: "m2", tier: TierMemory, seq: 1, relevance: 1, cost: 5},
		}, func(p *Prices) { p.Head, p.InBlock = 20, []bool{false, true, true} }, 40, []bool{true, true, true}, 40},
		{"no head without a block line", []fitItem{
			{id: "now", tier: TierWindow, seq: 9, protected: true, cost: 10},
			{id: "w", tier: TierWindow, seq: 8, cost: 15},
			{id: "m1", tier: TierMemory, seq: 2, cost: 5},
		}, func(p *Prices) { p.Head, p.InBlock = 20, []bool{false, false, true} }, 40, []bool{true, true, false}, 25},
		{"both sides of a conflict", []fitItem{
			{id: "a", tier: TierMemory, seq: 2, relevance: 2, cost: 10},
			{id: "b", tier: TierMemory, seq: 1, relevance: 1, cost: 10},
		}, func(p *Prices) { p.Paired = []int{3, 3} }, 26, []bool{true, true}, 26},
		{"one side alone", []fitItem{
			{id: "a", tier: TierMemory, seq: 2, relevance: 2, cost: 10},
			{id: "b", tier: TierMemory, seq: 1, relevance: 1, cost: 10},
		}, func(p *Prices) { p.Paired = []int{3, 3} }, 25, []bool{true, false}, 10},
		{"a result in place of its withheld line", []fitItem{
			{id: "call", tier: TierProtected, protected: true, seq: 1, cost: 50},
			{id: "result", tier: TierEvidence, seq: 2, cost: 15},
			{id: "note", tier: TierMemory, seq: 3, cost: 4},
		}, func(p *Prices) { p.Group, p.Alone = []int{-1, 0, 0}, []int{20, 0, 0} }, 50, []bool{true, true, true}, 50},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vds := make([]Verdict, len(tc.items))
			p := Prices{Costs: make([]int, len(tc.items))}
			for i, it := range tc.items {
				vds[i], p.Costs[i] = it.verdict(), it.cost
			}
			if len(tc.items) == 2 {
				vds[0].Candidate.Memory.ConflictsWith = []string{"b"}
				vds[1].Candidate.Memory.ConflictsWith = []string{"a"}
			}
			tc.prices(&p)
			if p.Paired != nil {
				p.Conflicts = NewConflicts(vds, p.Paired)
			}
			if got := fill(vds, &p, tc.budget, nil); got != tc.wantEst {
				t.Errorf("got an estimate of %d, want %d", got, tc.wantEst)
			}
			for i, vd := range vds {
				if vd.Included() != tc.want[i] {
					t.Errorf("%s: got included %v, want %v", vd.Candidate.ID, vd.Included(), tc.want[i])
				}
			}
		})
	}
}

// draftOf copies judged verdicts for the budget to work on, as an assembly's draft does.
func draftOf(judged []*Verdict) []Verdict {
	out := make([]Verdict, len(judged))
	for i, vd := range judged {
		out[i] = *vd
	}
	return out
}

// judgedAs keeps the verdicts as judged, for Fit to give back what it trims.
func judgedAs(vds []Verdict) func(int) *Verdict {
	judged := slices.Clone(vds)
	return func(i int) *Verdict { return &judged[i] }
}

// TestFitKeepsTheReasonOfARevivedMemoryItTrims: a memory left out as the duplicate of a raw
// body comes back when the budget trims that body; if the final trim then leaves it out too,
// it stays a budget omission: refill gives back only what the judge included.
func TestFitKeepsTheReasonOfARevivedMemoryItTrims(t *testing.T) {
	raw := fitItem{id: "raw", tier: TierEvidence, seq: 1, cost: 50}.verdict()
	mc := model.Candidate{Type: model.TypeMemory, ID: "mem", Seq: 2, InLineage: true,
		Memory: model.MemoryFacts{LiveSourceIDs: []string{"raw"}}}
	revival := include(&mc, model.PolicyMemory, RuleMemoryCurrent.And(RuleRawSourceTrimmed), model.AsMemory, "")
	mem := Verdict{Candidate: &mc, Decision: omit(&mc, model.PolicyRehydration, RuleRawSourceIncluded, model.ReasonDuplicate),
		Tier: tierNone, RawDuplicate: true, Revival: &revival}
	now := fitItem{id: "now", tier: TierWindow, seq: 9, protected: true, cost: 10}.verdict()
	vds := []Verdict{now, raw, mem}
	costs := []int{10, 50, 20}
	// Joined, the memory's line counts 15 more than its price: the final trim takes it out.
	measure := func() int {
		n := 0
		for i := range vds {
			if vds[i].Included() {
				n += costs[i]
				if i == 2 {
					n += 15
				}
			}
		}
		return n
	}
	Fit(vds, judgedAs(vds), Prices{Costs: costs, Compact: costs}, 40, measure)
	if vds[1].Included() || vds[2].Included() {
		t.Fatalf("got raw included %v, memory included %v; want both left out", vds[1].Included(), vds[2].Included())
	}
	if got := vds[2].Decision; got.Reason != model.ReasonBudget || got.Rule != RuleBudgetFinalFit {
		t.Errorf("memory: got reason %q rule %q, want %q %q", got.Reason, got.Rule, model.ReasonBudget, RuleBudgetFinalFit)
	}
}

// TestFitRevivesADuplicateInItsOwnForm: a restricted memory left out as the duplicate of a
// raw body comes back, when the budget trims the body, as its safe summary: never its full
// text to a provider that may not receive it.
func TestFitRevivesADuplicateInItsOwnForm(t *testing.T) {
	req := baseRequest()
	req.Provider = "google" // may not receive oauth_derived
	req.ExactArtifactIDs = []string{"r1"}
	cands := []model.Candidate{
		message("u1", 1, "user"),
		artifact("r1", 2),
		memory("m1", 3, privacy("oauth_derived"), safeSummary("a summary"), derivedFrom([]string{"r1"}, "r1")),
	}
	vds := draftOf(Judge(mustResolve(t, ""), req, cands))
	if !vds[2].RawDuplicate {
		t.Fatalf("m1: got %s %s, want a duplicate of r1", vds[2].Decision.Outcome, vds[2].Decision.Reason)
	}
	costs := []int{5, 100, 10}
	measure := func() int {
		n := 0
		for i := range vds {
			if vds[i].Included() {
				n += costs[i]
			}
		}
		return n
	}
	Fit(vds, judgedAs(vds), Prices{Costs: costs, Compact: costs}, 30, measure)
	if d := vds[2].Decision; !vds[2].Included() || d.As != model.AsSafeSummary || d.Policy != model.PolicyPrivacy {
		t.Errorf("m1: got %s as %q (%s), want included as %q (%s)", d.Outcome, d.As, d.Policy, model.AsSafeSummary, model.PolicyPrivacy)
	}
}

// duplicateOf is a memory left out as the duplicate of the raw bodies it lists, with the
// form it comes back in.
func duplicateOf(id string, seq int64, sources, conflicts []string) Verdict {
	c := model.Candidate{Type: model.TypeMemory, ID: id, Seq: seq, InLineage: true,
		Memory: model.MemoryFacts{LiveSourceIDs: sources, ConflictsWith: conflicts}}
	revival := include(&c, model.PolicyMemory, RuleMemoryCurrent.And(RuleRawSourceTrimmed), model.AsMemory, "")
	return Verdict{Candidate: &c, Decision: omit(&c, model.PolicyRehydration, RuleRawSourceIncluded, model.ReasonDuplicate),
		Tier: tierNone, RawDuplicate: true, Revival: &revival}
}

// sumOf measures a request as its prices say, conflict marks included, plus delta.
func sumOf(vds []Verdict, p *Prices, delta int) func() int {
	return func() int {
		n := delta
		for i := range vds {
			if vds[i].Included() {
				n += p.Costs[i]
				if vds[i].Decision.As == model.AsConflict {
					n += p.Paired[i]
				}
			}
		}
		return n
	}
}

// TestRefillUndoesWhatItTried: a give-back that does not fit is undone whole, conflict
// marks included: the memory it paired keeps the decision it had.
func TestRefillUndoesWhatItTried(t *testing.T) {
	now := fitItem{id: "now", tier: TierWindow, seq: 9, protected: true, cost: 10}.verdict()
	raw := fitItem{id: "raw", tier: TierEvidence, seq: 1, cost: 50}.verdict()
	m := duplicateOf("m", 2, []string{"raw"}, []string{"n"})
	n := fitItem{id: "n", tier: TierMemory, seq: 3, cost: 31}.verdict()
	n.Candidate.Memory.ConflictsWith = []string{"m"}
	vds := []Verdict{now, raw, m, n}
	costs := []int{10, 50, 10, 31}
	// Measured 15 below the prices, and the marks (unpriced here) 10 when both are in: n
	// (31) is tried in a room of 35, and with the marks does not fit.
	measure := func() int {
		total := -15
		for i := range vds {
			if vds[i].Included() {
				total += costs[i]
			}
		}
		if vds[2].Included() && vds[3].Included() {
			total += 10
		}
		return total
	}
	Fit(vds, judgedAs(vds), Prices{Costs: costs, Compact: costs}, 40, measure)
	if vds[3].Included() {
		t.Fatalf("n: included, want left out")
	}
	if got, want := vds[2].Decision.Rule, RuleMemoryCurrent.And(RuleRawSourceTrimmed); got != want || vds[2].Decision.As != model.AsMemory {
		t.Errorf("m: got %s rule %q, want memory rule %q", vds[2].Decision.As, got, want)
	}
}

// TestRefillLeavesDuplicatesOutWithTheirRawBody: when a raw body comes back, a memory
// revived for it and trimmed since is a duplicate again, not a budget omission.
func TestRefillLeavesDuplicatesOutWithTheirRawBody(t *testing.T) {
	now := fitItem{id: "now", tier: TierWindow, seq: 9, protected: true, cost: 10}.verdict()
	raw := fitItem{id: "raw", tier: TierEvidence, seq: 1, cost: 50}.verdict()
	vds := []Verdict{now, raw, duplicateOf("m", 2, []string{"raw"}, nil)}
	costs := []int{10, 50, 20}
	measure := func() int {
		n := -5
		for i := range vds {
			if vds[i].Included() {
				n += costs[i]
				if i == 2 {
					n += 35
				}
			}
		}
		return n
	}
	Fit(vds, judgedAs(vds), Prices{Costs: costs, Compact: costs}, 55, measure)
	if !vds[1].Included() {
		t.Fatalf("raw: left out, want given back")
	}
	if got := vds[2].Decision; got.Reason != model.ReasonDuplicate || got.Rule != RuleRawSourceIncluded {
		t.Errorf("m: got %q / %q with its raw body shown, want %q / %q", got.Reason, got.Rule, model.ReasonDuplicate, RuleRawSourceIncluded)
	}
}

// TestFitPricesTheMarkAReducedSideBrings: a stale marker is a side too: the ordinary
// memory it conflicts with is marked when both are in, and the estimate pays the mark.
func TestFitPricesTheMarkAReducedSideBrings(t *testing.T) {
	a := fitItem{id: "a", tier: TierMemory, seq: 2, relevance: 2, cost: 10}.verdict()
	s := fitItem{id: "s", tier: TierMemory, seq: 1, relevance: 1, cost: 10}.verdict()
	s.Decision.As = model.AsStaleMarker
	a.Candidate.Memory.ConflictsWith = []string{"s"}
	s.Candidate.Memory.ConflictsWith = []string{"a"}
	vds := []Verdict{a, s}
	p := Prices{Costs: []int{10, 10}, Paired: []int{3, 0}}
	p.Conflicts = NewConflicts(vds, p.Paired)
	est := fill(vds, &p, 21, nil)
	if got := sumOf(vds, &p, 0)(); est != got {
		t.Errorf("estimate %d, the request as priced %d (a as %s, s as %s)", est, got, vds[0].Decision.As, vds[1].Decision.As)
	}
}

// TestRefillCountsWhatGiveBackLeftOut: after a raw body comes back and its revived
// duplicate goes out again, the next record is priced without that duplicate's marks.
func TestRefillCountsWhatGiveBackLeftOut(t *testing.T) {
	now := fitItem{id: "now", tier: TierWindow, seq: 9, protected: true, cost: 10}.verdict()
	raw := fitItem{id: "raw", tier: TierEvidence, seq: 1, cost: 30}.verdict()
	n := fitItem{id: "n", tier: TierMemory, seq: 3, cost: 30}.verdict()
	n.Candidate.Memory.ConflictsWith = []string{"m"}
	vds := []Verdict{now, raw, duplicateOf("m", 2, []string{"raw"}, []string{"n"}), n}
	p := Prices{Costs: []int{10, 30, 10, 30}, Compact: []int{10, 30, 10, 30}, Paired: []int{0, 0, 3, 3}}
	p.Conflicts = NewConflicts(vds, p.Paired)
	Fit(vds, judgedAs(vds), p, 35, sumOf(vds, &p, -40))
	if !vds[3].Included() {
		t.Errorf("n: left out, though with it the request measures within 35")
	}
}

// TestFitKeepsRecoveryWholeWhenARoundResultIsCheaper: a tool round's call is priced with
// the line saying its result is withheld; a result part shorter than that line makes the
// request smaller, so recovery that fits beside it is not compacted.
func TestFitKeepsRecoveryWholeWhenARoundResultIsCheaper(t *testing.T) {
	now := fitItem{id: "now", tier: TierWindow, seq: 9, protected: true, cost: 10}.verdict()
	call := fitItem{id: "call", tier: TierProtected, seq: 5, protected: true, cost: 50}.verdict()
	call.Decision.As = model.AsMessage
	rec := fitItem{id: "rec", tier: TierProtected, seq: 1, protected: true, cost: 30}.verdict()
	part := fitItem{id: "part", tier: TierEvidence, seq: 6, cost: 15}.verdict()
	vds := []Verdict{now, call, rec, part}
	p := Prices{Costs: []int{10, 50, 30, 15}, Compact: []int{10, 50, 10, 15}, Group: []int{-1, -1, -1, 1}, Alone: []int{0, 20, 0, 0}}
	measure := func() int { return tallyOf(vds, &p).used }
	// rec in full and the part shown: 10 + 50 + 30 + (15 - 20) = 85.
	if got := Fit(vds, judgedAs(vds), p, 85, measure); got != 85 || vds[2].Compact || !vds[3].Included() {
		t.Errorf("got %d tokens, rec compact %v, part included %v; want 85, rec whole, part in", got, vds[2].Compact, vds[3].Included())
	}
}
