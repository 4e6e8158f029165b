package promotion

import (
	"fmt"
	"strings"

	"github.com/ctxgraph/ctxgraph/model"
)

// SummaryInstruction is what the model summariser is asked (DESIGN §7): a compact factual
// summary of one tool result, quoting identifiers and figures exactly, for a later model
// call that will not see the result itself.
func SummaryInstruction(tool, artifactID string) string {
	return fmt.Sprintf("You write the memory of a tool result for an agent's later model calls, which will not see "+
		"the result itself. Summarise the exact result of %s (artifact %s) in the context: a compact, factual "+
		"summary of what it returned, in a few sentences or short lines. Quote identifiers, names, figures, amounts, "+
		"dates, statuses, URLs and paths exactly as the result spells them; never round, convert or guess a value. "+
		"Say what was left out only by naming it. Answer with the summary alone.", tool, artifactID)
}

// SummaryRequest is the closing user message of the summariser's request: it names the
// result, so that a model answers it rather than the conversation's last user message.
func SummaryRequest(tool, artifactID string) string {
	return fmt.Sprintf("Summarise the result of %s (artifact %s) now.", tool, artifactID)
}

// Summarised is the memory the model summariser writes from its answer: derived from the
// same artifact as the structural memory it supersedes, with that memory's provenance
// (its locators into the artifact), freshness and safe summary, the artifact's privacy
// class and visibility, and the provider and model that wrote it as its confidence source.
func Summarised(structural model.Memory, artifact model.Artifact, provider, modelName, summary string) model.NewMemory {
	prefix := artifact.ID + "#"
	var quoted []string
	for _, loc := range structural.ProvenanceLocators {
		if l, ok := strings.CutPrefix(loc, prefix); ok {
			quoted = append(quoted, l)
		}
	}
	observed := structural.ObservedAt
	return model.NewMemory{
		DerivedFrom: []string{artifact.ID}, QuotedLocators: quoted, Summary: strings.TrimSpace(summary),
		SafeSummary: structural.SafeSummary, ConfidenceSource: "model:" + provider + "/" + modelName,
		Limitations:    "a model's summary: the exact values are in the artifact, by recall",
		FreshnessClass: structural.FreshnessClass, ObservedAt: &observed, StaleAfter: structural.StaleAfter,
		RevalidateWith: structural.RevalidateWith, Supersedes: []string{structural.ID},
		PrivacyClass: artifact.PrivacyClass, Visibility: artifact.Visibility, SharedWithParticipants: artifact.SharedWithParticipants,
		PromotionPolicy: model.PromotionSummarizer,
	}
}
