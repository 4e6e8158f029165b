package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/seed"
)

// assemblingHandler serves a seeded conversation and, after every message an assistant
// posts, assembles the context of that branch for that participant: the assembler's cached
// copy of the conversation is brought up to date between writes of every kind (messages,
// runs, calls, results, memories that supersede or contradict others, run ends).
type assemblingHandler struct {
	h *harness
	// trace asks for traced assemblies, which also list every record outside the lineage
	// (omittedRefs); untraced ones, as agents usually send them, must select the same.
	trace      bool
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
	var msg client.Message
	if err := json.Unmarshal(body.Bytes(), &msg); err != nil || msg.ParticipantID == "" {
		return
	}
	out := a.h.must(http.StatusCreated, http.MethodPost, "/v1/assemblies", client.AssemblyRequest{
		BranchID: m[1], ParticipantID: msg.ParticipantID, RunID: msg.RunID, TokenBudget: 2000, Trace: a.trace})
	a.assemblies = append(a.assemblies, str(out, "id"))
}

// TestCachedAssembliesReplayFresh interleaves writes and assemblies on a generated
// conversation (4 branches, 4 participants) and replays every assembly: a replay reads the
// graph afresh, so each "identical" shows that the copy brought up to date revision by
// revision selected exactly what a full read selects. A deletion (which the copy cannot
// follow by stamping) then forces a reload.
func TestCachedAssembliesReplayFresh(t *testing.T) {
	for _, trace := range []bool{true, false} {
		t.Run(fmt.Sprintf("trace=%v", trace), func(t *testing.T) { cachedAssembliesReplayFresh(t, trace) })
	}
}

func cachedAssembliesReplayFresh(t *testing.T, trace bool) {
	h := newHarness(t)
	ah := &assemblingHandler{h: h, trace: trace}
	stats := sharedStore.RecordCacheStats()
	sum, err := seed.Generate(t.Context(), &client.Client{Handler: ah, Key: h.key},
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

// TestSharedViewsFollowWrites assembles unchanged lineages again and again — every branch for
// every participant, twice — so that assemblies share lineage views and judgements, and
// checks that a shared view or judgement is given up exactly when it must be: a
// conversation-visible memory written on a sibling branch (which every lineage sees, but
// whose SUPERSEDES edge to a memory of the lineage does not count there: supersession is
// never global), and a `now` past which a memory goes stale. Every assembly is replayed against a
// fresh read of the graph.
func TestSharedViewsFollowWrites(t *testing.T) {
	h := newHarness(t)
	sum, err := seed.Generate(t.Context(), h.client(),
		seed.Config{Rounds: 24, Branches: 4, Participants: 2, Seed: 11})
	if err != nil {
		t.Fatalf("seeding: %v", err)
	}
	var ids []string
	assemble := func(branch, participant string, now time.Time) map[string]any {
		t.Helper()
		out := h.must(http.StatusCreated, http.MethodPost, "/v1/assemblies", map[string]any{
			"branchId": branch, "participantId": participant, "tokenBudget": 100000, "trace": true,
			"now": now.Format(time.RFC3339Nano)})
		ids = append(ids, str(out, "id"))
		return out
	}
	counters := func() (views, judgements int64) {
		return sharedStore.RecordCacheStats().SharedViews, h.asm.ReusedJudgements()
	}
	views0, judged0 := counters()
	t0 := sum.LastEventAt.Add(time.Minute)
	for _, b := range sum.Branches {
		for _, p := range sum.ParticipantIDs {
			first, second := assemble(b.ID, p, t0), assemble(b.ID, p, t0)
			if !reflect.DeepEqual(first["included"], second["included"]) || !reflect.DeepEqual(first["messages"], second["messages"]) {
				t.Errorf("branch %s, participant %s: two assemblies of the unchanged lineage differ", b.Name, p)
			}
		}
	}
	views, judged := counters()
	pairs := int64(len(sum.Branches) * len(sum.ParticipantIDs))
	t.Logf("%d branch × participant pairs: %d shared views, %d reused judgements", pairs, views-views0, judged-judged0)
	if views-views0 < pairs || judged-judged0 < pairs {
		t.Errorf("want at least %d shared views and %d reused judgements, got %d and %d", pairs, pairs, views-views0, judged-judged0)
	}

	// A memory of the deepest lineage, and a branch outside that lineage.
	deep := sum.Deepest()
	inLineage := map[string]bool{}
	parent := map[string]string{}
	for _, b := range sum.Branches {
		parent[b.ID] = b.ParentID
	}
	for id := deep.ID; id != ""; id = parent[id] {
		inLineage[id] = true
	}
	var sibling seed.Branch
	for _, b := range sum.Branches {
		if !inLineage[b.ID] {
			sibling = b
		}
	}
	if sibling.ID == "" {
		t.Fatalf("every branch of %v is in the deepest lineage", sum.Branches)
	}
	reader := deep.LastRunParticipantID
	if reader == "" {
		reader = sum.ParticipantIDs[0]
	}
	var old string
	for _, inc := range assemble(deep.ID, reader, t0)["included"].([]any) {
		if item := inc.(map[string]any); item["type"] == "memory" && item["as"] == "memory" {
			old = str(item, "ref")
		}
	}
	if old == "" {
		t.Fatal("no memory included on the deepest branch")
	}

	formOf := func(out map[string]any, ref string) string {
		for _, inc := range out["included"].([]any) {
			if item := inc.(map[string]any); item["ref"] == ref {
				return str(item, "as")
			}
		}
		omitted, _ := out["omittedRefs"].([]any)
		for _, o := range omitted {
			if item := o.(map[string]any); item["ref"] == ref {
				return "omitted " + str(item, "reason")
			}
		}
		return "absent"
	}
	// On the sibling branch: a run, a call, its result, and a conversation-visible memory
	// that supersedes the lineage's memory and goes stale an hour after it was observed.
	observed := time.Now().UTC().Truncate(time.Second)
	run := h.must(http.StatusCreated, http.MethodPost, "/v1/branches/"+sibling.ID+"/runs", map[string]any{
		"participantId": sum.ParticipantIDs[0], "runtimeKind": "chat"})
	call := h.must(http.StatusCreated, http.MethodPost, "/v1/runs/"+str(run, "id")+"/tool-calls", map[string]any{
		"tool": "web_search", "arguments": map[string]any{"q": "shared view check"}, "callId": "call-shared-view"})
	res := h.must(http.StatusCreated, http.MethodPost, "/v1/tool-calls/"+str(call, "id")+"/result", map[string]any{
		"status": "succeeded", "result": map[string]any{"answer": "newer fact"}})
	// (Assembled in between, so that the view the memory must invalidate already knows the
	// sibling's new run.)
	oldForm := formOf(assemble(deep.ID, reader, observed.Add(30*time.Minute)), old)
	newer := str(h.must(http.StatusCreated, http.MethodPost, "/v1/memories", map[string]any{
		"derivedFrom": []string{str(res, "artifactId")}, "summary": "the newer fact from the sibling branch",
		"confidence": 0.9, "freshnessClass": "volatile", "observedAt": observed.Format(time.RFC3339),
		"supersedes": []string{old}, "visibility": "conversation"}), "id")

	// Untraced, as agents usually send it, the assembly must see the sibling branch's
	// conversation-visible memory too.
	quick := h.must(http.StatusCreated, http.MethodPost, "/v1/assemblies", map[string]any{
		"branchId": deep.ID, "participantId": reader, "tokenBudget": 100000,
		"now": observed.Add(30 * time.Minute).Format(time.RFC3339Nano)})
	ids = append(ids, str(quick, "id"))
	if got := formOf(quick, newer); got != "memory" {
		t.Errorf("untraced: the superseding memory %s of the sibling branch: %s, want memory", newer, got)
	}
	fresh := assemble(deep.ID, reader, observed.Add(30*time.Minute))
	if got := formOf(fresh, old); got != oldForm {
		t.Errorf("the lineage's memory %s after a sibling branch's memory named it in supersedes: %s, want %s as before", old, got, oldForm)
	}
	if got := formOf(fresh, newer); got != "memory" {
		t.Errorf("the superseding memory %s half an hour after it was observed: %s, want memory", newer, got)
	}
	views0, judged0 = counters()
	stale := assemble(deep.ID, reader, observed.Add(2*time.Hour))
	views, judged = counters()
	if got := formOf(stale, newer); got != "stale_marker" {
		t.Errorf("the superseding memory %s two hours after it was observed: %s, want stale_marker", newer, got)
	}
	if views-views0 != 1 || judged != judged0 {
		t.Errorf("an assembly at a later now of the unchanged lineage: %d shared views (want 1), %d reused judgements (want 0: a memory went stale in between)", views-views0, judged-judged0)
	}
	assemble(deep.ID, reader, observed.Add(2*time.Hour+time.Minute))
	if _, again := counters(); again != judged+1 {
		t.Errorf("an assembly a minute later, with no memory changing staleness in between, reused %d judgements, want 1", again-judged)
	}

	// Assemblies of the lineage in parallel with writes on the sibling branch: shared views
	// and judgements are read by many requests at once (go test -race checks them).
	var wg sync.WaitGroup
	var mu sync.Mutex
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				r := h.call(http.MethodPost, "/v1/assemblies", map[string]any{"branchId": deep.ID, "participantId": reader,
					"tokenBudget": 100000, "trace": true, "now": observed.Add(3 * time.Hour).Format(time.RFC3339)})
				var out map[string]any
				if r.status != http.StatusCreated || json.Unmarshal(r.body, &out) != nil {
					t.Errorf("parallel assembly: %d %s", r.status, r.body)
					continue
				}
				mu.Lock()
				ids = append(ids, str(out, "id"))
				mu.Unlock()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 5; i++ {
			r := h.call(http.MethodPost, "/v1/runs/"+str(run, "id")+"/tool-calls", map[string]any{
				"tool": "web_search", "arguments": map[string]any{"q": i}, "callId": fmt.Sprintf("parallel-%d", i)})
			var call map[string]any
			if r.status != http.StatusCreated || json.Unmarshal(r.body, &call) != nil {
				t.Errorf("parallel tool call: %d %s", r.status, r.body)
				continue
			}
			if r := h.call(http.MethodPost, "/v1/tool-calls/"+str(call, "id")+"/result", map[string]any{
				"status": "succeeded", "result": map[string]any{"n": i}}); r.status != http.StatusCreated {
				t.Errorf("parallel result: %d %s", r.status, r.body)
			}
		}
	}()
	wg.Wait()

	for _, id := range ids {
		rep := h.must(http.StatusOK, http.MethodPost, "/v1/assemblies/"+id+"/replay", nil)
		if rep["identical"] != true {
			t.Errorf("assembly %s: shared and fresh reads differ: %v", id, rep["differences"])
		}
	}
}

// TestAncestorWritesPastTheForkKeepTheView checks what a fork's lineage view depends on in
// an ancestor: writes there past the fork point leave it shared, a write that changes a record
// the fork inherits (the result of a call made before the fork) does not. Every assembly is
// replayed against a fresh read of the graph.
func TestAncestorWritesPastTheForkKeepTheView(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	m2 := str(h.must(http.StatusCreated, http.MethodPost, "/v1/branches/"+w.branch+"/messages",
		map[string]any{"role": "user", "content": "and the Q4 ones"}), "id")
	fork := str(h.must(http.StatusCreated, http.MethodPost, "/v1/conversations/"+w.conv+"/branches",
		map[string]any{"parentBranchId": w.branch, "forkAfterMessageId": m2, "name": "fork"}), "id")
	var ids []string
	assemble := func() map[string]any {
		t.Helper()
		out := h.must(http.StatusCreated, http.MethodPost, "/v1/assemblies",
			map[string]any{"branchId": fork, "participantId": w.participant, "tokenBudget": 4000, "trace": true})
		ids = append(ids, str(out, "id"))
		return out
	}
	shared := func() int64 { return sharedStore.RecordCacheStats().SharedViews }

	if got := includedAs(assemble())[w.call]; got != "recovery" {
		t.Fatalf("the fork's inherited pending call %s: %q, want recovery", w.call, got)
	}
	before := shared()
	h.must(http.StatusCreated, http.MethodPost, "/v1/branches/"+w.branch+"/messages",
		map[string]any{"role": "user", "content": "past the fork point"})
	a := assemble()
	if n := shared() - before; n != 1 {
		t.Errorf("after a message on the parent past the fork point: %d shared views, want 1", n)
	}
	if got := includedAs(a)[w.call]; got != "recovery" {
		t.Errorf("the fork's inherited pending call after a parent message: %q, want recovery", got)
	}
	// Both assemblies made the same recovery decision about the call: the second links the
	// PolicyDecision the first wrote (its id is its content), and each record reads it.
	for _, id := range ids {
		rec, err := sharedStore.Assembly(t.Context(), h.account, id)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, d := range rec.Decisions {
			if d.Ref == w.call {
				kinds = append(kinds, string(d.Policy)+"/"+d.Outcome+"/"+string(d.Rule))
			}
		}
		if len(kinds) != 1 || !strings.HasPrefix(kinds[0], "recovery/included/") {
			t.Errorf("assembly %s: stored decisions about the pending call %s: %v, want one recovery/included", id, w.call, kinds)
		}
	}

	before = shared()
	h.must(http.StatusCreated, http.MethodPost, "/v1/tool-calls/"+w.call+"/result", map[string]any{
		"status": "succeeded", "result": map[string]any{"rows": 3}})
	assemble()
	if n := shared() - before; n != 0 {
		t.Errorf("after the parent recorded the result of a call the fork inherits: %d shared views, want 0", n)
	}
	for _, id := range ids {
		if rep := h.must(http.StatusOK, http.MethodPost, "/v1/assemblies/"+id+"/replay", nil); rep["identical"] != true {
			t.Errorf("assembly %s: shared and fresh reads differ: %v", id, rep["differences"])
		}
	}
}

// TestOlderAsOfSharesTheView checks the view sharing of an assembly whose asOf is older than
// the assembler's copy of the conversation, as it often is under concurrent writes: a write
// elsewhere in the conversation (a sibling branch) recorded after asOf leaves the lineage's
// view shared; a write on the lineage recorded after asOf does not (the snapshot must not see
// it). Every assembly is replayed against a fresh read of the graph.
func TestOlderAsOfSharesTheView(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	sibling := str(h.must(http.StatusCreated, http.MethodPost, "/v1/conversations/"+w.conv+"/branches",
		map[string]any{"parentBranchId": w.branch, "forkAfterMessageId": w.message, "name": "sibling"}), "id")
	var ids []string
	assemble := func(asOf time.Time) map[string]any {
		t.Helper()
		out := h.must(http.StatusCreated, http.MethodPost, "/v1/assemblies", map[string]any{"branchId": w.branch,
			"participantId": w.participant, "tokenBudget": 4000, "asOf": asOf.UTC().Format(time.RFC3339Nano)})
		ids = append(ids, str(out, "id"))
		return out
	}
	shared := func() int64 { return sharedStore.RecordCacheStats().SharedViews }
	// Recorded times come from the server's clock, which is the test's: passed waits until
	// the clock has passed t, so that what is recorded after it is recorded strictly later.
	passed := func(t time.Time) time.Time {
		for {
			if now := time.Now(); now.After(t) {
				return now
			}
		}
	}

	assemble(time.Now())
	asOf := passed(time.Now())
	passed(asOf)
	h.must(http.StatusCreated, http.MethodPost, "/v1/branches/"+sibling+"/messages",
		map[string]any{"role": "user", "content": "on the sibling"})
	before := shared()
	assemble(asOf)
	if n := shared() - before; n != 1 {
		t.Errorf("as of before a write on a sibling branch: %d shared views, want 1", n)
	}

	passed(asOf)
	late := str(h.must(http.StatusCreated, http.MethodPost, "/v1/branches/"+w.branch+"/messages",
		map[string]any{"role": "user", "content": "on the lineage, after asOf"}), "id")
	if got := includedAs(assemble(time.Now()))[late]; got != "message" {
		t.Fatalf("the lineage's new message %s as of now: %q, want message", late, got)
	}
	before = shared()
	old := assemble(asOf)
	if n := shared() - before; n != 0 {
		t.Errorf("as of before a write on the lineage: %d shared views, want 0", n)
	}
	if got, ok := includedAs(old)[late]; ok {
		t.Errorf("the message %s recorded after asOf is included as %q", late, got)
	}
	for _, id := range ids {
		if rep := h.must(http.StatusOK, http.MethodPost, "/v1/assemblies/"+id+"/replay", nil); rep["identical"] != true {
			t.Errorf("assembly %s: shared and fresh reads differ: %v", id, rep["differences"])
		}
	}
}

// TestFirstAssembliesShareOneRead starts assemblies on a conversation that no copy holds
// yet, all at once: one of them reads the conversation in full and the others wait for its
// copy and read only what changed since, instead of each reading it whole.
func TestFirstAssembliesShareOneRead(t *testing.T) {
	store := openStore(blobDir)
	defer store.Close(context.Background())
	h := newHarnessWith(t, store, "")
	sum, err := seed.Generate(t.Context(), h.client(),
		seed.Config{Rounds: 60, Branches: 3, Participants: 1, Seed: 5})
	if err != nil {
		t.Fatalf("seeding: %v", err)
	}
	deep := sum.Deepest()
	body := map[string]any{"branchId": deep.ID, "participantId": sum.ParticipantIDs[0], "tokenBudget": 8000}
	const n = 8
	before := store.RecordCacheStats()
	start := make(chan struct{})
	answers := make([]response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i] = h.call(http.MethodPost, "/v1/assemblies", body)
		}()
	}
	close(start)
	wg.Wait()
	var first []any
	for i, a := range answers {
		if a.status != http.StatusCreated {
			t.Fatalf("assembly %d: got status %d, want 201; body %s", i, a.status, a.body)
		}
		included := a.obj(t)["included"].([]any)
		if i == 0 {
			first = included
		} else if !reflect.DeepEqual(included, first) {
			t.Errorf("assembly %d included %v, want what assembly 0 included, %v", i, included, first)
		}
	}
	after := store.RecordCacheStats()
	full, delta := after.FullReads-before.FullReads, after.DeltaReads-before.DeltaReads
	if full != 1 || delta != n-1 {
		t.Errorf("got %d full and %d delta reads, want 1 full read and %d delta reads", full, delta, n-1)
	}
}

// The decisions an assembly's record stores (model.Decision.Stored) include those of the
// records the budget never considered, on each path a judgement takes: judged whole, shared
// by an assembly of the unchanged lineage, and extended after a write, whose settled
// decisions are taken over from the judgement before. A memory past its freshness under
// strict-freshness is such a record: omitted as stale.
func TestSettledDecisionsAreStoredOnEveryPath(t *testing.T) {
	h := newHarness(t)
	w := h.world()
	art := str(h.must(201, "POST", "/v1/tool-calls/"+w.call+"/result", map[string]any{"status": "succeeded",
		"result": map[string]any{"eu": 3460000}, "at": "2026-11-01T09:00:04Z"}), "artifactId")
	mem := str(h.must(201, "POST", "/v1/memories", map[string]any{"derivedFrom": []string{art}, "summary": "EU Q3 revenue: 3.46M",
		"freshnessClass": "bounded", "observedAt": "2026-11-01T09:00:04Z"}), "id")
	body := map[string]any{"branchId": w.branch, "participantId": w.participant, "policyVersion": "strict-freshness",
		"now": "2026-11-20T00:00:00Z"}
	stored := func(path string) {
		t.Helper()
		a := h.assemble(body)
		if omitted := a["omitted"].(map[string]any); omitted["stale"] != float64(1) {
			t.Fatalf("%s: omitted %v, want the memory as stale", path, omitted)
		}
		rec, err := sharedStore.Assembly(t.Context(), h.account, str(a, "id"))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range rec.Decisions {
			if d.Ref == mem && d.Policy == model.PolicyFreshness && d.Outcome == "omitted" {
				return
			}
		}
		t.Errorf("%s: the record stores no freshness omission of %s: %+v", path, mem, rec.Decisions)
	}
	stored("judged whole")
	stored("the judgement shared")
	h.must(201, "POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "and Q4?"})
	stored("the judgement extended")
}
