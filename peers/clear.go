package peers

// ClearOptions configure ClearToolUses. Anthropic's clear_tool_uses_20250919 defaults to
// a trigger of 100,000 input tokens and keeps 3 tool uses; LangChain's ClearToolUsesEdit
// has the same defaults and the placeholder "[cleared]". Its clear_at_least and
// exclude_tools are left at their defaults (0, none), so the port has neither.
type ClearOptions struct {
	Trigger     int
	Keep        int
	Placeholder string
}

// DefaultPlaceholder is what ClearToolUsesEdit writes in place of a cleared result.
const DefaultPlaceholder = "[cleared]"

// ClearToolUses is Anthropic's context editing strategy clear_tool_uses_20250919 as
// LangChain's ClearToolUsesEdit (langchain 1.5.2, langchain.agents.middleware) implements
// it: once the request counts more than Trigger tokens, every tool result but the Keep most
// recent is replaced by the placeholder, oldest first, when the nearest assistant message
// before it holds its call. Calls and their arguments stay (clear_tool_inputs
// false). Nothing else is removed, so the request may still exceed Trigger.
func ClearToolUses(msgs []Message, o ClearOptions, count Counter) []Message {
	out := clone(msgs)
	if count(out) <= o.Trigger {
		return out
	}
	var candidates []int
	for i, m := range out {
		if m.Role == "tool" {
			candidates = append(candidates, i)
		}
	}
	switch {
	case o.Keep >= len(candidates):
		candidates = nil
	case o.Keep > 0:
		candidates = candidates[:len(candidates)-o.Keep]
	}
	for _, idx := range candidates {
		ai := -1
		for j := idx - 1; j >= 0; j-- {
			if out[j].Role == "assistant" {
				ai = j
				break
			}
		}
		if ai < 0 {
			continue
		}
		found := false
		for _, c := range out[ai].ToolCalls {
			found = found || c.ID == out[idx].ToolCallID
		}
		if found {
			out[idx].Content = o.Placeholder
		}
	}
	return out
}
