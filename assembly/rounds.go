package assembly

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// rounds renders the tool rounds of the run being generated in the provider's native form
// (DESIGN §6 "Serialising for a provider"): per round the assistant's calls, then one
// result per call. A result is what the policies included of the call's outcome (its raw
// body, a reference to it, the memory or safe summary standing in for it) or, when they
// included nothing, a line naming the artifact and why its body is withheld: never missing.
type rounds struct {
	// all is every verdict of the judgement, for what the budget never saw (an outcome
	// omitted for privacy) and for the seq of every outcome; judged is what judging them
	// worked out, for finding the outcomes of the round calls among them.
	all    []*policy.Verdict
	judged *policy.Context
	// budgeted are the positions in all of the verdicts the budget works on, in order:
	// render and price are given copies of those verdicts, in the same order.
	budgeted []int
	provider string
	// recall says the request offers the recall tool, which a withheld result names.
	recall bool
	// named is set when the last render named a withheld result for recall.
	named bool
	raw   map[string]model.ArtifactRaw
	// at are the positions in all of the round calls' artifacts by id (-1: none judged),
	// found as calls need them (index): the budget renders again after each trim, and all
	// does not change meanwhile.
	at map[string]int
}

// roundMembers maps each included record that belongs to a tool round (a round call's
// outcome, or a memory standing in for one) to its call's index in verdicts, and lists the
// round calls in seq order.
func (r *rounds) roundMembers(verdicts []policy.Verdict) (calls []int, member map[int]int) {
	member = map[int]int{}
	callOf := map[string]int{}
	artifactCall := map[string]int{}
	for i := range verdicts {
		vd := &verdicts[i]
		// The decision first: it is in the verdict, the type behind a pointer.
		if vd.Decision.As == model.AsMessage && vd.Included() && vd.Candidate.Type == model.TypeToolCall {
			calls = append(calls, i)
			callOf[vd.Candidate.ID] = i
			for _, a := range vd.Candidate.Call.ArtifactIDs {
				artifactCall[a] = i
			}
		}
	}
	if len(calls) == 0 {
		return nil, member // no round: no record belongs to one
	}
	sort.SliceStable(calls, func(x, y int) bool { return verdicts[calls[x]].Candidate.Seq < verdicts[calls[y]].Candidate.Seq })
	for i := range verdicts {
		vd := &verdicts[i]
		if !vd.Included() {
			continue
		}
		switch vd.Candidate.Type {
		case model.TypeArtifact:
			if k, ok := callOf[vd.Candidate.Artifact.ToolCallID]; ok {
				member[i] = k
			}
		case model.TypeMemory:
			// A memory joins the first round whose outcome it was derived from.
			first := -1
			for _, src := range vd.Candidate.Memory.SourceArtifactIDs {
				if k, ok := artifactCall[src]; ok && (first < 0 || verdicts[k].Candidate.Seq < verdicts[first].Candidate.Seq) {
					first = k
				}
			}
			if first >= 0 {
				member[i] = first
			}
		}
	}
	return calls, member
}

// render appends the rounds to msgs and their records to included.
func (r *rounds) render(verdicts []policy.Verdict, texts []string, calls []int, member map[int]int, msgs []model.ChatMessage, included []model.IncludedItem) ([]model.ChatMessage, []model.IncludedItem) {
	r.named = false
	r.index(verdicts, calls)
	results := resultsOf(member)
	state := r.state(verdicts)
	groups := r.groups(verdicts, calls)
	for _, group := range groups {
		ask := model.ChatMessage{Role: "assistant"}
		for _, k := range group {
			c := verdicts[k].Candidate
			ask.ToolCalls = append(ask.ToolCalls, model.ChatToolCall{ID: roundCallID(c), Name: c.Tool.Name, Arguments: roundArguments(c)})
			included = append(included, model.IncludedItem{Ref: c.ID, Type: c.Type, As: verdicts[k].Decision.As})
		}
		msgs = append(msgs, ask)
		for _, k := range group {
			c := verdicts[k].Candidate
			parts := results[k]
			// parts come in map order: records of equal seq (memories of two other branches)
			// keep their order in verdicts, so that a replay renders them alike.
			sort.Slice(parts, func(x, y int) bool {
				if sx, sy := verdicts[parts[x]].Candidate.Seq, verdicts[parts[y]].Candidate.Seq; sx != sy {
					return sx < sy
				}
				return parts[x] < parts[y]
			})
			lines := make([]string, 0, len(parts))
			for _, i := range parts {
				lines = append(lines, r.resultText(&verdicts[i], texts[i]))
				included = append(included, model.IncludedItem{Ref: verdicts[i].Candidate.ID, Type: verdicts[i].Candidate.Type, As: verdicts[i].Decision.As})
			}
			if len(lines) == 0 {
				lines = append(lines, r.withheld(c, state))
			}
			msgs = append(msgs, model.ChatMessage{Role: "tool", ToolCallID: roundCallID(c), Content: strings.Join(lines, "\n")})
		}
	}
	return msgs, included
}

// price sets the costs of the rounds' records as render shows them (policy.Prices): a call
// costs its part of the assistant message (the message itself with the first call of its
// round), its result message and the line saying why its result is withheld, alone[k],
// which the first record of its result that the budget keeps replaces; a record of a
// result costs its text (group[i] is its call), a conflict side its lone form (lones, by
// index). budgeted are the records the budget works on, each as if included; the calls of
// the run being generated are protected, so the rounds keep their shape while the budget
// trims their results.
func (r *rounds) price(budgeted []policy.Verdict, texts []string, lones map[int]string, costs []int, tk *Tokenizer) (group, alone []int) {
	calls, member := r.roundMembers(budgeted)
	r.index(budgeted, calls)
	// A result is withheld when the budget trimmed all of it: each outcome it works on as
	// the budget omits it.
	trimmed := policy.Verdict{Decision: model.Decision{Outcome: policy.OutcomeOmitted, Reason: model.ReasonBudget}}
	state := r.stateAs(func(int) *policy.Verdict { return &trimmed })
	group, alone = make([]int, len(budgeted)), make([]int, len(budgeted))
	for i := range group {
		group[i] = -1
	}
	for _, g := range r.groups(budgeted, calls) {
		for n, k := range g {
			c := budgeted[k].Candidate
			alone[k] = tk.Count(r.withheld(c, state))
			costs[k] = ToolCallTokens(tk, model.ChatToolCall{ID: roundCallID(c), Name: c.Tool.Name, Arguments: roundArguments(c)}) +
				MessageTokens(tk, "tool", "", "") + tk.Count(roundCallID(c)) + alone[k]
			if n == 0 {
				costs[k] += MessageTokens(tk, "assistant", "", "")
			}
		}
	}
	for i, k := range member {
		group[i] = k
		text := texts[i]
		if lone, ok := lones[i]; ok {
			text = lone // a conflict side's mark is priced apart
		}
		if text != "" { // a duplicate keeps the price of its line
			costs[i] = tk.Count(r.resultText(&budgeted[i], text))
		}
	}
	return group, alone
}

// index finds the outcomes of the round calls among verdicts that it has not looked for
// yet, in one pass over all's id hashes (policy.Context.Find): a judgement of 10,000 rounds
// holds tens of thousands of verdicts, a run's rounds a few calls.
func (r *rounds) index(verdicts []policy.Verdict, calls []int) {
	if r.at == nil {
		r.at = map[string]int{}
	}
	var missing []string
	for _, k := range calls {
		for _, a := range verdicts[k].Candidate.Call.ArtifactIDs {
			if _, ok := r.at[a]; !ok && !slices.Contains(missing, a) {
				missing = append(missing, a)
			}
		}
	}
	if len(missing) == 0 {
		return
	}
	at := r.judged.Find(r.all, missing)
	for _, id := range missing {
		r.at[id] = -1
		if i, ok := at[id]; ok && r.all[i].Candidate.Type == model.TypeArtifact {
			r.at[id] = i
		}
	}
}

// outcome is a round call's artifact as judged, nil when none is (index found it).
func (r *rounds) outcome(id string) *policy.Verdict {
	if i, ok := r.at[id]; ok && i >= 0 {
		return r.all[i]
	}
	return nil
}

// budgetedAt returns where a round call's outcome is among the verdicts the budget works
// on, if it is one of them.
func (r *rounds) budgetedAt(id string) (int, bool) {
	i, ok := r.at[id]
	if !ok || i < 0 {
		return 0, false
	}
	return slices.BinarySearch(r.budgeted, i)
}

// resultsOf lists the records of each round call's result, by the call's index.
func resultsOf(member map[int]int) map[int][]int {
	results := map[int][]int{}
	for i, k := range member {
		results[k] = append(results[k], i)
	}
	return results
}

// state returns a round call's outcome's verdict as the budget left it: its copy in
// verdicts (the budgeted ones, in order), else as judged (index found it).
func (r *rounds) state(verdicts []policy.Verdict) func(string) (*policy.Verdict, bool) {
	return r.stateAs(func(k int) *policy.Verdict { return &verdicts[k] })
}

// stateAs returns a round call's outcome's verdict as budgeted(k) says the budget left the
// k-th of the verdicts it works on, for an outcome among them, else as judged.
func (r *rounds) stateAs(budgeted func(k int) *policy.Verdict) func(string) (*policy.Verdict, bool) {
	return func(id string) (*policy.Verdict, bool) {
		if k, ok := r.budgetedAt(id); ok {
			return budgeted(k), true
		}
		vd := r.outcome(id)
		return vd, vd != nil
	}
}

// groups splits the round calls (in seq order, their outcomes indexed) into rounds: a round
// ends where a result arrived, since a call recorded after an earlier call's outcome belongs
// to the model's next request.
func (r *rounds) groups(verdicts []policy.Verdict, calls []int) [][]int {
	var groups [][]int
	var firstResult int64 = -1
	for _, k := range calls {
		c := verdicts[k].Candidate
		if len(groups) == 0 || (firstResult >= 0 && c.Seq > firstResult) {
			groups = append(groups, nil)
			firstResult = -1
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], k)
		for _, a := range c.Call.ArtifactIDs {
			if vd := r.outcome(a); vd != nil && (firstResult < 0 || vd.Candidate.Seq < firstResult) {
				firstResult = vd.Candidate.Seq
			}
		}
	}
	return groups
}

// resultText is one included record of a round's result: a raw body as it is (an error as
// its code and message), anything else as its context line.
func (r *rounds) resultText(vd *policy.Verdict, text string) string {
	c := vd.Candidate
	if c.Type != model.TypeArtifact || vd.Decision.As != model.AsRaw {
		return text
	}
	body := r.raw[c.ID]
	out := string(body.Result)
	if body.Error != nil {
		out = fmt.Sprintf("error %s: %s", body.Error.Code, body.Error.Message)
		if out2 := string(body.Result); out2 != "" {
			out += "\n" + out2
		}
	}
	if c.Tool.Status != model.ToolSucceeded && c.Tool.Status != "" {
		out = "(" + string(c.Tool.Status) + ") " + out
	}
	return out
}

// withheld names the outcome of a call whose result the policies did not include, and why.
func (r *rounds) withheld(c *model.Candidate, state func(string) (*policy.Verdict, bool)) string {
	id, why := "", "not recorded"
	for _, a := range c.Call.ArtifactIDs {
		id, why = a, "left out"
		if vd, ok := state(a); ok {
			switch vd.Decision.Reason {
			case model.ReasonPrivacy:
				why = "restricted for " + r.provider
			case model.ReasonBudget:
				why = "over the token budget; request it as exact evidence"
				if r.recall {
					why = "over the token budget; recall it with " + model.RecallTool
					r.named = true
				}
			case "":
			default:
				why = strings.ReplaceAll(vd.Decision.Reason, "_", " ")
			}
		}
	}
	return fmt.Sprintf("Result of %s kept as artifact %s, not shown: %s.", c.Tool.Name, id, why)
}

// roundCallID is the provider's id of a round's call, or ctxgraph's when it had none.
func roundCallID(c *model.Candidate) string {
	if c.Call.CallID != "" {
		return c.Call.CallID
	}
	return c.ID
}

// roundArguments is a round call's arguments as the model sent them.
func roundArguments(c *model.Candidate) string {
	if c.Call.Arguments == "" {
		return "{}"
	}
	return c.Call.Arguments
}
