package scenario

import (
	"fmt"
	"strings"

	"github.com/ctxgraph/ctxgraph/peers"
)

// The targets of the conversation comparison (issue: needed-state recall against replay and
// the peers), as fractions.
const (
	// TargetCtxgraphRecall is the share of first-call needs ctxgraph must carry.
	TargetCtxgraphRecall = 0.95
	// TargetLargeShare is the most ctxgraph may send of replay's tokens in a large-output
	// conversation (first calls summed): at least 85 % under replay.
	TargetLargeShare = 0.15
)

// conversationTotals adds up a set of compared turns.
type conversationTotals struct {
	turns, needed, afterRecall int
	found, foundAfterRecall    map[string]int
	tokens                     map[string]int
	orphanRequests, leaks      map[string]int
}

func newTotals() conversationTotals {
	return conversationTotals{found: map[string]int{}, foundAfterRecall: map[string]int{}, tokens: map[string]int{},
		orphanRequests: map[string]int{}, leaks: map[string]int{}}
}

func (t *conversationTotals) add(c ConversationComparison) {
	for _, tc := range c.Turns {
		t.turns++
		t.needed += len(tc.Needs)
		t.afterRecall += len(tc.AfterRecall)
		for s, o := range tc.Outcomes {
			t.found[s] += o.Found
			t.foundAfterRecall[s] += o.FoundAfterRecall
			t.tokens[s] += o.Tokens
			t.orphanRequests[s] += o.OrphanRequests
			t.leaks[s] += len(o.Leaks)
		}
	}
}

// strategyShort names a strategy in a table's cell legend.
func strategyShort(s string) string {
	switch s {
	case peers.StrategyReplay:
		return "replay"
	case peers.StrategyLangChain:
		return "LangChain"
	case peers.StrategyLiteLLM:
		return "LiteLLM"
	case peers.StrategyClear:
		return "clear_tool_uses"
	}
	return s
}

// ConversationCompareLegend reads ConversationCompareTable's cells.
var ConversationCompareLegend = "Cells with several figures list the strategies in the order " +
	strings.Join(shortNames(ConversationStrategies), " · ") + "; every peer runs at exactly ctxgraph's token count of the call. " +
	"Orphaned: requests with a tool call cut from its result or a result cut from its call (ctxgraph: every model call of the turn, continuations included; the others: the first call)."

func shortNames(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strategyShort(s)
	}
	return out
}

// ConversationCompareTable renders one row per conversation and subtotals for the small- and
// large-output ones and all: the needs of the turns' first calls and how many each strategy's
// request carried, ctxgraph's recall, the tokens each sent, ctxgraph's cut against replay,
// the requests with orphaned tool pairs and the leaks (a turn's mustNotContain value sent).
func ConversationCompareTable(comps []ConversationComparison) string {
	var b strings.Builder
	b.WriteString("| conversation | outputs | first calls | needed | found | ctxgraph recall | tokens | ctxgraph cut vs replay | orphaned | leaks |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	row := func(name, class string, t conversationTotals) {
		recall := "—"
		if t.needed > 0 {
			recall = percent(float64(t.found[peers.StrategyCtxgraph]) / float64(t.needed))
		}
		cut := "—"
		if r := t.tokens[peers.StrategyReplay]; r > 0 {
			cut = percent(1 - float64(t.tokens[peers.StrategyCtxgraph])/float64(r))
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %s | %s | %s | %s |\n", name, class, t.turns, t.needed,
			perStrategy(t.found), recall, perStrategy(t.tokens), cut,
			perStrategy(t.orphanRequests), perStrategy(t.leaks))
	}
	small, large, all := newTotals(), newTotals(), newTotals()
	for _, c := range comps {
		t := newTotals()
		t.add(c)
		class := "small"
		if c.Large {
			class = "large"
			large.add(c)
		} else {
			small.add(c)
		}
		all.add(c)
		row(cell(c.Conversation), class, t)
	}
	row("**small-output**", "small", small)
	row("**large-output**", "large", large)
	row("**all**", "", all)
	return b.String()
}

// perStrategy writes a figure of each strategy, in ConversationStrategies' order.
func perStrategy(m map[string]int) string {
	parts := make([]string, len(ConversationStrategies))
	for i, s := range ConversationStrategies {
		parts[i] = fmt.Sprint(m[s])
	}
	return strings.Join(parts, " · ")
}

// ConversationTurnTable renders one row per compared turn: its needs, what each strategy
// carried, the tokens each sent and ctxgraph's tokens as a share of replay's.
func ConversationTurnTable(comps []ConversationComparison) string {
	var b strings.Builder
	b.WriteString("| conversation | turn | needed | found | tokens | ctxgraph ÷ replay |\n|---|---|---:|---:|---:|---:|\n")
	for _, c := range comps {
		for _, tc := range c.Turns {
			found, tokens := map[string]int{}, map[string]int{}
			for s, o := range tc.Outcomes {
				found[s], tokens[s] = o.Found, o.Tokens
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s |\n", cell(c.Conversation), cell(tc.Turn), len(tc.Needs),
				perStrategy(found), perStrategy(tokens), ratioText(tokens[peers.StrategyCtxgraph], tokens[peers.StrategyReplay]))
		}
	}
	return b.String()
}

func ratioText(a, b int) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// ConversationNotes are the figures read beside the table: the largest share of replay's
// tokens a small-output turn's first call took, and the values needed after a recall.
func ConversationNotes(comps []ConversationComparison) string {
	var b strings.Builder
	// A turn with no history sends the same user message either way (a ratio of 1): the
	// largest ratio is also given among the turns that have one.
	worst, worstLater := -1.0, -1.0
	var where, whereLater string
	all := newTotals()
	recallCalls, recallTokens := 0, 0
	for _, c := range comps {
		all.add(c)
		for _, tc := range c.Turns {
			if tc.AfterRecallTokens > 0 {
				recallCalls, recallTokens = recallCalls+1, recallTokens+tc.AfterRecallTokens
			}
			if c.Large {
				continue
			}
			mine, replay := tc.Outcomes[peers.StrategyCtxgraph].Tokens, tc.Outcomes[peers.StrategyReplay].Tokens
			if replay == 0 {
				continue
			}
			r := float64(mine) / float64(replay)
			text := fmt.Sprintf("%s %s: %d tokens against replay's %d", c.Conversation, tc.Turn, mine, replay)
			if r > worst {
				worst, where = r, text
			}
			if len(tc.Requests[peers.StrategyReplay]) > 1 && r > worstLater {
				worstLater, whereLater = r, text
			}
		}
	}
	if worst >= 0 {
		fmt.Fprintf(&b, "- Largest ctxgraph ÷ replay among the small-output turns' first calls: %.2f (%s)", worst, where)
		if worstLater >= 0 && worstLater < worst {
			fmt.Fprintf(&b, "; among the turns with earlier history: %.2f (%s)", worstLater, whereLater)
		}
		b.WriteString(".\n")
	}
	if all.afterRecall > 0 {
		fmt.Fprintf(&b, "- Values needed after a recall (%d, not in the table): ctxgraph carried %d at the model call after its `ctxgraph_recall` (%d such calls, %d tokens, not counted in the table either); at the first call, which is all the others have, replay carries %d, LangChain %d, LiteLLM %d, clear_tool_uses %d.\n",
			all.afterRecall, all.foundAfterRecall[peers.StrategyCtxgraph], recallCalls, recallTokens, all.foundAfterRecall[peers.StrategyReplay],
			all.foundAfterRecall[peers.StrategyLangChain], all.foundAfterRecall[peers.StrategyLiteLLM], all.foundAfterRecall[peers.StrategyClear])
	}
	same, named := 0, 0
	for _, c := range comps {
		for _, tc := range c.Turns {
			if tc.Assembled == 0 {
				continue
			}
			named++
			if tc.Assembled == tc.Budget {
				same++
				continue
			}
			fmt.Fprintf(&b, "- %s %s: the request counts %d tokens, the server's tokens.assembled %d.\n", c.Conversation, tc.Turn, tc.Budget, tc.Assembled)
		}
	}
	if named > 0 {
		fmt.Fprintf(&b, "- ctxgraph's tokens are counted from the request the scripted model received; they equal the server's `tokens.assembled` at %d of the %d first calls whose assembly the generation's answer names (a turn that recalls first answers with its last call's).\n", same, named)
	}
	return b.String()
}

// ConversationLosses lists, per turn, the needs each strategy's first call lost, its leaks
// and its orphaned tool pairs; strategies that lost alike share a line.
func ConversationLosses(comps []ConversationComparison) string {
	var b strings.Builder
	for _, c := range comps {
		for _, tc := range c.Turns {
			var order []string
			by := map[string][]string{}
			for _, s := range ConversationStrategies {
				o := tc.Outcomes[s]
				var parts []string
				if len(o.Missing) > 0 {
					parts = append(parts, "lost "+quoteAll(o.Missing))
				}
				if len(o.Leaks) > 0 {
					parts = append(parts, "leaked "+quoteAll(o.Leaks))
				}
				if o.Orphans > 0 {
					parts = append(parts, fmt.Sprintf("%d orphaned tool pair%s", o.Orphans, map[bool]string{true: "s"}[o.Orphans > 1]))
				}
				if len(parts) == 0 {
					continue
				}
				loss := strings.Join(parts, "; ")
				if by[loss] == nil {
					order = append(order, loss)
				}
				by[loss] = append(by[loss], strategyShort(s))
			}
			for _, loss := range order {
				fmt.Fprintf(&b, "- %s %s (%d tokens), %s: %s\n", c.Conversation, tc.Turn, tc.Budget, strings.Join(by[loss], ", "), loss)
			}
		}
	}
	return b.String()
}

// ConversationTargets checks the comparison's targets: ctxgraph carries at least 95 % of the
// first calls' needs; in every large-output conversation it sends at most 15 % of replay's
// tokens (first calls summed); no small-output turn's first call sends more than replay; at
// its token count no peer keeps more needs than ctxgraph in any conversation; none of
// ctxgraph's requests has an orphaned tool pair.
func ConversationTargets(comps []ConversationComparison) []Target {
	recall := Target{Name: fmt.Sprintf("ctxgraph carries ≥ %.0f %% of the values needed at the turns' first calls", 100*TargetCtxgraphRecall)}
	large := Target{Name: fmt.Sprintf("large outputs: ctxgraph's first calls ≥ %.0f %% under replay, in every conversation", 100*(1-TargetLargeShare))}
	small := Target{Name: "small outputs: no turn's first call sends more tokens than replay"}
	peersT := Target{Name: "at ctxgraph's token count no peer keeps more needed values, in any conversation"}
	orphans := Target{Name: "no request of ctxgraph cuts a tool result from its call"}

	all := newTotals()
	var recallMiss, largeMiss, smallMiss, peerMiss, orphanMiss []string
	var largeFigures []string
	smallTurns, worst := 0, 0.0
	for _, c := range comps {
		t := newTotals()
		t.add(c)
		all.add(c)
		for _, tc := range c.Turns {
			if o := tc.Outcomes[peers.StrategyCtxgraph]; len(o.Missing) > 0 {
				recallMiss = append(recallMiss, fmt.Sprintf("%s %s lost %s", c.Conversation, tc.Turn, quoteAll(o.Missing)))
			}
			if o := tc.Outcomes[peers.StrategyCtxgraph]; o.OrphanRequests > 0 {
				orphanMiss = append(orphanMiss, fmt.Sprintf("%s %s (%d requests, %d orphans)", c.Conversation, tc.Turn, o.OrphanRequests, o.Orphans))
			}
			if c.Large {
				continue
			}
			smallTurns++
			mine, replay := tc.Outcomes[peers.StrategyCtxgraph].Tokens, tc.Outcomes[peers.StrategyReplay].Tokens
			if replay > 0 {
				worst = max(worst, float64(mine)/float64(replay))
			}
			if mine > replay {
				smallMiss = append(smallMiss, fmt.Sprintf("%s %s (%d tokens, replay %d: %+d, ×%.2f)", c.Conversation, tc.Turn, mine, replay, mine-replay, float64(mine)/float64(replay)))
			}
		}
		if c.Large {
			mine, replay := t.tokens[peers.StrategyCtxgraph], t.tokens[peers.StrategyReplay]
			share := 1.0
			if replay > 0 {
				share = float64(mine) / float64(replay)
			}
			largeFigures = append(largeFigures, fmt.Sprintf("%s %s", c.Conversation, percent(share)))
			if share > TargetLargeShare {
				largeMiss = append(largeMiss, fmt.Sprintf("%s (%d of replay's %d tokens: %s, %.1f points over)", c.Conversation, mine, replay, percent(share), 100*(share-TargetLargeShare)))
			}
		}
		for _, s := range ConversationStrategies {
			if s == peers.StrategyCtxgraph || s == peers.StrategyReplay {
				continue
			}
			if t.found[s] > t.found[peers.StrategyCtxgraph] {
				peerMiss = append(peerMiss, fmt.Sprintf("%s: %s keeps %d, ctxgraph %d", c.Conversation, strategyShort(s), t.found[s], t.found[peers.StrategyCtxgraph]))
			}
		}
	}
	share := 1.0
	if all.needed > 0 {
		share = float64(all.found[peers.StrategyCtxgraph]) / float64(all.needed)
	}
	recall.Met = share >= TargetCtxgraphRecall
	recall.Detail = fmt.Sprintf("%d of %d (%s)", all.found[peers.StrategyCtxgraph], all.needed, percent(share)) + missText(recallMiss)
	large.Met = len(largeMiss) == 0
	large.Detail = "ctxgraph ÷ replay: " + strings.Join(largeFigures, ", ") + missText(largeMiss)
	small.Met = len(smallMiss) == 0
	small.Detail = fmt.Sprintf("%d turns; largest ctxgraph ÷ replay %.2f", smallTurns, worst) + missText(smallMiss)
	peersT.Met = len(peerMiss) == 0
	peersT.Detail = fmt.Sprintf("needs kept over all conversations: %s (ctxgraph · replay · LangChain · LiteLLM · clear_tool_uses)", perStrategy(all.found)) + missText(peerMiss)
	orphans.Met = len(orphanMiss) == 0
	orphans.Detail = fmt.Sprintf("%d requests with orphaned tool pairs", all.orphanRequests[peers.StrategyCtxgraph]) + missText(orphanMiss)
	return []Target{recall, large, small, peersT, orphans}
}
