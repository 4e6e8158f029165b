package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/client"
)

// everyEvent is a small scenario that uses every event type of FORMAT.md.
const everyEvent = `{
  "name": "every-event",
  "reference": {"replayTokens": 1000, "assembledTokens": 150},
  "participants": [
    {"key": "gpt", "kind": "model", "name": "GPT", "provider": "openai", "model": "gpt-4.1"},
    {"key": "kid", "kind": "subagent", "name": "kid", "provider": "openai", "model": "gpt-4.1-mini"}
  ],
  "branches": [{"key": "main"}, {"key": "alt", "parent": "main", "forkAfter": "m1"}],
  "events": [
    {"type": "message", "key": "m1", "branch": "main", "role": "user", "content": "Q & A <now>", "at": "2025-01-01T10:00:00Z"},
    {"type": "run", "key": "r1", "branch": "main", "participant": "gpt", "runtimeKind": "chat", "trigger": "m1", "at": "2025-01-01T10:00:01Z"},
    {"type": "run", "key": "rc", "branch": "main", "participant": "kid", "runtimeKind": "subagent", "parentRun": "r1"},
    {"type": "skills", "run": "r1", "loadedSkills": ["xlsx"], "activeProfiles": ["finance"], "directTools": ["read_csv"]},
    {"type": "tool_call", "key": "t1", "run": "r1", "tool": "search", "arguments": {"q": "a&b", "n": 5}, "at": "2025-01-01T10:00:02Z"},
    {"type": "tool_result", "call": "t1", "status": "failed", "retryable": true, "error": {"code": "TIMEOUT", "message": "slow"}},
    {"type": "tool_call", "key": "t2", "run": "r1", "tool": "search", "retryOf": "t1"},
    {"type": "tool_result", "call": "t2", "status": "succeeded", "result": "plain text result", "privacyClass": "public",
     "visibility": "branch", "sharedWith": ["kid"], "toolVersion": "2",
     "memories": [
       {"key": "mem_a", "summary": "A", "confidence": 1.0, "freshnessClass": "durable", "derivedFrom": ["t2", "t1"]},
       {"key": "mem_b", "summary": "B", "data": {"z": 1, "a": 2}}
     ]},
    {"type": "memory", "key": "mem_c", "derivedFrom": ["t1", "t2"], "summary": "C", "supersedes": ["mem_a"], "conflictsWith": ["mem_b"], "sharedWith": ["gpt"], "staleAfter": "2025-01-02T00:00:00Z"},
    {"type": "tool_call", "key": "t3", "run": "rc", "tool": "generate_file"},
    {"type": "tool_result", "call": "t3", "status": "succeeded", "result": {"fileId": "file_1"}},
    {"type": "checkpoint", "key": "ck1", "run": "r1", "state": {"step": 2}, "at": "2025-01-01T10:00:05Z"},
    {"type": "promote", "key": "rep1", "run": "rc", "calls": ["t3"], "memories": ["mem_c"], "report": "done"},
    {"type": "run_status", "run": "rc", "status": "completed", "at": "2025-01-01T10:00:06Z"},
    {"type": "delete_artifact", "call": "t1"},
    {"type": "message", "key": "m2", "branch": "alt", "role": "user", "content": "edited", "parents": ["m1"]}
  ],
  "assemblies": [
    {"key": "a1", "now": "2025-01-01T11:00:00Z", "branch": "main", "participant": "gpt", "runtimeKind": "chat", "run": "r1",
     "provider": "openai", "model": "gpt-4.1", "tokenBudget": 4000, "exactCalls": ["t2"],
     "expect": {"included": ["m1"], "includedAs": {"t1": "recovery"}, "omitted": {"mem_a": "superseded"},
                "contains": ["a&b"], "notContains": ["secret"], "maxAssembledTokens": 400, "minReduction": 0.8}}
  ]
}`

func TestParseEveryEventType(t *testing.T) {
	sc, err := Parse([]byte(everyEvent))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(sc.Events), 16; got != want {
		t.Fatalf("got %d events, want %d", got, want)
	}
	tr := sc.Events[7]
	if got, want := len(tr.Memories), 2; got != want {
		t.Fatalf("tool_result: got %d memories, want %d", got, want)
	}
	if got, want := string(tr.Result), `"plain text result"`; got != want {
		t.Errorf("tool_result result: got %s, want %s", got, want)
	}
	if got, want := tr.Memories[0].DerivedFrom, []string{"t2", "t1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("memory derivedFrom: got %v, want %v", got, want)
	}
	if _, ok := tr.Memories[0].Fields["key"]; ok {
		t.Errorf("memory fields keep key; want it decoded into Key")
	}
	if got, want := string(tr.Memories[0].Fields["confidence"]), "1.0"; got != want {
		t.Errorf("memory confidence: got %s, want %s (as written)", got, want)
	}
	if got, want := tr.SharedWith, []string{"kid"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sharedWith: got %v, want %v", got, want)
	}
	mem := sc.Events[8].Memory
	if mem == nil || mem.Key != "mem_c" {
		t.Fatalf("memory event: got %+v, want memory mem_c", mem)
	}
	if _, ok := mem.Fields["type"]; ok {
		t.Errorf("memory event fields keep type; want it dropped")
	}
	if got, want := sortedKeys(mem.Fields), []string{"staleAfter", "summary"}; !reflect.DeepEqual(got, want) {
		t.Errorf("memory event fields: got %v, want %v", got, want)
	}
	promote := sc.Events[12]
	if got, want := promote.MemoryKeys, []string{"mem_c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("promote memories: got %v, want %v", got, want)
	}
	if promote.Memories != nil {
		t.Errorf("promote: got memory objects %v, want none", promote.Memories)
	}
	a := sc.Assemblies[0]
	if a.Expect.MinReduction == nil || *a.Expect.MinReduction != 0.8 || a.Expect.MaxAssembledTokens == nil || *a.Expect.MaxAssembledTokens != 400 {
		t.Errorf("expect: got %+v, want minReduction 0.8 and maxAssembledTokens 400", a.Expect)
	}
	if sc.Reference == nil || sc.Reference.ReplayTokens != 1000 {
		t.Errorf("reference: got %+v, want replayTokens 1000", sc.Reference)
	}
}

func TestParseRejectsMalformedScenarios(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unknown event type", `{"name":"x","events":[{"type":"dance"}]}`, `unknown event type "dance"`},
		{"missing field", `{"name":"x","events":[{"type":"message","key":"m1","role":"user"}]}`, "missing [branch]"},
		{"key used twice", `{"name":"x","events":[{"type":"message","key":"m1","branch":"main","role":"user"},` +
			`{"type":"tool_call","key":"t1","run":"r","tool":"x"},{"type":"tool_result","call":"t1","status":"succeeded","memories":[{"key":"m1","summary":"s"}]}]}`,
			`key "m1" is used twice`},
		{"no main branch", `{"name":"x","branches":[{"key":"alt","parent":"main","forkAfter":"m1"}]}`, `root branch "main" is missing`},
		{"fork without forkAfter", `{"name":"x","branches":[{"key":"main"},{"key":"alt","parent":"main"}]}`, "needs parent and forkAfter"},
		{"memory without sources", `{"name":"x","events":[{"type":"memory","key":"k","summary":"s"}]}`, "missing [derivedFrom]"},
		{"no name", `{"events":[]}`, "name is missing"},
		{"misspelt expectation", `{"name":"x","assemblies":[{"key":"a","branch":"main","participant":"p","expect":{"omited":{"m1":"window"}}}]}`,
			`unknown field "omited"`},
		{"misspelt assembly key", `{"name":"x","assemblies":[{"key":"a","branch":"main","participant":"p","tokenBugdet":10}]}`,
			`unknown field "tokenBugdet"`},
		{"misspelt event key", `{"name":"x","events":[{"type":"message","key":"m1","branch":"main","role":"user","contnet":"hi"}]}`,
			`unknown field "contnet"`},
		{"misspelt top-level key", `{"name":"x","asemblies":[]}`, `unknown field "asemblies"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestLoadSharedScenarios parses every file of the shared scenario set, when it is there.
func TestLoadSharedScenarios(t *testing.T) {
	dir := os.Getenv("CTXGRAPH_SCENARIOS")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "scenarios")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		t.Skipf("no scenario files in %s", dir)
	}
	for _, f := range files {
		sc, err := Load(f)
		if err != nil {
			t.Errorf("got %v, want %s to load", err, f)
			continue
		}
		if len(sc.Events) == 0 || len(sc.Assemblies) == 0 {
			t.Errorf("%s: got %d events and %d assemblies, want some of each", f, len(sc.Events), len(sc.Assemblies))
		}
	}
}

func TestMemoryBodyMapsKeysToIDs(t *testing.T) {
	ids := newKeyIndex()
	ids.calls = map[string]string{"t1": "tc_1", "t2": "tc_2"}
	ids.artifacts = map[string][]string{"t1": {"art_1"}, "t2": {"art_2old", "art_2"}}
	ids.memories = map[string]string{"mem_a": "mem_1", "mem_b": "mem_2"}
	ids.participants = map[string]string{"gpt": "pt_1"}
	var m Memory
	if err := json.Unmarshal([]byte(`{"key": "k", "summary": "s", "data": {"b": 1, "a": 2}, "derivedFrom": ["t1", "t2"],
		"supersedes": ["mem_a"], "conflictsWith": ["mem_b"], "sharedWith": ["gpt"]}`), &m); err != nil {
		t.Fatal(err)
	}
	body, err := ids.memoryBody(m, "t1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"derivedFrom":["art_2"],"summary":"s","data":{"b":1,"a":2},"supersedes":["mem_1"],"conflictsWith":["mem_2"],"sharedWithParticipants":["pt_1"]}`
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	m.DerivedFrom = []string{"t9"}
	if _, err := ids.memoryBody(m, ""); err == nil || !strings.Contains(err.Error(), `"t9"`) {
		t.Errorf("unknown call: got error %v, want one naming t9", err)
	}
	m.DerivedFrom = nil
	m.Fields["sumary"] = json.RawMessage(`"typo"`)
	if _, err := ids.memoryBody(m, ""); err == nil || !strings.Contains(err.Error(), `"sumary"`) {
		t.Errorf("misspelt field: got error %v, want one naming sumary", err)
	}
}

// index is a key index as playback would leave it: a call t1 with artifact art_1 and two
// memories derived only from it, a call t2 whose memory mem_both also derives from t1, a
// message, a checkpoint and a promoted report.
func index() *keyIndex {
	ids := newKeyIndex()
	ids.messages = map[string]string{"m1": "msg_1", "m2": "msg_2"}
	ids.calls = map[string]string{"t1": "tc_1", "t2": "tc_2", "t3": "tc_3"}
	ids.artifacts = map[string][]string{"t1": {"art_1"}, "t2": {"art_2"}, "t3": {"art_3"}}
	ids.memories = map[string]string{"mem_one": "mem_1", "mem_both": "mem_12", "mem_two": "mem_2"}
	ids.memorySources = map[string][]string{"mem_one": {"t1"}, "mem_both": {"t2", "t1"}, "mem_two": {"t2"}}
	ids.checkpoints = map[string]string{"ck": "ckp_1"}
	ids.reports = map[string]string{"rep": "mem_rep"}
	return ids
}

func intp(i int) *int           { return &i }
func floatp(f float64) *float64 { return &f }

func TestCheckAssembly(t *testing.T) {
	base := AssemblyResponse{
		Messages: json.RawMessage(`[{"role":"system","content":"Rules \u0026 notes: say \"hi\"\nthen <stop>"},` +
			`{"role":"assistant","name":"Corvin","content":"file_8f3a2c ready"}]`),
		Included: []IncludedRef{
			{Ref: "msg_1", Type: "message", As: "message"},
			{Ref: "art_3", Type: "artifact", As: "raw"},
			{Ref: "mem_12", Type: "memory", As: "memory"},
			{Ref: "ckp_1", Type: "checkpoint", As: "checkpoint"},
		},
		OmittedRefs: []OmittedRef{
			{Ref: "art_1", Reason: "participant_private"},
			{Ref: "msg_2", Reason: "branch_ineligible"},
			{Ref: "mem_rep", Reason: "not_promoted"},
		},
	}
	base.Tokens.Assembled, base.Tokens.Baseline = 150, 1000
	tests := []struct {
		name   string
		expect Expect
		edit   func(*AssemblyResponse)
		want   []string
	}{
		{name: "message and checkpoint keys", expect: Expect{Included: []string{"m1"}, IncludedAs: map[string]string{"ck": "checkpoint"}}},
		{name: "call key matches its artifact", expect: Expect{IncludedAs: map[string]string{"t3": "raw"}}},
		{name: "call key matches a memory derived from it", expect: Expect{Included: []string{"t2"}, IncludedAs: map[string]string{"t1": "memory"}}},
		{name: "wrong form", expect: Expect{IncludedAs: map[string]string{"t3": "memory", "m1": "message"}},
			want: []string{"includedAs t3: got art_3 as raw, want as memory"}},
		{name: "not included", expect: Expect{Included: []string{"m2"}, IncludedAs: map[string]string{"mem_two": "memory"}},
			want: []string{"included m2: got nothing of [msg_2] included, want it included",
				"includedAs mem_two: got nothing of [mem_2] included, want it included as memory"}},
		{name: "unknown key", expect: Expect{Included: []string{"nope"}}, want: []string{"included nope: no record of the scenario has this key"}},
		{name: "call omitted through its artifact; a memory also derived from another call may stay",
			expect: Expect{Omitted: map[string]string{"t1": "participant_private"}}},
		{name: "call omitted but a memory derived only from it is included",
			expect: Expect{Omitted: map[string]string{"t1": "participant_private"}},
			edit: func(r *AssemblyResponse) {
				r.Included = append(r.Included, IncludedRef{Ref: "mem_1", Type: "memory", As: "memory"})
			},
			want: []string{"omitted t1: got mem_1 as memory included, want it omitted"}},
		{name: "call omitted with another reason", expect: Expect{Omitted: map[string]string{"t1": "budget"}},
			want: []string{"omitted t1: got omittedRefs art_1 participant_private, want reason budget"}},
		{name: "call omitted but included and not reported", expect: Expect{Omitted: map[string]string{"t3": "audit_only"}},
			want: []string{"omitted t3: got art_3 as raw included, want it omitted",
				"omitted t3: got none of [tc_3 art_3] in omittedRefs, want reason audit_only"}},
		{name: "message and report omitted", expect: Expect{Omitted: map[string]string{"m2": "branch_ineligible", "rep": "not_promoted"}}},
		{name: "memory omitted but missing from omittedRefs", expect: Expect{Omitted: map[string]string{"mem_two": "superseded"}},
			want: []string{"omitted mem_two: got none of [mem_2] in omittedRefs, want reason superseded"}},
		{name: "contains with & escaped by the server, quotes, newlines and names",
			expect: Expect{Contains: []string{"Rules & notes", `say "hi"`, "\nthen <stop>", `"name":"Corvin"`, "Corvin", "file_8f3a2c"}}},
		{name: "contains misses", expect: Expect{Contains: []string{"file_000000"}},
			want: []string{`contains "file_000000": not found in the messages`}},
		{name: "notContains finds HTML characters the server escaped", expect: Expect{NotContains: []string{"<stop>", "& notes", "absent"}},
			want: []string{`notContains "<stop>": found in the messages`, `notContains "& notes": found in the messages`}},
		{name: "no messages", expect: Expect{Contains: []string{"x"}}, edit: func(r *AssemblyResponse) { r.Messages = nil },
			want: []string{"messages: the response has no messages", `contains "x": not found in the messages`}},
		{name: "economy met", expect: Expect{MaxAssembledTokens: intp(150), MinReduction: floatp(0.85)}},
		{name: "economy missed", expect: Expect{MaxAssembledTokens: intp(149), MinReduction: floatp(0.9)},
			want: []string{"maxAssembledTokens: got 150 assembled tokens, want at most 149",
				"minReduction: got 0.850 (150 assembled of 1000 baseline tokens), want at least 0.900"}},
		{name: "no baseline", expect: Expect{MinReduction: floatp(0.8)}, edit: func(r *AssemblyResponse) { r.Tokens.Baseline = 0 },
			want: []string{"minReduction: got baseline 0, want a positive baseline to reduce by 0.80"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := base
			resp.Included = append([]IncludedRef(nil), base.Included...)
			if tt.edit != nil {
				tt.edit(&resp)
			}
			got := checkAssembly(tt.expect, resp, index())
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got failures\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestTable(t *testing.T) {
	results := []Result{
		{Scenario: "picker", Reference: &Reference{ReplayTokens: 1000, AssembledTokens: 150},
			Assemblies: []AssemblyResult{{Key: "a1", Ran: true, Baseline: 1000, Assembled: 100}}},
		{Scenario: "budget", Assemblies: []AssemblyResult{
			{Key: "a1", Ran: true, Baseline: 400, Assembled: 300, Failures: []string{"x", "y"}},
			{Key: "a2", Failures: []string{"POST /v1/assemblies answered 404"}},
		}},
		{Scenario: "broken", PlaybackError: "boom", Assemblies: []AssemblyResult{{Key: "a1"}}},
	}
	got := Table(results)
	for _, want := range []string{
		"| picker | a1 | 1000 | 100 | 90.0 % | 1000 | 150 | 85.0 % | +5.0 | pass |",
		"| budget | a1 | 400 | 300 | 25.0 % | — | — | — | — | fail (2) |",
		"| budget | a2 | — | — | — | — | — | — | — | fail: not assembled |",
		"| broken | a1 | — | — | — | — | — | — | — | fail: playback |",
		"1 of 4 assemblies passed.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q; got\n%s", want, got)
		}
	}
}

// recorder is an http.Handler standing in for the API in playback tests: it answers every
// write with fresh ids and records what it was sent.
type recorder struct {
	requests []string
	bodies   []map[string]any
	raw      [][]byte
	n        int
	// failPath answers 400 to the request with this method and path.
	failPath string
}

func (h *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	line := r.Method + " " + r.URL.Path
	h.requests = append(h.requests, line)
	h.bodies = append(h.bodies, body)
	h.raw = append(h.raw, raw)
	if r.Header.Get("Authorization") != "Bearer k" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if line == h.failPath {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"code":"invalid","message":"nope"}}`)
		return
	}
	h.n++
	id := fmt.Sprintf("id%d", h.n)
	var out any
	switch {
	case r.URL.Path == "/v1/assemblies":
		w.WriteHeader(http.StatusNotFound)
		return
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
		return
	case strings.HasSuffix(r.URL.Path, "/result"):
		mems, _ := body["memories"].([]any)
		ids := []string{}
		for i := range mems {
			ids = append(ids, fmt.Sprintf("%s.mem%d", id, i))
		}
		out = map[string]any{"artifactId": "art_" + id, "memoryIds": ids}
	case strings.HasSuffix(r.URL.Path, "/promote"):
		out = map[string]any{"reportId": "rep_" + id}
	default:
		out = map[string]any{"id": id, "branchId": "br_root"}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(out)
}

func TestRunPlaysEveryEvent(t *testing.T) {
	sc, err := Parse([]byte(everyEvent))
	if err != nil {
		t.Fatal(err)
	}
	h := &recorder{}
	res, err := Runner{Client: &client.Client{Handler: h, Key: "k"}}.Run(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	wantRequests := []string{
		"POST /v1/conversations",
		"POST /v1/conversations/id1/participants",
		"POST /v1/conversations/id1/participants",
		"POST /v1/branches/br_root/messages",  // m1 → id4
		"POST /v1/conversations/id1/branches", // alt forks right after m1 → id5
		"POST /v1/branches/br_root/runs",      // r1 → id6
		"POST /v1/branches/br_root/runs",      // rc → id7
		"POST /v1/runs/id6/skills",            // id8
		"POST /v1/runs/id6/tool-calls",        // t1 → id9
		"POST /v1/tool-calls/id9/result",      // art_id10
		"POST /v1/runs/id6/tool-calls",        // t2 → id11
		"POST /v1/tool-calls/id11/result",     // art_id12, mem_a id12.mem0, mem_b id12.mem1
		"POST /v1/memories",                   // mem_c → id13
		"POST /v1/runs/id7/tool-calls",        // t3 → id14
		"POST /v1/tool-calls/id14/result",     // art_id15
		"POST /v1/runs/id6/checkpoints",       // ck1 → id16
		"POST /v1/runs/id7/promote",           // rep_id17
		"PATCH /v1/runs/id7",                  // id18
		"DELETE /v1/artifacts/art_id10",       // t1's artifact
		"POST /v1/branches/id5/messages",      // m2 on alt
		"POST /v1/assemblies",
	}
	if !reflect.DeepEqual(h.requests, wantRequests) {
		t.Fatalf("got requests\n%s\nwant\n%s", strings.Join(h.requests, "\n"), strings.Join(wantRequests, "\n"))
	}
	bodyChecks := []struct {
		index int
		want  string
	}{
		{0, `{"at":"2025-01-01T10:00:00Z","title":"every-event"}`},
		{1, `{"kind":"model","model":"gpt-4.1","name":"GPT","provider":"openai"}`},
		{3, `{"at":"2025-01-01T10:00:00Z","content":"Q & A <now>","role":"user"}`},
		{4, `{"at":"2025-01-01T10:00:00Z","forkAfterMessageId":"id4","name":"alt","parentBranchId":"br_root"}`},
		{6, `{"parentRunId":"id6","participantId":"id3","runtimeKind":"subagent"}`},
		{7, `{"activeProfiles":["finance"],"directTools":["read_csv"],"loadedSkills":["xlsx"]}`},
		{8, `{"arguments":{"n":5,"q":"a&b"},"at":"2025-01-01T10:00:02Z","callId":"t1","tool":"search"}`},
		{9, `{"error":{"code":"TIMEOUT","message":"slow"},"retryable":true,"status":"failed"}`},
		{10, `{"callId":"t2","retryOf":"id9","tool":"search"}`},
		{11, `{"memories":[{"confidence":1,"derivedFrom":["art_id10"],"freshnessClass":"durable","summary":"A"},` +
			`{"data":{"a":2,"z":1},"summary":"B"}],"privacyClass":"public","result":"plain text result",` +
			`"sharedWithParticipants":["id3"],"status":"succeeded","toolVersion":"2","visibility":"branch"}`},
		{12, `{"conflictsWith":["id12.mem1"],"derivedFrom":["art_id10","art_id12"],"sharedWithParticipants":["id2"],"staleAfter":"2025-01-02T00:00:00Z","summary":"C","supersedes":["id12.mem0"]}`},
		{13, `{"callId":"t3","tool":"generate_file"}`},
		{15, `{"at":"2025-01-01T10:00:05Z","state":{"step":2}}`},
		{16, `{"memoryIds":["id13"],"report":"done","toolCallIds":["id14"]}`},
		{17, `{"at":"2025-01-01T10:00:06Z","status":"completed"}`},
		{19, `{"content":"edited","parentMessageIds":["id4"],"role":"user"}`},
		{20, `{"branchId":"br_root","exactArtifactIds":["art_id12"],"model":"gpt-4.1","now":"2025-01-01T11:00:00Z",` +
			`"participantId":"id2","provider":"openai","runId":"id6","runtimeKind":"chat","tokenBudget":4000,"trace":true}`},
	}
	for _, c := range bodyChecks {
		got, _ := client.Marshal(h.bodies[c.index])
		if string(got) != c.want {
			t.Errorf("%s: got body %s, want %s", h.requests[c.index], got, c.want)
		}
	}
	// Arguments and results reach the server as written: key order, no HTML escaping.
	if got, want := string(h.raw[8]), `{"tool":"search","arguments":{"q":"a&b","n":5},"callId":"t1","at":"2025-01-01T10:00:02Z"}`; got != want {
		t.Errorf("tool call body: got %s, want %s", got, want)
	}
	if got, want := res.IDs["mem_b"], "id12.mem1"; got != want {
		t.Errorf("IDs[mem_b]: got %q, want %q", got, want)
	}
	if len(res.Assemblies) != 1 || res.Assemblies[0].Ran || len(res.Assemblies[0].Failures) != 1 ||
		!strings.Contains(res.Assemblies[0].Failures[0], "POST /v1/assemblies answered 404") {
		t.Errorf("assemblies: got %+v, want a1 not run with the 404 as its failure", res.Assemblies)
	}
}

func TestRunStopsAtAFailedWrite(t *testing.T) {
	sc, err := Parse([]byte(everyEvent))
	if err != nil {
		t.Fatal(err)
	}
	h := &recorder{failPath: "POST /v1/memories"}
	res, err := Runner{Client: &client.Client{Handler: h, Key: "k"}}.Run(context.Background(), sc)
	var reqErr *client.Error
	if !errors.As(err, &reqErr) {
		t.Fatalf("got error %v, want a *client.Error", err)
	}
	if reqErr.Status != http.StatusBadRequest || reqErr.Path != "/v1/memories" || !strings.Contains(string(reqErr.Response), "nope") {
		t.Errorf("got %+v, want the 400 of POST /v1/memories with its body", reqErr)
	}
	for _, want := range []string{"event 9 (memory mem_c)", "answered 400", `"summary":"C"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got error %q, want it to contain %q", err, want)
		}
	}
	if res.PlaybackError == "" || res.Passed() || len(res.Assemblies) != 1 || res.Assemblies[0].Ran {
		t.Errorf("got %+v, want a failed playback with a1 not run", res)
	}
	if last := h.requests[len(h.requests)-1]; last != "POST /v1/memories" {
		t.Errorf("got last request %s, want the failed POST /v1/memories", last)
	}
}
