package api

import (
	"bytes"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// The response reuses the record's JSON: it must be exactly what encoding the assembly with
// its final timings gives, whatever the prompt holds.
func TestAssemblyJSONIsTheAssemblyWithItsFinalTimings(t *testing.T) {
	a := model.Assembly{
		ID: "asm_1", ConversationID: "cnv_1",
		Messages: []model.ChatMessage{
			{Role: "system", Content: `Known state: "timingsMs":{"graph":1.5,"policy":0.25,"serialize":0.5,"record":0} & <b>EU</b>`},
			{Role: "user", Content: "totals by region?"},
		},
		Tokens:    model.TokenCounts{Assembled: 120, Baseline: 9000, Budget: 8000},
		Included:  []model.IncludedItem{{Ref: "mem_1", Type: "tool_memory", As: model.AsMemory}},
		Omitted:   map[string]int{model.ReasonBudget: 3},
		TimingsMs: model.Timings{Graph: 1.5, Policy: 0.25, Serialize: 0.5},
		CreatedAt: time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC),
	}
	record, err := model.EncodeJSON(a)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(record, []byte("& <b>EU</b>")) {
		t.Errorf("the record escapes HTML: %s", record)
	}
	a.TimingsMs.Record = 4.75
	got, ok := assemblyJSON(a, record)
	if !ok {
		t.Fatal("assemblyJSON found nothing to reuse")
	}
	want, _ := model.EncodeJSON(a)
	if !bytes.Equal(got, want) {
		t.Errorf("response\n got %s\nwant %s", got, want)
	}
	if _, ok := assemblyJSON(a, nil); ok {
		t.Error("assemblyJSON without a record reported ok")
	}
}
