package integration

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// rowsResult is a result of n rows, each with an id, a name and a price.
func rowsResult(n int) map[string]any {
	rows := make([]any, n)
	for i := range rows {
		rows[i] = map[string]any{"id": fmt.Sprintf("SKU-%04d", i), "name": fmt.Sprintf("item %d", i), "price": 10 + i}
	}
	return map[string]any{"sheet": "q3", "count": n, "rows": rows}
}

// TestResultWithoutMemoriesDerivesOne posts tool results as a plain client does, without
// memories: the runtime derives one from each successful result in the same write, quoting
// its values with locators, with the artifact's privacy and visibility, and a memory the
// client writes later from the same artifact replaces it.
func TestResultWithoutMemoriesDerivesOne(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	small := h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded",
		"privacyClass": "internal", "result": map[string]any{"booking_id": "BK-48213", "status": "confirmed"}})
	ids, _ := small["memoryIds"].([]any)
	if len(ids) != 1 {
		t.Fatalf("small result: got memoryIds %v, want one derived memory", small["memoryIds"])
	}
	art := str(small, "artifactId")
	mem := h.must(200, "GET", "/v1/memories/"+ids[0].(string), nil)
	for field, want := range map[string]any{"promotionPolicy": "promotion.structural", "confidenceSource": "extractor:structural/1",
		"privacyClass": "internal", "visibility": "participant", "ownerParticipantId": w.participant, "quotesWhole": true, "confidence": 1.0} {
		if got := mem[field]; got != want {
			t.Errorf("small result's memory %s: got %v, want %v", field, got, want)
		}
	}
	if s := str(mem, "summary"); !strings.Contains(s, `"booking_id":"BK-48213"`) || !strings.HasPrefix(s, "sheet_read ") {
		t.Errorf("small result's memory summary: got %q, want the call and the body quoted exactly", s)
	}
	if locs, _ := mem["provenanceLocators"].([]any); len(locs) != 1 || locs[0] != art+"#" {
		t.Errorf("small result's locators: got %v, want [%s#] (the whole document)", mem["provenanceLocators"], art)
	}

	// A large result is digested: its shape, identifiers and first rows, each quoted value
	// located by a JSON Pointer.
	call := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read",
		"arguments": map[string]any{"sheet": "q4"}, "callId": "call_2"}), "id")
	large := h.must(201, "POST", "/v1/tool-calls/"+call+"/result", map[string]any{"status": "succeeded", "result": rowsResult(200)})
	largeArt := str(large, "artifactId")
	digest := h.must(200, "GET", "/v1/memories/"+large["memoryIds"].([]any)[0].(string), nil)
	if s := str(digest, "summary"); !strings.Contains(s, "200 rows") || !strings.Contains(s, `"SKU-0000"`) || strings.Contains(s, "SKU-0199") {
		t.Errorf("large result's digest: got %q, want its shape and first rows, not its last", s)
	}
	if digest["quotesWhole"] == true {
		t.Errorf("large result's digest: got quotesWhole, want a digest")
	}
	var located bool
	for _, l := range digest["provenanceLocators"].([]any) {
		located = located || l == largeArt+"#/rows/0/id" || l == largeArt+"#/rows/0"
	}
	if !located {
		t.Errorf("large result's locators: got %v, want the first row's pointer", digest["provenanceLocators"])
	}

	// A result with the client's own memory derives nothing beside it.
	ownCall := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "arguments": map[string]any{}, "callId": "call_own"}), "id")
	withOwn := h.must(201, "POST", "/v1/tool-calls/"+ownCall+"/result", map[string]any{"status": "succeeded", "result": rowsResult(3),
		"memories": []map[string]any{{"summary": "three SKUs"}}})
	if ids, _ := withOwn["memoryIds"].([]any); len(ids) != 1 {
		t.Errorf("result with the client's memory: got memoryIds %v, want that one alone", withOwn["memoryIds"])
	}
	if n := cypherCount(t, `MATCH (m:ToolMemory {conversationId: $conv}) WHERE m.id IS NULL OR m.summary IS NULL RETURN count(m)`,
		map[string]any{"conv": w.conv}); n != 0 {
		t.Errorf("got %d memories without an id or summary, want none", n)
	}

	// A failed call stays recovery state: nothing is derived.
	failedCall := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "arguments": map[string]any{}, "callId": "call_3"}), "id")
	failed := h.must(201, "POST", "/v1/tool-calls/"+failedCall+"/result", map[string]any{"status": "failed", "error": map[string]any{"code": "E1", "message": "boom"}})
	if ids, _ := failed["memoryIds"].([]any); len(ids) != 0 {
		t.Errorf("failed result: got memoryIds %v, want none", ids)
	}

	// A later turn sees the digest in place of the raw rows, and explain names its locators.
	h.must(200, "PATCH", "/v1/runs/"+w.run, map[string]any{"status": "completed"})
	msg := str(h.must(201, "POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "and the first SKU?"}), "id")
	run2 := str(h.must(201, "POST", "/v1/branches/"+w.branch+"/runs", map[string]any{"participantId": w.participant, "runtimeKind": "chat", "triggerMessageId": msg}), "id")
	a := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "runId": run2})
	got := includedAs(a)
	if got[str(digest, "id")] != "memory" {
		t.Fatalf("later turn: got included %v, want the digest %s as memory", got, str(digest, "id"))
	}
	if _, ok := got[largeArt]; ok {
		t.Errorf("later turn: got the raw rows %s included, want them left to their memory", largeArt)
	}
	ex := h.must(200, "GET", "/v1/assemblies/"+str(a, "id")+"/explain?ref="+str(digest, "id"), nil)
	path, _ := ex["provenancePath"].([]any)
	if len(path) == 0 {
		t.Fatalf("explain: got no provenance path: %v", ex)
	}
	if locs, _ := path[0].(map[string]any)["locators"].([]any); len(locs) == 0 {
		t.Errorf("explain: got provenance step %v, want the memory's locators", path[0])
	}

	// The client's own memory of the same artifact replaces the derived one.
	own := str(h.must(201, "POST", "/v1/memories", map[string]any{"derivedFrom": []string{largeArt}, "summary": "Q4 sheet: 200 SKUs, cheapest SKU-0000 at 10"}), "id")
	replaced := h.must(200, "GET", "/v1/memories/"+str(digest, "id"), nil)
	if by, _ := replaced["supersededBy"].([]any); len(by) != 1 || by[0] != own {
		t.Errorf("after the client's memory: got supersededBy %v, want [%s]", replaced["supersededBy"], own)
	}
	a = h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "runId": run2, "trace": true})
	if got := includedAs(a); got[own] != "memory" || got[str(digest, "id")] != "" {
		t.Errorf("after the client's memory: got included %v, want %s as memory and not the derived %s", got, own, str(digest, "id"))
	}
}

// TestDerivedMemoryIsWrittenWithItsResult fails the transaction that writes a result (a keyed
// request's, which runs its statements one by one): neither the artifact nor its derived
// memory is written, and the retry writes both. Results of concurrent requests are batched
// with their derived memories alike (TestConcurrentToolWrites).
func TestDerivedMemoryIsWrittenWithItsResult(t *testing.T) {
	store := openStore(t.TempDir())
	h := newHarnessWith(t, store, "")
	w := h.world()
	store.AfterStatement = func(name string) error {
		if name == "RecordToolResult" {
			return errors.New("injected failure after the result's statement")
		}
		return nil
	}
	body := map[string]any{"status": "succeeded", "result": map[string]any{"id": "X-1"}}
	if r := h.call("POST", "/v1/tool-calls/"+w.call+"/result", body, "Idempotency-Key", "derive-1"); r.status < 500 {
		t.Fatalf("result with a failing write: got %d %s, want a server error", r.status, r.body)
	}
	if call := h.must(200, "GET", "/v1/tool-calls/"+w.call, nil); str(call, "status") != "pending" {
		t.Fatalf("after the failed write: got call status %q, want pending (nothing written)", str(call, "status"))
	}
	if n := cypherCount(t, `MATCH (m:ToolMemory {conversationId: $conv}) RETURN count(m)`, map[string]any{"conv": w.conv}); n != 0 {
		t.Fatalf("after the failed write: got %d memories, want none", n)
	}
	store.AfterStatement = nil
	out := h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", body, "Idempotency-Key", "derive-2")
	if ids, _ := out["memoryIds"].([]any); len(ids) != 1 {
		t.Errorf("retry: got memoryIds %v, want one", out["memoryIds"])
	}
}
