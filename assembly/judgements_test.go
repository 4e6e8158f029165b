package assembly

import (
	"fmt"
	"testing"

	"github.com/ctxgraph/ctxgraph/policy"
)

// A branch has one current view: a judgement of a newer view of it replaces the judgements
// of the older ones, whose views no assembly will name again, and the cache holds at most
// its limit in bytes, dropping the least recently used first and keeping none larger.
func TestJudgementsKeepOnePerBranchAndShape(t *testing.T) {
	perVerdict := (&judgement{verdicts: make([]*policy.Verdict, 1)}).size()
	js := judgements{limit: 100 * perVerdict}
	req := policy.Request{ParticipantID: "pt_1", RuntimeKind: "chat", Provider: "openai"}
	put := func(view, branch string, verdicts int) string {
		key, shape := judgementKey(view, branch, "default@1", req, "o200k_base")
		js.put(key, &judgement{verdicts: make([]*policy.Verdict, verdicts), shape: shape})
		return key
	}
	other := put("cnv_1/br_b/1", "br_b", 10)
	for seq := 1; seq <= 5; seq++ {
		put(fmt.Sprintf("cnv_1/br_a/%d", seq), "br_a", 10)
	}
	if len(js.entries) != 2 || js.entries[other] == nil {
		t.Fatalf("after five views of br_a and one of br_b: %d judgements (want 2, br_b's kept)", len(js.entries))
	}
	otherReq := req
	otherReq.ParticipantID = "pt_2"
	key, shape := judgementKey("cnv_1/br_a/5", "br_a", "default@1", otherReq, "o200k_base")
	js.put(key, &judgement{verdicts: make([]*policy.Verdict, 10), shape: shape})
	if len(js.entries) != 3 {
		t.Fatalf("another participant's judgement of the same view: %d judgements, want 3", len(js.entries))
	}
	if js.held != 30*perVerdict {
		t.Errorf("three judgements of 10 verdicts hold %d bytes, want %d", js.held, 30*perVerdict)
	}
	big := put("cnv_2/br_c/1", "br_c", 95)
	if len(js.entries) != 1 || js.entries[big] == nil {
		t.Errorf("a judgement of 95 verdicts beside 30 of a limit of 100: %d judgements kept, want only it", len(js.entries))
	}
	put("cnv_3/br_d/1", "br_d", 101)
	if len(js.entries) != 0 || js.held != 0 {
		t.Errorf("a judgement larger than the limit: %d judgements kept holding %d bytes, want none", len(js.entries), js.held)
	}
}

// A run's first judgement starts from the judgement for another run of the same shape (a
// generation's run after the one before it): ofView finds the run's own first, then another
// run's, never one for no run; and a judgement of a newer view of the branch replaces those
// of older views for every run.
func TestJudgementsOfAnotherRun(t *testing.T) {
	js := judgements{limit: 1 << 30}
	req := policy.Request{ParticipantID: "pt_1", RuntimeKind: "chat", Provider: "openai"}
	put := func(view, run string) *judgement {
		r := req
		r.RunID = run
		key, shape := judgementKey(view, "br_a", "default@1", r, "o200k_base")
		j := &judgement{shape: shape, view: view, run: run}
		js.put(key, j)
		return j
	}
	_, shape := judgementKey("", "br_a", "default@1", req, "o200k_base")
	first := put("cnv_1/br_a/1", "run_1")
	if got := js.ofView(shape, "cnv_1/br_a/1", "run_2"); got != first {
		t.Fatalf("run_2 at the view run_1 was judged at: got %v, want run_1's judgement", got)
	}
	if got := js.ofView(shape, "cnv_1/br_a/1", ""); got != nil {
		t.Fatalf("no run at the view run_1 was judged at: got %v, want none", got)
	}
	none := put("cnv_1/br_a/1", "")
	if got := js.ofView(shape, "cnv_1/br_a/1", "run_2"); got != first {
		t.Fatalf("run_2 beside judgements for run_1 and for no run: got %v, want run_1's", got)
	}
	own := put("cnv_1/br_a/1", "run_2")
	if got := js.ofView(shape, "cnv_1/br_a/1", "run_2"); got != own {
		t.Fatalf("run_2 with its own judgement kept: got %v, want it", got)
	}
	if len(js.entries) != 3 || js.ofView(shape, "cnv_1/br_a/1", "") != none {
		t.Fatalf("three runs' judgements of one view: %d kept, want 3", len(js.entries))
	}
	newer := put("cnv_1/br_a/2", "run_3")
	if len(js.entries) != 1 || js.ofView(shape, "cnv_1/br_a/2", "run_3") != newer {
		t.Fatalf("a newer view of the branch: %d judgements kept, want only its own", len(js.entries))
	}
}
