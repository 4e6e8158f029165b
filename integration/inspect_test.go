package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// diffRecords maps each record of a diff to its change and the other version's form (or
// reason, when it omits the record).
func diffRecords(d map[string]any) map[string][2]string {
	out := map[string][2]string{}
	for _, v := range d["records"].([]any) {
		r := v.(map[string]any)
		other := r["other"].(map[string]any)
		form := str(other, "as")
		if str(other, "outcome") == "omitted" {
			form = str(other, "reason")
		}
		out[str(r, "ref")] = [2]string{str(r, "change"), form}
	}
	return out
}

// POST /v1/assemblies/{id}/diff computes a recorded assembly's snapshot under another
// version, against the real graph: its own version changes nothing; strict-freshness turns
// the stale marker of a memory past its TTL into a stale omission; a version that withholds
// internal data from the provider turns a picker's raw handle into a reference. Bad input
// answers 400 naming the field (another account's version is as unknown as a missing one),
// another account's assembly 404, and a diff writes nothing.
func TestAssemblyDiffUnderAnotherVersion(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	art := str(h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded",
		"result": map[string]any{"eu": 3460000}, "privacyClass": "public", "at": "2026-11-01T09:00:04Z"}), "artifactId")
	mem := str(h.must(201, "POST", "/v1/memories", map[string]any{"derivedFrom": []string{art}, "summary": "EU Q3 revenue: 3.46M",
		"freshnessClass": "bounded", "observedAt": "2026-11-01T09:00:04Z", "revalidateWith": []string{"sheet_read"}}), "id")
	pick := str(h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "pick_document",
		"arguments": map[string]any{"folder": "finance"}, "at": "2026-11-01T09:00:05Z"}), "id")
	handle := str(h.must(201, "POST", "/v1/tool-calls/"+pick+"/result", map[string]any{"status": "deferred",
		"result": map[string]any{"session": "pick_123"}, "privacyClass": "internal", "at": "2026-11-01T09:00:06Z"}), "artifactId")
	withheld := str(h.must(201, "POST", "/v1/policies", map[string]any{"name": "no-internal", "basedOn": "default",
		"providerClasses": map[string]any{"openai": []string{"public"}}}), "id")
	// Nineteen days on, the bounded memory (7 days) is stale.
	a := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "now": "2026-11-20T00:00:00Z"})
	id := str(a, "id")
	if got := includedAs(a); got[mem] != "stale_marker" || got[handle] != "raw" {
		t.Fatalf("the recorded assembly included %v, want %s as a stale marker and %s raw", got, mem, handle)
	}

	nodes := func() int64 {
		return cypherCount(t, `MATCH (n {accountId: $a}) RETURN count(n)`, map[string]any{"a": h.account})
	}
	before := nodes()
	for _, tc := range []struct {
		version   string
		identical bool
		want      map[string][2]string
	}{
		{str(a, "policyVersion"), true, map[string][2]string{mem: {"unchanged", "stale_marker"}, handle: {"unchanged", "raw"}}},
		{"strict-freshness", false, map[string][2]string{mem: {"only_recorded", "stale"}, handle: {"unchanged", "raw"}}},
		{withheld, false, map[string][2]string{mem: {"unchanged", "stale_marker"}, handle: {"changed", "reference"}}},
	} {
		d := h.must(200, "POST", "/v1/assemblies/"+id+"/diff", map[string]any{"policyVersion": tc.version})
		if d["identical"] != tc.identical || str(d, "assemblyId") != id || str(d, "now") != "2026-11-20T00:00:00Z" {
			t.Errorf("%s: identical %v, assembly %q, now %q; want %v, %s, the recorded now", tc.version, d["identical"], str(d, "assemblyId"), str(d, "now"), tc.identical, id)
		}
		got := diffRecords(d)
		for ref, want := range tc.want {
			if got[ref] != want {
				t.Errorf("%s: %s is %v, want %v", tc.version, ref, got[ref], want)
			}
		}
		changes := d["changes"].(map[string]any)
		recorded, other := d["recorded"].(map[string]any), d["other"].(map[string]any)
		if tc.identical && (changes["unchanged"] != float64(len(got)) || num(recorded["tokens"].(map[string]any), "assembled") != num(other["tokens"].(map[string]any), "assembled")) {
			t.Errorf("%s: changes %v, tokens %v and %v; want every record unchanged, the same tokens", tc.version, changes, recorded["tokens"], other["tokens"])
		}
		if str(recorded, "policyVersion") != str(a, "policyVersion") || !strings.Contains(str(other, "policyVersion"), "@") {
			t.Errorf("%s: versions %q and %q", tc.version, str(recorded, "policyVersion"), str(other, "policyVersion"))
		}
	}

	// Bad input names the field; the other account sees neither the assembly nor, by name,
	// the account's own version.
	h.expectError(h.call("POST", "/v1/assemblies/"+id+"/diff", map[string]any{}), 400, "invalid", "policyVersion")
	h.expectError(h.call("POST", "/v1/assemblies/"+id+"/diff", map[string]any{"policyVersion": 7}), 400, "invalid", "policyVersion")
	h.expectError(h.call("POST", "/v1/assemblies/"+id+"/diff", map[string]any{"policyVersion": "nonesuch"}), 400, "invalid", "policyVersion")
	h.expectError(h.callAs(h.otherKey, "POST", "/v1/assemblies/"+id+"/diff", map[string]any{"policyVersion": "default"}), 404, "not_found", "")
	h.expectError(h.call("POST", "/v1/assemblies/asm_unknown/diff", map[string]any{"policyVersion": "default"}), 404, "not_found", "")
	// Another account's own version is unknown here, as a version that does not exist is.
	theirs := h.callAs(h.otherKey, "POST", "/v1/policies", map[string]any{"name": "theirs-only", "basedOn": "default", "windowMessages": 3})
	if theirs.status != 201 {
		t.Fatalf("the other account's policy: %d %s", theirs.status, theirs.body)
	}
	h.expectError(h.call("POST", "/v1/assemblies/"+id+"/diff", map[string]any{"policyVersion": str(theirs.obj(t), "id")}), 400, "invalid", "policyVersion")
	h.expectError(h.call("POST", "/v1/assemblies/"+id+"/diff", map[string]any{"policyVersion": "theirs-only"}), 400, "invalid", "policyVersion")
	if after := nodes(); after != before {
		t.Errorf("diffs wrote %d nodes", after-before)
	}
}

// A run's model calls list each call's assembly with the sha256 of the request it sent,
// and the request route answers those exact bytes (their sha256 is the recorded one),
// access-checked; a record the sweep trimmed answers 410 there and in the diff. The
// conversations' list finds them by title, within the account.
func TestRunModelCallsAndTheRequestsTheySent(t *testing.T) {
	h := newHarness(t)
	conv := h.must(201, "POST", "/v1/conversations", map[string]any{"title": "Q3 revenue check"})
	h.must(201, "POST", "/v1/conversations", map[string]any{"title": "hotel booking"})
	p := str(h.must(201, "POST", "/v1/conversations/"+str(conv, "id")+"/participants", map[string]any{"kind": "model", "name": "dev"}), "id")
	h.must(201, "POST", "/v1/policies", map[string]any{"name": "keep-one", "basedOn": "default", "records": map[string]any{"keepPerBranch": 1, "sampleRate": 0}})
	turn := func(text string) (run, asm string) {
		g := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": str(conv, "branchId"), "participantIds": []string{p},
			"userMessage": map[string]any{"content": text}, "policyVersion": "keep-one"})
		r := g["runs"].([]any)[0].(map[string]any)
		return str(r, "runId"), str(r, "assemblyId")
	}
	run, asm := turn("What was Q3 revenue for EU?")

	calls := h.must(200, "GET", "/v1/runs/"+run+"/model-calls", nil)
	list := calls["modelCalls"].([]any)
	if len(list) != 1 || str(calls, "runId") != run {
		t.Fatalf("got model calls %v, want the run's one", calls)
	}
	call := list[0].(map[string]any)
	sha := str(call, "requestSha256")
	if str(call, "assemblyId") != asm || len(sha) != 64 || call["requestKept"] != true || str(call, "recordState") != "full" {
		t.Fatalf("got model call %v, want assembly %s with its request's sha256, kept, full", call, asm)
	}
	r := h.call("GET", "/v1/assemblies/"+asm+"/request", nil)
	sum := sha256.Sum256(r.body)
	if r.status != 200 || hex.EncodeToString(sum[:]) != sha || r.header.Get("X-Ctxgraph-Request-Sha256") != sha ||
		!strings.Contains(string(r.body), "What was Q3 revenue for EU?") {
		t.Fatalf("GET request: %d, sha256 %x, header %q, want the body whose sha256 is %s:\n%s", r.status, sum, r.header.Get("X-Ctxgraph-Request-Sha256"), sha, r.body)
	}
	h.expectError(h.callAs(h.otherKey, "GET", "/v1/assemblies/"+asm+"/request", nil), 404, "not_found", "")
	h.expectError(h.callAs(h.otherKey, "GET", "/v1/runs/"+run+"/model-calls", nil), 404, "not_found", "")
	plain := str(h.assemble(map[string]any{"branchId": str(conv, "branchId"), "participantId": p}), "id")
	h.expectError(h.call("GET", "/v1/assemblies/"+plain+"/request", nil), 404, "not_found", "")

	// Searching by title: the account's matching conversations only.
	h.callAs(h.otherKey, "POST", "/v1/conversations", map[string]any{"title": "Q3 revenue of theirs"})
	page := h.must(200, "GET", "/v1/conversations?title=q3%20REVENUE", nil)
	if got := page["conversations"].([]any); len(got) != 1 || str(got[0].(map[string]any), "id") != str(conv, "id") {
		t.Errorf("conversations titled like q3 revenue: %v, want the account's one", got)
	}
	h.expectError(h.call("GET", "/v1/conversations?title="+strings.Repeat("x", 201), nil), 400, "invalid", "title")

	// Two more turns, and the sweep trims the first's record, its request with it.
	turn("And for the US?")
	turn("Thanks.")
	sweepRecords(t, "test-"+randomHex(4), 2*time.Second)
	h.expectError(h.call("GET", "/v1/assemblies/"+asm+"/request", nil), 410, "gone", "")
	h.expectError(h.call("POST", "/v1/assemblies/"+asm+"/diff", map[string]any{"policyVersion": "strict-freshness"}), 410, "gone", "")
	call = h.must(200, "GET", "/v1/runs/"+run+"/model-calls", nil)["modelCalls"].([]any)[0].(map[string]any)
	if str(call, "recordState") != "trimmed" || call["requestKept"] != false || str(call, "requestSha256") != sha {
		t.Errorf("after the sweep the call reads %v, want trimmed, its body gone, its sha256 kept", call)
	}
	if n := cypherCount(t, `MATCH (a:ContextAssembly {id: $id}) WHERE a.requestBody IS NOT NULL RETURN count(a)`, map[string]any{"id": asm}); n != 0 {
		t.Errorf("the trimmed assembly still holds its request body")
	}
}

// readmeBlocks is the script of the README's session blocks that contain one of marks, in
// the README's order.
func readmeBlocks(t *testing.T, marks ...string) string {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, b := range regexp.MustCompile("(?s)<!-- session -->\n```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		for _, m := range marks {
			if strings.Contains(b[1], m) {
				parts = append(parts, b[1])
				break
			}
		}
	}
	if len(parts) != len(marks) {
		t.Fatalf("found %d of the README's session blocks marked %q", len(parts), marks)
	}
	return strings.Join(parts, "\n")
}

// The inspector, in a real browser (headless Chromium driven by playwright-core, installed
// by scripts/browser-check): on the README's conversation (its first session, and the
// reviewer's turn of its inspector section), with the key entered once, it lists the
// account's conversations and not another account's, finds it by title, shows the request
// the reviewer's call sent with the sha256 the browser computed equal to the recorded one
// and to that of the bytes the API answers, names the reason of a record left out, walks a
// memory's provenance down to its raw body, and renders the diff under another version.
// INSPECT_SCREENSHOTS names a directory for its screenshots (docs/inspect to retake the
// README's).
func TestInspectorInChromium(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the inspector's test needs %s: %v", tool, err)
		}
	}
	if out, err := exec.Command("../scripts/browser-check", "install").CombinedOutput(); err != nil {
		t.Fatalf("scripts/browser-check install: %v\n%s", err, out)
	}
	nodePath, err := exec.Command("../scripts/browser-check", "node-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	dir := t.TempDir()
	srv := h.startServerIn(dir, buildServer(t), "CTXGRAPH_API_KEYS="+h.account+"="+h.key+",other-"+randomHex(6)+"="+h.otherKey)
	if err := os.MkdirAll(filepath.Join(dir, ".ctxgraph"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".ctxgraph", "dev-api-key"), []byte(h.key), 0o600); err != nil {
		t.Fatal(err)
	}
	script := "set -e -o pipefail\n" + strings.Replace(readmeBlocks(t, `{"title":"Q3 revenue check"}`, "And for the US?", "/model-calls"),
		"B=http://127.0.0.1:8080", "B="+srv.base, 1)
	session := exec.Command("bash", "-c", script)
	session.Dir = dir
	if out, err := session.CombinedOutput(); err != nil {
		t.Fatalf("the README's session failed: %v\n%s", err, out)
	}
	theirs := "Q3 revenue of another account"
	if r := h.callAs(h.otherKey, "POST", "/v1/conversations", map[string]any{"title": theirs}); r.status != 201 {
		t.Fatalf("the other account's conversation: %d %s", r.status, r.body)
	}

	shots := os.Getenv("INSPECT_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "testdata/inspect/inspect.mjs", srv.base, h.key, "Q3 revenue check", "last-two", shots)
	cmd.Env = append(os.Environ(), "NODE_PATH="+strings.TrimSpace(string(nodePath)))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the inspector in Chromium: %v\n%s\n%s", err, stderr.String(), out)
	}
	var seen struct {
		Requests, Listed, Searched, Branches, Path, Included, Errors         []string
		PageURL, AssemblyID, ShownSha256, RecordedSha256, Raw, DiffIdentical string
		KeyInStorage, Verified                                               bool
		RequestMessages                                                      []string
		Tokens, SectionsSum                                                  int
		Sections                                                             []string
		Omitted                                                              []struct{ Ref, Type, Reason string }
		DiffRows                                                             []struct{ Ref, Change, Other string }
	}
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("the inspector's script printed %s: %v", out, err)
	}

	if len(seen.Errors) > 0 {
		t.Errorf("the page logged errors: %v", seen.Errors)
	}
	for _, u := range append(seen.Requests, seen.PageURL) {
		if strings.Contains(u, h.key) {
			t.Errorf("the key is in a URL the page asked for: %s", u)
		}
	}
	if !seen.KeyInStorage || !slices.Contains(seen.Listed, "Q3 revenue check") || slices.Contains(seen.Listed, theirs) || slices.Contains(seen.Searched, theirs) {
		t.Errorf("with the key in session storage (%v) the page listed %v and found %v; want the account's Q3 revenue check, never %q",
			seen.KeyInStorage, seen.Listed, seen.Searched, theirs)
	}
	if !slices.Contains(seen.Branches, "main") {
		t.Errorf("the branch tree shows %v, want main", seen.Branches)
	}

	// The request shown is the one recorded: the sha256 the browser computed is the
	// recorded one, and that of the bytes the API answers.
	sent := h.call("GET", "/v1/assemblies/"+seen.AssemblyID+"/request", nil)
	sum := sha256.Sum256(sent.body)
	if !seen.Verified || seen.ShownSha256 != seen.RecordedSha256 || seen.ShownSha256 != hex.EncodeToString(sum[:]) || sent.status != 200 {
		t.Errorf("the page computed sha256 %s (verified %v) against the recorded %s; the body the API answers (%d) hashes to %x",
			seen.ShownSha256, seen.Verified, seen.RecordedSha256, sent.status, sum)
	}
	if want := []string{"instructions", "context", "messages", "toolRounds", "reply"}; seen.Tokens == 0 || seen.SectionsSum != seen.Tokens || !slices.Equal(seen.Sections, want) {
		t.Errorf("the token bar shows sections %v adding up to %d of %d tokens; want %v adding up to all", seen.Sections, seen.SectionsSum, seen.Tokens, want)
	}
	if !slices.Contains(seen.RequestMessages, "Check the EU figure.") {
		t.Errorf("the request shown holds %q, want the reviewer's question", seen.RequestMessages)
	}
	private := false
	for _, o := range seen.Omitted {
		private = private || o.Type == "memory" && o.Reason == "participant_private"
	}
	if !private {
		t.Errorf("the omitted records shown are %+v, want gpt's memory left out as participant_private", seen.Omitted)
	}
	if want := []string{"ToolMemory", "ToolArtifact", "ToolCall", "ModelRun", "Participant"}; !slices.Equal(seen.Path, want) || !strings.Contains(seen.Raw, "3460000") {
		t.Errorf("the provenance path shown is %v with raw body %q; want %v down to the CSV's rows", seen.Path, seen.Raw, want)
	}
	// Two turns fit the window of last-two: the assistant's answer goes, and the first
	// question is kept only for the values it states.
	var changes []string
	for _, r := range seen.DiffRows {
		changes = append(changes, r.Change+" "+r.Other)
	}
	if want := []string{"changed memory", "only_recorded omitted: window"}; seen.DiffIdentical != "false" || !slices.Equal(changes, want) {
		t.Errorf("the diff under last-two shows identical %s and %v; want %v", seen.DiffIdentical, changes, want)
	}
}
