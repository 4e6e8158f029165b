package policy

import (
	"reflect"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

func TestInstructions(t *testing.T) {
	conv := model.Instructions{Ref: "cnv_1", Type: model.TypeConversation, Text: "Answer in French."}
	pt := model.Instructions{Ref: "pt_1", Type: model.TypeParticipant, Text: "You are Ada."}
	decision := func(in model.Instructions, rule model.Rule, why string) model.Decision {
		return model.Decision{Ref: in.Ref, Type: in.Type, Policy: model.PolicyInstructions, Outcome: OutcomeIncluded,
			As: model.AsInstructions, Reason: why, Rule: rule}
	}
	convDecision := decision(conv, RuleInstructionsConversation, "the conversation's instructions are protected and sent first")
	ptDecision := decision(pt, RuleInstructionsParticipant, "the participant's instructions are protected and sent first")
	for _, tc := range []struct {
		name          string
		in            []model.Instructions
		wantText      string
		wantDecisions []model.Decision
	}{
		{name: "none", in: nil, wantText: ""},
		{name: "an empty text is no instructions", in: []model.Instructions{{Ref: "pt_1", Type: model.TypeParticipant}}, wantText: ""},
		{name: "the participant's alone", in: []model.Instructions{pt}, wantText: "You are Ada.", wantDecisions: []model.Decision{ptDecision}},
		{name: "the conversation's alone", in: []model.Instructions{conv}, wantText: "Answer in French.", wantDecisions: []model.Decision{convDecision}},
		{name: "the conversation's, then the participant's", in: []model.Instructions{conv, pt},
			wantText: "Answer in French.\n\nYou are Ada.", wantDecisions: []model.Decision{convDecision, ptDecision}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, decisions := Instructions(tc.in)
			if text != tc.wantText {
				t.Errorf("text: got %q, want %q", text, tc.wantText)
			}
			if !reflect.DeepEqual(decisions, tc.wantDecisions) {
				t.Errorf("decisions: got %+v, want %+v", decisions, tc.wantDecisions)
			}
		})
	}
}

// TestFitNeverCutsTheInstructions: the instructions are a fixed cost of every request
// (Prices.Fixed, and in what measure counts). A budget below them trims every record that
// is not protected, keeps the protected ones, and answers the request's size over the
// budget: the instructions are never what goes.
func TestFitNeverCutsTheInstructions(t *testing.T) {
	const instructions = 200
	for _, tc := range []struct {
		name     string
		budget   int
		wantUsed int
		wantOut  []string
	}{
		{name: "room for everything", budget: 1000, wantUsed: instructions + 30},
		{name: "room for the instructions and some", budget: instructions + 20, wantUsed: instructions + 20, wantOut: []string{"m"}},
		{name: "a budget below the instructions", budget: 50, wantUsed: instructions + 10, wantOut: []string{"w", "m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := []fitItem{
				{id: "current", tier: TierProtected, protected: true, seq: 9, cost: 10},
				{id: "w", tier: TierWindow, seq: 1, cost: 10},
				{id: "m", tier: TierMemory, seq: 2, cost: 10},
			}
			vds := make([]Verdict, len(items))
			costs := make([]int, len(items))
			for i, it := range items {
				vds[i], costs[i] = it.verdict(), it.cost
			}
			// The current message: protected, and not recovery state that could shrink.
			vds[0].Candidate.Type, vds[0].Decision.Type, vds[0].Decision.As = model.TypeMessage, model.TypeMessage, model.AsMessage
			judged := make([]Verdict, len(vds))
			copy(judged, vds)
			measure := func() int {
				n := instructions
				for i := range vds {
					if vds[i].Included() {
						n += costs[i]
					}
				}
				return n
			}
			used := Fit(vds, func(i int) *Verdict { return &judged[i] }, Prices{Costs: costs, Compact: costs, Fixed: instructions}, tc.budget, measure)
			if used != tc.wantUsed {
				t.Errorf("got %d tokens, want %d", used, tc.wantUsed)
			}
			var out []string
			for _, vd := range vds {
				if !vd.Included() {
					out = append(out, vd.Candidate.ID)
				}
			}
			if !reflect.DeepEqual(out, tc.wantOut) {
				t.Errorf("omitted: got %v, want %v", out, tc.wantOut)
			}
		})
	}
}
