package peers

import "strings"

// LiteLLMTrimRatio is trim_messages' default share of the model's input window.
const LiteLLMTrimRatio = 0.75

// liteLLMMaxTrimmingAttempts is MAX_TOKEN_TRIMMING_ATTEMPTS, how many times a message is
// shortened at most.
const liteLLMMaxTrimmingAttempts = 10

// LiteLLMTrimMessages is litellm.utils.trim_messages (litellm 1.110.2) given max_tokens:
// trailing tool messages are set aside and always sent; when the rest counts fewer than
// maxTokens it is sent whole. Otherwise every system message is joined into one (shortened
// from the middle if it alone is too long) that goes first, and the other messages are
// taken newest first while they fit, the first that does not being shortened from the
// middle ("..") when the shortened message fits. model matters only to the library's rule
// that a "gpt" model is not shortened below 10 tokens.
func LiteLLMTrimMessages(msgs []Message, maxTokens int, model string, count Counter) []Message {
	work := clone(msgs)
	system := ""
	for _, m := range work {
		if m.Role == "system" {
			if system != "" {
				system += "\n"
			}
			system += m.Content
		}
	}
	k := len(work)
	for k > 0 && work[k-1].Role == "tool" {
		k--
	}
	tools := work[k:]
	work = work[:k:k]
	if count(work) < maxTokens {
		return append(work, tools...)
	}
	var head []Message
	if system != "" {
		event := Message{Role: "system", Content: system}
		tokens := count([]Message{event})
		if tokens > maxTokens {
			event = shortenToFit(event, maxTokens, model, count)
			tokens = count([]Message{event})
		}
		maxTokens -= tokens
		if maxTokens == 0 {
			return []Message{event}
		}
		head = []Message{event}
		var rest []Message
		for _, m := range work {
			if m.Role != "system" {
				rest = append(rest, m)
			}
		}
		work = rest
	}
	final := append(head, liteLLMProcessMessages(work, maxTokens, model, count)...)
	return append(final, tools...)
}

// liteLLMProcessMessages is process_messages: newest first, each message added whole while
// it fits, otherwise shortened to the tokens still available and added if it then fits;
// it stops once 3 tokens or fewer remain.
func liteLLMProcessMessages(msgs []Message, maxTokens int, model string, count Counter) []Message {
	final := []Message{}
	for _, m := range reverse(msgs) {
		available := maxTokens - count(final)
		if available <= 3 {
			break
		}
		with := append([]Message{m}, final...)
		if count(with) <= maxTokens {
			final = with
			continue
		}
		shortened := shortenToFit(m, available, model, count)
		if count(append(append([]Message(nil), final...), shortened)) <= maxTokens {
			final = append([]Message{shortened}, final...)
		}
	}
	return final
}

// shortenToFit is shorten_message_to_fit_limit: it cuts the content to a share of its
// characters (code points) from the middle, keeping "..", until the message counts no more
// than need, at most liteLLMMaxTrimmingAttempts times. Python's content[-0:] is the whole
// content, so a cut to nothing keeps all of it after the "..".
func shortenToFit(m Message, need int, model string, count Counter) Message {
	if strings.Contains(model, "gpt") && need <= 10 {
		return m
	}
	content := []rune(m.Content)
	for range liteLLMMaxTrimmingAttempts {
		total := count([]Message{m})
		if total <= need {
			break
		}
		ratio := float64(need) / float64(total)
		newLength := max(0, int(float64(len(content))*ratio)-1)
		half := newLength / 2
		right := content
		if half > 0 {
			right = content[len(content)-half:]
		}
		trimmed := make([]rune, 0, half+2+len(right))
		trimmed = append(append(append(trimmed, content[:half]...), '.', '.'), right...)
		content = trimmed
		m.Content = string(content)
	}
	return m
}
