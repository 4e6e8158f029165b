package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxgraph/ctxgraph/scenario"
)

// TestConversations plays every conversation of scenario/testdata/conversations turn by
// turn through POST /v1/generations against a scripted model, as a REST client that runs
// the tools itself and posts their results without memories, and fails on every value a
// turn needed that its model call did not carry, and on every leak. The table of needs,
// recall and tokens is logged and, when CTXGRAPH_CONVERSATION_REPORT names a file,
// written there.
func TestConversations(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "scenario", "testdata", "conversations"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no conversation files (*.json) in %s: %v", dir, err)
	}
	var results []scenario.ConversationResult
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
		})
	}
	table := scenario.ConversationTable(results)
	t.Log("\n" + table)
	if report := os.Getenv("CTXGRAPH_CONVERSATION_REPORT"); report != "" {
		if err := os.WriteFile(report, []byte(table), 0o644); err != nil {
			t.Errorf("writing the conversation report: %v", err)
		}
	}
}
