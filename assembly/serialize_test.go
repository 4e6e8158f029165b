package assembly

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// rerender keeps the judgement's text of a line whose form the budget left alone and
// renders again the others; after any sequence of budget changes, every included context
// line must read as if rendered from scratch.
func TestRerenderMatchesRenderingEveryLine(t *testing.T) {
	stale := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	raw := map[string]model.ArtifactRaw{"art_1": {Result: []byte(`{"rows":3}`), Arguments: []byte(`{"q":"x"}`)}}
	names := map[string]string{"pt_1": "planner"}
	judged := func() []policy.Verdict {
		cands := []*model.Candidate{
			{ID: "mem_1", Type: model.TypeMemory, Memory: model.MemoryFacts{Summary: "supplier A is cheaper"}},
			{ID: "mem_2", Type: model.TypeMemory, Memory: model.MemoryFacts{Summary: "supplier B is cheaper"}},
			{ID: "mem_3", Type: model.TypeMemory, Memory: model.MemoryFacts{Summary: "rates rose in May", RevalidateWith: []string{"web_search"}}},
			{ID: "call_1", Type: model.TypeToolCall, Tool: model.ToolFacts{Name: "crm_lookup", Status: model.ToolPending},
				Call: model.CallFacts{Arguments: `{"id":7}`}},
			{ID: "call_2", Type: model.TypeToolCall, Tool: model.ToolFacts{Name: "send_email", Status: model.ToolFailed, ErrorCode: "smtp", ErrorMessage: "refused"},
				Call: model.CallFacts{Arguments: `{"to":"a@b"}`}},
			{ID: "art_1", Type: model.TypeArtifact, Tool: model.ToolFacts{Name: "sql"}, Artifact: model.ArtifactFacts{ResultBytes: 10}},
			{ID: "mem_4", Type: model.TypeMemory, Memory: model.MemoryFacts{Summary: "the query returned 3 rows"}},
			{ID: "msg_1", Type: model.TypeMessage, Message: model.MessageFacts{Role: "user", Content: "hello"}},
		}
		as := []string{model.AsConflict, model.AsConflict, model.AsStaleMarker, model.AsRecovery, model.AsRecovery, model.AsRaw, "", model.AsMessage}
		vs := make([]policy.Verdict, len(cands))
		for i, c := range cands {
			vs[i] = policy.Verdict{Candidate: c, Decision: model.Decision{Ref: c.ID, Outcome: policy.OutcomeIncluded, As: as[i]}}
		}
		vs[2].StaleSince = &stale
		// A duplicate of the raw result, omitted as judged; the budget may revive it.
		vs[6].Decision = model.Decision{Ref: "mem_4", Outcome: "omitted", Reason: model.ReasonDuplicate, Rule: policy.RuleRawSourceIncluded}
		return vs
	}
	// The budget's changes: omit a record, a lone conflict side, a compact recovery item,
	// the revived duplicate.
	changes := []func(vs []policy.Verdict){
		func(vs []policy.Verdict) { vs[1].Decision.Outcome, vs[1].Decision.As = "omitted", "" },
		func(vs []policy.Verdict) { vs[0].Decision.As = model.AsMemory },
		func(vs []policy.Verdict) { vs[3].Compact = true },
		func(vs []policy.Verdict) { vs[4].Compact = true },
		func(vs []policy.Verdict) { vs[5].Decision.Outcome, vs[5].Decision.As = "omitted", "" },
		func(vs []policy.Verdict) {
			vs[6].Decision = model.Decision{Ref: "mem_4", Outcome: policy.OutcomeIncluded, As: model.AsMemory}
		},
	}
	rng := rand.New(rand.NewPCG(4, 2))
	for round := 0; round < 200; round++ {
		vs := judged()
		texts, forms := make([]string, len(vs)), make([]lineForm, len(vs))
		for i := range vs {
			forms[i] = formOf(&vs[i])
			if vs[i].Included() && vs[i].Candidate.Type != model.TypeMessage {
				texts[i] = contextLine(vs[i], "openai", raw, names)
			}
		}
		var applied []int
		for _, k := range rng.Perm(len(changes))[:rng.IntN(len(changes)+1)] {
			changes[k](vs)
			applied = append(applied, k)
			if rng.IntN(2) == 0 {
				rerender(vs, texts, forms, "openai", raw, names)
			}
		}
		rerender(vs, texts, forms, "openai", raw, names)
		for i := range vs {
			if !vs[i].Included() || vs[i].Candidate.Type == model.TypeMessage {
				continue
			}
			if want := contextLine(vs[i], "openai", raw, names); texts[i] != want {
				t.Fatalf("after changes %v, %s reads %q, want %q", applied, vs[i].Candidate.ID, texts[i], want)
			}
		}
	}
}

func TestOwnAnswersGoUnnamedOutsideDiscussions(t *testing.T) {
	own := &model.Candidate{OwnerParticipantID: "pt_a", Message: model.MessageFacts{Role: "assistant", Content: "mine", ParticipantName: "ada"}}
	other := &model.Candidate{OwnerParticipantID: "pt_b", Message: model.MessageFacts{Role: "assistant", Content: "theirs", ParticipantName: "bo"}}
	tests := []struct {
		name        string
		c           *model.Candidate
		runtimeKind model.RuntimeKind
		want        string
	}{
		{"its own answer in a chat", own, model.RuntimeChat, ""},
		{"another's answer in a chat", other, model.RuntimeChat, "bo"},
		{"its own answer in a discussion", own, model.RuntimeDiscussion, "ada"},
		{"another's answer in a discussion", other, model.RuntimeDiscussion, "bo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := chatMessage(tt.c, unnamedSpeaker("pt_a", tt.runtimeKind)).Name; got != tt.want {
				t.Errorf("got name %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSummaryLineFollowsTheItemsItCounts: the line of aggregated recovery a draft keeps
// between renderings is rendered again when the items aggregated change, and is the line
// aggregateLine renders for them.
func TestSummaryLineFollowsTheItemsItCounts(t *testing.T) {
	var verdicts []policy.Verdict
	for i, tool := range []string{"read_csv", "read_csv", "send_email", "web_search"} {
		c := &model.Candidate{Type: model.TypeToolCall, ID: fmt.Sprintf("call_%d", i), Tool: model.ToolFacts{Name: tool, Status: model.ToolPending}}
		verdicts = append(verdicts, policy.Verdict{Candidate: c, Aggregated: true})
	}
	var s summaryLine
	for _, idx := range [][]int{{0, 1}, {0, 1}, {0, 1, 2}, {1, 2, 3}, {0, 1}} {
		items := make([]policy.Verdict, len(idx))
		for n, i := range idx {
			items[n] = verdicts[i]
		}
		if got, want := s.counting(verdicts, idx), aggregateLine(items); got != want {
			t.Errorf("items %v: got %q, want %q", idx, got, want)
		}
	}
}
