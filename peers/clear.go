package peers

// ClearOptions configure ClearToolUses. Anthropic's clear_tool_uses_20250919 defaults to
// a trigger of 100,000 input tokens and keeps 3 tool uses; LangChain's ClearToolUsesEdit
// has the same defaults, clear_at_least 0 and the placeholder "[cleared]".
type ClearOptions struct {
	Trigger      int
	Keep         int
	ClearAtLeast int
	ExcludeTools []string
	Placeholder  string
}

// DefaultPlaceholder is what ClearToolUsesEdit writes in place of a cleared result.
const DefaultPlaceholder = "[cleared]"

// ClearToolUses is Anthropic's context editing strategy clear_tool_uses_20250919 as
// LangChain's ClearToolUsesEdit (langchain 1.5.2, langchain.agents.middleware) implements
// it: once the request counts more than Trigger tokens, every tool result but the Keep most
// recent is replaced by the placeholder, oldest first, when the nearest assistant message
// before it holds its call and its tool is not excluded; with ClearAtLeast, clearing stops
// once that many tokens were reclaimed. Calls and their arguments stay (clear_tool_inputs
// false). Nothing else is removed, so the request may still exceed Trigger.
func ClearToolUses(msgs []Message, o ClearOptions, count Counter) []Message {
	out := clone(msgs)
	tokens := count(out)
	if tokens <= o.Trigger {
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
	excluded := map[string]bool{}
	for _, t := range o.ExcludeTools {
		excluded[t] = true
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
		name, found := "", false
		for _, c := range out[ai].ToolCalls {
			if c.ID == out[idx].ToolCallID {
				name, found = c.Name, true
				break
			}
		}
		if !found {
			continue
		}
		if out[idx].Name != "" {
			name = out[idx].Name
		}
		if excluded[name] {
			continue
		}
		out[idx].Content = o.Placeholder
		if o.ClearAtLeast > 0 && max(0, tokens-count(out)) >= o.ClearAtLeast {
			break
		}
	}
	return out
}
