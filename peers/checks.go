package peers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ctxgraph/ctxgraph/model"
)

// Texts returns the texts a scenario's contains checks search in a request's messages (raw
// JSON): the messages re-encoded as JSON without HTML escaping, and their string values
// (names included) joined by newlines, so that a string with quotes or newlines is found as
// written.
func Texts(raw json.RawMessage) ([]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("the response has no messages")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	encoded, err := model.EncodeJSON(v)
	if err != nil {
		return nil, err
	}
	var values []string
	collectStrings(v, &values)
	return []string{string(encoded), strings.Join(values, "\n")}, nil
}

func collectStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			collectStrings(e, out)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			collectStrings(x[k], out)
		}
	}
}

// Expectations are a scenario assembly's text checks: strings its request must carry and
// strings it must not (a leak: private scratch work, a sibling branch's state, a raw body
// that may not leave, a superseded figure), and the messages it must keep: the content of
// each message the scenario expects included, by the message's key.
type Expectations struct {
	Contains, NotContains []string
	Messages              map[string]string
}

// Outcome is what the checks found in one request.
type Outcome struct {
	// Passed and Total count the checks: each contains found, each notContains absent, each
	// expected message kept, and (when read by Check) one check that a provider accepts the
	// request: every tool call paired with its result, and a message to answer.
	Passed, Total int
	// Missing are the contains strings not found, and "message KEY" for each expected
	// message lost; Leaks the notContains strings found.
	Missing, Leaks []string
	// Orphans counts the tool calls without their result and the results without their call
	// (OrphanPairs).
	Orphans int
	// Empty says the request holds nothing but system text, or nothing at all: no provider
	// accepts it (Anthropic's Messages API wants one message besides the system prompt),
	// though it leaks nothing.
	Empty bool
}

// Check reads a request's messages against the expectations, and counts one more check:
// that a provider accepts the request (no orphaned tool pair, not empty).
func Check(msgs []Message, exp Expectations) (Outcome, error) {
	raw, err := json.Marshal(msgs)
	if err != nil {
		return Outcome{}, err
	}
	out, err := CheckText(raw, exp)
	out.Orphans, out.Empty = OrphanPairs(msgs), onlySystem(msgs)
	out.Total++
	if out.Orphans == 0 && !out.Empty {
		out.Passed++
	}
	return out, err
}

// onlySystem says whether a request has no message but system text.
func onlySystem(msgs []Message) bool {
	for _, m := range msgs {
		if m.Role != "system" {
			return false
		}
	}
	return true
}

// CheckText reads the raw JSON of a request's messages against the expectations.
func CheckText(raw json.RawMessage, exp Expectations) (Outcome, error) {
	texts, err := Texts(raw)
	if err != nil {
		return Outcome{}, err
	}
	found := func(s string) bool {
		for _, t := range texts {
			if strings.Contains(t, s) {
				return true
			}
		}
		return false
	}
	out := Outcome{Total: len(exp.Contains) + len(exp.NotContains) + len(exp.Messages)}
	for _, s := range exp.Contains {
		if found(s) {
			out.Passed++
		} else {
			out.Missing = append(out.Missing, s)
		}
	}
	for _, s := range exp.NotContains {
		if found(s) {
			out.Leaks = append(out.Leaks, s)
		} else {
			out.Passed++
		}
	}
	keys := make([]string, 0, len(exp.Messages))
	for k := range exp.Messages {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if found(exp.Messages[k]) {
			out.Passed++
		} else {
			out.Missing = append(out.Missing, "message "+k)
		}
	}
	return out, nil
}

// OrphanPairs counts what an OpenAI-compatible provider rejects a request for: an assistant
// message's tool call with no tool message answering its id in the tool messages right after
// it, and a tool message that answers no call of the assistant message right before its run
// of tool messages (LangChain #33245, #29637; LiteLLM #4931).
func OrphanPairs(msgs []Message) int {
	orphans := 0
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role != "tool" {
			continue
		}
		// A run of tool messages answers the calls of the message before it, if any.
		start := i
		for i < len(msgs) && msgs[i].Role == "tool" {
			i++
		}
		asked := map[string]bool{}
		if start > 0 {
			for _, c := range msgs[start-1].ToolCalls {
				asked[c.ID] = true
			}
		}
		for _, t := range msgs[start:i] {
			if !asked[t.ToolCallID] {
				orphans++
			}
		}
		i--
	}
	for i, m := range msgs {
		if len(m.ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		for j := i + 1; j < len(msgs) && msgs[j].Role == "tool"; j++ {
			answered[msgs[j].ToolCallID] = true
		}
		for _, c := range m.ToolCalls {
			if !answered[c.ID] {
				orphans++
			}
		}
	}
	return orphans
}
