// Package promotion decides the memories ctxgraph derives itself (DESIGN §7): from a tool
// result recorded without client memories, under the policy version's promotion rules,
// with the structural extractor; and what any memory inherits from its source artifacts
// and what class a promotion's report takes (DESIGN §2, §4), which the store only writes.
// It is pure: the same call, result and policy version give the same memory.
package promotion

import (
	"context"
	"time"

	"github.com/ctxgraph/ctxgraph/extract"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// Promoter derives memories from tool results (model.Promoter).
type Promoter struct {
	// Tokens counts the tokens the promotion's settings are measured in.
	Tokens model.TokenCounter
	// Policies resolves the version whose promotion rules apply to an account's results:
	// the account's default.
	Policies policy.Resolver
}

// New returns a Promoter under each account's default version.
func New(tokens model.TokenCounter, policies policy.Resolver) *Promoter {
	return &Promoter{Tokens: tokens, Policies: policies}
}

// PromoteResult derives the memory of a final, successful result: see model.Promoter.
func (p *Promoter) PromoteResult(ctx context.Context, accountID string, call model.ToolCall, result model.ToolResult, observedAt time.Time) (model.NewMemory, bool) {
	if result.Status != string(model.ToolSucceeded) {
		return model.NewMemory{}, false
	}
	v, err := p.Policies.Resolve(ctx, accountID, "")
	if err != nil || v.Promotion == nil {
		return model.NewMemory{}, false
	}
	return Derive(*v.Promotion, call, result.Result, observedAt, p.Tokens), true
}

// RetentionFor is the account's default version's retention for tool's results: see
// model.Promoter. A version that cannot be resolved keeps the body (the store's write
// fails for that reason elsewhere, or the body stays until the next rule applies).
func (p *Promoter) RetentionFor(ctx context.Context, accountID, tool string) *model.Retention {
	v, err := p.Policies.Resolve(ctx, accountID, "")
	if err != nil {
		return nil
	}
	return v.RetentionFor(tool)
}

// Derive is the memory the promotion rules make of a call's result body: the structural
// extractor's summary, safe summary and locators, the freshness the tool declared (else the
// policy's class for it), confidence 1 (values are quoted, never paraphrased) and the rule
// that made it. observedAt is the result's event time, from which a declared staleAfter
// counts.
func Derive(rules policy.Promotion, call model.ToolCall, body []byte, observedAt time.Time, tokens model.TokenCounter) model.NewMemory {
	m := extract.Derive(extract.Result{Tool: call.Tool, Arguments: call.Arguments, Body: body},
		extract.Settings{VerbatimTokens: rules.VerbatimTokens, DigestTokens: rules.DigestTokens}, tokens)
	one := 1.0
	out := model.NewMemory{
		Summary: m.Summary, SafeSummary: m.SafeSummary, QuotedLocators: m.Locators, QuotesWhole: m.Whole, Confidence: &one,
		ConfidenceSource: extract.Source(), PromotionPolicy: policy.PromotionRule,
		FreshnessClass: rules.FreshnessFor(call.Tool), RevalidateWith: []string{call.Tool},
	}
	if !m.Whole {
		out.Limitations = "a digest: values left out are in the artifact, by recall"
	}
	if f := call.Freshness; f != nil {
		if f.Class != "" {
			out.FreshnessClass = f.Class
		}
		if len(f.RevalidateWith) > 0 {
			out.RevalidateWith = f.RevalidateWith
		}
		if d, err := time.ParseDuration(f.StaleAfter); err == nil && f.StaleAfter != "" {
			stale := observedAt.Add(d)
			out.StaleAfter = &stale
		}
	}
	return out
}
