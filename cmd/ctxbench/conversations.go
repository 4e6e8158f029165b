package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/peers"
	"github.com/ctxgraph/ctxgraph/provider"
	"github.com/ctxgraph/ctxgraph/scenario"
	"github.com/ctxgraph/ctxgraph/server"
)

// The conversations phase: every conversation of scenario/testdata/conversations played turn
// by turn through POST /v1/generations against a scripted model (scenario.ConversationRunner,
// as integration.TestConversations plays them), then each turn's first model call measured
// against history replay and the peers' trimmers at ctxgraph's token count
// (scenario.CompareConversation). Its section is written to a file of its own
// (-conversations-out, docs/conversations.md), which benchmarks.md links to, so that the phase
// can run alone without rewriting a report whose every other figure came from another run.

// conversationsResult is what the conversations phase measured, rendered.
type conversationsResult struct {
	Dir      string
	Files    int
	Elapsed  time.Duration
	Runner   string // scenario.ConversationTable: needs, forms, tokens, failures
	Table    string // scenario.ConversationCompareTable
	Notes    string
	Turns    string
	Losses   string
	Targets  []scenario.Target
	Failures []string
	Errors   []string
	// Started is when the phase began: the date of its file.
	Started time.Time
}

// conversationProviders is the scripted model under the name openai, as the integration
// harness configures it: the default policy lets that name receive the internal and
// user_private results a provider it does not know may not.
func conversationProviders(baseURL string) ([]provider.Config, error) {
	return provider.Parse([]byte(fmt.Sprintf(`providers:
  - {name: openai, kind: openai, baseURL: "%s", apiKeyEnv: SCRIPTED_KEY, maxRetries: 0}
`, baseURL)), func(string) string { return "ctxbench-scripted" })
}

func (b *bench) runConversations(ctx context.Context) {
	start := time.Now()
	files, err := filepath.Glob(filepath.Join(b.o.conversations, "*.json"))
	r := &conversationsResult{Dir: b.o.conversations, Files: len(files), Started: start}
	b.conversations = r
	if err != nil || len(files) == 0 {
		r.Errors = append(r.Errors, fmt.Sprintf("no conversation files in %s (%v)", b.o.conversations, err))
		b.failures = append(b.failures, "conversations: no conversation files")
		return
	}
	count := peers.TokenCounter(assembly.MustTokenizer("o200k_base"))
	var results []scenario.ConversationResult
	var comps []scenario.ConversationComparison
	for _, f := range files {
		name := filepath.Base(f)
		conv, err := scenario.LoadConversation(f)
		if err != nil {
			r.Errors = append(r.Errors, name+": loading: "+err.Error())
			continue
		}
		res, err := b.playConversation(ctx, conv)
		if res.ConversationID != "" {
			b.convs = append(b.convs, b.convKey+"|"+res.ConversationID)
		}
		results = append(results, res)
		if err != nil {
			r.Errors = append(r.Errors, name+": playing: "+err.Error())
			continue
		}
		for _, fail := range res.AllFailures() {
			r.Failures = append(r.Failures, conv.Name+": "+fail)
		}
		c, err := scenario.CompareConversation(conv, res, count)
		if err != nil {
			r.Errors = append(r.Errors, name+": comparing: "+err.Error())
			continue
		}
		comps = append(comps, c)
	}
	r.Runner = scenario.ConversationTable(results)
	r.Table, r.Notes = scenario.ConversationCompareTable(comps), scenario.ConversationNotes(comps)
	r.Turns, r.Losses = scenario.ConversationTurnTable(comps), scenario.ConversationLosses(comps)
	r.Targets = scenario.ConversationTargets(comps)
	r.Elapsed = time.Since(start)
	if len(r.Errors)+len(r.Failures) > 0 {
		b.failures = append(b.failures, fmt.Sprintf("conversations: %d could not be played or compared, %d failed checks", len(r.Errors), len(r.Failures)))
	}
	logf("conversations: %d of %d files compared in %s, %d errors, %d failed checks", len(comps), len(files), r.Elapsed.Round(time.Millisecond), len(r.Errors), len(r.Failures))
}

// playConversation plays one conversation against a server of its own, wired by server.New
// over the benchmark's store as the main one is, whose provider openai is a scripted model
// of its own: the model's script and its record of requests belong to one conversation,
// and a server's providers are fixed when it is built. It is served over loopback HTTP.
func (b *bench) playConversation(ctx context.Context, conv scenario.Conversation) (scenario.ConversationResult, error) {
	model := scenario.NewScriptedModel()
	defer model.Close()
	providers, err := conversationProviders(model.BaseURL())
	if err != nil {
		return scenario.ConversationResult{Conversation: conv.Name}, err
	}
	srv := server.New(server.Config{Store: b.store, Keys: map[string]string{b.convKey: b.account}, Log: b.log, Providers: providers})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return scenario.ConversationResult{Conversation: conv.Name}, err
	}
	hs := &http.Server{Handler: srv.API, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	runner := scenario.ConversationRunner{
		Client: &client.Client{HTTP: b.client, BaseURL: "http://" + ln.Addr().String(), Key: b.convKey},
		Model:  model, Provider: "openai",
	}
	return runner.Run(ctx, conv)
}

// reportConversations writes the section in full: the conversations report, and the body
// of its own file.
func (b *bench) reportConversations(pf func(string, ...any)) {
	r := b.conversations
	pf("## Conversations\n\n")
	pf("Every conversation of `%s` (%d files; format in `scenario/testdata/CONVERSATIONS.md`) played turn by turn through `POST /v1/generations` over loopback HTTP, as `integration.TestConversations` plays them: a REST client that runs the tools itself and posts their results **without memories**, against a scripted OpenAI-compatible model that answers each model call with the file's next step and keeps every request body it received. Each conversation has its own server, wired by `server.New` over the benchmark's store like the main one, whose provider `openai` is that conversation's scripted model. The phase took %s.\n\n",
		r.Dir, r.Files, r.Elapsed.Round(time.Millisecond))
	pf("At every turn's **first model call** (`scenario.CompareConversation`):\n\n")
	pf("- **ctxgraph** is the request the scripted model actually received; its tokens are counted from that request's messages with o200k_base as ctxgraph counts an assembly (`assembly.ChatTokens`), the count every other strategy is held to.\n")
	pf("- **history replay** is what a client that keeps its history would send at that point (`scenario.ConversationReplay`, rebuilt from what the runner played, not read back from the graph): every earlier user message, every tool round as the assistant's tool calls (the same call ids) followed by one `role: tool` message per call holding the raw body the client posted, every final answer, then the turn's user message. A fork inherits its parent's turns up to the turn it forks after. `ctxgraph_recall` rounds are left out: the server answers them within a generation, so no client holds them. In `crm-two-agents` the two agents share one history, as one agent framework keeps it (assistant messages named after their agent), so replay carries each agent's results to the other: that is what the leaks column counts.\n")
	pf("- **LangChain trim_messages**, **LiteLLM trim_messages** and **clear_tool_uses** are the ports of `peers/` (`peers.PeerRequests`, configured as in the Peers section of [benchmarks.md](benchmarks.md)) applied to that replay with ctxgraph's token count of the call as the budget. clear_tool_uses only replaces old tool results once the request passes that count, keeping the last 3, so it does not fit the budget: read its tokens beside its needs.\n\n")
	pf("A need is a value that only an earlier tool output or user message held (`needs` of the files, at `first`); it counts as kept when it occurs in the request's messages, read as the runner reads the scripted model's requests. A need `artifactOf` a call is the artifact id for ctxgraph (what it recalls by) and the whole body of that result for the others, which cannot recall. Needs the files place after a `ctxgraph_recall` are not in the table; the notes below give them. A conversation is small- or large-output by its name's suffix (`-small`, `-large`); the two without one (`crm-two-agents`, `hotel-booking-fork`) count as large only if a tool result is at least %d bytes, which neither has.\n\n", scenario.LargeResultBytes)
	pf("%s\n\n%s\n", scenario.ConversationCompareLegend, r.Table)
	if r.Notes != "" {
		pf("%s\n", r.Notes)
	}
	pf("| target | measured | status |\n|---|---|---|\n")
	for _, t := range r.Targets {
		pf("| %s | %s | %s |\n", t.Name, oneLine(t.Detail), metText(t.Met))
	}
	pf("\nThe same targets are asserted by `integration.TestConversations` on every run.\n\n")
	pf("### Per turn\n\n%s\n", r.Turns)
	if r.Losses != "" {
		pf("### What each strategy lost, and where\n\nAt each turn's first call, with ctxgraph's token count in brackets; `c3: X` is the value X that call c3 returned.\n\n%s\n", r.Losses)
	}
	pf("### The runner's own table\n\nEvery need of the files, at the call it names (after a recall too), with the form that carried it (`GET /v1/assemblies/{id}`); ctxgraph tokens here are the generation answer's `tokens.assembled` (for a turn that recalls first, its last call's) and replay is the server's `tokens.baseline`.\n\n%s\n", r.Runner)
	if len(r.Errors)+len(r.Failures) > 0 {
		pf("Failures:\n\n")
		for _, e := range append(append([]string(nil), r.Errors...), r.Failures...) {
			pf("- %s\n", oneLine(e))
		}
		pf("\n")
	}
}

// reportConversationsLink writes the conversations section of benchmarks.md: the targets
// and a link when this run measured them, otherwise how to.
func (b *bench) reportConversationsLink(pf func(string, ...any)) {
	rel := b.conversationsRel()
	pf("## Conversations\n\n")
	r := b.conversations
	if r == nil {
		pf("Not run in this run. `go run ./cmd/ctxbench -phases conversations` plays the agent conversations of `scenario/testdata/conversations` alone and writes [%s](%s): needed-state recall and tokens of ctxgraph against history replay and the peers' trimmers at ctxgraph's token count, with its own run description.\n\n", rel, rel)
		return
	}
	pf("Measured in this run and written up in [%s](%s) (%d conversations, %s):\n\n", rel, rel, r.Files, r.Elapsed.Round(time.Millisecond))
	pf("| target | measured | status |\n|---|---|---|\n")
	for _, t := range r.Targets {
		pf("| %s | %s | %s |\n", t.Name, oneLine(t.Detail), metText(t.Met))
	}
	pf("\n")
}

// conversationsRel is the conversations file as linked from the main report.
func (b *bench) conversationsRel() string {
	rel, err := filepath.Rel(filepath.Dir(b.o.out), b.o.conversationsOut)
	if err != nil {
		rel = b.o.conversationsOut
	}
	return filepath.ToSlash(rel)
}

// writeConversationsReport writes the conversations file: the run's description, then the
// section.
func (b *bench) writeConversationsReport(final bool) error {
	if b.conversations == nil || b.o.conversationsOut == "" {
		return nil
	}
	var w strings.Builder
	pf := func(format string, args ...any) { fmt.Fprintf(&w, format, args...) }
	s := b.sys
	pf("# Conversations: needed-state recall against replay and the peers\n\n")
	if !final {
		pf("> **Interim report**: the run is still going.\n\n")
	}
	pf("Written by `cmd/ctxbench` (its `conversations` phase). Every figure below was measured in the one run described here; [benchmarks.md](%s) links here.\n\n", filepath.ToSlash(mustRel(filepath.Dir(b.o.conversationsOut), b.o.out)))
	pf("| | |\n|---|---|\n")
	pf("| date | %s |\n", b.conversations.Started.UTC().Format("2006-01-02 15:04 MST"))
	pf("| command | `go run ./cmd/ctxbench %s` |\n", strings.Join(b.o.args, " "))
	if s.Code != "" {
		pf("| code | %s |\n", s.Code)
	}
	pf("| machine | %d CPUs (nproc), %s, %s |\n", s.NProc, s.Mem, s.CPU)
	pf("| Go | %s |\n", runtime.Version())
	pf("| Neo4j | %s |\n", s.Neo4j)
	pf("\n")
	b.reportConversations(pf)
	if err := os.MkdirAll(filepath.Dir(b.o.conversationsOut), 0o755); err != nil {
		return err
	}
	return os.WriteFile(b.o.conversationsOut, []byte(w.String()), 0o644)
}

func mustRel(base, target string) string {
	rel, err := filepath.Rel(base, target)
	if err != nil {
		return target
	}
	return rel
}
