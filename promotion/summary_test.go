package promotion

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

func TestSummarised(t *testing.T) {
	observed := time.Date(2026, 11, 1, 9, 0, 4, 0, time.UTC)
	stale := observed.Add(time.Hour)
	structural := model.Memory{ID: "mem_1", Summary: "sheet_read {…}: rows 2", SafeSummary: "object: rows (array of 2)",
		FreshnessClass: "volatile", ObservedAt: observed, StaleAfter: &stale, RevalidateWith: []string{"sheet_read"},
		ProvenanceLocators: []string{"art_1#/rows/0", "art_1#/rows/1", "art_other#/x"}, PromotionPolicy: model.PromotionStructural}
	art := model.Artifact{ID: "art_1", PrivacyClass: "internal", Visibility: "branch", SharedWithParticipants: []string{"par_2"}}

	got := Summarised(structural, art, "openai", "gpt-4.1-mini", "  EU Q3 revenue 4.2M; US 7.9M.\n")
	want := model.NewMemory{
		DerivedFrom: []string{"art_1"}, QuotedLocators: []string{"/rows/0", "/rows/1"}, Summary: "EU Q3 revenue 4.2M; US 7.9M.",
		SafeSummary: structural.SafeSummary, ConfidenceSource: "model:openai/gpt-4.1-mini",
		Limitations:    "a model's summary: the exact values are in the artifact, by recall",
		FreshnessClass: "volatile", ObservedAt: &observed, StaleAfter: &stale, RevalidateWith: []string{"sheet_read"},
		Supersedes: []string{"mem_1"}, PrivacyClass: "internal", Visibility: "branch", SharedWithParticipants: []string{"par_2"},
		PromotionPolicy: model.PromotionSummarizer,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
}

func TestSummaryInstructionNamesTheResult(t *testing.T) {
	for _, text := range []string{SummaryInstruction("sheet_read", "art_9"), SummaryRequest("sheet_read", "art_9")} {
		if !strings.Contains(text, "sheet_read") || !strings.Contains(text, "art_9") {
			t.Errorf("got %q, want it to name the tool and the artifact", text)
		}
	}
	if !strings.Contains(SummaryInstruction("t", "a"), "exactly") {
		t.Errorf("got an instruction that does not ask for exact values")
	}
}
