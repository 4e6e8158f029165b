package integration

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// checkStory asks explain about every record an assembly included and fails the test on
// any answer that tells another story, then replays the assembly and wants it identical.
func (h *harness) checkStory(assemblyID string) {
	h.t.Helper()
	a := h.must(200, "GET", "/v1/assemblies/"+assemblyID, nil)
	included, _ := a["included"].([]any)
	if len(included) == 0 {
		h.t.Errorf("assembly %s included nothing", assemblyID)
	}
	for _, v := range included {
		inc := v.(map[string]any)
		ref := str(inc, "ref")
		ex := h.must(200, "GET", "/v1/assemblies/"+assemblyID+"/explain?ref="+url.QueryEscape(ref), nil)
		if str(ex, "outcome") != "included" || str(ex, "as") != str(inc, "as") || str(ex, "rule") == "" {
			h.t.Errorf("assembly %s: explain %s says %v, the record says included as %s", assemblyID, ref, ex, str(inc, "as"))
		}
	}
	omitted, _ := a["omittedRefs"].([]any) // listed when the assembly was traced
	for _, v := range omitted {
		om := v.(map[string]any)
		ex := h.must(200, "GET", "/v1/assemblies/"+assemblyID+"/explain?ref="+url.QueryEscape(str(om, "ref")), nil)
		if str(ex, "outcome") != "omitted" || str(ex, "reason") != str(om, "reason") {
			h.t.Errorf("assembly %s: explain %s says %v, the trace says omitted for %s", assemblyID, str(om, "ref"), ex, str(om, "reason"))
		}
	}
	if rep := h.must(200, "POST", "/v1/assemblies/"+assemblyID+"/replay", nil); rep["identical"] != true {
		h.t.Errorf("assembly %s replays with differences %v", assemblyID, rep["differences"])
	}
}

// A three-speaker, two-round discussion: every request keeps the directive, labels every
// earlier answer with its speaker, and holds only its speaker's private tool state.
func TestDiscussionLabelsDirectivesAndPrivateState(t *testing.T) {
	openai := newProtocolServer(t, "/v1/chat/completions", func(n int, req map[string]any) (int, map[string]string, any) {
		return 200, nil, openAIText(fmt.Sprintf("turn %d from %s", n, req["model"]))
	})
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: openai, kind: openai, baseURL: "`+openai.URL+`/v1", apiKeyEnv: OPENAI_KEY, maxRetries: 0}
`)...)
	_, branch, ids := h.conversationWith([3]string{"ada", "openai", "m-ada"}, [3]string{"bo", "openai", "m-bo"}, [3]string{"cy", "openai", "m-cy"})
	// Ada's private tool state: a lookup of her own, with a memory of it.
	const secret = "ADA-PRIVATE-7731"
	run := str(h.must(201, "POST", "/v1/branches/"+branch+"/runs", map[string]any{"participantId": ids[0], "runtimeKind": "chat"}), "id")
	call := str(h.must(201, "POST", "/v1/runs/"+run+"/tool-calls", map[string]any{"tool": "notes_read", "arguments": map[string]any{"page": 1}}), "id")
	h.must(201, "POST", "/v1/tool-calls/"+call+"/result", map[string]any{"status": "succeeded", "result": map[string]any{"note": secret},
		"memories": []any{map[string]any{"summary": "Ada's own note says " + secret}}})
	h.must(200, "PATCH", "/v1/runs/"+run, map[string]any{"status": "completed"})

	const directive = "Moderator: argue for or against shipping on Friday, one point each."
	out := h.must(201, "POST", "/v1/discussions", map[string]any{"branchId": branch, "participantIds": ids,
		"directive": directive, "topic": map[string]any{"content": "Ship on Friday?"}, "rounds": 2})
	runs := out["runs"].([]any)
	if len(runs) != 6 || str(out, "directiveMessageId") == "" || str(out, "userMessageId") == "" {
		t.Fatalf("discussion answered %v", out)
	}
	names := map[string]string{ids[0]: "ada", ids[1]: "bo", ids[2]: "cy"}
	var answers []string // the answers so far, as "speaker: text"
	previous := str(out, "userMessageId")
	for i, v := range runs {
		r := v.(map[string]any)
		speaker := ids[i%3]
		if str(r, "participantId") != speaker || str(r, "status") != "completed" {
			t.Fatalf("run %d: %v, want %s completed", i, r, names[speaker])
		}
		req := openai.request(t, i)
		if req["model"] != "m-"+names[speaker] {
			t.Fatalf("request %d went to %v, want m-%s", i, req["model"], names[speaker])
		}
		msgs := messagesOf(t, req)
		var system, labelled []string
		for _, m := range msgs {
			text, _ := m["content"].(string)
			switch m["role"] {
			case "system":
				system = append(system, text)
			case "assistant":
				if m["name"] == nil {
					t.Errorf("request %d: an assistant message without its speaker: %v", i, m)
				}
				labelled = append(labelled, fmt.Sprintf("%v: %s", m["name"], text))
			}
		}
		if !strings.Contains(strings.Join(system, "\n"), directive) {
			t.Errorf("request %d (%s) lost the directive: system %q", i, names[speaker], system)
		}
		for _, a := range answers {
			if !slices.Contains(labelled, a) {
				t.Errorf("request %d (%s) lacks the labelled answer %q: %q", i, names[speaker], a, labelled)
			}
		}
		body := string(openai.bodies[i])
		if speaker != ids[0] && strings.Contains(body, secret) {
			t.Errorf("request %d (%s) holds Ada's private tool state: %s", i, names[speaker], body)
		}
		if speaker == ids[0] && !strings.Contains(body, secret) {
			t.Errorf("request %d (ada) lacks her own private state: %s", i, body)
		}
		// The discussion is one thread: each run answers the message before it.
		if got := str(h.must(200, "GET", "/v1/runs/"+str(r, "runId"), nil), "triggerMessageId"); got != previous {
			t.Errorf("run %d was triggered by %s, want %s", i, got, previous)
		}
		msg := r["message"].(map[string]any)
		previous = str(msg, "id")
		answers = append(answers, names[speaker]+": "+str(msg, "content"))
		h.checkStory(str(r, "assemblyId"))
	}
}
