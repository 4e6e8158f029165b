package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/peers"
	"github.com/ctxgraph/ctxgraph/scenario"
)

// The peers phase: every shared scenario played again (scenario.Runner.Compare), each
// assembly's lineage replayed and sent through the peers' context strategies, ported in
// peers/ and proven against the libraries by integration/peers_test.go, beside ctxgraph's
// assembly, at the scenario's budget and at exactly ctxgraph's token count.

// peersResult is what the peers phase measured, rendered; Points keep the totals the plot
// draws.
type peersResult struct {
	Files       int
	Assemblies  int
	Elapsed     time.Duration
	Summary     string
	Table       string
	Losses      string
	Refits      string
	Targets     []scenario.Target
	Points      []peersPoint
	Errors      []string
	PlotPath    string
	PlotRelPath string
}

// peersPoint is one strategy's totals at one budget over every compared assembly.
type peersPoint struct {
	Strategy, BudgetKind  string
	Tokens, Passed, Total int
}

func (b *bench) runPeers(ctx context.Context) {
	start := time.Now()
	files, err := filepath.Glob(filepath.Join(b.o.scenarios, "*.json"))
	r := &peersResult{Files: len(files)}
	b.peers = r
	if err != nil || len(files) == 0 {
		r.Errors = append(r.Errors, fmt.Sprintf("no scenario files in %s (%v)", b.o.scenarios, err))
		b.failures = append(b.failures, "peers: no scenario files")
		return
	}
	tk := assembly.MustTokenizer("o200k_base")
	var comps []scenario.Comparison
	for _, f := range files {
		name := filepath.Base(f)
		sc, err := scenario.Load(f)
		if err != nil {
			r.Errors = append(r.Errors, name+": loading: "+err.Error())
			continue
		}
		runner := scenario.Runner{Client: b.api.WithKey(b.scKeys[f])}
		res, c, err := runner.Compare(ctx, sc, tk)
		if res.ConversationID != "" {
			b.convs = append(b.convs, b.scKeys[f]+"|"+res.ConversationID)
		}
		if err != nil {
			r.Errors = append(r.Errors, name+": "+err.Error())
			continue
		}
		comps = append(comps, c...)
	}
	r.Assemblies = len(comps)
	r.Summary, r.Table = scenario.CompareSummary(comps), scenario.CompareTable(comps)
	r.Losses, r.Refits = scenario.CompareLosses(comps), scenario.CompareRefits(comps)
	r.Targets = scenario.CompareTargets(comps)
	for _, kind := range []string{scenario.BudgetOwn, scenario.BudgetCtxgraph} {
		for _, s := range peers.Strategies {
			p := peersPoint{Strategy: s, BudgetKind: kind}
			for _, c := range comps {
				for _, row := range c.Rows {
					if row.Strategy == s && row.BudgetKind == kind {
						p.Tokens, p.Passed, p.Total = p.Tokens+row.Tokens, p.Passed+row.Passed, p.Total+row.Total
					}
				}
			}
			r.Points = append(r.Points, p)
		}
	}
	r.Elapsed = time.Since(start)
	if len(r.Errors) > 0 {
		b.failures = append(b.failures, fmt.Sprintf("peers: %d scenarios could not be compared", len(r.Errors)))
	}
	logf("peers: %d assemblies of %d scenario files in %s, %d errors", len(comps), len(files), r.Elapsed.Round(time.Millisecond), len(r.Errors))
}

// plotPeers draws each strategy's checks passed against the tokens it sent, summed over
// every assembly, at both budgets. It is linked from the peers section, not the Plots list,
// so that the section stands on its own.
func (b *bench) plotPeers() error {
	r := b.peers
	p := newPlot("Checks passed against tokens sent, at the scenario's budget and at ctxgraph's token count",
		"tokens sent, summed over every assembly (log)", "checks passed (%)")
	logAxis(&p.X)
	p.Legend.Top, p.Legend.Left = false, true
	for i, s := range peers.Strategies {
		var xys plotter.XYs
		for _, pt := range r.Points {
			if pt.Strategy == s && pt.Total > 0 {
				xys = append(xys, plotter.XY{X: float64(pt.Tokens), Y: 100 * float64(pt.Passed) / float64(pt.Total)})
			}
		}
		if len(xys) == 0 {
			continue
		}
		if err := addLine(p, xys, palette[i%len(palette)], i == len(peers.Strategies)-1, []draw.GlyphDrawer{
			draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{}}[i%5], s); err != nil {
			return err
		}
	}
	p.Y.Min, p.Y.Max = 0, 105
	p.X.Min, p.X.Max = p.X.Min/1.3, p.X.Max*1.3
	file := filepath.Join(b.o.plots, "peers-checks-vs-tokens.png")
	if err := p.Save(9*vg.Inch, 6*vg.Inch, file); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(b.o.out), file)
	if err != nil {
		rel = file
	}
	r.PlotPath, r.PlotRelPath = file, filepath.ToSlash(rel)
	return nil
}

// reportPeers writes the peers section.
func (b *bench) reportPeers(pf func(string, ...any)) {
	r := b.peers
	pf("## Peers\n\n")
	pf("Every scenario of `%s` (%d files, %d assemblies) played again through the API over loopback HTTP with `scenario.Runner.Compare`, each assembly's lineage read back (history, tool calls, raw results) and replayed as OpenAI-shaped messages, with tool calls and their results paired; the replay counts exactly the server's `tokens.baseline`. The replay goes through each peer strategy, ported to Go in `peers/` and proven identical to the libraries (langchain-core 1.8.3, langchain 1.5.2, litellm 1.110.2) by `integration/peers_test.go`:\n\n",
		b.o.scenarios, r.Files, r.Assemblies)
	pf("- **history replay**: the lineage as it is;\n")
	pf("- **LangChain trim_messages** as its documentation recommends for chat agents: `strategy=\"last\"`, `include_system=True`, `start_on=\"human\"`, `allow_partial=False`, `max_tokens` = the budget;\n")
	pf("- **clear_tool_uses**: Anthropic's `clear_tool_uses_20250919` as LangChain's `ClearToolUsesEdit` implements it (Anthropic's runs server-side, so it cannot run here): `trigger` = the budget, `keep` 3, inputs kept, placeholder `[cleared]`;\n")
	pf("- **LiteLLM trim_messages** with the budget as the model's input window, of which it fills `trim_ratio` 0.75 (`max_tokens` = ⌊0.75 × budget⌋);\n")
	pf("- **ctxgraph**: the assembly, at the scenario's budget; it used exactly its token count, so the same request stands at that budget.\n\n")
	pf("Every strategy counts with the o200k_base tokenizer, as ctxgraph counts an assembly (`assembly.ChatTokens`). Each strategy runs at two budgets: the scenario's own `tokenBudget`, and exactly the tokens ctxgraph's assembly used. The checks are the scenario's `contains` (present) and `notContains` (absent: a leak otherwise) read as text on what the strategy would send, the content of every message the scenario expects included (`included`, `includedAs`), plus one check that a provider accepts the request: every tool call has its result right after it and every result its call (OpenAI rejects the request otherwise; an orphaned tool pair is one call or result that fails it), and there is a message besides the system text (Anthropic rejects it otherwise). ctxgraph is held to every expectation of the scenario as well (`included`, `includedAs`, `omitted`, economy). The phase took %s.\n\n",
		r.Elapsed.Round(time.Millisecond))
	pf("%s\n", r.Summary)
	if r.PlotRelPath != "" {
		pf("![Context strategies: checks passed against tokens sent](%s)\n\n", r.PlotRelPath)
	}
	pf("| target (issue 23) | measured | status |\n|---|---|---|\n")
	for _, t := range r.Targets {
		pf("| %s | %s | %s |\n", t.Name, oneLine(t.Detail), metText(t.Met))
	}
	pf("\n")
	if r.Refits != "" {
		pf("ctxgraph's assembly requested again with its own token count as the budget, where that changed what it sent (the rows above use the first assembly):\n\n%s\n", r.Refits)
	}
	pf("%s\n\n%s\n", scenario.CompareLegend, r.Table)
	if r.Losses != "" {
		pf("### What each strategy lost, and where\n\n%s\n", r.Losses)
	}
	if len(r.Errors) > 0 {
		pf("Failures:\n\n")
		for _, e := range r.Errors {
			pf("- %s\n", oneLine(e))
		}
		pf("\n")
	}
}
