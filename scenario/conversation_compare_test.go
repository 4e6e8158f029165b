package scenario

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/peers"
)

// forkConversation has a fork after t1, a recall step and a second participant.
const forkConversation = `{"name": "fork-small",
 "participants": [{"key": "a", "name": "travel agent"}, {"key": "b", "name": "support"}],
 "branches": [{"key": "main"}, {"key": "alt", "parent": "main", "forkAfterTurn": "t1"}],
 "turns": [
  {"key": "t1", "user": "find hotels", "steps": [{"toolCalls": [{"key": "c1", "tool": "search", "arguments": {"q": "lx"}}]}, {"text": "Two found."}],
   "results": {"c1": {"result": {"hotels": ["HTL-1", "HTL-2"]}}}},
  {"key": "t2", "user": "book the first", "steps": [{"toolCalls": [{"key": "r2", "tool": "ctxgraph_recall", "arguments": {"artifactOf": "c1", "pointer": "/hotels/0"}}]},
     {"toolCalls": [{"key": "c2", "tool": "book", "arguments": {"id": "HTL-1"}}]}, {"text": "Booked."}],
   "results": {"c2": {"status": "failed", "error": {"code": "full", "message": "no rooms"}}},
   "needs": [{"value": "HTL-1", "from": "c1", "at": "recall"}]},
  {"key": "t2b", "branch": "alt", "participant": "b", "user": "book the second", "steps": [{"text": "Done."}],
   "needs": [{"value": "HTL-2", "from": "c1"}]},
  {"key": "t3", "user": "and now?", "steps": [{"text": "Nothing."}], "mustNotContain": ["HTL-9"]}
 ]}`

func TestConversationReplay(t *testing.T) {
	conv, err := ParseConversation([]byte(forkConversation))
	if err != nil {
		t.Fatal(err)
	}
	t1 := []peers.Message{
		{Role: "user", Content: "find hotels"},
		{Role: "assistant", ToolCalls: []model.ChatToolCall{{ID: "call_t1_1", Name: "search", Arguments: `{"q": "lx"}`}}},
		{Role: "tool", Content: `{"hotels": ["HTL-1", "HTL-2"]}`, ToolCallID: "call_t1_1"},
		{Role: "assistant", Content: "Two found.", Name: "travel_agent"},
	}
	for _, tc := range []struct {
		turn int
		want []peers.Message
	}{
		{0, []peers.Message{{Role: "user", Content: "find hotels"}}},
		// The fork inherits t1 only; its participant's own user message comes last.
		{2, append(append([]peers.Message(nil), t1...), peers.Message{Role: "user", Content: "book the second"})},
		// The recall round is the server's and left out; the call after it is call 2 of
		// the turn, and its failed result is its error.
		{3, append(append([]peers.Message(nil), t1...),
			peers.Message{Role: "user", Content: "book the first"},
			peers.Message{Role: "assistant", ToolCalls: []model.ChatToolCall{{ID: "call_t2_2", Name: "book", Arguments: `{"id": "HTL-1"}`}}},
			peers.Message{Role: "tool", Content: "error full: no rooms", ToolCallID: "call_t2_2"},
			peers.Message{Role: "assistant", Content: "Booked.", Name: "travel_agent"},
			peers.Message{Role: "user", Content: "and now?"})},
	} {
		got, err := ConversationReplay(conv, tc.turn)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("turn %d: got\n%+v\nwant\n%+v", tc.turn, got, tc.want)
		}
	}
}

func TestRequestMessagesReadsWhatRequestBodyWrites(t *testing.T) {
	msgs := []peers.Message{
		{Role: "system", Content: "be brief"},
		{Role: "user", Content: `say "hi"`},
		{Role: "assistant", ToolCalls: []model.ChatToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}}},
		{Role: "tool", Content: "{}", ToolCallID: "c1"},
		{Role: "assistant", Content: "ok", Name: "agent"},
	}
	body, err := RequestBody(msgs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := RequestMessages(body)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, msgs) {
		t.Errorf("got %+v, want %+v", got, msgs)
	}
	parts, err := RequestMessages([]byte(`{"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]}`))
	if err != nil || len(parts) != 1 || parts[0].Content != "a\nb" {
		t.Errorf("content parts: got %+v, %v, want one message a\\nb", parts, err)
	}
}

// TestCompareConversation plays nothing: the scripted model's calls are made up, with
// ctxgraph's first call of t2b carrying its need in few tokens.
func TestCompareConversation(t *testing.T) {
	conv, err := ParseConversation([]byte(forkConversation))
	if err != nil {
		t.Fatal(err)
	}
	count := peers.TokenCounter(assembly.MustTokenizer("o200k_base"))
	body := func(msgs ...peers.Message) []byte {
		b, err := RequestBody(msgs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	user := func(s string) peers.Message { return peers.Message{Role: "user", Content: s} }
	res := ConversationResult{Turns: []TurnResult{{Key: "t1"}, {Key: "t2"}, {Key: "t2b"}, {Key: "t3"}}, Calls: []ModelCall{
		{Label: "t1", Step: 0, Body: body(user("find hotels"))},
		{Label: "t2", Step: 0, Body: body(user("book the first"))},
		{Label: "t2", Step: 1, Body: body(user("book the first"),
			peers.Message{Role: "assistant", ToolCalls: []model.ChatToolCall{{ID: "r", Name: RecallTool, Arguments: "{}"}}},
			peers.Message{Role: "tool", Content: `"HTL-1"`, ToolCallID: "r"})},
		// An orphaned result in a continuation counts against ctxgraph.
		{Label: "t2", Step: 2, Body: body(user("book the first"), peers.Message{Role: "tool", Content: "x", ToolCallID: "gone"})},
		{Label: "t2b", Step: 0, Body: body(peers.Message{Role: "system", Content: "memory: hotels HTL-1, HTL-2"}, user("book the second"))},
		{Label: "t3", Step: 0, Body: body(user("and now?"))},
	}}
	c, err := CompareConversation(conv, res, count)
	if err != nil {
		t.Fatal(err)
	}
	if c.Large || len(c.Turns) != 4 {
		t.Fatalf("got large %v and %d turns, want small and 4", c.Large, len(c.Turns))
	}
	t2, t2b := c.Turns[1], c.Turns[2]
	if len(t2.Needs) != 0 || len(t2.AfterRecall) != 1 {
		t.Fatalf("t2: got %d first-call needs and %d after recall, want 0 and 1", len(t2.Needs), len(t2.AfterRecall))
	}
	mine := t2.Outcomes[peers.StrategyCtxgraph]
	if mine.FoundAfterRecall != 1 || mine.OrphanRequests != 1 || t2.AfterRecallTokens == 0 {
		t.Errorf("t2 ctxgraph: got %+v (after recall %d tokens), want the recalled value, 1 request with orphans", mine, t2.AfterRecallTokens)
	}
	if got := t2.Outcomes[peers.StrategyReplay].FoundAfterRecall; got != 1 {
		t.Errorf("t2 replay: got %d values needed after the recall at its first call, want 1", got)
	}
	if t2b.Budget != t2b.Outcomes[peers.StrategyCtxgraph].Tokens || t2b.Budget >= t2b.Outcomes[peers.StrategyReplay].Tokens {
		t.Errorf("t2b: got budget %d, outcomes %+v; want ctxgraph's tokens as the budget, under replay's", t2b.Budget, t2b.Outcomes)
	}
	for s, want := range map[string]int{peers.StrategyCtxgraph: 1, peers.StrategyReplay: 1, peers.StrategyLangChain: 0} {
		if got := t2b.Outcomes[s].Found; got != want {
			t.Errorf("t2b %s: found %d, want %d (request %+v)", s, got, want, t2b.Requests[s])
		}
	}
	if got := t2b.Outcomes[peers.StrategyLangChain].Tokens; got > t2b.Budget {
		t.Errorf("t2b LangChain: %d tokens over the budget %d", got, t2b.Budget)
	}
	targets := ConversationTargets([]ConversationComparison{c})
	for _, tg := range targets {
		want := !strings.Contains(tg.Name, "cuts a tool result")
		if tg.Met != want {
			t.Errorf("target %q: got met %v, want %v (%s)", tg.Name, tg.Met, want, tg.Detail)
		}
	}
}

func TestConversationTargetsNameMisses(t *testing.T) {
	turn := func(key string, needs, mine, replay, peerFound int) TurnComparison {
		tc := TurnComparison{Turn: key, Needs: make([]NeedCompared, needs), Outcomes: map[string]StrategyOutcome{
			peers.StrategyCtxgraph: {Tokens: mine, Found: needs}, peers.StrategyReplay: {Tokens: replay, Found: needs},
			peers.StrategyLangChain: {Found: peerFound}}}
		return tc
	}
	comps := []ConversationComparison{
		{Conversation: "s-small", Turns: []TurnComparison{turn("t1", 1, 120, 100, 0)}},
		{Conversation: "l-large", Large: true, Turns: []TurnComparison{turn("t1", 0, 10, 100, 0), turn("t2", 1, 30, 100, 0)}},
	}
	got := map[string]Target{}
	for _, tg := range ConversationTargets(comps) {
		got[tg.Name] = tg
	}
	for name, want := range map[string]string{
		"small outputs: no turn's first call sends more tokens than replay":                "s-small t1 (120 tokens, replay 100: +20, ×1.20)",
		"large outputs: ctxgraph's first calls ≥ 85 % under replay, in every conversation": "l-large (40 of replay's 200 tokens: 20.0 %, 5.0 points over)",
		"at ctxgraph's token count no peer keeps more needed values, in any conversation":  "",
		"ctxgraph carries ≥ 95 % of the values needed at the turns' first calls":           "",
	} {
		tg, ok := got[name]
		switch {
		case !ok:
			t.Errorf("no target %q", name)
		case want == "" && !tg.Met, want != "" && (tg.Met || !strings.Contains(tg.Detail, want)):
			t.Errorf("%s: got met %v, %q; want %q", name, tg.Met, tg.Detail, want)
		}
	}
	if !LargeOutputs(Conversation{Name: "x-large"}) || LargeOutputs(Conversation{Name: "x-small"}) {
		t.Error("LargeOutputs does not read the name's suffix")
	}
	big, _ := json.Marshal(strings.Repeat("x", LargeResultBytes))
	conv := Conversation{Name: "x", Turns: []Turn{{Results: map[string]ToolOutput{"c": {Result: big}}}}}
	if !LargeOutputs(conv) {
		t.Error("a result of LargeResultBytes does not make a conversation large")
	}
}
