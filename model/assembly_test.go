package model

import (
	"bytes"
	"testing"
	"time"
)

// The response reuses the record's JSON: it must be exactly what encoding the assembly with
// its final timings gives, whatever the prompt holds.
func TestResponseJSONIsTheAssemblyWithItsFinalTimings(t *testing.T) {
	a := Assembly{
		ID: "asm_1", ConversationID: "cnv_1",
		Messages: []ChatMessage{
			{Role: "system", Content: `Known state: "timingsMs":{"graph":1.5,"policy":0.25,"serialize":0.5,"record":0} & <b>EU</b>`},
			{Role: "user", Content: "totals by region?"},
		},
		Tokens:    TokenCounts{Assembled: 120, Baseline: 9000, Budget: 8000},
		Included:  []IncludedItem{{Ref: "mem_1", Type: "tool_memory", As: AsMemory}},
		Omitted:   map[string]int{ReasonBudget: 3},
		TimingsMs: Timings{Graph: 1.5, Policy: 0.25, Serialize: 0.5},
		CreatedAt: time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC),
	}
	record, err := EncodeJSON(a)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(record, []byte("& <b>EU</b>")) {
		t.Errorf("the record escapes HTML: %s", record)
	}
	a.Encoded = record
	a.TimingsMs.Record = 4.75
	got, ok := a.ResponseJSON()
	if !ok {
		t.Fatal("ResponseJSON found nothing to reuse")
	}
	a.Encoded = nil
	want, _ := EncodeJSON(a)
	if !bytes.Equal(got, want) {
		t.Errorf("response\n got %s\nwant %s", got, want)
	}
	if _, ok := (Assembly{}).ResponseJSON(); ok {
		t.Error("ResponseJSON of an assembly without Encoded reported ok")
	}
}
