package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/peers"
	"github.com/ctxgraph/ctxgraph/scenario"
)

// TestConversations plays every conversation of scenario/testdata/conversations turn by
// turn through POST /v1/generations against a scripted model, as a REST client that runs
// the tools itself and posts their results without memories, and fails on every value a
// turn needed that its model call did not carry, and on every leak. The table of needs,
// recall and tokens is logged and, when CTXGRAPH_CONVERSATION_REPORT names a file,
// written there.
//
// Each turn's first model call is then measured against history replay and the peers'
// trimmers at ctxgraph's token count (scenario.CompareConversation), and the comparison's
// targets are asserted (scenario.ConversationTargets): ctxgraph carries ≥ 95 % of the
// first calls' needs, sends ≤ 15 % of replay's tokens in every large-output conversation
// and never more than replay at a small-output turn, no peer at its token count keeps
// more needed values in any conversation, and no request of ctxgraph orphans a tool pair.
func TestConversations(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "scenario", "testdata", "conversations"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no conversation files (*.json) in %s: %v", dir, err)
	}
	count := peers.TokenCounter(assembly.MustTokenizer("o200k_base"))
	var results []scenario.ConversationResult
	var comps []scenario.ConversationComparison
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			conv, err := scenario.LoadConversation(file)
			if err != nil {
				results = append(results, scenario.ConversationResult{Conversation: name, Failures: []string{err.Error()}})
				t.Fatalf("loading: %v", err)
			}
			model := scenario.NewScriptedModel()
			t.Cleanup(model.Close)
			// The entry is named openai: the default policy lets that name receive the
			// internal and user_private results a provider it does not know may not.
			h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+model.BaseURL()+`", maxRetries: 0}
`)...)
			runner := scenario.ConversationRunner{Client: h.client(), Model: model, Provider: "openai"}
			res, err := runner.Run(t.Context(), conv)
			results = append(results, res)
			if err != nil {
				t.Fatalf("playing: %v", err)
			}
			for _, f := range res.AllFailures() {
				t.Error(f)
			}
			c, err := scenario.CompareConversation(conv, res, count)
			if err != nil {
				t.Fatalf("comparing: %v", err)
			}
			comps = append(comps, c)
		})
	}
	table := scenario.ConversationTable(results)
	t.Log("\n" + table)
	if report := os.Getenv("CTXGRAPH_CONVERSATION_REPORT"); report != "" {
		if err := os.WriteFile(report, []byte(table), 0o644); err != nil {
			t.Errorf("writing the conversation report: %v", err)
		}
	}
	t.Log("\n" + scenario.ConversationCompareLegend + "\n\n" + scenario.ConversationCompareTable(comps) + "\n" +
		scenario.ConversationNotes(comps) + "\n" + scenario.ConversationTurnTable(comps) + "\n" + scenario.ConversationLosses(comps))
	for _, target := range scenario.ConversationTargets(comps) {
		if !target.Met {
			t.Errorf("target missed: %s: %s", target.Name, target.Detail)
		} else {
			t.Logf("target met: %s: %s", target.Name, target.Detail)
		}
	}
}
