package assembly

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// TestInstructionsLeadEveryBudget gives generated lineages instructions and assembles them
// at budgets from none to plenty: the request always starts with the instructions, whole,
// included first as instructions; they cost their message's tokens in the request and in
// the baseline; a budget below them makes the request over budget, never shorter.
func TestInstructionsLeadEveryBudget(t *testing.T) {
	v, err := policy.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{Now: func() time.Time { return time.Now() }}
	ins := []model.Instructions{
		{Ref: "cnv_1", Type: model.TypeConversation, Text: "Answer in British English."},
		{Ref: "pt_me", Type: model.TypeParticipant, Text: "You are Ada, a careful analyst. Cite your sources."},
	}
	text := ins[0].Text + "\n\n" + ins[1].Text
	sum := sha256.Sum256([]byte(text))
	wantSha := hex.EncodeToString(sum[:])
	wantIncluded := []model.IncludedItem{{Ref: "cnv_1", Type: model.TypeConversation, As: model.AsInstructions},
		{Ref: "pt_me", Type: model.TypeParticipant, As: model.AsInstructions}}
	for seed := uint64(1); seed <= 20; seed++ {
		g, req := generatedLineage(seed)
		s.Graph = g
		tk, err := NewTokenizer(EncodingForModel(req.Model))
		if err != nil {
			t.Fatal(err)
		}
		cost := MessageTokens(tk, "system", text, "")
		req.TokenBudget = 1 << 20
		plain, err := s.compute(context.Background(), "acct", req, model.SnapshotOptions{}, v)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if plain.InstructionsSha256 != "" || (len(plain.Messages) > 0 && plain.Messages[0].Content == text) {
			t.Fatalf("seed %d: without instructions got sha %q and first message %+v", seed, plain.InstructionsSha256, plain.Messages[0])
		}
		g.snap.Instructions = ins
		for _, budget := range []int{1, cost, cost + 50, 1 << 20} {
			req.TokenBudget = budget
			a, err := s.compute(context.Background(), "acct", req, model.SnapshotOptions{}, v)
			if err != nil {
				t.Fatalf("seed %d budget %d: %v", seed, budget, err)
			}
			if got := a.Messages[0]; !reflect.DeepEqual(got, model.ChatMessage{Role: "system", Content: text}) {
				t.Fatalf("seed %d budget %d: first message %+v, want the instructions", seed, budget, got)
			}
			if got := a.Included[:2]; !reflect.DeepEqual(got, wantIncluded) {
				t.Fatalf("seed %d budget %d: included first %+v, want %+v", seed, budget, got, wantIncluded)
			}
			if a.InstructionsSha256 != wantSha {
				t.Fatalf("seed %d budget %d: sha256 %q, want %q", seed, budget, a.InstructionsSha256, wantSha)
			}
			if got := ChatTokens(tk, a.Messages); got != a.Tokens.Assembled {
				t.Fatalf("seed %d budget %d: %d tokens counted, the request holds %d", seed, budget, a.Tokens.Assembled, got)
			}
			if over := a.Tokens.Assembled > budget; a.OverBudget != over || (budget < cost && !over) {
				t.Fatalf("seed %d budget %d: overBudget %v with %d tokens", seed, budget, a.OverBudget, a.Tokens.Assembled)
			}
			if a.Tokens.Baseline != plain.Tokens.Baseline+cost {
				t.Fatalf("seed %d budget %d: baseline %d, want %d and the instructions' %d", seed, budget, a.Tokens.Baseline, plain.Tokens.Baseline, cost)
			}
			if budget == 1<<20 && a.Tokens.Assembled != plain.Tokens.Assembled+cost {
				t.Fatalf("seed %d: %d tokens with the instructions, want %d and their %d", seed, a.Tokens.Assembled, plain.Tokens.Assembled, cost)
			}
			rules := map[string]model.Rule{}
			for d := range a.AllDecisions() {
				if d.As == model.AsInstructions {
					rules[d.Ref] = d.Rule
				}
			}
			if want := map[string]model.Rule{"cnv_1": policy.RuleInstructionsConversation, "pt_me": policy.RuleInstructionsParticipant}; !reflect.DeepEqual(rules, want) {
				t.Fatalf("seed %d budget %d: instructions decided by %v, want %v", seed, budget, rules, want)
			}
		}
	}
}
