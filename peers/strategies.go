package peers

import (
	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/model"
)

// The strategies compared, in the order the tables list them.
const (
	StrategyReplay    = "history replay"
	StrategyLangChain = "LangChain trim_messages"
	StrategyClear     = "clear_tool_uses (Anthropic; LangChain ClearToolUsesEdit)"
	StrategyLiteLLM   = "LiteLLM trim_messages"
	StrategyCtxgraph  = "ctxgraph"
)

// Strategies lists every strategy's name, ctxgraph's last.
var Strategies = []string{StrategyReplay, StrategyLangChain, StrategyClear, StrategyLiteLLM, StrategyCtxgraph}

// ClearKeep is how many tool uses clear_tool_uses keeps: its documented default.
const ClearKeep = 3

// TokenCounter counts a request as ctxgraph counts an assembly (assembly.ChatTokens): each
// message's role, content and name, each tool call's id, name and arguments, each result's
// call id, with the per-message overhead and the reply's priming.
func TokenCounter(t model.TokenCounter) Counter {
	return func(msgs []Message) int { return assembly.ChatTokens(t, msgs) }
}

// PeerRequests is what each peer strategy sends for a replayed lineage under a token
// budget, keyed by strategy: the replay itself; LangChain's trim_messages as its
// documentation recommends for chat agents (strategy "last", include_system, start_on
// "human", no partial messages, max_tokens the budget); clear_tool_uses with the budget as
// its trigger, keeping 3 tool uses; LiteLLM's trim_messages with the budget as the model's
// input window, of which it fills trim_ratio 0.75. model is the request's model, which
// LiteLLM reads.
func PeerRequests(replay []Message, budget int, modelName string, count Counter) map[string][]Message {
	return map[string][]Message{
		StrategyReplay: clone(replay),
		StrategyLangChain: TrimMessages(replay, TrimOptions{MaxTokens: budget, IncludeSystem: true,
			StartOn: []string{"human"}}, count),
		StrategyClear: ClearToolUses(replay, ClearOptions{Trigger: budget, Keep: ClearKeep,
			Placeholder: DefaultPlaceholder}, count),
		StrategyLiteLLM: LiteLLMTrimMessages(replay, LiteLLMMaxTokens(budget), modelName, count),
	}
}

// LiteLLMMaxTokens is the max_tokens trim_messages derives from a model window of budget
// tokens: int(window × trim_ratio).
func LiteLLMMaxTokens(budget int) int { return int(float64(budget) * LiteLLMTrimRatio) }
