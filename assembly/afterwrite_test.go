package assembly

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/lineage"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// copyGraph serves snapshots from a copy of one single-branch conversation, as the store
// does once its copy is up to date, so that what an assembly after a write costs can be
// measured and checked without a database.
type copyGraph struct {
	c       *lineage.Conversation
	t0      time.Time
	seq     int64
	rounds  int
	runID   string
	lastArt string
	// supersede and conflict are the memory the next memory written supersedes or
	// conflicts with, if any.
	supersede, conflict string
	// extended counts the snapshots whose view extended the one before.
	extended int
	// rawRead are the artifacts whose raw bodies were read, in order; results are the raw
	// results of those not read as a short JSON naming them.
	rawRead []string
	results map[string]string
	// records are the records written, by id.
	records map[string]*lineage.Record
}

const copyBranch = "br_main"

func newCopyGraph(rounds int) *copyGraph {
	g := &copyGraph{c: lineage.NewConversation("cnv_w", 0), t0: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	for range rounds {
		g.round()
	}
	return g
}

// add merges one record written at the next seq, as the store merges what it read.
func (g *copyGraph) add(kind model.RecordType, id string, base model.Candidate, baseline int) *lineage.Record {
	g.seq++
	at := g.t0.Add(time.Duration(g.seq) * time.Second)
	base.Type, base.ID, base.BranchID, base.Seq, base.InLineage, base.CreatedAt = kind, id, copyBranch, g.seq, true, at
	base.OwnerParticipantID, base.PrivacyClass = "pt_1", "public"
	if kind != model.TypeMessage {
		base.OwnerRunID = g.runID
	}
	r := &lineage.Record{Kind: kind, ID: id, ElementID: "4:x:" + id, BranchID: copyBranch, Seq: g.seq, Rev: g.seq,
		RecordedAt: at, Baseline: baseline, Base: base}
	if kind == model.TypeMemory && g.supersede != "" {
		r.Supersedes, g.supersede = []string{g.supersede}, ""
	}
	if kind == model.TypeMemory && g.conflict != "" {
		r.ConflictsWith, g.conflict = []string{g.conflict}, ""
	}
	g.c.Lock()
	g.c.Merge(r)
	g.c.Advance(copyBranch, g.seq)
	g.c.Unlock()
	if g.records == nil {
		g.records = map[string]*lineage.Record{}
	}
	g.records[id] = r
	return r
}

// restamp merges a record changed in place at the next revision, as the store merges a
// write that stamps it (a call's result arriving, an artifact's redaction).
func (g *copyGraph) restamp(r *lineage.Record) {
	again := *r
	g.seq++
	again.Rev = g.seq
	g.c.Lock()
	g.c.Merge(&again)
	g.c.Advance(copyBranch, g.seq)
	g.c.Unlock()
	g.records[r.ID] = &again
}

// round writes one turn: the user's message, a run with a tool call, its result and the
// memory derived from it, and the answer. Every third round's memory supersedes the one
// before it (the copy holds memories left out, whose relevance still changes with the
// message answered), and every fifth's conflicts with it.
func (g *copyGraph) round() {
	g.rounds++
	n := g.rounds
	g.add(model.TypeMessage, fmt.Sprintf("msg_u%d", n), model.Candidate{Message: model.MessageFacts{Role: "user",
		Content: fmt.Sprintf("look up the %s renewal of account acct_%d for the %s report", words[n%len(words)], n, words[(n*7)%len(words)])}}, 30)
	g.runID = fmt.Sprintf("run_%d", n)
	g.c.Lock()
	g.c.MergeRun(lineage.Run{ID: g.runID, Rev: g.seq, Status: "running"})
	g.c.Unlock()
	if n%3 == 0 {
		g.supersede = fmt.Sprintf("mem_%d", n-1)
	} else if n%5 == 0 {
		g.conflict = fmt.Sprintf("mem_%d", n-1)
	}
	g.toolRound(fmt.Sprint(n))
	end := g.t0.Add(time.Duration(g.seq) * time.Second)
	g.c.Lock()
	g.c.MergeRun(lineage.Run{ID: g.runID, Rev: g.seq + 1, Status: "completed", EndedAt: &end, EndRecordedAt: &end})
	g.c.Unlock()
	g.add(model.TypeMessage, fmt.Sprintf("msg_a%d", n), model.Candidate{Message: model.MessageFacts{Role: "assistant",
		Content: fmt.Sprintf("Account acct_%d renews on %d May; the %s report has it.", n, 1+n%28, words[n%len(words)])}}, 25)
}

// toolRound writes a call of the current run, its ~2 KB result and the memory derived from it.
// write makes the i-th of a series of writes on the assembled run: two tool rounds, a round
// of messages, then a user message within the run that names the latest artifact and terms
// of two memories' summaries (the message answered changes, and memories' relevance with
// it).
func (g *copyGraph) write(i int) {
	switch i % 4 {
	case 0, 1:
		g.toolRound(fmt.Sprintf("w%d", i))
	case 2:
		g.round()
	case 3:
		g.add(model.TypeMessage, fmt.Sprintf("msg_x%d", i), model.Candidate{Message: model.MessageFacts{Role: "user",
			Content: fmt.Sprintf("and the renewal of %s: owner of acct_w%d, tier w%d?", g.lastArt, i-2, i-3)}}, 10)
	}
}

func (g *copyGraph) toolRound(tag string) {
	call := g.add(model.TypeToolCall, "call_"+tag, model.Candidate{Tool: model.ToolFacts{Name: "crm_lookup", Status: model.ToolPending},
		Call: model.CallFacts{CallID: "c" + tag, Arguments: `{"account":"acct_` + tag + `"}`}}, 20)
	art := g.add(model.TypeArtifact, "art_"+tag, model.Candidate{Tool: model.ToolFacts{Name: "crm_lookup", Status: model.ToolSucceeded},
		Artifact: model.ArtifactFacts{ToolCallID: call.ID, ResultBytes: 2048}, Visibility: model.VisibilityBranch}, 600)
	g.lastArt = art.ID
	// The result arrives: the call is stamped again.
	g.restamp(call)
	facts := model.MemoryFacts{
		Summary:           fmt.Sprintf("crm_lookup acct_%s: renewal %s, owner %s, tier %s", tag, words[len(tag)%len(words)], words[(len(tag)*3)%len(words)], tag),
		FreshnessClass:    "durable",
		SourceArtifactIDs: []string{art.ID}, LiveSourceIDs: []string{art.ID}}
	switch {
	case strings.HasPrefix(tag, "w"):
		// The tests' writes: stale just after the next request, sooner than any
		// memory before it, so that the judgement of the view it extends holds a while
		// longer than its own.
		deadline := g.t0.Add(time.Duration(g.seq+90) * time.Second)
		facts.FreshnessClass, facts.StaleAfter = "volatile", &deadline
	case g.seq%40 == 0:
		// Stale 25 minutes after it is written: as the clock moves on, judgements of
		// earlier views stop holding.
		deadline := g.t0.Add(time.Duration(g.seq+1)*time.Second + 25*time.Minute)
		facts.FreshnessClass, facts.StaleAfter = "volatile", &deadline
	}
	g.add(model.TypeMemory, "mem_"+tag, model.Candidate{Memory: facts, Visibility: model.VisibilityBranch}, 0)
}

func (g *copyGraph) LineageSnapshot(_ context.Context, _ string, req model.AssemblyRequest, opts model.SnapshotOptions) (model.Snapshot, error) {
	snap := model.Snapshot{ConversationID: "cnv_w", Participant: model.Participant{ID: "pt_1", Name: "agent", Provider: "openai", Model: "gpt-4.1"},
		ParticipantNames: map[string]string{"pt_1": "agent"}}
	if req.RunID != "" {
		snap.Run = &model.Run{ID: req.RunID, RuntimeKind: model.RuntimeChat}
	}
	lin := lineage.Lineage{ConversationID: "cnv_w", Branches: []lineage.Branch{{BranchID: copyBranch, Cutoff: lineage.OpenEnded}}}
	g.c.RLock()
	defer g.c.RUnlock()
	_, err := g.c.Select(lin, req, opts, snap.ParticipantNames, &snap)
	if snap.ViewParent != "" {
		g.extended++
	}
	return snap, err
}

func (g *copyGraph) RawPayloads(_ context.Context, _ string, ids []string) (map[string]model.ArtifactRaw, error) {
	out := map[string]model.ArtifactRaw{}
	g.rawRead = append(g.rawRead, ids...)
	for _, id := range ids {
		out[id] = model.ArtifactRaw{Arguments: []byte(`{"account":"x"}`), Result: []byte(`{"renewal":"` + id + `"}`)}
		if result, ok := g.results[id]; ok {
			out[id] = model.ArtifactRaw{Arguments: []byte(`{"account":"x"}`), Result: []byte(result)}
		}
	}
	return out, nil
}

func (g *copyGraph) RecordAssembly(context.Context, string, model.Assembly, []byte) error { return nil }
func (g *copyGraph) Assembly(context.Context, string, string) (model.Assembly, error) {
	return model.Assembly{}, model.NotFound("assembly", "")
}
func (g *copyGraph) ProvenancePath(context.Context, string, string) ([]model.PathStep, error) {
	return nil, nil
}

// request is the assembly the tests and benchmarks repeat: the latest run's, as an agent's
// next model call, judged just after the last write.
func (g *copyGraph) request() model.AssemblyRequest {
	now := g.t0.Add(time.Duration(g.seq+60) * time.Second)
	return model.AssemblyRequest{BranchID: copyBranch, ParticipantID: "pt_1", RunID: g.runID, TokenBudget: 8000, Now: now, AsOf: now}
}

// An assembly after a write, built from the views and judgements kept for the assembly
// before it, is the assembly a fresh read and judgement of the same copy makes: every
// message, included record, token count and omission, write after write.
func TestAssembliesAfterWritesAreFreshOnes(t *testing.T) {
	g := newCopyGraph(300)
	s := NewService(g)
	v, err := s.Policies.Resolve(t.Context(), "acct", "")
	if err != nil {
		t.Fatal(err)
	}
	compare := func(step string) {
		t.Helper()
		for _, rounds := range []bool{false, true} {
			req := g.request()
			req.PolicyVersion, req.ToolRounds = v.ID, rounds
			got, err := s.compute(t.Context(), "acct", req, model.SnapshotOptions{}, v)
			if err != nil {
				t.Fatal(err)
			}
			want, err := s.compute(t.Context(), "acct", req, model.SnapshotOptions{Fresh: true}, v)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Included) < 20 {
				t.Fatalf("%s: only %d records included: the assembly is not the long one meant", step, len(got.Included))
			}
			got.TimingsMs, want.TimingsMs = model.Timings{}, model.Timings{}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s (tool rounds %v): the assembly from kept views differs from a fresh one:\n got %+v\nwant %+v", step, rounds, got, want)
			}
			// The prices the budget worked from are a whole judgement's too, lines kept from
			// the judgement before included: the budget's measure would hide a price that is
			// only wrong enough to change a record at the margin.
			if got, want := pricesOf(t, s, v, req, model.SnapshotOptions{}), pricesOf(t, s, v, req, model.SnapshotOptions{Fresh: true}); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s (tool rounds %v): the kept judgement's prices differ from a whole judgement's:\n got %+v\nwant %+v", step, rounds, got, want)
			}
		}
	}
	compare("first")
	for i := range 40 {
		g.write(i)
		compare(fmt.Sprintf("after write %d", i))
		compare(fmt.Sprintf("again after write %d", i))
	}
	if s.ReusedJudgements() == 0 || g.extended < 30 {
		t.Fatalf("%d assemblies reused a judgement, %d extended a view: the paths meant were not exercised", s.ReusedJudgements(), g.extended)
	}
}

// An assembly after a write reads the raw bodies of what it shows raw and the assembly
// before did not show (the round just written), not again those the judgement it extends
// read (here an artifact the requests name exact, shown raw at every step).
func TestAfterAWriteOnlyNewRawBodiesAreRead(t *testing.T) {
	g := newCopyGraph(50)
	s := NewService(g)
	const exact = "art_10"
	assemble := func() (raw map[string]bool, read []string) {
		t.Helper()
		req := g.request()
		req.ToolRounds, req.ExactArtifactIDs = true, []string{exact}
		g.rawRead = nil
		a, _, err := s.Assemble(t.Context(), "acct", req)
		if err != nil {
			t.Fatal(err)
		}
		raw = map[string]bool{}
		var sent strings.Builder
		for _, m := range a.Messages {
			sent.WriteString(m.Content)
		}
		for _, inc := range a.Included {
			if inc.As == model.AsRaw {
				raw[inc.Ref] = true
				// Shown raw is shown with its body, read now or by the judgement extended.
				if body := `{"renewal":"` + inc.Ref + `"}`; !strings.Contains(sent.String(), body) {
					t.Errorf("%s is included raw without its body %s in the request", inc.Ref, body)
				}
			}
		}
		return raw, g.rawRead
	}
	before, _ := assemble()
	for i := range 6 {
		g.toolRound(fmt.Sprintf("s%d", i))
		shown, read := assemble()
		if !shown["art_s"+fmt.Sprint(i)] || !shown[exact] {
			t.Fatalf("step %d: shows %v raw, want the round just written and %s: the step is not the one meant", i, shown, exact)
		}
		for _, id := range read {
			if before[id] {
				t.Errorf("step %d: read the body of %s again, which the assembly before showed raw", i, id)
			}
		}
		for id := range shown {
			if !before[id] && !slices.Contains(read, id) {
				t.Errorf("step %d: shows %s raw without reading it", i, id)
			}
		}
		before = shown
	}
	// The exact artifact changed in place, as its redaction stamps it: read again.
	g.restamp(g.records[exact])
	if _, read := assemble(); !slices.Contains(read, exact) {
		t.Errorf("after %s changed, its body was not read again (read %v)", exact, read)
	}
	if g.extended < 7 {
		t.Fatalf("%d assemblies extended a view: the path meant was not exercised", g.extended)
	}
}

// judgementPrices are what a judgement gives the budget besides its verdicts.
type judgementPrices struct {
	Budgeted            []int
	Texts               []string
	Costs, CompactCosts []int
	Paired, Group       []int
	Alone               []int
	Lones               map[int]string
	InBlock, Clocked    []bool
	Side, RawForm       []bool
	JudgedIn, Window    []bool
	Sides               []int
	Conflicts           *policy.Conflicts
	// ValidFrom and ValidUntil bound the now at which the judgement holds.
	ValidFrom, ValidUntil time.Time
}

// pricesOf returns the prices of the judgement an assembly of req would work from: the kept
// one, or with opts.Fresh a whole judgement of a fresh read.
func pricesOf(t *testing.T, s *Service, v policy.Version, req model.AssemblyRequest, opts model.SnapshotOptions) judgementPrices {
	t.Helper()
	snap, err := s.Graph.LineageSnapshot(t.Context(), "acct", req, opts)
	if err != nil {
		t.Fatal(err)
	}
	req = completed(req, snap, v)
	tk, err := NewTokenizer(EncodingForModel(req.Model))
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.judgement(t.Context(), "acct", v, req, snap, tk, &model.Timings{})
	if err != nil {
		t.Fatal(err)
	}
	return pricesOfJudgement(j)
}

func pricesOfJudgement(j *judgement) judgementPrices {
	return judgementPrices{Budgeted: j.budgeted, Texts: j.texts, Costs: j.costs, CompactCosts: j.compactCosts, Paired: j.paired,
		Group: j.group, Alone: j.alone, Lones: j.lones, InBlock: j.inBlock, Clocked: j.clocked, Side: j.side, Sides: j.sides,
		RawForm: j.rawForm, JudgedIn: j.judgedIn, Window: j.window, Conflicts: j.conflicts, ValidFrom: j.validFrom, ValidUntil: j.validUntil}
}

// BenchmarkAssemblyAfterWrite10000Rounds times the assembly of a 10,000-round single-branch
// conversation right after a tool call and its result were written on the assembled run,
// without a database: the copy brought up to date, the candidates built and judged, the
// budget fitted and the request rendered. The write is not timed.
func BenchmarkAssemblyAfterWrite10000Rounds(b *testing.B) {
	benchmarkAfterToolRounds(b, func(*model.AssemblyRequest) {})
}

// BenchmarkAssemblyToolStep10000Rounds times what a continue assembles on the same
// conversation after each tool round of its run: the assembly after a write, with the run's
// answered calls sent as native tool rounds.
func BenchmarkAssemblyToolStep10000Rounds(b *testing.B) {
	benchmarkAfterToolRounds(b, func(req *model.AssemblyRequest) { req.ToolRounds, req.Provider = true, "openai" })
}

// benchmarkAfterToolRounds times the assembly of the request shaped by shape right after each
// tool round written on the assembled run of a 10,000-round conversation.
func benchmarkAfterToolRounds(b *testing.B, shape func(*model.AssemblyRequest)) {
	g := newCopyGraph(10_000)
	s := NewService(g)
	request := func() model.AssemblyRequest {
		req := g.request()
		shape(&req)
		return req
	}
	if _, _, err := s.Assemble(b.Context(), "acct", request()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		g.toolRound(fmt.Sprintf("b%d", i))
		req := request()
		b.StartTimer()
		if _, _, err := s.Assemble(b.Context(), "acct", req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssemblyNewTurn10000Rounds times what a generation assembles on the same
// conversation: each turn ends the run before it with its answer, then writes the user's
// next message and starts a run for it, and the new run's request is assembled. The
// message answered changes at every turn, and every memory's relevance with it.
func BenchmarkAssemblyNewTurn10000Rounds(b *testing.B) {
	g := newCopyGraph(10_000)
	s := NewService(g)
	if _, _, err := s.Assemble(b.Context(), "acct", g.request()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		g.turn(i)
		req := g.request()
		b.StartTimer()
		if _, _, err := s.Assemble(b.Context(), "acct", req); err != nil {
			b.Fatal(err)
		}
	}
}

// turn ends the current run with its answer, and begins the next turn as a generation
// does: the user's message, and a run it triggers.
func (g *copyGraph) turn(i int) {
	end := g.t0.Add(time.Duration(g.seq) * time.Second)
	g.c.Lock()
	g.c.MergeRun(lineage.Run{ID: g.runID, Rev: g.seq + 1, Status: "completed", EndedAt: &end, EndRecordedAt: &end})
	g.c.Unlock()
	g.add(model.TypeMessage, fmt.Sprintf("msg_ta%d", i), model.Candidate{Message: model.MessageFacts{Role: "assistant",
		Content: fmt.Sprintf("The %s report is ready.", words[i%len(words)])}}, 10)
	g.add(model.TypeMessage, fmt.Sprintf("msg_tu%d", i), model.Candidate{Message: model.MessageFacts{Role: "user",
		Content: fmt.Sprintf("what is the %s renewal of acct_%d, and who owns the %s tier?", words[(i*5)%len(words)], i%997, words[(i*11)%len(words)])}}, 20)
	g.runID = fmt.Sprintf("run_t%d", i)
	g.c.Lock()
	g.c.MergeRun(lineage.Run{ID: g.runID, Rev: g.seq, Status: "running"})
	g.c.Unlock()
}

// BenchmarkAssemblyUnchanged10000Rounds times the same assembly repeated on an unchanged copy.
func BenchmarkAssemblyUnchanged10000Rounds(b *testing.B) {
	g := newCopyGraph(10_000)
	s := NewService(g)
	req := g.request()
	if _, _, err := s.Assemble(b.Context(), "acct", req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, _, err := s.Assemble(b.Context(), "acct", req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRoundResultsWithheldSayWhy renders a run's tool rounds on a long conversation: a result
// the provider may not receive, and one the budget has no room for, are named with the
// reason their bodies are withheld, and a call made after a result begins the next round.
// These read the call's outcome among every verdict of the judgement (the first), or as
// the budget left it (the second).
func TestRoundResultsWithheldSayWhy(t *testing.T) {
	g := newCopyGraph(300)
	// bare writes a call of the run with its result and no memory derived from it.
	bare := func(tag, tool string, edit func(*lineage.Record)) {
		call := g.add(model.TypeToolCall, "call_"+tag, model.Candidate{Tool: model.ToolFacts{Name: tool, Status: model.ToolPending},
			Call: model.CallFacts{CallID: "c" + tag, Arguments: `{"path":"x"}`}}, 20)
		art := g.add(model.TypeArtifact, "art_"+tag, model.Candidate{Tool: model.ToolFacts{Name: tool, Status: model.ToolSucceeded},
			Artifact: model.ArtifactFacts{ToolCallID: call.ID, ResultBytes: 100}, Visibility: model.VisibilityBranch}, 60)
		changed := *art
		edit(&changed)
		g.restamp(&changed)
		g.restamp(call)
	}
	bare("secret", "vault_read", func(r *lineage.Record) { r.Base.PrivacyClass = "" }) // never raw for any provider
	g.toolRound("next")
	bare("big", "sheet_read", func(r *lineage.Record) { r.Base.Artifact.ResultBytes = 16 << 10 })
	g.results = map[string]string{"art_big": strings.Repeat("row after row of figures, ", 600)}
	req := g.request()
	req.ToolRounds, req.Provider, req.TokenBudget = true, "openai", 3000
	a, _, err := NewService(g).Assemble(t.Context(), "acct", req)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range a.Messages {
		switch {
		case len(m.ToolCalls) > 0:
			var ids []string
			for _, c := range m.ToolCalls {
				ids = append(ids, c.ID)
			}
			got = append(got, "calls "+strings.Join(ids, ","))
		case m.Role == "tool":
			got = append(got, m.ToolCallID+": "+m.Content)
		}
	}
	want := []string{
		"calls c300", "c300: crm_lookup acct_300: renewal booking, owner fell, tier 300", // its memory stands in
		"calls csecret", "csecret: Result of vault_read kept as artifact art_secret, not shown: restricted for openai.",
		"calls cnext", "cnext: crm_lookup acct_next: renewal paris, owner email, tier next",
		"calls cbig", "cbig: Result of sheet_read kept as artifact art_big, not shown: over the token budget; request it as exact evidence.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("the run's rounds render as\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
