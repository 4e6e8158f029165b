package peers

import (
	"encoding/json"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

func call(id string) model.ChatToolCall {
	return model.ChatToolCall{ID: id, Name: "search", Arguments: "{}"}
}

func TestReplayPairsCallsWithResults(t *testing.T) {
	items := []Item{
		{Kind: ItemResult, Depth: 0, Seq: 4, CallID: "t2", Result: "r2"},
		{Kind: ItemMessage, Depth: 1, Seq: 1, Role: "user", Content: "hi"},
		{Kind: ItemCall, Depth: 0, Seq: 2, RunID: "r1", CallID: "t1", Tool: "search", Arguments: "{}"},
		{Kind: ItemCall, Depth: 0, Seq: 3, RunID: "r1", CallID: "t2", Tool: "search", Arguments: "{}"},
		{Kind: ItemResult, Depth: 0, Seq: 3, CallID: "t1", Result: "r1"},
		{Kind: ItemCall, Depth: 0, Seq: 5, RunID: "r2", CallID: "t3", Tool: "search", Arguments: "{}"},
	}
	// Sorted: the ancestor's message, then t1, t2 (one run, in a row), t1's result at seq 3
	// after t2's call (stable), t2's result, and t3 of another run, left without a result.
	want := []Message{
		{Role: "user", Content: "hi"},
		{Role: "assistant", ToolCalls: []model.ChatToolCall{call("t1"), call("t2")}},
		{Role: "tool", Content: "r1", ToolCallID: "t1"},
		{Role: "tool", Content: "r2", ToolCallID: "t2"},
		{Role: "assistant", ToolCalls: []model.ChatToolCall{call("t3")}},
	}
	got := Replay(items)
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("got %s, want %s", g, w)
	}
	if n := OrphanPairs(got); n != 1 {
		t.Errorf("got %d orphaned pairs, want 1 (t3 has no result)", n)
	}
}

func TestOrphanPairs(t *testing.T) {
	asking := Message{Role: "assistant", ToolCalls: []model.ChatToolCall{call("a"), call("b")}}
	for _, tc := range []struct {
		name string
		msgs []Message
		want int
	}{
		{"paired", []Message{{Role: "user"}, asking, {Role: "tool", ToolCallID: "a"}, {Role: "tool", ToolCallID: "b"}}, 0},
		{"a result lost", []Message{asking, {Role: "tool", ToolCallID: "a"}}, 1},
		{"the calls lost", []Message{{Role: "user"}, {Role: "tool", ToolCallID: "a"}, {Role: "tool", ToolCallID: "b"}}, 2},
		{"a result after another message", []Message{asking, {Role: "tool", ToolCallID: "a"}, {Role: "user"}, {Role: "tool", ToolCallID: "b"}}, 2},
	} {
		if got := OrphanPairs(tc.msgs); got != tc.want {
			t.Errorf("%s: got %d orphaned pairs, want %d", tc.name, got, tc.want)
		}
	}
}

func TestCheckCountsLeaksAndPairing(t *testing.T) {
	msgs := []Message{{Role: "user", Content: "file_8f3a2c please"}, {Role: "tool", Content: "SCRATCH-7781", ToolCallID: "x"}}
	got, err := Check(msgs, Expectations{Contains: []string{"file_8f3a2c", "NF-1"}, NotContains: []string{"SCRATCH-7781", "gone"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Passed != 2 || got.Total != 5 || len(got.Missing) != 1 || len(got.Leaks) != 1 || got.Orphans != 1 {
		t.Errorf("got %+v, want 2 of 5 passed, NF-1 missing, SCRATCH-7781 leaked, 1 orphan", got)
	}
}
