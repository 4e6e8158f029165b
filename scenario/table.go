package scenario

import (
	"fmt"
	"strings"
)

// Table renders results as a markdown table, one row per assembly: the replay (baseline)
// and assembled tokens with the cut, the reference design's figures when the scenario has
// them, the difference of the cuts in percentage points (positive: ctxgraph cuts more) and
// whether the assembly passed. A last line counts the passes.
func Table(results []Result) string {
	var b strings.Builder
	b.WriteString("| scenario | assembly | replay tokens | assembled tokens | cut | ref replay | ref assembled | ref cut | cut vs ref (pp) | result |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
	passed, total := 0, 0
	for _, r := range results {
		refReplay, refAssembled, refCut := "—", "—", "—"
		var refCutValue float64
		hasRefCut := false
		if r.Reference != nil {
			refReplay = fmt.Sprint(r.Reference.ReplayTokens)
			refAssembled = fmt.Sprint(r.Reference.AssembledTokens)
			if r.Reference.ReplayTokens > 0 {
				refCutValue = 1 - float64(r.Reference.AssembledTokens)/float64(r.Reference.ReplayTokens)
				refCut, hasRefCut = percent(refCutValue), true
			}
		}
		if len(r.Assemblies) == 0 {
			status := "no assemblies"
			if r.PlaybackError != "" {
				status = "fail: playback"
			}
			fmt.Fprintf(&b, "| %s | — | — | — | — | %s | %s | %s | — | %s |\n", cell(r.Scenario), refReplay, refAssembled, refCut, status)
			continue
		}
		for _, a := range r.Assemblies {
			total++
			replay, assembled, cut, diff := "—", "—", "—", "—"
			if a.Ran {
				replay, assembled = fmt.Sprint(a.Baseline), fmt.Sprint(a.Assembled)
			}
			if c, ok := a.Cut(); ok {
				cut = percent(c)
				if hasRefCut {
					diff = fmt.Sprintf("%+.1f", (c-refCutValue)*100)
				}
			}
			status := "pass"
			switch {
			case r.PlaybackError != "":
				status = "fail: playback"
			case !a.Ran:
				status = "fail: not assembled"
			case len(a.Failures) > 0:
				status = fmt.Sprintf("fail (%d)", len(a.Failures))
			default:
				passed++
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				cell(r.Scenario), cell(a.Key), replay, assembled, cut, refReplay, refAssembled, refCut, diff, status)
		}
	}
	fmt.Fprintf(&b, "\n%d of %d assemblies passed.\n", passed, total)
	return b.String()
}

func percent(f float64) string { return fmt.Sprintf("%.1f %%", f*100) }

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// ConversationTable renders conversation results as a markdown table, one row per
// conversation: the needs and how many the model calls carried, the forms that carried
// them, the tokens of the turns' first model calls as ctxgraph assembled them and as
// history replay would have sent them, the cut, and how many checks failed.
func ConversationTable(results []ConversationResult) string {
	var b strings.Builder
	b.WriteString("| conversation | needed | found | recall | forms | ctxgraph tokens | replay tokens | cut | failures |\n")
	b.WriteString("|---|---:|---:|---:|---|---:|---:|---:|---:|\n")
	needed, found := 0, 0
	for _, r := range results {
		needed, found = needed+r.Needed, found+r.Found
		forms := map[string]int{}
		var order []string
		for _, t := range r.Turns {
			for _, n := range t.Needs {
				if !n.Found {
					continue
				}
				if forms[n.Form] == 0 {
					order = append(order, n.Form)
				}
				forms[n.Form]++
			}
		}
		formCell := "—"
		if len(order) > 0 {
			parts := make([]string, len(order))
			for i, f := range order {
				parts[i] = fmt.Sprintf("%s %d", f, forms[f])
			}
			formCell = strings.Join(parts, ", ")
		}
		cut := "—"
		if r.Baseline > 0 {
			cut = percent(1 - float64(r.Assembled)/float64(r.Baseline))
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %d | %d | %s | %d |\n", cell(r.Conversation), r.Needed, r.Found,
			percent(r.Recall()), cell(formCell), r.Assembled, r.Baseline, cut, len(r.AllFailures()))
	}
	recall := 1.0
	if needed > 0 {
		recall = float64(found) / float64(needed)
	}
	fmt.Fprintf(&b, "\n%d of %d needed values carried (%s).\n", found, needed, percent(recall))
	return b.String()
}
