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
