package scenario

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/peers"
)

// LargeResultBytes is the size of a tool result from which a conversation whose name says
// neither -small nor -large counts as large-output: tens of kilobytes, not a few lines.
const LargeResultBytes = 8 << 10

// ConversationStrategies are the strategies a conversation comparison measures, in the
// order its tables list them: ctxgraph first, then history replay and the peers' trimmers
// at ctxgraph's token count.
var ConversationStrategies = []string{peers.StrategyCtxgraph, peers.StrategyReplay, peers.StrategyLangChain,
	peers.StrategyLiteLLM, peers.StrategyClear}

// ConversationComparison is one played conversation measured at every turn's first model
// call: ctxgraph's request as the scripted model received it, beside what history replay
// would have sent at that point and what each peer strategy makes of that replay at exactly
// ctxgraph's token count.
type ConversationComparison struct {
	Conversation string
	// Large says the conversation's tool outputs are large (LargeOutputs).
	Large bool
	Turns []TurnComparison
}

// TurnComparison is one turn's first model call through every strategy.
type TurnComparison struct {
	Turn, Branch string
	// Needs are the values the first call must carry, each as every strategy looks for
	// it (NeedCompared).
	Needs []NeedCompared
	// AfterRecall are the values the turn needs at the call after its recall: ctxgraph is
	// read at that call, the others (which have no recall) at the first call.
	AfterRecall []NeedCompared
	// Requests are what each strategy sends, by strategy; Outcomes what it kept.
	Requests map[string][]peers.Message
	Outcomes map[string]StrategyOutcome
	// Budget is ctxgraph's token count of the call, the budget the peers run at;
	// Assembled is the server's tokens.assembled when the answer named this call's
	// assembly (0 otherwise), to check the two counts agree.
	Budget, Assembled int
	// AfterRecallTokens is ctxgraph's token count of the call after the turn's recall (0
	// when it has none): the price of the values it recalled instead of carrying.
	AfterRecallTokens int
}

// NeedCompared is a need of a turn, with the text each kind of strategy must carry: the
// need's value; for an artifactOf need, ctxgraph must carry the artifact id (what it
// recalls by) and a strategy without recall the whole body of that call's result.
type NeedCompared struct {
	From            string
	Ctxgraph, Other string
}

// StrategyOutcome is what one strategy's request kept.
type StrategyOutcome struct {
	Tokens int
	// Found counts the needs carried; Missing lists the others.
	Found   int
	Missing []string
	// FoundAfterRecall counts the AfterRecall needs carried.
	FoundAfterRecall int
	// Leaks are the turn's mustNotContain values the request carries.
	Leaks []string
	// Orphans counts tool calls without their result and results without their call
	// (peers.OrphanPairs); OrphanRequests how many of the strategy's requests had any
	// (for ctxgraph every model call of the turn is read, not only the first).
	Orphans, OrphanRequests int
}

// LargeOutputs says whether a conversation's tool outputs are large: its name ends in
// -large or -small, as CONVERSATIONS.md asks; otherwise whether one of its results is at
// least LargeResultBytes long.
func LargeOutputs(conv Conversation) bool {
	switch {
	case strings.HasSuffix(conv.Name, "-large"):
		return true
	case strings.HasSuffix(conv.Name, "-small"):
		return false
	}
	for _, t := range conv.Turns {
		for _, out := range t.Results {
			if body, err := out.Body(); err == nil && len(body) >= LargeResultBytes {
				return true
			}
		}
	}
	return false
}

// ConversationReplay is what a client that replays its history sends at the first model
// call of turn i: every earlier message of the turn's lineage as it would keep them, in
// order — each user message, each tool round as the assistant's tool calls (their provider
// ids call_<turn>_<n>, as the runner scripts them) and one tool message per call holding the
// raw result body, each final answer — then the turn's user message. A fork inherits its
// parent's turns up to the turn it forks after. All participants share the one history, as
// one agent framework keeps it; an assistant message is named after its participant.
// ctxgraph_recall rounds are left out: the server answers them within a generation, so no
// client ever holds them (and a client that replays everything has nothing to recall).
func ConversationReplay(conv Conversation, i int) ([]peers.Message, error) {
	if i < 0 || i >= len(conv.Turns) {
		return nil, fmt.Errorf("turn %d of %d", i, len(conv.Turns))
	}
	names := map[string]string{}
	for _, p := range conv.Participants {
		names[p.Key] = p.Name
	}
	var out []peers.Message
	for _, j := range lineageTurns(conv, i) {
		t := conv.Turns[j]
		out = append(out, peers.Message{Role: "user", Content: t.User})
		if j == i {
			break
		}
		n := 0
		for _, s := range t.Steps {
			if s.Text != "" {
				out = append(out, peers.Message{Role: "assistant", Content: s.Text, Name: model.ChatName(names[t.Participant])})
				continue
			}
			var calls []model.ChatToolCall
			var results []peers.Message
			for _, c := range s.ToolCalls {
				n++
				if c.Tool == RecallTool {
					continue
				}
				id := fmt.Sprintf("call_%s_%d", t.Key, n)
				args := string(c.Arguments)
				if args == "" {
					args = "{}"
				}
				calls = append(calls, model.ChatToolCall{ID: id, Name: c.Tool, Arguments: args})
				text, err := resultText(t.Results[c.Key])
				if err != nil {
					return nil, fmt.Errorf("turn %s, call %s: %w", t.Key, c.Key, err)
				}
				results = append(results, peers.Message{Role: "tool", Content: text, ToolCallID: id})
			}
			if len(calls) > 0 {
				out = append(out, peers.Message{Role: "assistant", ToolCalls: calls})
				out = append(out, results...)
			}
		}
	}
	return out, nil
}

// resultText is a result as history replay shows it: the body the client posted, or its
// error when it posted none.
func resultText(out ToolOutput) (string, error) {
	body, err := out.Body()
	if err != nil {
		return "", err
	}
	var e *model.ToolError
	if len(out.Error) > 0 {
		e = &model.ToolError{}
		if err := json.Unmarshal(out.Error, e); err != nil {
			return "", err
		}
	}
	return model.BaselineToolResultText(string(body), e), nil
}

// lineageTurns are the indexes of the turns in turn i's lineage up to and including i, in
// file order: the earlier turns of its branch, and of each ancestor up to the turn the
// child forks after.
func lineageTurns(conv Conversation, i int) []int {
	parent := map[string]ConversationBranch{}
	for _, b := range conv.Branches {
		parent[b.Key] = b
	}
	index := map[string]int{}
	for j, t := range conv.Turns {
		index[t.Key] = j
	}
	var out []int
	branch, limit := conv.Turns[i].Branch, i
	for seen := 0; seen <= len(conv.Branches); seen++ {
		for j := 0; j <= limit; j++ {
			if conv.Turns[j].Branch == branch {
				out = append(out, j)
			}
		}
		b := parent[branch]
		if b.Parent == "" {
			break
		}
		branch, limit = b.Parent, index[b.ForkAfterTurn]
	}
	sort.Ints(out)
	return out
}

// CompareConversation measures a played conversation at every turn's first model call:
// ctxgraph's request as the scripted model received it (res.Calls), history replay
// (ConversationReplay), and the peers' strategies over that replay at ctxgraph's token
// count, all counted with count. A turn whose first call was never made is left out.
func CompareConversation(conv Conversation, res ConversationResult, count peers.Counter) (ConversationComparison, error) {
	out := ConversationComparison{Conversation: conv.Name, Large: LargeOutputs(conv)}
	played := map[string]TurnResult{}
	for _, tr := range res.Turns {
		played[tr.Key] = tr
	}
	calls := map[string]map[int][]byte{}
	for _, c := range res.Calls {
		if c.Step < 0 {
			continue
		}
		if calls[c.Label] == nil {
			calls[c.Label] = map[int][]byte{}
		}
		calls[c.Label][c.Step] = c.Body
	}
	modelOf := map[string]string{}
	for _, p := range conv.Participants {
		modelOf[p.Key] = p.Model
	}
	for i, t := range conv.Turns {
		first, ok := calls[t.Key][0]
		if !ok {
			continue
		}
		mine, err := RequestMessages(first)
		if err != nil {
			return out, fmt.Errorf("turn %s: ctxgraph's request: %w", t.Key, err)
		}
		replay, err := ConversationReplay(conv, i)
		if err != nil {
			return out, err
		}
		tc := TurnComparison{Turn: t.Key, Branch: t.Branch, Budget: count(mine), Outcomes: map[string]StrategyOutcome{}}
		recallStep := -1
		for s, step := range t.Steps {
			if step.recall() {
				recallStep = s
				break
			}
		}
		if recallStep < 0 {
			tc.Assembled = played[t.Key].Assembled
		} else if body, ok := calls[t.Key][recallStep+1]; ok {
			msgs, err := RequestMessages(body)
			if err != nil {
				return out, fmt.Errorf("turn %s: the call after its recall: %w", t.Key, err)
			}
			tc.AfterRecallTokens = count(msgs)
		}
		if tc.Needs, tc.AfterRecall, err = comparedNeeds(conv, t, played[t.Key]); err != nil {
			return out, fmt.Errorf("turn %s: %w", t.Key, err)
		}
		name := modelOf[t.Participant]
		if name == "" {
			name = "scripted-1"
		}
		tc.Requests = peers.PeerRequests(replay, tc.Budget, name, count)
		tc.Requests[peers.StrategyCtxgraph] = mine
		for _, s := range ConversationStrategies {
			msgs := tc.Requests[s]
			body, err := RequestBody(msgs)
			if err != nil {
				return out, err
			}
			o := StrategyOutcome{Tokens: count(msgs), Orphans: peers.OrphanPairs(msgs)}
			if s == peers.StrategyCtxgraph {
				o.Tokens = tc.Budget
			}
			for _, n := range tc.Needs {
				want := n.Other
				if s == peers.StrategyCtxgraph {
					want = n.Ctxgraph
				}
				if carries(body, want) {
					o.Found++
				} else {
					o.Missing = append(o.Missing, n.From+": "+clipText(want, 60))
				}
			}
			for _, n := range tc.AfterRecall {
				at, want := body, n.Other
				if s == peers.StrategyCtxgraph {
					at, want = calls[t.Key][recallStep+1], n.Ctxgraph
				}
				if carries(at, want) {
					o.FoundAfterRecall++
				}
			}
			for _, v := range t.MustNotContain {
				if carries(body, v) {
					o.Leaks = append(o.Leaks, v)
				}
			}
			if o.Orphans > 0 {
				o.OrphanRequests = 1
			}
			if s == peers.StrategyCtxgraph {
				// Every model call of the turn is ctxgraph's request, the continuations too.
				o.Orphans, o.OrphanRequests = 0, 0
				for _, b := range calls[t.Key] {
					msgs, err := RequestMessages(b)
					if err != nil {
						return out, fmt.Errorf("turn %s: %w", t.Key, err)
					}
					if n := peers.OrphanPairs(msgs); n > 0 {
						o.Orphans += n
						o.OrphanRequests++
					}
				}
			}
			tc.Outcomes[s] = o
		}
		out.Turns = append(out.Turns, tc)
	}
	return out, nil
}

// comparedNeeds are a turn's needs as every strategy looks for them: those of its first
// call, and those of the call after its recall.
func comparedNeeds(conv Conversation, t Turn, played TurnResult) (first, afterRecall []NeedCompared, err error) {
	for j, n := range t.Needs {
		nc := NeedCompared{From: sourceOf(n), Ctxgraph: n.Value, Other: n.Value}
		if n.ArtifactOf != "" {
			if j < len(played.Needs) {
				nc.Ctxgraph = played.Needs[j].Value
			}
			out, ok := resultOf(conv, n.ArtifactOf)
			if !ok {
				return nil, nil, fmt.Errorf("artifactOf %s: no such call", n.ArtifactOf)
			}
			if nc.Other, err = resultText(out); err != nil {
				return nil, nil, err
			}
		}
		if nc.Ctxgraph == "" {
			// The artifact id was never given: ctxgraph cannot have carried it.
			nc.Ctxgraph = "\x00no artifact id"
		}
		if n.At == AtRecall {
			afterRecall = append(afterRecall, nc)
		} else {
			first = append(first, nc)
		}
	}
	return first, afterRecall, nil
}

// resultOf finds the output of the call key.
func resultOf(conv Conversation, key string) (ToolOutput, bool) {
	for _, t := range conv.Turns {
		if out, ok := t.Results[key]; ok {
			return out, true
		}
	}
	return ToolOutput{}, false
}

// RequestMessages reads the messages of a chat-completions request body into the shape the
// peers and the token counter take: content as text (the text of its parts, when it has
// parts), tool calls with their ids, tool_call_id.
func RequestMessages(body []byte) ([]peers.Message, error) {
	var req struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			Name      string          `json:"name"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("not a chat-completions request: %w", err)
	}
	out := make([]peers.Message, 0, len(req.Messages))
	for _, m := range req.Messages {
		msg := peers.Message{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID}
		if len(m.Content) > 0 && string(m.Content) != "null" && json.Unmarshal(m.Content, &msg.Content) != nil {
			var parts []struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				return nil, fmt.Errorf("a %s message's content is neither text nor parts", m.Role)
			}
			texts := make([]string, len(parts))
			for i, p := range parts {
				texts[i] = p.Text
			}
			msg.Content = strings.Join(texts, "\n")
		}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, model.ChatToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		out = append(out, msg)
	}
	return out, nil
}

// RequestBody is a chat-completions request body holding msgs in the OpenAI shape, so that
// a strategy's request is read for needs exactly as the scripted model's are.
func RequestBody(msgs []peers.Message) ([]byte, error) {
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	type message struct {
		Role       string  `json:"role"`
		Content    *string `json:"content"`
		Name       string  `json:"name,omitempty"`
		ToolCalls  []call  `json:"tool_calls,omitempty"`
		ToolCallID string  `json:"tool_call_id,omitempty"`
	}
	out := make([]message, len(msgs))
	for i, m := range msgs {
		out[i] = message{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			content := m.Content
			out[i].Content = &content
		}
		for _, c := range m.ToolCalls {
			wc := call{ID: c.ID, Type: "function"}
			wc.Function.Name, wc.Function.Arguments = c.Name, c.Arguments
			out[i].ToolCalls = append(out[i].ToolCalls, wc)
		}
	}
	return json.Marshal(map[string]any{"messages": out})
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
