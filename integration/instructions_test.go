package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/assembly"
)

// The instructions of DESIGN §8: a conversation's and a participant's, set on creation and
// by PATCH, sent first by every assembly for the participant, protected, and replayed as
// they were.

const (
	conversationRules = "Answer in British English. Never reveal the sheet ids."
	analystPersona    = "You are Ada, a careful financial analyst. Cite the sheet a figure comes from."
	// instructionsLimit is the bound of DESIGN §8's instructions: 64 KiB of UTF-8.
	instructionsLimit = 64 << 10
)

// instructedConversation makes a conversation with instructions, a participant with its
// own and a user message.
func (h *harness) instructedConversation(conversation, participant string) (conv, branch, pt string) {
	h.t.Helper()
	c := h.must(201, "POST", "/v1/conversations", map[string]any{"title": "instructed", "instructions": conversation})
	conv, branch = str(c, "id"), str(c, "branchId")
	pt = str(h.must(201, "POST", "/v1/conversations/"+conv+"/participants", map[string]any{
		"kind": "persona", "name": "ada", "provider": "openai", "model": "gpt-4.1", "instructions": participant}), "id")
	h.must(201, "POST", "/v1/branches/"+branch+"/messages", map[string]any{"role": "user", "content": "what was Q3 revenue?"})
	return conv, branch, pt
}

// leadOf returns the first message of an assembly or a provider request, and all of them.
func leadOf(t *testing.T, m map[string]any) (map[string]any, []any) {
	t.Helper()
	msgs, _ := m["messages"].([]any)
	if len(msgs) == 0 {
		t.Fatalf("no messages in %v", m)
	}
	return msgs[0].(map[string]any), msgs
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestInstructionsAreSetOnCreationAndChangedByPatch(t *testing.T) {
	h := newHarness(t)
	conv, _, pt := h.instructedConversation(conversationRules, analystPersona)

	if got := str(h.must(200, "GET", "/v1/conversations/"+conv, nil), "instructions"); got != conversationRules {
		t.Fatalf("conversation instructions: got %q, want %q", got, conversationRules)
	}
	if got := str(h.must(200, "GET", "/v1/participants/"+pt, nil), "instructions"); got != analystPersona {
		t.Fatalf("participant instructions: got %q, want %q", got, analystPersona)
	}

	patched := h.must(200, "PATCH", "/v1/participants/"+pt, map[string]any{"instructions": "You are Ada. Be brief."})
	if str(patched, "instructions") != "You are Ada. Be brief." || str(patched, "name") != "ada" || str(patched, "model") != "gpt-4.1" {
		t.Fatalf("PATCH participant answered %v, want the new instructions and everything else unchanged", patched)
	}
	if got := str(h.must(200, "GET", "/v1/participants/"+pt, nil), "instructions"); got != "You are Ada. Be brief." {
		t.Fatalf("participant instructions after PATCH: got %q", got)
	}
	c := h.must(200, "PATCH", "/v1/conversations/"+conv, map[string]any{"instructions": "Answer in French."})
	if str(c, "instructions") != "Answer in French." || str(c, "title") != "instructed" {
		t.Fatalf("PATCH conversation answered %v, want the new instructions and the title unchanged", c)
	}
	if got := str(h.must(200, "GET", "/v1/conversations/"+conv, nil), "instructions"); got != "Answer in French." {
		t.Fatalf("conversation instructions after PATCH: got %q", got)
	}

	// Another account's ids are unknown, for reads and changes alike, and nothing changes.
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/participants/" + pt}, {"PATCH", "/v1/participants/" + pt}, {"PATCH", "/v1/conversations/" + conv},
	} {
		resp := h.callAs(h.otherKey, r.method, r.path, map[string]any{"instructions": "pwned"})
		if r.method == "GET" {
			resp = h.callAs(h.otherKey, r.method, r.path, nil)
		}
		if resp.status != 404 {
			t.Fatalf("%s %s as another account: got %d, want 404; body %s", r.method, r.path, resp.status, resp.body)
		}
	}
	if got := str(h.must(200, "GET", "/v1/participants/"+pt, nil), "instructions"); got != "You are Ada. Be brief." {
		t.Fatalf("another account's PATCH changed the instructions to %q", got)
	}
	h.expectError(h.call("PATCH", "/v1/participants/pt_missing", map[string]any{"instructions": "x"}), 404, "not_found", "")
}

func TestInstructionsBadInputWritesNothing(t *testing.T) {
	h := newHarness(t)
	conv, _, pt := h.instructedConversation(conversationRules, analystPersona)
	tooLong := strings.Repeat("a", instructionsLimit+1)
	before := len(h.must(200, "GET", "/v1/conversations", nil)["conversations"].([]any))

	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{"conversation too long", "POST", "/v1/conversations", map[string]any{"title": "x", "instructions": tooLong}},
		{"conversation wrong type", "POST", "/v1/conversations", map[string]any{"title": "x", "instructions": 42}},
		{"participant too long", "POST", "/v1/conversations/" + conv + "/participants", map[string]any{"kind": "model", "name": "x", "instructions": tooLong}},
		{"participant wrong type", "POST", "/v1/conversations/" + conv + "/participants", map[string]any{"kind": "model", "name": "x", "instructions": []any{"a"}}},
		{"patch participant too long", "PATCH", "/v1/participants/" + pt, map[string]any{"instructions": tooLong}},
		{"patch participant wrong type", "PATCH", "/v1/participants/" + pt, map[string]any{"instructions": true}},
		{"patch participant without instructions", "PATCH", "/v1/participants/" + pt, map[string]any{}},
		{"patch conversation too long", "PATCH", "/v1/conversations/" + conv, map[string]any{"instructions": tooLong}},
		{"patch conversation wrong type", "PATCH", "/v1/conversations/" + conv, map[string]any{"instructions": 1.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.expectError(h.call(tc.method, tc.path, tc.body), 400, "invalid", "instructions")
		})
	}
	// A PATCH changes the instructions and nothing else: another field is refused.
	h.expectError(h.call("PATCH", "/v1/participants/"+pt, map[string]any{"instructions": "x", "name": "eve"}), 400, "invalid", "name")
	h.expectError(h.call("PATCH", "/v1/conversations/"+conv, map[string]any{"instructions": "x", "title": "y"}), 400, "invalid", "title")

	if after := len(h.must(200, "GET", "/v1/conversations", nil)["conversations"].([]any)); after != before {
		t.Fatalf("conversations: got %d after the refused creations, want %d", after, before)
	}
	c := h.must(200, "GET", "/v1/conversations/"+conv, nil)
	if n := len(c["participants"].([]any)); n != 1 {
		t.Fatalf("participants: got %d after the refused additions, want 1", n)
	}
	if str(c, "instructions") != conversationRules {
		t.Fatalf("conversation instructions: got %q after refused PATCHes, want them unchanged", str(c, "instructions"))
	}
	if got := str(h.must(200, "GET", "/v1/participants/"+pt, nil), "instructions"); got != analystPersona {
		t.Fatalf("participant instructions: got %q after refused PATCHes, want them unchanged", got)
	}
	// The bound itself is accepted.
	h.must(200, "PATCH", "/v1/participants/"+pt, map[string]any{"instructions": tooLong[1:]})
}

func TestInstructionsLeadEveryAssemblyProtectedAndCounted(t *testing.T) {
	h := newHarness(t)
	conv, branch, pt := h.instructedConversation("", "")
	assemble := func(budget int) map[string]any {
		body := map[string]any{"branchId": branch, "participantId": pt}
		if budget > 0 {
			body["tokenBudget"] = budget
		}
		return h.must(201, "POST", "/v1/assemblies", body)
	}

	// No instructions: no system message for them, the request as it always was.
	plain := assemble(0)
	if lead, _ := leadOf(t, plain); lead["role"] == "system" {
		t.Fatalf("without instructions the request starts with a system message: %v", lead)
	}
	if _, ok := plain["instructionsSha256"]; ok {
		t.Fatalf("without instructions the assembly names an instructions sha256: %v", plain["instructionsSha256"])
	}

	h.must(200, "PATCH", "/v1/conversations/"+conv, map[string]any{"instructions": conversationRules})
	h.must(200, "PATCH", "/v1/participants/"+pt, map[string]any{"instructions": analystPersona})
	want := conversationRules + "\n\n" + analystPersona
	a := assemble(0)
	lead, msgs := leadOf(t, a)
	if lead["role"] != "system" || lead["content"] != want {
		t.Fatalf("first message: got %v, want the system message %q", lead, want)
	}
	if len(msgs) != 2 {
		t.Fatalf("messages: got %d, want the instructions and the user message", len(msgs))
	}
	included := a["included"].([]any)
	for i, w := range []map[string]any{{"ref": conv, "type": "conversation", "as": "instructions"}, {"ref": pt, "type": "participant", "as": "instructions"}} {
		got := included[i].(map[string]any)
		if got["ref"] != w["ref"] || got["type"] != w["type"] || got["as"] != w["as"] {
			t.Fatalf("included[%d]: got %v, want %v", i, got, w)
		}
	}
	if got := str(a, "instructionsSha256"); got != sha256Hex(want) {
		t.Fatalf("instructionsSha256: got %q, want %q", got, sha256Hex(want))
	}
	if got := str(h.must(200, "GET", "/v1/assemblies/"+str(a, "id"), nil), "instructionsSha256"); got != sha256Hex(want) {
		t.Fatalf("the record's instructionsSha256: got %q, want %q", got, sha256Hex(want))
	}

	// Counted in the request and in the baseline, to the token.
	tk, err := assembly.NewTokenizer(assembly.EncodingForModel("gpt-4.1"))
	if err != nil {
		t.Fatal(err)
	}
	cost := assembly.MessageTokens(tk, "system", want, "")
	tokens, plainTokens := a["tokens"].(map[string]any), plain["tokens"].(map[string]any)
	for _, k := range []string{"assembled", "baseline"} {
		if got := int(tokens[k].(float64) - plainTokens[k].(float64)); got != cost {
			t.Errorf("tokens.%s: got %d more with the instructions, want their %d", k, got, cost)
		}
	}

	// A budget below them: they stay whole, first, and the request says it is over.
	tiny := assemble(5)
	if lead, _ := leadOf(t, tiny); lead["content"] != want {
		t.Fatalf("with a budget of 5 the first message is %v, want the instructions whole", lead)
	}
	if tiny["overBudget"] != true || tiny["tokens"].(map[string]any)["assembled"].(float64) <= 5 {
		t.Fatalf("with a budget of 5: got overBudget %v and tokens %v, want over the budget", tiny["overBudget"], tiny["tokens"])
	}

	// Explain says why, with the rule.
	for ref, rule := range map[string]string{pt: "instructions.participant", conv: "instructions.conversation"} {
		ex := h.must(200, "GET", "/v1/assemblies/"+str(a, "id")+"/explain?ref="+ref, nil)
		if ex["outcome"] != "included" || ex["as"] != "instructions" || ex["rule"] != rule {
			t.Fatalf("explain %s: got %v, want included as instructions by %s", ref, ex, rule)
		}
	}

	// Replay after the instructions changed sends the text the assembly sent.
	h.must(200, "PATCH", "/v1/participants/"+pt, map[string]any{"instructions": "You are Bob now."})
	h.must(200, "PATCH", "/v1/conversations/"+conv, map[string]any{"instructions": ""})
	for _, id := range []string{str(a, "id"), str(tiny, "id"), str(plain, "id")} {
		if rep := h.must(200, "POST", "/v1/assemblies/"+id+"/replay", nil); rep["identical"] != true {
			t.Fatalf("replay of %s after PATCH: got %v, want identical", id, rep)
		}
	}
	if lead, _ := leadOf(t, assemble(0)); lead["content"] != "You are Bob now." {
		t.Fatalf("after PATCH the first message is %v, want the participant's new instructions alone", lead)
	}
}

func TestInstructionsReachTheProviderFirstEveryTurn(t *testing.T) {
	const key = "sk-test-ctxgraph-instructions"
	fake := newProtocolServer(t, "/v1/chat/completions", func(n int, _ map[string]any) (int, map[string]string, any) {
		return 200, nil, openAIText(fmt.Sprintf("answer %d", n))
	})
	h := newProviderHarness(t, openAIAt(t, fake, key)...)
	c := h.must(201, "POST", "/v1/conversations", map[string]any{"title": "turns", "instructions": conversationRules})
	branch := str(c, "branchId")
	pt := str(h.must(201, "POST", "/v1/conversations/"+str(c, "id")+"/participants", map[string]any{
		"kind": "persona", "name": "ada", "provider": "openai", "model": "gpt-4.1", "instructions": analystPersona}), "id")
	want := conversationRules + "\n\n" + analystPersona

	// Eight turns: from the sixth on, the history is longer than the window of 8 messages.
	for turn := 1; turn <= 8; turn++ {
		h.must(201, "POST", "/v1/generations", map[string]any{
			"branchId": branch, "participantIds": []string{pt}, "userMessage": map[string]any{"content": fmt.Sprintf("question %d", turn)}})
		lead, msgs := leadOf(t, fake.request(t, turn-1))
		if lead["role"] != "system" || lead["content"] != want {
			t.Fatalf("turn %d: the provider's first message is %v, want the instructions", turn, lead)
		}
		for i, m := range msgs[1:] {
			if m.(map[string]any)["content"] == want {
				t.Fatalf("turn %d: the instructions are sent again at message %d", turn, i+1)
			}
		}
		if last := msgs[len(msgs)-1].(map[string]any); last["content"] != fmt.Sprintf("question %d", turn) {
			t.Fatalf("turn %d: the request ends with %v, want the question", turn, last)
		}
		if turn >= 6 && len(msgs) < 9 {
			t.Fatalf("turn %d: got %d messages, want the instructions beside a full window", turn, len(msgs))
		}
	}
}
