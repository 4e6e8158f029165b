// Package peers holds the context strategies agent frameworks use today, ported to Go as pure
// functions over a provider-shaped message list, so that ctxgraph's assembly can be measured
// against them on the same scenarios, tokenizer and budgets: history replay of a branch's
// lineage, LangChain's trim_messages, Anthropic's clear_tool_uses_20250919 (and LangChain's
// ClearToolUsesEdit, which mirrors it), and LiteLLM's trim_messages. It also holds the checks
// every strategy's request is read against: a scenario's text expectations and the pairing of
// tool calls with their results that providers enforce.
package peers

import (
	"sort"

	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/model"
)

// Message is one message of a request in the OpenAI chat shape: an assistant message may
// carry tool calls, and a tool message answers one call by its id.
type Message = model.ChatMessage

// Item kinds of a lineage record.
const (
	ItemMessage = "message"
	ItemCall    = "tool_call"
	ItemResult  = "tool_result"
)

// Item is one record of a branch's lineage as naive history replay sends it: a message, a
// tool call, or one raw result (or error) of a call.
type Item struct {
	Kind string
	// Depth orders branches (ancestors first: the deepest ancestor has the highest depth)
	// and Seq orders records within a branch, as the server's history does.
	Depth int
	Seq   int64
	// Role, Content and Name are a message's.
	Role, Content, Name string
	// RunID groups the calls one run asked for in a row into one assistant message.
	RunID string
	// CallID is the provider's id of a call (a ToolCall's callId), on a call and its results.
	CallID string
	// Tool and Arguments are a call's.
	Tool, Arguments string
	// Result is a result's body: its JSON, or its error as the baseline writes it.
	Result string
}

// Replay is naive history replay of a lineage (DESIGN §5: every message, tool call and raw
// result of every participant, in order) in the provider's shape: the calls one run asked
// for in a row become one assistant message with tool calls, and each result a tool message
// answering its call's id.
func Replay(items []Item) []Message {
	sorted := append([]Item(nil), items...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Depth != sorted[j].Depth {
			return sorted[i].Depth > sorted[j].Depth
		}
		return sorted[i].Seq < sorted[j].Seq
	})
	var out []Message
	lastCallRun := ""
	for _, it := range sorted {
		switch it.Kind {
		case ItemMessage:
			out = append(out, Message{Role: it.Role, Content: it.Content, Name: it.Name})
			lastCallRun = ""
		case ItemCall:
			call := model.ChatToolCall{ID: it.CallID, Name: it.Tool, Arguments: it.Arguments}
			if n := len(out); n > 0 && lastCallRun != "" && lastCallRun == it.RunID {
				out[n-1].ToolCalls = append(out[n-1].ToolCalls, call)
				continue
			}
			out = append(out, Message{Role: "assistant", ToolCalls: []model.ChatToolCall{call}})
			lastCallRun = it.RunID
		case ItemResult:
			out = append(out, Message{Role: "tool", Content: it.Result, ToolCallID: it.CallID})
			lastCallRun = ""
		}
	}
	return out
}

// BaselineTokens counts a lineage the way the server's tokens.baseline does: each record
// one chat message (a call as its tool name and arguments, a result as its body), plus the
// reply's priming. It equals the server's figure when the lineage was read completely.
func BaselineTokens(c model.TokenCounter, items []Item) int {
	n := assembly.ReplyPriming
	for _, it := range items {
		switch it.Kind {
		case ItemMessage:
			n += assembly.MessageTokens(c, it.Role, it.Content, it.Name)
		case ItemCall:
			n += assembly.MessageTokens(c, "assistant", model.BaselineToolCallText(it.Tool, it.Arguments), "")
		case ItemResult:
			n += assembly.MessageTokens(c, "tool", it.Result, "")
		}
	}
	return n
}
