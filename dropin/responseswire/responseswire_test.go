package responseswire

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ctxgraph/ctxgraph/dropin"
	"github.com/ctxgraph/ctxgraph/model"
)

// An answer's output items, sent back whole, without their ids (as the Vercel AI SDK sends
// function calls) or by reference, must hash as the answer point ctxgraph recorded.
func TestAnAnswerSentBackMatchesItsPoint(t *testing.T) {
	runs := []model.RunResult{
		{AssemblyID: "asm_1", Message: &model.GeneratedMessage{Content: "Found it."}},
		{AssemblyID: "asm_2", ToolCalls: []model.RequestedToolCall{{CallID: "call_1", Tool: "search", Arguments: json.RawMessage(`{"q":"acme"}`)},
			{CallID: "call_2", Tool: "read", Arguments: json.RawMessage(`{}`)}}},
	}
	for _, run := range runs {
		want := "h"
		for _, item := range AnswerItems(run) {
			want = dropin.Next(want, item)
		}
		out, _ := json.Marshal(Render(dropin.Answer{Run: run}, "m", 1).Output)
		var whole, withoutIDs, refs []map[string]any
		_ = json.Unmarshal(out, &whole)
		_ = json.Unmarshal(out, &withoutIDs)
		for _, it := range withoutIDs {
			if it["type"] == "function_call" {
				delete(it, "id")
			}
			refs = append(refs, map[string]any{"type": "item_reference", "id": it["id"]})
		}
		for i, it := range whole {
			refs[i]["id"] = it["id"]
		}
		for name, items := range map[string][]map[string]any{"whole": whole, "without ids": withoutIDs, "by reference": refs} {
			input, _ := json.Marshal(items)
			req, err := Translate(Request{Input: input})
			if err != nil {
				t.Fatal(err)
			}
			got := "h"
			for _, m := range req.Messages {
				got = dropin.Next(got, m)
			}
			if got != want {
				t.Errorf("%s %s: got %s, want the answer point's %s", run.AssemblyID, name, got, want)
			}
		}
	}
}

func TestResponseIDsNameTheirPoint(t *testing.T) {
	sha := fmt.Sprintf("%064d", 7)
	a := dropin.Answer{ConversationID: "cnv_1", Point: model.ChainPoint{SHA256: sha, Length: 5}}
	req, err := Translate(Request{PreviousResponseID: ResponseID(a), Input: json.RawMessage(`"next"`)})
	if err != nil {
		t.Fatal(err)
	}
	if req.ConversationID != "cnv_1" || req.After.SHA256 != sha || req.After.Length != 5 {
		t.Errorf("got conversation %s after %+v, want cnv_1 after the answer's point", req.ConversationID, req.After)
	}
	for _, bad := range []string{"resp_x", "cnv_1." + sha + ".5", "resp_cnv_1.abc.5", "resp_cnv_1." + sha + ".0"} {
		if _, err := Translate(Request{PreviousResponseID: bad, Input: json.RawMessage(`"x"`)}); err == nil {
			t.Errorf("previous_response_id %q: got no error", bad)
		}
	}
}
