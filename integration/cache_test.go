package integration

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/ctxgraph/ctxgraph/seed"
)

// assemblingHandler serves a seeded conversation and, after every message an assistant
// posts, assembles the context of that branch for that participant: the assembler's cached
// copy of the conversation is brought up to date between writes of every kind (messages,
// runs, calls, results, memories that supersede or contradict others, run ends).
type assemblingHandler struct {
	h          *harness
	assemblies []string
}

var branchMessages = regexp.MustCompile(`^/v1/branches/([^/]+)/messages$`)

func (a *assemblingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body bytes.Buffer
	if _, err := body.ReadFrom(r.Body); err != nil {
		a.h.t.Fatal(err)
	}
	r.Body.Close()
	rec := httptest.NewRecorder()
	inner := httptest.NewRequest(r.Method, r.URL.String(), bytes.NewReader(body.Bytes())).WithContext(r.Context())
	inner.Header = r.Header.Clone()
	a.h.srv.ServeHTTP(rec, inner)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
	m := branchMessages.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || m == nil || rec.Code != http.StatusCreated {
		return
	}
	var msg struct {
		ParticipantID string `json:"participantId"`
		RunID         string `json:"runId"`
	}
	if err := json.Unmarshal(body.Bytes(), &msg); err != nil || msg.ParticipantID == "" {
		return
	}
	req := map[string]any{"branchId": m[1], "participantId": msg.ParticipantID, "tokenBudget": 2000, "trace": true}
	if msg.RunID != "" {
		req["runId"] = msg.RunID
	}
	out := a.h.must(http.StatusCreated, http.MethodPost, "/v1/assemblies", req)
	a.assemblies = append(a.assemblies, str(out, "id"))
}

// TestCachedAssembliesReplayFresh interleaves writes and assemblies on a generated
// conversation (4 branches, 4 participants) and replays every assembly: a replay reads the
// graph afresh, so each "identical" shows that the copy brought up to date revision by
// revision selected exactly what a full read selects. A deletion (which the copy cannot
// follow by stamping) then forces a reload.
func TestCachedAssembliesReplayFresh(t *testing.T) {
	h := newHarness(t)
	ah := &assemblingHandler{h: h}
	stats := sharedStore.RecordCacheStats()
	sum, err := seed.Generate(t.Context(), seed.Client{Handler: ah, Key: h.key},
		seed.Config{Rounds: 40, Branches: 4, Participants: 4, Seed: 7})
	if err != nil {
		t.Fatalf("seeding: %v", err)
	}
	if len(ah.assemblies) < 20 {
		t.Fatalf("only %d assemblies were made while seeding", len(ah.assemblies))
	}
	replayAll := func(ids []string) {
		t.Helper()
		for _, id := range ids {
			rep := h.must(http.StatusOK, http.MethodPost, "/v1/assemblies/"+id+"/replay", nil)
			if rep["identical"] != true {
				t.Errorf("assembly %s: cached and fresh reads differ: %v", id, rep["differences"])
			}
		}
	}
	now := sharedStore.RecordCacheStats()
	full, delta := now.FullReads-stats.FullReads, now.DeltaReads-stats.DeltaReads
	t.Logf("%d assemblies while seeding: %d full reads, %d delta reads", len(ah.assemblies), full, delta)
	if full != 1 || delta != int64(len(ah.assemblies)-1) {
		t.Errorf("want 1 full read of the conversation and %d delta reads, got %d and %d", len(ah.assemblies)-1, full, delta)
	}
	replayAll(ah.assemblies)

	// Delete an artifact of the deepest branch's lineage that a memory derives from, and
	// assemble again: the memory must now be presented with broken provenance.
	deep := sum.Deepest()
	before := h.must(http.StatusCreated, http.MethodPost, "/v1/assemblies", map[string]any{
		"branchId": deep.ID, "participantId": sum.ParticipantIDs[0], "tokenBudget": 100000, "trace": true})
	var victim, memory string
	for _, inc := range before["included"].([]any) {
		item := inc.(map[string]any)
		if item["type"] != "memory" || item["as"] != "memory" {
			continue
		}
		mem := h.must(http.StatusOK, http.MethodGet, "/v1/memories/"+str(item, "ref"), nil)
		if srcs, _ := mem["derivedFrom"].([]any); len(srcs) == 1 {
			victim, memory = srcs[0].(string), str(item, "ref")
			break
		}
	}
	if victim == "" {
		t.Fatalf("no memory with one source artifact among %v", before["included"])
	}
	h.must(http.StatusNoContent, http.MethodDelete, "/v1/artifacts/"+victim, nil)
	after := h.must(http.StatusCreated, http.MethodPost, "/v1/assemblies", map[string]any{
		"branchId": deep.ID, "participantId": sum.ParticipantIDs[0], "tokenBudget": 100000, "trace": true})
	found := false
	for _, inc := range after["included"].([]any) {
		item := inc.(map[string]any)
		if item["ref"] == memory {
			found = true
			if item["as"] != "stale_marker" {
				t.Errorf("memory %s of deleted artifact %s included as %v, want stale_marker", memory, victim, item["as"])
			}
		}
	}
	if !found {
		t.Errorf("memory %s of deleted artifact %s is no longer included: %v", memory, victim, after["included"])
	}
	// (The assembly before the deletion no longer replays identically: a deletion rewrites
	// history, which is its purpose.)
	replayAll([]string{str(after, "id")})
}
