package generation

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

// TestReofferReusesTheRunsToolsUnlessNamed checks which tools and tool choice a continue
// or a resume offers, and what the run then keeps (DESIGN §8).
func TestReofferReusesTheRunsToolsUnlessNamed(t *testing.T) {
	sheet, quote := model.ToolSpec{Name: "sheet_read"}, model.ToolSpec{Name: "quote_get", FreshnessClass: "volatile"}
	run := model.Run{Tools: []model.ToolSpec{sheet}, ToolChoice: "sheet_read"}
	for _, tc := range []struct {
		name       string
		request    model.CallOptions
		wantTools  []model.ToolSpec
		wantChoice string
		wantKept   *model.ToolOffer
		wantErr    string
	}{
		{"nothing named reuses the run's", model.CallOptions{}, run.Tools, "sheet_read", nil, ""},
		{"tools named replace them, without the run's choice",
			model.CallOptions{Tools: []model.ToolSpec{quote}, ToolsNamed: true}, []model.ToolSpec{quote}, "",
			&model.ToolOffer{Tools: []model.ToolSpec{quote}}, ""},
		{"an empty list offers none", model.CallOptions{Tools: []model.ToolSpec{}, ToolsNamed: true}, []model.ToolSpec{}, "",
			&model.ToolOffer{Tools: []model.ToolSpec{}}, ""},
		{"a choice alone keeps the run's tools", model.CallOptions{ToolChoice: "none"}, run.Tools, "none",
			&model.ToolOffer{Tools: run.Tools, ToolChoice: "none"}, ""},
		{"a choice naming a tool the run is not offered", model.CallOptions{ToolChoice: "quote_get"}, nil, "", nil, "toolChoice"},
		{"the recall tool is never kept",
			model.CallOptions{Tools: []model.ToolSpec{quote, {Name: model.RecallTool}}, ToolsNamed: true},
			[]model.ToolSpec{quote, {Name: model.RecallTool}}, "", &model.ToolOffer{Tools: []model.ToolSpec{quote}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, kept, err := reoffer(run, tc.request)
			if tc.wantErr != "" {
				var me *model.Error
				if !errors.As(err, &me) || me.Kind != model.KindInvalid || me.Field != tc.wantErr {
					t.Fatalf("got error %v, want invalid %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if !reflect.DeepEqual(got.Tools, tc.wantTools) || got.ToolChoice != tc.wantChoice {
				t.Errorf("got tools %v and choice %q, want %v and %q", got.Tools, got.ToolChoice, tc.wantTools, tc.wantChoice)
			}
			if !reflect.DeepEqual(kept, tc.wantKept) {
				t.Errorf("got the run keeping %+v, want %+v", kept, tc.wantKept)
			}
		})
	}
}
