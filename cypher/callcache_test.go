package cypher

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

func TestRecentCallsRemembersTheLatestOfEachAccount(t *testing.T) {
	r := recentCalls{calls: ring[model.ToolCall]{size: recentCallsSize}}
	r.put("a", model.ToolCall{ID: "tc_1", Tool: "ls", Arguments: []byte(`{}`)})
	if c, ok := r.get("a", "tc_1"); !ok || c.Tool != "ls" {
		t.Errorf("get a/tc_1: got %+v %v, want the call", c, ok)
	}
	if _, ok := r.get("b", "tc_1"); ok {
		t.Errorf("get b/tc_1: got a call of another account, want none")
	}
	r.put("a", model.ToolCall{ID: "tc_big", Arguments: []byte(`"` + strings.Repeat("x", recentCallArgsLimit) + `"`)})
	if _, ok := r.get("a", "tc_big"); ok {
		t.Errorf("get a/tc_big: got a call with arguments over the limit, want it read again")
	}
	for i := range recentCallsSize {
		r.put("a", model.ToolCall{ID: fmt.Sprintf("tc_n%d", i)})
	}
	if _, ok := r.get("a", "tc_1"); ok {
		t.Errorf("get a/tc_1 after %d more: got it, want the oldest forgotten", recentCallsSize)
	}
	if _, ok := r.get("a", fmt.Sprintf("tc_n%d", recentCallsSize-1)); !ok {
		t.Errorf("the newest call is forgotten")
	}
	if r.calls.len() != recentCallsSize {
		t.Errorf("got %d calls kept, want %d", r.calls.len(), recentCallsSize)
	}
}
