package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

func TestSchemaMigrationsAreAppliedAndIdempotent(t *testing.T) {
	ctx := context.Background()
	if applied, err := sharedStore.Migrate(ctx); err != nil || len(applied) != 0 {
		t.Fatalf("second Migrate got (%v, %v), want nothing left to apply", applied, err)
	}
	// Re-applying a recorded migration is harmless: every statement is IF NOT EXISTS.
	if forgot, err := sharedStore.ForgetMigration(ctx, "0002_indexes"); err != nil || !forgot {
		t.Fatalf("ForgetMigration got (%v, %v), want (true, nil)", forgot, err)
	}
	if applied, err := sharedStore.Migrate(ctx); err != nil || len(applied) != 1 || applied[0] != "0002_indexes" {
		t.Fatalf("Migrate after forgetting got (%v, %v), want [0002_indexes]", applied, err)
	}
	constraints, indexes, err := sharedStore.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"conversation_id", "branch_id", "participant_id", "message_id", "model_run_id",
		"tool_call_id", "tool_artifact_id", "tool_memory_id", "user_memory_id", "skill_state_id", "checkpoint_id",
		"context_assembly_id", "policy_decision_id", "policy_version_account_id", "policy_default_account"} {
		if !contains(constraints, want) {
			t.Errorf("SHOW CONSTRAINTS lacks %s; got %v", want, constraints)
		}
	}
	for _, want := range []string{"message_branch_seq", "tool_call_branch_seq", "tool_artifact_branch_seq",
		"tool_memory_branch_seq", "conversation_account", "tool_call_retry_of", "tool_artifact_result_ref", "tool_call_run_call",
		"tool_call_arguments_ref", "model_run_lease"} {
		if !contains(indexes, want) {
			t.Errorf("SHOW INDEXES lacks an online %s; got %v", want, indexes)
		}
	}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func TestConversationLifecycle(t *testing.T) {
	h := newHarness(t)
	w := h.world()

	conv := h.must(200, "GET", "/v1/conversations/"+w.conv, nil)
	if str(conv, "branchId") != w.branch || str(conv, "title") != "world" || str(conv, "createdAt") != "2026-11-01T09:00:00Z" {
		t.Fatalf("got conversation %v, want branchId %s, title world, createdAt from at", conv, w.branch)
	}
	if str(conv, "recordedAt") == "" || str(conv, "recordedAt") == str(conv, "createdAt") {
		t.Errorf("got recordedAt %q, want the server's own stamp", str(conv, "recordedAt"))
	}
	if n := len(conv["participants"].([]any)); n != 1 {
		t.Errorf("got %d participants, want 1", n)
	}
	run := h.must(200, "GET", "/v1/runs/"+w.run, nil)
	if str(run, "status") != "running" || str(run, "provider") != "openai" || str(run, "model") != "gpt-4.1" {
		t.Errorf("got run %v, want running with the participant's provider and model", run)
	}
	ended := h.must(200, "PATCH", "/v1/runs/"+w.run, map[string]any{"status": "completed", "at": "2026-11-01T09:01:00Z"})
	if str(ended, "status") != "completed" || str(ended, "endedAt") != "2026-11-01T09:01:00Z" {
		t.Errorf("got %v, want completed at 09:01", ended)
	}
	h.expectError(h.call("PATCH", "/v1/runs/"+w.run, map[string]any{"status": "failed"}), 409, "conflict", "")

	msg := h.must(201, "POST", "/v1/branches/"+w.branch+"/messages",
		map[string]any{"role": "assistant", "content": "Q3 revenue was 4.2M", "runId": w.run})
	if str(msg, "participantId") != w.participant {
		t.Errorf("got participantId %q, want the run's participant %q", str(msg, "participantId"), w.participant)
	}
	if parents := msg["parentMessageIds"].([]any); len(parents) != 1 || parents[0] != w.message {
		t.Errorf("got parents %v, want the latest message %s", parents, w.message)
	}

	h.must(204, "DELETE", "/v1/conversations/"+w.conv, nil)
	h.expectError(h.call("GET", "/v1/conversations/"+w.conv, nil), 404, "not_found", "")
	h.expectError(h.call("DELETE", "/v1/conversations/"+w.conv, nil), 404, "not_found", "")
}

func TestForkInheritsLineageUpToTheForkPoint(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	path := "/v1/branches/" + w.branch + "/messages"
	m2 := str(h.must(201, "POST", path, map[string]any{"role": "assistant", "content": "shared answer", "participantId": w.participant}), "id")
	h.must(201, "POST", path, map[string]any{"role": "user", "content": "main only: later question"})

	fork := h.must(201, "POST", "/v1/conversations/"+w.conv+"/branches",
		map[string]any{"parentBranchId": w.branch, "forkAfterMessageId": m2, "name": "alt"})
	alt := str(fork, "id")
	if str(fork, "parentBranchId") != w.branch || str(fork, "forkAfterMessageId") != m2 {
		t.Fatalf("got fork %v, want parent %s after %s", fork, w.branch, m2)
	}
	h.must(201, "POST", "/v1/branches/"+alt+"/messages", map[string]any{"role": "user", "content": "alt only: other question"})
	// A fork of the fork, after a message alt inherited from main, still sees main's prefix.
	grand := str(h.must(201, "POST", "/v1/conversations/"+w.conv+"/branches",
		map[string]any{"parentBranchId": alt, "forkAfterMessageId": w.message, "name": "early"}), "id")

	hist := h.must(200, "GET", "/v1/branches/"+alt+"/history", nil)
	got := transcript(hist)
	want := []string{"message:find the Q3 numbers", "tool_call:sheet_read", "message:shared answer", "message:alt only: other question"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got alt history %v, want %v", got, want)
	}
	if lineage := hist["lineage"].([]any); len(lineage) != 2 || lineage[0] != alt || lineage[1] != w.branch {
		t.Errorf("got lineage %v, want [alt main]", lineage)
	}
	got = transcript(h.must(200, "GET", "/v1/branches/"+grand+"/history", nil))
	if strings.Join(got, "|") != "message:find the Q3 numbers" {
		t.Errorf("got grand-fork history %v, want only the first message", got)
	}
	// The card never carries the call's arguments.
	if raw, _ := json.Marshal(hist); bytes.Contains(raw, []byte("A1:F200")) {
		t.Errorf("history leaked tool arguments: %s", raw)
	}

	h.expectError(h.call("POST", "/v1/conversations/"+w.conv+"/branches",
		map[string]any{"parentBranchId": w.branch, "forkAfterMessageId": m2, "name": "alt"}), 409, "conflict", "name")
	altOnly := str(h.must(201, "POST", "/v1/branches/"+alt+"/messages", map[string]any{"role": "user", "content": "x"}), "id")
	h.expectError(h.call("POST", "/v1/conversations/"+w.conv+"/branches",
		map[string]any{"parentBranchId": w.branch, "forkAfterMessageId": altOnly}), 400, "invalid", "forkAfterMessageId")
	h.expectError(h.call("POST", "/v1/branches/"+w.branch+"/messages",
		map[string]any{"role": "user", "content": "x", "parentMessageIds": []string{altOnly}}), 400, "invalid", "parentMessageIds")
}

func transcript(hist map[string]any) []string {
	var out []string
	for _, v := range hist["items"].([]any) {
		it := v.(map[string]any)
		if it["type"] == "message" {
			out = append(out, "message:"+str(it, "content"))
		} else {
			out = append(out, "tool_call:"+str(it, "tool"))
		}
	}
	return out
}

func TestLargeToolResultGoesToTheBlobStore(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	rows := strings.Repeat("2026-09-30,ACME-EU,4210.55,closed\n", 9000) // ~300 KiB
	body, _ := json.Marshal(map[string]any{"status": "succeeded", "result": map[string]any{"csv": rows}, "privacyClass": "internal",
		"memories": []map[string]any{{"summary": "Q3 sheet: 9000 rows, EU closed 4210.55", "freshnessClass": "bounded"}}})
	out := h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", body)
	artifactID := str(out, "artifactId")
	if mids := out["memoryIds"].([]any); len(mids) != 1 {
		t.Fatalf("got memoryIds %v, want one", mids)
	}

	art := h.must(200, "GET", "/v1/artifacts/"+artifactID, nil)
	resultJSON, _ := json.Marshal(map[string]any{"csv": rows})
	sum := sha256.Sum256(resultJSON)
	if str(art, "resultRef") != "sha256:"+hex.EncodeToString(sum[:]) || int(art["resultBytes"].(float64)) != len(resultJSON) {
		t.Fatalf("got resultRef %v bytes %v, want sha256:%x and %d", art["resultRef"], art["resultBytes"], sum, len(resultJSON))
	}
	if str(art, "ownerParticipantId") != w.participant || str(art, "ownerRunId") != w.run || str(art, "visibility") != "participant" {
		t.Errorf("got artifact %v, want owner from the run and visibility participant", art)
	}
	raw := h.must(200, "GET", "/v1/artifacts/"+artifactID+"/raw", nil)
	var result map[string]any
	_ = json.Unmarshal(mustJSON(raw["result"]), &result)
	if result["csv"] != rows {
		t.Fatalf("raw result differs from what was recorded")
	}
	if args := raw["arguments"].(map[string]any); args["range"] != "A1:F200" {
		t.Errorf("got raw arguments %v, want the call's exact arguments", args)
	}
	call := h.must(200, "GET", "/v1/tool-calls/"+w.call, nil)
	if str(call, "status") != "succeeded" || len(call["artifactIds"].([]any)) != 1 {
		t.Errorf("got call %v, want succeeded with one artifact", call)
	}
	h.expectError(h.call("POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded", "result": "again"}), 409, "conflict", "")

	// A blob that no longer matches its hash is refused, never served.
	ref := str(art, "resultRef")
	original, err := readBlob(t, blobDir, ref)
	if err != nil {
		t.Fatalf("blob %s not in the store: %v", ref, err)
	}
	writeBlob(t, blobDir, ref, bytes.Replace(original, []byte("4210.55"), []byte("9999.99"), 1))
	h.expectError(h.call("GET", "/v1/artifacts/"+artifactID+"/raw", nil), 500, "internal", "")
	writeBlob(t, blobDir, ref, original)

	// Deleting the conversation deletes its blob.
	h.must(204, "DELETE", "/v1/conversations/"+w.conv, nil)
	if blobStored(t, blobDir, ref) {
		t.Errorf("blob %s still in the store after the conversation was deleted", ref)
	}
	h.expectError(h.call("GET", "/v1/artifacts/"+artifactID, nil), 404, "not_found", "")
}

// A result whose request ended before it was written leaves no blob behind: the blob is
// written first, and removed again although the request's context is gone.
func TestEndedRequestLeavesNoBlob(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	result, _ := json.Marshal(map[string]any{"csv": strings.Repeat("2026-10-01,ACME-US,1830.20,open\n", 9000)})
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := sharedStore.RecordToolResult(ended, h.account, model.ToolResult{ToolCallID: w.call, Status: "succeeded", Result: result})
	if err == nil {
		t.Fatal("recording a result with an ended context succeeded, want an error")
	}
	sum := sha256.Sum256(result)
	if ref := "sha256:" + hex.EncodeToString(sum[:]); blobStored(t, blobDir, ref) {
		t.Errorf("blob %s of the failed write is still in the store", ref)
	}
	call := h.must(200, "GET", "/v1/tool-calls/"+w.call, nil)
	if str(call, "status") != "pending" {
		t.Errorf("got call status %q, want pending: nothing was written", str(call, "status"))
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func TestMemoriesSupersessionConflictAndBrokenProvenance(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	art := str(h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{
		"status": "succeeded", "result": map[string]any{"rev": 4.1}, "privacyClass": "oauth_derived", "at": "2026-11-01T09:00:04Z"}), "artifactId")
	call2 := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "arguments": map[string]any{"sheet": "q3v2"}}), "id")
	second := h.must(201, "POST", "/v1/tool-calls/"+call2+"/result", map[string]any{
		"status": "succeeded", "result": map[string]any{"rev": 4.2}, "privacyClass": "internal", "visibility": "branch"})
	art2, derived2 := str(second, "artifactId"), second["memoryIds"].([]any)[0]

	v1 := h.must(201, "POST", "/v1/memories", map[string]any{
		"derivedFrom": []string{art}, "summary": "Q3 revenue 4.1M", "confidence": 0.7, "freshnessClass": "bounded",
		"staleAfter": "2026-11-08T09:00:00Z", "revalidateWith": []string{"sheet_read"}, "locators": map[string]string{art: "/rev"}})
	if str(v1, "privacyClass") != "oauth_derived" || str(v1, "visibility") != "participant" || str(v1, "ownerRunId") != w.run {
		t.Fatalf("got %v, want privacy, visibility and owner taken from the source artifact", v1)
	}
	if str(v1, "observedAt") != "2026-11-01T09:00:04Z" {
		t.Errorf("got observedAt %q, want the source artifact's time", str(v1, "observedAt"))
	}
	v2 := h.must(201, "POST", "/v1/memories", map[string]any{
		"derivedFrom": []string{art, art2}, "summary": "Q3 revenue 4.2M (restated)", "supersedes": []string{str(v1, "id")}})
	if str(v2, "privacyClass") != "oauth_derived" {
		t.Errorf("got privacy %q, want the most restrictive source class oauth_derived", str(v2, "privacyClass"))
	}
	other := h.must(201, "POST", "/v1/memories", map[string]any{
		"derivedFrom": []string{art2}, "summary": "Finance says Q3 was 4.0M", "conflictsWith": []string{str(v2, "id")}})

	older := h.must(200, "GET", "/v1/memories/"+str(v1, "id"), nil)
	if sb := older["supersededBy"].([]any); len(sb) != 1 || sb[0] != str(v2, "id") {
		t.Errorf("got supersededBy %v, want [%s]", sb, str(v2, "id"))
	}
	newer := h.must(200, "GET", "/v1/memories/"+str(v2, "id"), nil)
	// v2 replaces v1, which it names, and the memory ctxgraph derived from art2 (the one
	// derived from art was replaced by v1 already).
	if s := newer["supersedes"].([]any); len(s) != 2 || !slices.Contains(s, any(str(v1, "id"))) || !slices.Contains(s, derived2) {
		t.Errorf("got supersedes %v, want %s and %s", s, str(v1, "id"), derived2)
	}
	if c := newer["conflictsWith"].([]any); len(c) != 1 || c[0] != str(other, "id") {
		t.Errorf("got conflictsWith %v, want [%s] (read from the other side of the one edge)", c, str(other, "id"))
	}

	h.must(204, "DELETE", "/v1/artifacts/"+art, nil)
	h.expectError(h.call("GET", "/v1/artifacts/"+art+"/raw", nil), 404, "not_found", "")
	broken := h.must(200, "GET", "/v1/memories/"+str(v1, "id"), nil)
	if broken["provenanceBroken"] != true {
		t.Errorf("got provenanceBroken %v after its artifact was deleted, want true", broken["provenanceBroken"])
	}
	if df := broken["derivedFrom"].([]any); len(df) != 1 || df[0] != art {
		t.Errorf("got derivedFrom %v, want the original id kept (never a substitute)", df)
	}
	intact := h.must(200, "GET", "/v1/memories/"+str(other, "id"), nil)
	if intact["provenanceBroken"] != false {
		t.Errorf("a memory whose artifact is intact is marked broken")
	}

	h.expectError(h.call("POST", "/v1/memories", map[string]any{"summary": "x"}), 400, "invalid", "derivedFrom")
	h.expectError(h.call("POST", "/v1/memories", map[string]any{"derivedFrom": []string{art2}, "summary": "x", "confidence": 1.5}), 400, "invalid", "confidence")
	h.expectError(h.call("POST", "/v1/memories", map[string]any{"derivedFrom": []string{"art_nope"}, "summary": "x"}), 404, "not_found", "derivedFrom")
}

func TestRetriesSkillsCheckpointsAndPromotion(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	h.must(201, "POST", "/v1/runs/"+w.run+"/skills", map[string]any{"loadedSkills": []string{"xlsx"}, "activeProfiles": []string{"finance"}, "directTools": []string{"sheet_read"}})
	failed := h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{
		"status": "failed", "error": map[string]any{"code": "ETIMEDOUT", "message": "sheet API timed out"}, "retryable": true})
	art := h.must(200, "GET", "/v1/artifacts/"+str(failed, "artifactId"), nil)
	if skills := art["activeSkills"].([]any); len(skills) != 1 || skills[0] != "xlsx" {
		t.Errorf("got activeSkills %v, want the run's loaded skills", skills)
	}
	if e := art["error"].(map[string]any); e["code"] != "ETIMEDOUT" {
		t.Errorf("got error %v, want the exact code", e)
	}
	retry := h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "arguments": map[string]any{"sheet": "q3"}, "retryOf": w.call})
	if str(retry, "retryOf") != w.call {
		t.Errorf("got retryOf %q, want %q", str(retry, "retryOf"), w.call)
	}
	h.expectError(h.call("POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "callId": "call_1"}), 409, "conflict", "callId")
	h.expectError(h.call("POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "failed"}), 400, "invalid", "error")

	cp := h.must(201, "POST", "/v1/runs/"+w.run+"/checkpoints", map[string]any{"state": map[string]any{"step": 3, "pending": []string{"export"}}})
	if str(cp, "id") == "" || str(cp, "runId") != w.run {
		t.Errorf("got checkpoint %v", cp)
	}
	h.expectError(h.call("POST", "/v1/runs/"+w.run+"/checkpoints", map[string]any{}), 400, "invalid", "state")
	h.expectError(h.call("POST", "/v1/runs/"+w.run+"/checkpoints", map[string]any{"state": map[string]any{}, "assemblyId": "asm_nope"}), 404, "not_found", "assemblyId")

	// A subagent child run: its work is private to it until promoted to the parent.
	sub := str(h.must(201, "POST", "/v1/conversations/"+w.conv+"/participants", map[string]any{"kind": "subagent", "name": "researcher", "provider": "anthropic", "model": "claude"}), "id")
	child := str(h.must(201, "POST", "/v1/branches/"+w.branch+"/runs", map[string]any{"participantId": sub, "runtimeKind": "subagent", "parentRunId": w.run}), "id")
	cc := str(h.must(201, "POST", "/v1/runs/"+child+"/tool-calls", map[string]any{"tool": "web_search", "arguments": map[string]any{"q": "q3"}}), "id")
	res := h.must(201, "POST", "/v1/tool-calls/"+cc+"/result", map[string]any{"status": "succeeded", "result": "three hits",
		"memories": []map[string]any{{"summary": "generated file file_8f3a2c"}}})
	mem := res["memoryIds"].([]any)[0].(string)
	scratch := str(h.must(201, "POST", "/v1/runs/"+child+"/tool-calls", map[string]any{"tool": "scratch"}), "id")
	h.must(201, "POST", "/v1/tool-calls/"+scratch+"/result", map[string]any{"status": "succeeded", "result": "SCRATCH"})

	h.expectError(h.call("POST", "/v1/runs/"+w.run+"/promote", map[string]any{"report": "x"}), 400, "invalid", "runId")
	h.expectError(h.call("POST", "/v1/runs/"+child+"/promote", map[string]any{"toolCallIds": []string{w.call}}), 400, "invalid", "toolCallIds")
	p := h.must(201, "POST", "/v1/runs/"+child+"/promote", map[string]any{"toolCallIds": []string{cc}, "memoryIds": []string{mem}, "report": "Found 3 sources; wrote file_8f3a2c."})
	if str(p, "reportId") == "" || str(p, "parentRunId") != w.run {
		t.Fatalf("got promotion %v", p)
	}
	report := h.must(200, "GET", "/v1/memories/"+str(p, "reportId"), nil)
	if str(report, "kind") != "promoted_report" || str(report, "ownerRunId") != w.run || str(report, "ownerParticipantId") != w.participant {
		t.Errorf("got report %v, want a promoted_report owned by the parent run", report)
	}
	promoted := h.must(200, "GET", "/v1/memories/"+mem, nil)
	if promoted["promoted"] != true || str(promoted, "promotedToRunId") != w.run {
		t.Errorf("got %v, want promoted to the parent run", promoted)
	}
	scratchArt := h.must(200, "GET", "/v1/tool-calls/"+scratch, nil)["artifactIds"].([]any)[0].(string)
	if a := h.must(200, "GET", "/v1/artifacts/"+scratchArt, nil); a["promoted"] != false {
		t.Errorf("an artifact that was not promoted is marked promoted")
	}
}

func TestOpenAPIIsServed(t *testing.T) {
	h := newHarness(t)
	r := h.callAs("", "GET", "/openapi.yaml", nil)
	if r.status != 200 || !bytes.HasPrefix(r.body, []byte("openapi: 3.1")) {
		t.Fatalf("got %d %.40q, want 200 and the OpenAPI 3.1 document", r.status, r.body)
	}
}

// TestConversationIsDeletedInBatches deletes a conversation whose nodes and relationships far
// exceed the batch size: many transactions, the assemblies (which hold most relationships)
// first, the conversation node last, and nothing of it readable afterwards.
func TestConversationIsDeletedInBatches(t *testing.T) {
	store := openStore(newBlobLocation(t))
	store.DeleteBatch = 7
	h := newHarnessWith(t, store, "")
	w := h.world()
	art := str(h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded",
		"result": map[string]any{"rows": 200}, "memories": []map[string]any{{"summary": "Q3 sheet has 200 rows"}}}), "artifactId")
	var assemblies []string
	for i := 0; i < 12; i++ {
		h.must(201, "POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": fmt.Sprintf("question %d", i)})
		assemblies = append(assemblies, str(h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "runId": w.run}), "id"))
	}
	// The first attempt fails after one batch (as when Neo4j goes away mid-deletion): the
	// conversation already reads as deleted, and deleting again finishes the job.
	batches := 0
	store.AfterStatement = func(name string) error {
		if name == "DeleteConversationBatch" {
			if batches++; batches == 2 {
				return errors.New("injected failure in the second batch")
			}
		}
		return nil
	}
	if r := h.call("DELETE", "/v1/conversations/"+w.conv, nil); r.status < 500 {
		t.Fatalf("DELETE with a failing batch: got %d %s, want a server error", r.status, r.body)
	}
	h.expectError(h.call("GET", "/v1/conversations/"+w.conv, nil), 404, "not_found", "")
	store.AfterStatement = nil
	h.must(204, "DELETE", "/v1/conversations/"+w.conv, nil)
	if batches < 2 {
		t.Fatalf("only %d batches ran; the test needs more nodes than the batch size", batches)
	}
	h.expectError(h.call("GET", "/v1/conversations/"+w.conv, nil), 404, "not_found", "")
	h.expectError(h.call("GET", "/v1/artifacts/"+art, nil), 404, "not_found", "")
	h.expectError(h.call("GET", "/v1/tool-calls/"+w.call, nil), 404, "not_found", "")
	for _, id := range assemblies {
		h.expectError(h.call("GET", "/v1/assemblies/"+id, nil), 404, "not_found", "")
	}
	h.expectError(h.call("POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "late"}), 404, "not_found", "")
	h.expectError(h.call("DELETE", "/v1/conversations/"+w.conv, nil), 404, "not_found", "")
}

// TestConversationTooLargeForATransactionIsDeleted deletes a conversation whose first batch
// outgrows the transaction memory Neo4j allows (dbms.memory.transaction.total.max, 512 MiB
// on the project's local Neo4j), as a long conversation's assemblies do: each holds its
// serialised request and ~200 INCLUDED edges. They are written here straight into the graph,
// in the shape RecordAssemblies gives them, because writing 1,000 through the API takes
// minutes. The refused batch is rolled back and taken again at half the size until it
// fits, and the deletion completes.
func TestConversationTooLargeForATransactionIsDeleted(t *testing.T) {
	limit := cypherQuery(t, "SHOW SETTINGS YIELD name, value WHERE name = 'dbms.memory.transaction.total.max' RETURN value", nil)[0].Values[0].(string)
	if limit != "512.00MiB" {
		t.Skipf("the test is sized for 512 MiB of transaction memory, and this Neo4j allows %s", limit)
	}
	store := openStore(newBlobLocation(t))
	store.DeleteBatch = 1000
	h := newHarnessWith(t, store, "")
	w := h.world()
	for i := 0; i < 8; i++ {
		h.must(201, "POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": fmt.Sprintf("question %d", i)})
	}
	for from := 0; from < 1000; from += 100 {
		cypherQuery(t, `MATCH (c:Conversation {id: $conv})
			MATCH (m:Message {conversationId: c.id})
			WITH c, collect(m) AS messages
			UNWIND range($from, $from + 99) AS i
			CREATE (a:ContextAssembly {id: 'asm_heavy_' + c.id + '_' + i, accountId: c.accountId, conversationId: c.id,
			                           record: $record})
			WITH a, messages
			UNWIND range(0, 207) AS k
			WITH a, messages[k % size(messages)] AS m, k
			CREATE (a)-[:INCLUDED {as: 'message', position: k}]->(m)`,
			map[string]any{"conv": w.conv, "from": from, "record": strings.Repeat("0123456789", 8000)})
	}
	nodes := cypherCount(t, "MATCH (n {conversationId: $id}) RETURN count(n)", map[string]any{"id": w.conv})
	batches := 0
	store.AfterStatement = func(name string) error {
		if name == "DeleteConversationBatch" {
			batches++
		}
		return nil
	}
	h.must(204, "DELETE", "/v1/conversations/"+w.conv, nil)
	if n := cypherCount(t, "MATCH (n {conversationId: $id}) RETURN count(n)", map[string]any{"id": w.conv}); n != 0 {
		t.Errorf("%d of %d nodes of the conversation are left", n, nodes)
	}
	if unrefused := int(nodes)/store.DeleteBatch + 2; batches <= unrefused {
		t.Errorf("%d nodes went in %d batches of at most %d: none was refused for memory, so the test proves nothing", nodes, batches, store.DeleteBatch)
	}
	h.expectError(h.call("GET", "/v1/conversations/"+w.conv, nil), 404, "not_found", "")
}
