package generation

import (
	"context"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// After starts nothing, and reads no artifact, unless a successful result recorded without
// client memories got its structural memory under a policy that names a summariser. The
// Graph is nil: a summarisation that started would panic reading the artifact.
func TestSummariserAfterStartsOnlyOnADerivedMemory(t *testing.T) {
	plain, err := policy.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	succeeded := model.ToolResult{Status: string(model.ToolSucceeded)}
	derived := model.ToolResultRecorded{ArtifactID: "art_1", MemoryIDs: []string{"mem_1"}}
	cases := []struct {
		name string
		in   model.ToolResult
		out  model.ToolResultRecorded
		// asked says whether the policy is read at all.
		asked bool
	}{
		{"a failed call", model.ToolResult{Status: string(model.ToolFailed)}, model.ToolResultRecorded{ArtifactID: "art_1", MemoryIDs: []string{}}, false},
		{"a pending call", model.ToolResult{Status: string(model.ToolPending)}, model.ToolResultRecorded{ArtifactID: "art_1", MemoryIDs: []string{}}, false},
		{"the client wrote its memories", model.ToolResult{Status: string(model.ToolSucceeded), Memories: []model.NewMemory{{Summary: "x"}}}, derived, false},
		{"nothing was derived", succeeded, model.ToolResultRecorded{ArtifactID: "art_1", MemoryIDs: []string{}}, false},
		{"the policy names no summariser", succeeded, derived, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			s := &Summariser{Policy: func(context.Context, string) (policy.Version, error) { asked = true; return plain, nil }}
			s.After(context.Background(), "acct", tc.in, tc.out)
			if err := s.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			if asked != tc.asked {
				t.Errorf("got the policy read %v, want %v", asked, tc.asked)
			}
		})
	}
}
