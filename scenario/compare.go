package scenario

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/peers"
)

// Budget kinds of a comparison row: the assembly's own tokenBudget, or exactly the tokens
// ctxgraph's assembly used.
const (
	BudgetOwn      = "own"
	BudgetCtxgraph = "ctxgraph"
)

// Comparison is one assembly of a scenario measured through every strategy at two budgets.
type Comparison struct {
	Scenario, Assembly, Model string
	// OwnBudget is the assembly's tokenBudget; CtxgraphTokens what ctxgraph's assembly
	// counted at it.
	OwnBudget, CtxgraphTokens int
	// Baseline is the server's tokens.baseline; ReplayBaseline is the replayed lineage
	// counted the same way, equal to it when the replay holds every record the baseline
	// counts.
	Baseline, ReplayBaseline int
	// CtxgraphFailures are the expectations ctxgraph's assembly missed, all of them (not
	// only the text checks).
	CtxgraphFailures []string
	// Replay is the replayed lineage, the message list every peer strategy starts from.
	Replay []peers.Message
	// Requests holds what each strategy sends at each budget kind: Requests[kind][strategy].
	Requests map[string]map[string][]peers.Message
	Rows     []Row
	// Refit is ctxgraph's assembly requested again with tokenBudget set to the tokens its
	// first assembly used: whether its budget fitting keeps what it kept.
	Refit Row
}

// Row is one strategy at one budget: what it sent and what the checks found.
type Row struct {
	Strategy, BudgetKind string
	Budget, Tokens       int
	peers.Outcome
}

// Compare plays a scenario like Run, then measures each assembly through every strategy:
// it reads the assembly's lineage back from the server (history, tool calls, raw results),
// replays it as provider messages, runs each peer strategy over the replay at the
// assembly's own budget and at exactly the tokens ctxgraph used, and reads every request
// against the assembly's text expectations and the tool pairing rule. ctxgraph's request at
// either budget is its assembly (it used exactly its token count); a second assembly with
// that count as its budget is recorded as the refit. count is the tokenizer every strategy
// counts with.
func (r Runner) Compare(ctx context.Context, sc Scenario, count model.TokenCounter) (Result, []Comparison, error) {
	res, err := r.Run(ctx, sc)
	if err != nil {
		return res, nil, err
	}
	var out []Comparison
	for i, a := range sc.Assemblies {
		ar := res.Assemblies[i]
		if !ar.Ran {
			return res, out, fmt.Errorf("assembly %s did not run: %v", a.Key, ar.Failures)
		}
		c, err := r.compare(ctx, sc, a, ar, res, count)
		if err != nil {
			return res, out, fmt.Errorf("assembly %s: %w", a.Key, err)
		}
		out = append(out, c)
	}
	return res, out, nil
}

func (r Runner) compare(ctx context.Context, sc Scenario, a Assembly, ar AssemblyResult, res Result, tk model.TokenCounter) (Comparison, error) {
	c := Comparison{Scenario: sc.Name, Assembly: a.Key, Model: a.Model, OwnBudget: a.TokenBudget,
		CtxgraphTokens: ar.Assembled, Baseline: ar.Baseline, CtxgraphFailures: ar.Failures,
		Requests: map[string]map[string][]peers.Message{}}
	exp := peers.Expectations{Contains: a.Expect.Contains, NotContains: a.Expect.NotContains, Messages: expectedMessages(sc, a)}
	branch, ok := res.IDs[a.Branch]
	if !ok {
		return c, fmt.Errorf("branch %q was not created", a.Branch)
	}
	items, err := r.Lineage(ctx, branch)
	if err != nil {
		return c, err
	}
	c.Replay = peers.Replay(items)
	c.ReplayBaseline = peers.BaselineTokens(tk, items)
	count := peers.TokenCounter(tk)

	for _, kind := range []string{BudgetOwn, BudgetCtxgraph} {
		budget := a.TokenBudget
		if kind == BudgetCtxgraph {
			budget = ar.Assembled
		}
		requests := peers.PeerRequests(c.Replay, budget, a.Model, count)
		// At exactly its own token count ctxgraph's request is the one it made: it used
		// that many tokens.
		requests[peers.StrategyCtxgraph] = ar.Messages
		c.Requests[kind] = requests
		for _, s := range peers.Strategies {
			msgs := requests[s]
			tokens := count(msgs)
			if s == peers.StrategyCtxgraph {
				tokens = ar.Assembled
			}
			o, err := peers.Check(msgs, exp)
			if err != nil {
				return c, fmt.Errorf("%s: %w", s, err)
			}
			c.Rows = append(c.Rows, Row{Strategy: s, BudgetKind: kind, Budget: budget, Tokens: tokens, Outcome: o})
		}
	}
	refit := ar.Request
	refit.TokenBudget, refit.Trace = ar.Assembled, false
	again, err := r.Client.Assemble(ctx, refit)
	if err != nil {
		return c, err
	}
	o, err := peers.Check(again.Messages, exp)
	if err != nil {
		return c, fmt.Errorf("ctxgraph refit: %w", err)
	}
	c.Refit = Row{Strategy: peers.StrategyCtxgraph, BudgetKind: BudgetCtxgraph, Budget: ar.Assembled, Tokens: again.Tokens.Assembled, Outcome: o}
	return c, nil
}

// expectedMessages are the messages an assembly's expectations name as included, in any form,
// by key, with their content: a request that lost one lost the conversation the scenario
// says the model must see.
func expectedMessages(sc Scenario, a Assembly) map[string]string {
	content := map[string]string{}
	for _, e := range sc.Events {
		if e.Type == "message" {
			content[e.Key] = e.Content
		}
	}
	out := map[string]string{}
	keep := func(key string) {
		if c, ok := content[key]; ok && c != "" {
			out[key] = c
		}
	}
	for _, k := range a.Expect.Included {
		keep(k)
	}
	for k := range a.Expect.IncludedAs {
		keep(k)
	}
	return out
}

// Lineage reads back, through the API, every record naive history replay of a branch sends:
// the messages of its history (GET /v1/branches/{id}/history), and for each tool call of it
// the call (GET /v1/tool-calls/{id}) and each raw result of the call within the lineage
// (GET /v1/artifacts/{id} and /raw). An ancestor branch contributes records up to its fork
// point, the last seq its history shows on it. An artifact that no longer exists (deleted)
// is left out, as the baseline leaves it out.
func (r Runner) Lineage(ctx context.Context, branchID string) ([]peers.Item, error) {
	h, err := r.Client.History(ctx, branchID)
	if err != nil {
		return nil, err
	}
	if len(h.Lineage) == 0 || h.Lineage[0] != branchID {
		return nil, fmt.Errorf("history of %s: lineage %v does not start at the branch", branchID, h.Lineage)
	}
	depth := map[string]int{}
	for i, b := range h.Lineage {
		depth[b] = i
	}
	cutoff := map[string]int64{}
	for _, it := range h.Items {
		cutoff[it.BranchID] = max(cutoff[it.BranchID], it.Seq)
	}
	within := func(branch string, seq int64) bool {
		d, ok := depth[branch]
		return ok && (d == 0 || seq <= cutoff[branch])
	}
	var items []peers.Item
	for _, it := range h.Items {
		if it.Type == "message" {
			name := ""
			if it.Role == "assistant" && it.ParticipantName != "" {
				name = model.ChatName(it.ParticipantName)
			}
			items = append(items, peers.Item{Kind: peers.ItemMessage, Depth: depth[it.BranchID], Seq: it.Seq,
				Role: it.Role, Content: it.Content, Name: name})
			continue
		}
		call, err := r.Client.GetToolCall(ctx, it.ID)
		if err != nil {
			return nil, err
		}
		items = append(items, peers.Item{Kind: peers.ItemCall, Depth: depth[it.BranchID], Seq: it.Seq, RunID: call.RunID,
			CallID: call.CallID, Tool: call.Tool, Arguments: string(call.Arguments)})
		for _, artID := range call.ArtifactIDs {
			art, err := r.Client.GetArtifact(ctx, artID)
			var notFound *client.Error
			if errors.As(err, &notFound) && notFound.Status == http.StatusNotFound {
				continue
			}
			if err != nil {
				return nil, err
			}
			if !within(art.BranchID, art.Seq) {
				continue
			}
			var raw model.ArtifactRaw
			if err := r.Client.Do(ctx, http.MethodGet, "/v1/artifacts/"+url.PathEscape(artID)+"/raw", nil, &raw); err != nil {
				return nil, err
			}
			items = append(items, peers.Item{Kind: peers.ItemResult, Depth: depth[art.BranchID], Seq: art.Seq,
				CallID: call.CallID, Result: model.BaselineToolResultText(string(raw.Result), raw.Error)})
		}
	}
	return items, nil
}
