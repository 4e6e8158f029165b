package peers

import "math/bits"

// Counter counts the tokens of a request made of msgs. The strategies call it the way
// their libraries call the token counter they are given.
type Counter func(msgs []Message) int

// TrimOptions are the arguments of LangChain's trim_messages with strategy="last" and
// allow_partial=False, the configuration its documentation recommends for chat agents.
// Message types are LangChain's: "human", "ai", "system", "tool".
type TrimOptions struct {
	MaxTokens     int
	IncludeSystem bool
	StartOn       []string
}

// LangChainType is the LangChain message type of a message's role.
func LangChainType(role string) string {
	switch role {
	case "user":
		return "human"
	case "assistant":
		return "ai"
	}
	return role
}

func isType(m Message, types []string) bool {
	t := LangChainType(m.Role)
	for _, want := range types {
		if t == want {
			return true
		}
	}
	return false
}

// TrimMessages is langchain_core.messages.utils.trim_messages (langchain-core 1.8.3) with
// strategy="last" and allow_partial=False (_last_max_tokens), end_on unset: keep a leading
// system message when IncludeSystem and count it first; keep
// the longest suffix of the rest that fits what remains (found by the library's bounded
// binary search); then drop its leading messages until one of StartOn. Nothing keeps a tool
// call with its result.
func TrimMessages(msgs []Message, o TrimOptions, count Counter) []Message {
	msgs = append([]Message(nil), msgs...)
	if len(msgs) == 0 {
		return []Message{}
	}
	var system *Message
	if o.IncludeSystem && len(msgs) > 0 && msgs[0].Role == "system" {
		system = &msgs[0]
		msgs = msgs[1:]
	}
	reversed := reverse(msgs)
	remaining := o.MaxTokens
	if system != nil {
		remaining = max(0, o.MaxTokens-count([]Message{*system}))
	}
	result := reverse(firstMaxTokens(reversed, remaining, count, o.StartOn))
	if system != nil {
		result = append([]Message{*system}, result...)
	}
	return result
}

// firstMaxTokens is _first_max_tokens without a partial strategy: the longest prefix that
// fits, then trailing messages dropped until one of endOn.
func firstMaxTokens(msgs []Message, maxTokens int, count Counter, endOn []string) []Message {
	if len(msgs) == 0 {
		return msgs
	}
	if count(msgs) <= maxTokens {
		if len(endOn) > 0 {
			for range len(msgs) {
				if isType(msgs[len(msgs)-1], endOn) {
					break
				}
				msgs = msgs[:len(msgs)-1]
			}
		}
		return msgs
	}
	left, right := 0, len(msgs)
	for range bits.Len(uint(len(msgs))) {
		if left >= right {
			break
		}
		mid := (left + right + 1) / 2
		if count(msgs[:mid]) <= maxTokens {
			left = mid
		} else {
			right = mid - 1
		}
	}
	idx := left
	if len(endOn) > 0 {
		for range idx {
			if idx > 0 && !isType(msgs[idx-1], endOn) {
				idx--
			} else {
				break
			}
		}
	}
	return msgs[:idx]
}

func reverse(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[len(msgs)-1-i] = m
	}
	return out
}

// clone copies msgs deeply enough that editing a message's content or tool calls leaves
// the input as it was.
func clone(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		m.ToolCalls = append(m.ToolCalls[:0:0], m.ToolCalls...)
		out[i] = m
	}
	return out
}
