package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/seed"
)

// TestAssemblyReadUsesIndexSeeksOnly profiles the statements an assembly's read runs —
// a whole read (no cached copy: ConversationHead, then the Whole* statements for the
// records), ConversationRecords as a delta read (the steady state), BranchConversation (a branch forked since the copy was made), LocateRecords
// (the raw payloads a policy selected) and BranchParticipants (what a generation resolves
// its participants against) — on a seeded conversation in the real Neo4j, and
// walks each plan: every record must be reached through an index seek, never a scan of a
// label, an index or the whole store, since a scan grows with every account's data and
// not with the conversation. The delta read must also reach only the records written
// since the revisions it sends.
func TestAssemblyReadUsesIndexSeeksOnly(t *testing.T) {
	h := newHarness(t)
	sum, err := seed.Generate(t.Context(), h.client(),
		seed.Config{Rounds: 30, Branches: 4, Participants: 2, Seed: 22})
	if err != nil {
		t.Fatalf("seeding: %v", err)
	}
	branch := sum.Deepest()
	if branch.Depth == 0 || branch.LastRunID == "" {
		t.Fatalf("seeded conversation has no forked branch with a run of its own: %+v", branch)
	}
	read := map[string]any{"accountId": h.account, "branchId": branch.ID,
		"participantId": branch.LastRunParticipantID, "runId": branch.LastRunID}

	// The revisions a copy made now would hold, then one write on the assembled branch:
	// the delta read must bring back that message alone.
	since := map[string]any{}
	for _, rec := range cypherQuery(t, "MATCH (b:Branch {conversationId: $c, accountId: $a}) RETURN b.id, b.rev",
		map[string]any{"c": sum.ConversationID, "a": h.account}) {
		since[rec.Values[0].(string)] = rec.Values[1]
	}
	if len(since) != len(sum.Branches) {
		t.Fatalf("got %d branches in the graph, want %d", len(since), len(sum.Branches))
	}
	var whole []any
	for id := range since {
		whole = append(whole, map[string]any{"id": id, "since": int64(-1)})
	}
	h.must(http.StatusCreated, http.MethodPost, "/v1/branches/"+branch.ID+"/messages",
		map[string]any{"role": "user", "content": "and the figure for the next quarter?"})

	var artifactIDs []string
	for _, rec := range cypherQuery(t, "MATCH (a:ToolArtifact {conversationId: $c}) WHERE a.accountId = $a RETURN a.id LIMIT 5",
		map[string]any{"c": sum.ConversationID, "a": h.account}) {
		artifactIDs = append(artifactIDs, rec.Values[0].(string))
	}
	if len(artifactIDs) == 0 {
		t.Fatal("seeded conversation has no artifacts")
	}

	type statement struct {
		name, query string
		params      map[string]any
		// changedRows, when not negative, is how many rows the seeks of the (branchId, rev)
		// indexes must return in all.
		changedRows int64
	}
	statements := []statement{
		{"whole read's head", "ConversationHead", read, -1},
		{"delta read", "ConversationRecords", with(read, "since", since), 1},
		{"forked branch", "BranchConversation", map[string]any{"accountId": h.account, "branchId": branch.ID}, -1},
		{"raw payloads", "LocateRecords", map[string]any{"accountId": h.account, "ids": artifactIDs}, -1},
		{"generation's participants", "BranchParticipants", map[string]any{"accountId": h.account, "branchId": branch.ID}, -1},
	}
	for _, name := range wholeReads {
		statements = append(statements, statement{"whole read's " + name, name, map[string]any{"accountId": h.account, "branches": whole}, -1})
	}
	for _, s := range statements {
		t.Run(s.name, func(t *testing.T) {
			plan := profile(t, s.query, s.params)
			var changed int64
			seen := map[string]int{}
			walkPlan(plan, func(p neo4j.ProfiledPlan, path string) {
				op, details := operatorOf(p)
				seen[op]++
				// A plan's rows start at its leaves: an index seek, or rows that come from
				// the parameters (Unwind of a list, the Argument of a subquery).
				if strings.Contains(op, "Scan") {
					t.Errorf("%s: %s at %s (%s) scans instead of seeking an index", s.query, op, path, details)
				} else if len(p.Children()) == 0 && op != "Argument" && op != "Unwind" && !strings.Contains(op, "Seek") {
					t.Errorf("%s: %s at %s (%s) produces rows without an index seek", s.query, op, path, details)
				}
				if strings.Contains(op, "Seek") && strings.Contains(details, "(branchId, rev)") {
					changed += p.Records()
				}
			})
			t.Logf("%s: operators %v", s.query, seen)
			if s.changedRows >= 0 && changed != s.changedRows {
				t.Errorf("%s: the (branchId, rev) seeks returned %d rows, want %d (the records written since $since)",
					s.query, changed, s.changedRows)
			}
		})
	}
}

// TestStepStatementsDoNotGrowWithHistory plays one agent step — a message, a run, a tool
// call and its result, an assembly, the run's end, then a generation — on the deepest branch
// of a short and of a long seeded conversation, through the API on a store that profiles
// every statement, and checks that no statement of the step handles more rows on the long
// history than on the short one: what an agent pays per step must not grow with its history
// (issue 37). The assembler's copy of each conversation is made before the step, so its
// read is the delta read. Left out: the statements that link or fetch what the request
// includes (RecordAssemblies, LocateRecords), which the budget bounds, not the history.
func TestStepStatementsDoNotGrowWithHistory(t *testing.T) {
	store := openStore(t.TempDir())
	h := newHarnessWith(t, store, "")
	var (
		mu      sync.Mutex
		profile map[string]int64 // the most rows any operator of a statement handled
	)
	store.ProfileStatements = func(name string, plan neo4j.ProfiledPlan) {
		mu.Lock()
		defer mu.Unlock()
		if profile == nil {
			return
		}
		walkPlan(plan, func(p neo4j.ProfiledPlan, _ string) { profile[name] = max(profile[name], p.Records()) })
	}
	t.Cleanup(func() { store.ProfileStatements = nil })
	// ErasedAccounts is no statement of the step: a request reads the erased accounts again
	// when its server's view is two seconds old, and its rows are the erasures other tests
	// made, whatever this history.
	bounded := map[string]bool{"RecordAssemblies": true, "LocateRecords": true, "ErasedAccounts": true}

	step := func(rounds int) map[string]int64 {
		sum, err := seed.Generate(t.Context(), h.client(), seed.Config{Rounds: rounds, Branches: 2, Participants: 1, Seed: 25})
		if err != nil {
			t.Fatalf("seeding %d rounds: %v", rounds, err)
		}
		b := sum.Deepest()
		echo := str(h.must(http.StatusCreated, "POST", "/v1/conversations/"+sum.ConversationID+"/participants",
			map[string]any{"kind": "model", "name": "echo-bot", "provider": "echo"}), "id")
		assembly := map[string]any{"branchId": b.ID, "participantId": b.LastRunParticipantID, "runId": b.LastRunID, "tokenBudget": 4000}
		h.must(http.StatusCreated, "POST", "/v1/assemblies", assembly)

		mu.Lock()
		profile = map[string]int64{}
		mu.Unlock()
		msg := h.must(http.StatusCreated, "POST", "/v1/branches/"+b.ID+"/messages", map[string]any{"role": "user", "content": "and next quarter?"})
		run := str(h.must(http.StatusCreated, "POST", "/v1/branches/"+b.ID+"/runs", map[string]any{
			"participantId": b.LastRunParticipantID, "runtimeKind": "chat", "triggerMessageId": str(msg, "id")}), "id")
		call := str(h.must(http.StatusCreated, "POST", "/v1/runs/"+run+"/tool-calls", map[string]any{
			"tool": "sheet_read", "arguments": map[string]any{"sheet": "Q4"}}), "id")
		h.must(http.StatusCreated, "POST", "/v1/tool-calls/"+call+"/result", map[string]any{
			"status": "succeeded", "result": map[string]any{"rows": []int{1, 2, 3}}})
		h.must(http.StatusCreated, "POST", "/v1/assemblies", with(assembly, "runId", run))
		h.must(http.StatusOK, "PATCH", "/v1/runs/"+run, map[string]any{"status": "completed"})
		h.must(http.StatusCreated, "POST", "/v1/generations", map[string]any{"branchId": b.ID,
			"participantIds": []string{echo}, "userMessage": map[string]any{"content": "and the year?"}})
		mu.Lock()
		defer mu.Unlock()
		out := profile
		profile = nil
		return out
	}
	short, long := step(6), step(60)
	for _, name := range []string{"AppendMessage", "LatestLineageMessage", "BeginTurn", "FinishTurn", "RequestToolCall",
		"RecordToolResult", "ConversationRecords"} {
		if _, ok := long[name]; !ok {
			t.Errorf("the step ran no %s: it no longer covers that statement", name)
		}
	}
	for name, rows := range long {
		if bounded[name] {
			continue
		}
		if rows > short[name] {
			t.Errorf("%s: an operator handled %d rows after 60 rounds, %d after 6: the statement reads more as the history grows",
				name, rows, short[name])
		}
	}
	t.Logf("most rows per statement, 6 rounds: %v; 60 rounds: %v", short, long)
}

// profile runs a query file of cypher/queries under PROFILE on the suite's Neo4j, outside
// the code under test, and returns the plan Neo4j executed.
func profile(t *testing.T, name string, params map[string]any) neo4j.ProfiledPlan {
	t.Helper()
	text, err := cypher.QueryText(name)
	if err != nil {
		t.Fatal(err)
	}
	driver, err := neo4j.NewDriverWithContext(neo4jServer.URI, neo4j.BasicAuth(neo4jServer.User, neo4jServer.Password, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close(context.Background())
	res, err := neo4j.ExecuteQuery(t.Context(), driver, "PROFILE "+string(text), params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(neo4jServer.Database), neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		t.Fatalf("PROFILE %s: %v", name, err)
	}
	plan := res.Summary.Profile()
	if plan == nil {
		t.Fatalf("PROFILE %s: Neo4j returned no profiled plan", name)
	}
	return plan
}

// walkPlan calls visit on every operator of a plan tree with its path from the root
// (operator names and ids), so that a failure says where in the plan it is.
func walkPlan(p neo4j.ProfiledPlan, visit func(neo4j.ProfiledPlan, string)) {
	var walk func(p neo4j.ProfiledPlan, parent string)
	walk = func(p neo4j.ProfiledPlan, parent string) {
		op, _ := operatorOf(p)
		path := op
		if id, ok := p.Arguments()["Id"]; ok {
			path = fmt.Sprintf("%s#%v", op, id)
		}
		if parent != "" {
			path = parent + " > " + path
		}
		visit(p, path)
		for _, c := range p.Children() {
			walk(c, path)
		}
	}
	walk(p, "")
}

// operatorOf returns an operator's name without the database Neo4j appends to it
// ("NodeIndexSeek@neo4j") and the details PROFILE prints beside it.
func operatorOf(p neo4j.ProfiledPlan) (string, string) {
	op, _, _ := strings.Cut(p.Operator(), "@")
	details, _ := p.Arguments()["Details"].(string)
	return op, details
}

// with returns a copy of params with key set to v.
func with(params map[string]any, key string, v any) map[string]any {
	out := make(map[string]any, len(params)+1)
	for k, x := range params {
		out[k] = x
	}
	out[key] = v
	return out
}

// TestWholeReadAnswersBoundedRows runs the Whole* statements, the records of a whole read, on a
// seeded conversation with a few long messages and checks its rows: records of one kind per
// row, each record once, in rows that do not grow with the history. A history collected
// into one row is one Bolt message of the history's size, which the Go driver reassembles
// in a buffer it grows by one chunk at a time (copying it whole each time) and then keeps
// for the pooled connection: at 10,000 rounds that was most of the first assembly's 9.8 s
// and 50 MB of live heap. A row per record costs Neo4j and the driver about as much again
// as the records: the rows hold about 256 KiB of text each, and a longer record has a row
// of its own. Branches of another account are read as none.
func TestWholeReadAnswersBoundedRows(t *testing.T) {
	h := newHarness(t)
	sum, err := seed.Generate(t.Context(), h.client(), seed.Config{Rounds: 12, Branches: 2, Participants: 1, Seed: 23})
	if err != nil {
		t.Fatalf("seeding: %v", err)
	}
	branch := sum.Deepest()
	// Two messages that share rows with small records at most, and one longer than a row.
	long := map[string]int{}
	for _, n := range []int{150 << 10, 150 << 10, 300 << 10} {
		out := h.must(http.StatusCreated, http.MethodPost, "/v1/branches/"+branch.ID+"/messages",
			map[string]any{"role": "user", "content": strings.Repeat("a long pasted text ", n/19)})
		long[str(out, "id")] = n
	}
	var branches []any
	for _, b := range sum.Branches {
		branches = append(branches, map[string]any{"id": b.ID, "since": int64(-1)})
	}
	params := map[string]any{"accountId": h.account, "branches": branches}
	var recs []*neo4j.Record
	for _, name := range wholeReads {
		text, err := cypher.QueryText(name)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, cypherQuery(t, text, params)...)
		if other := cypherQuery(t, text, with(params, "accountId", "another-account")); len(other) != 0 {
			t.Errorf("another account's %s of these branches answered %d rows, want none", name, len(other))
		}
	}
	want := cypherCount(t, `MATCH (n {conversationId: $c}) WHERE n.accountId = $a AND n.branchId IS NOT NULL
		AND (n:Message OR n:ToolCall OR n:ToolArtifact OR n:ToolMemory OR n:Checkpoint OR n:SkillState OR n:ModelRun)
		RETURN count(n)`, map[string]any{"c": sum.ConversationID, "a": h.account})
	if want < 50 {
		t.Fatalf("the seeded conversation has %d records, too few to tell", want)
	}
	seen := map[string]int{}
	for _, rec := range recs {
		if len(rec.Keys) != 2 || rec.Keys[0] != "kind" || rec.Keys[1] != "records" {
			t.Fatalf("a row has the columns %v, want kind and records", rec.Keys)
		}
		kind, _ := rec.Values[0].(string)
		batch, _ := rec.Values[1].([]any)
		size := 0
		for _, v := range batch {
			r := v.(map[string]any)
			id, _ := r["id"].(string)
			seen[id]++
			encoded, _ := json.Marshal(r)
			size += len(encoded)
			if n, ok := long[id]; ok && n > 256<<10 && len(batch) > 1 {
				t.Errorf("the %d-byte message %s shares a row with %d records", n, id, len(batch)-1)
			}
		}
		// A row holds about 256 KiB of its records' long texts, and 256 for each record's
		// other fields: twice that in all bounds it, whatever the history.
		if len(batch) > 1 && size > 512<<10 {
			t.Errorf("a %s row holds %d records of %d bytes in all", kind, len(batch), size)
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("record %s came back %d times", id, n)
		}
	}
	if int64(len(seen)) != want {
		t.Errorf("the read answered %d records, want %d", len(seen), want)
	}
	if len(recs) >= len(seen)/4 {
		t.Errorf("the read answered %d records in %d rows: they are not batched", len(seen), len(recs))
	}
}

// wholeReads are the statements of a whole read's records (cypher/snapshot.go).
var wholeReads = []string{"WholeMessages", "WholeCalls", "WholeArtifacts", "WholeMemories", "WholeRuns"}
