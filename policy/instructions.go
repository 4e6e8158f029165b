package policy

import (
	"strings"

	"github.com/ctxgraph/ctxgraph/model"
)

// Instructions is the instructions policy (DESIGN §8): the conversation's instructions and
// then the participant's, as the snapshot read them at the request's asOf, are included
// `as: instructions` and protected, every time, whatever the budget. It returns the text
// of the one system message that carries them, the texts joined by a blank line (empty
// when there are none), and one decision for each.
func Instructions(ins []model.Instructions) (text string, decisions []model.Decision) {
	texts := make([]string, 0, len(ins))
	for _, in := range ins {
		if in.Text == "" {
			continue
		}
		rule, why := RuleInstructionsParticipant, "the participant's instructions are protected and sent first"
		if in.Type == model.TypeConversation {
			rule, why = RuleInstructionsConversation, "the conversation's instructions are protected and sent first"
		}
		texts = append(texts, in.Text)
		decisions = append(decisions, model.Decision{Ref: in.Ref, Type: in.Type, Policy: model.PolicyInstructions,
			Outcome: OutcomeIncluded, As: model.AsInstructions, Reason: why, Rule: rule})
	}
	return strings.Join(texts, "\n\n"), decisions
}
