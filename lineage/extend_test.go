package lineage

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// A view extended after writes holds exactly the candidates and baseline a whole build of
// the same copy holds, over random writes on a branch and its fork: messages, calls (some
// retrying others, some identical repeats), their outcomes, memories (some superseding or
// contradicting others, some conversation-visible), checkpoints, skill states, changed
// records, promotions and runs that end, and writes on the parent before and past the fork
// point.
func TestExtendedViewsMatchWholeBuilds(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		extended, whole := playRandomWrites(t, seed, 400)
		t.Logf("seed %d: %d extended, %d whole", seed, extended, whole)
		if extended < 100 {
			t.Fatalf("seed %d: only %d of %d snapshots extended a view: the test does not exercise extend", seed, extended, extended+whole)
		}
	}
}

// playRandomWrites plays n random writes on a copy, selecting both branches' views after
// each and comparing them with whole builds; it returns how many snapshots extended a view
// and how many did not.
func playRandomWrites(t *testing.T, seed uint64, n int) (extended, whole int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	c := NewConversation("cnv_x", 0)
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	revs, seqs := map[string]int64{}, map[string]int64{}
	var forkAt int64
	var ids []*Record
	byKind := map[model.RecordType][]*Record{}
	runs := []string{"run_1"}
	ended := map[string]bool{}
	c.Lock()
	c.MergeRun(Run{ID: "run_1", Rev: 1, Status: "running"})
	c.Unlock()
	next := 0

	stamp := func(branch string) int64 {
		revs[branch]++
		return revs[branch]
	}
	add := func(kind model.RecordType, branch string, base model.Candidate, edit func(*Record)) *Record {
		next++
		clock = clock.Add(time.Second)
		seqs[branch]++
		id := fmt.Sprintf("%s_%d", kind, next)
		base.Type, base.ID, base.BranchID, base.Seq, base.InLineage = kind, id, branch, seqs[branch], true
		base.CreatedAt = clock
		if base.OwnerRunID == "" && kind != model.TypeMessage {
			base.OwnerRunID = runs[rng.IntN(len(runs))]
		}
		if base.OwnerParticipantID == "" {
			base.OwnerParticipantID = []string{"pt_1", "pt_2"}[rng.IntN(2)]
		}
		r := &Record{Kind: kind, ID: id, ElementID: "4:x:" + id, BranchID: branch, Seq: seqs[branch], Rev: stamp(branch),
			RecordedAt: clock, Baseline: 10 + rng.IntN(50), Base: base}
		if edit != nil {
			edit(r)
		}
		c.Lock()
		c.Merge(r)
		c.Advance(branch, revs[branch])
		c.Unlock()
		ids = append(ids, r)
		byKind[kind] = append(byKind[kind], r)
		return r
	}
	// change merges a new revision of an existing record, as a write that changes it does.
	change := func(old *Record, edit func(*Record)) {
		clock = clock.Add(time.Second)
		r := *old
		r.Rev = stamp(old.BranchID)
		r.Base.Memory.SupersededBy, r.Base.Call.RetriedBy = nil, nil
		edit(&r)
		c.Lock()
		c.Merge(&r)
		c.Advance(old.BranchID, revs[old.BranchID])
		c.Unlock()
	}
	pick := func(kind model.RecordType) *Record {
		list := byKind[kind]
		if len(list) == 0 {
			return nil
		}
		// Mostly recent records, as an agent's writes are.
		k := len(list) - 1 - min(len(list)-1, int(rng.ExpFloat64()*4))
		return list[k]
	}
	branchOf := func() string {
		if forkAt > 0 && rng.IntN(3) > 0 {
			return "br_fork"
		}
		return "br_main"
	}
	lineages := func() []Lineage {
		ls := []Lineage{{ConversationID: "cnv_x", Branches: []Branch{{BranchID: "br_main", Cutoff: OpenEnded}}}}
		if forkAt > 0 {
			ls = append(ls, Lineage{ConversationID: "cnv_x", Branches: []Branch{{BranchID: "br_fork", Cutoff: OpenEnded},
				{BranchID: "br_main", Depth: 1, Cutoff: forkAt}}})
		}
		return ls
	}
	names := map[string]string{"pt_1": "one", "pt_2": "two"}
	views := map[string]model.Snapshot{}
	check := func(step int) {
		t.Helper()
		for _, lin := range lineages() {
			branch := lin.Branches[0].BranchID
			for _, asOf := range []time.Time{clock.Add(time.Hour), clock.Add(-30 * time.Second)} {
				req := model.AssemblyRequest{BranchID: branch, AsOf: asOf}
				var got, want model.Snapshot
				c.RLock()
				_, err := c.Select(lin, req, model.SnapshotOptions{}, names, &got)
				if err == nil {
					_, err = c.Select(lin, req, model.SnapshotOptions{Fresh: true}, names, &want)
				}
				c.RUnlock()
				if err != nil {
					t.Fatalf("seed %d, step %d: %v", seed, step, err)
				}
				if got.ViewParent != "" {
					extended++
					// Every candidate not rebuilt is the parent view's, where it says.
					parent, ok := views[got.ViewParent]
					if !ok {
						t.Fatalf("seed %d, step %d: a view extends %q, which no snapshot had", seed, step, got.ViewParent)
					}
					for i, c := range got.Candidates {
						k := got.ViewPlaces[i]
						if !got.Rebuilt[i] && (k < 0 || parent.Candidates[k] != c) || got.Rebuilt[i] && k >= 0 && parent.Candidates[k].ID != c.ID {
							t.Fatalf("seed %d, step %d: candidate %d (%s, rebuilt %v) is not at %d of the parent view", seed, step, i, c.ID, got.Rebuilt[i], k)
						}
					}
				} else {
					whole++
				}
				if got.View != "" {
					views[got.View] = got
				}
				if got.BaselineTokens != want.BaselineTokens {
					t.Fatalf("seed %d, step %d, %s: baseline %d, a whole build %d", seed, step, branch, got.BaselineTokens, want.BaselineTokens)
				}
				// What KindsInLineageOrder promises the policies: each type's candidates in
				// lineage order (ancestors first, then by seq), a view's messages above all.
				if !got.KindsInLineageOrder {
					t.Fatalf("seed %d, step %d, %s: the view does not say its kinds are in lineage order", seed, step, branch)
				}
				last := map[model.RecordType]*model.Candidate{}
				for _, c := range got.Candidates {
					if p := last[c.Type]; p != nil && c.InLineage && p.InLineage && (p.Depth < c.Depth || p.Depth == c.Depth && p.Seq >= c.Seq) {
						t.Fatalf("seed %d, step %d, %s: %s (depth %d, seq %d) comes after %s (depth %d, seq %d)", seed, step, branch,
							c.ID, c.Depth, c.Seq, p.ID, p.Depth, p.Seq)
					}
					if c.InLineage {
						last[c.Type] = c
					}
				}
				if !reflect.DeepEqual(got.Candidates, want.Candidates) {
					for i := range max(len(got.Candidates), len(want.Candidates)) {
						if i >= len(got.Candidates) || i >= len(want.Candidates) || !reflect.DeepEqual(got.Candidates[i], want.Candidates[i]) {
							t.Fatalf("seed %d, step %d, %s (extended from %q): %d candidates, a whole build %d; the first difference at %d:\n got %+v\nwant %+v",
								seed, step, branch, got.ViewParent, len(got.Candidates), len(want.Candidates), i, at(got.Candidates, i), at(want.Candidates, i))
						}
					}
				}
			}
		}
	}

	for step := range n {
		branch := branchOf()
		switch op := rng.IntN(100); {
		case op < 18:
			add(model.TypeMessage, branch, model.Candidate{Message: model.MessageFacts{Role: []string{"user", "assistant"}[rng.IntN(2)], Content: "hello"}}, nil)
		case op < 36:
			add(model.TypeToolCall, branch, model.Candidate{Tool: model.ToolFacts{Name: "search", Status: model.ToolPending},
				Call: model.CallFacts{Arguments: `{"q":1}`}}, func(r *Record) {
				switch k := rng.IntN(10); {
				case k < 2:
					r.ArgumentsSha256 = fmt.Sprintf("sha%d", rng.IntN(3)) // identical repeats
				case k < 3:
					if old := pick(model.TypeToolCall); old != nil {
						r.Base.Call.RetryOf = old.ID
					}
				}
			})
		case op < 52:
			if call := pick(model.TypeToolCall); call != nil {
				status := []model.ToolStatus{model.ToolSucceeded, model.ToolFailed, model.ToolPending}[rng.IntN(3)]
				add(model.TypeArtifact, branch, model.Candidate{Tool: model.ToolFacts{Name: "search", Status: status},
					Artifact: model.ArtifactFacts{ToolCallID: call.ID, ResultBytes: 100}, Visibility: model.VisibilityBranch}, nil)
				if call.BranchID == branch && rng.IntN(2) == 0 {
					change(call, func(r *Record) { r.Base.Tool.Status = status })
				}
			}
		case op < 66:
			art := pick(model.TypeArtifact)
			add(model.TypeMemory, branch, model.Candidate{Memory: model.MemoryFacts{Summary: "a fact", FreshnessClass: []string{"session", "durable"}[rng.IntN(2)]}},
				func(r *Record) {
					if art != nil {
						r.Base.Memory.SourceArtifactIDs = []string{art.ID}
						r.Base.Memory.LiveSourceIDs = []string{art.ID}
					}
					switch k := rng.IntN(12); {
					case k < 2:
						if old := pick(model.TypeMemory); old != nil {
							r.Supersedes = []string{old.ID}
						}
					case k < 3:
						if old := pick(model.TypeMemory); old != nil {
							r.ConflictsWith = []string{old.ID}
						}
					case k < 4:
						r.Base.Visibility = model.VisibilityConversation
					}
				})
		case op < 70:
			add(model.TypeCheckpoint, branch, model.Candidate{RunState: model.RunStateFacts{RunID: runs[len(runs)-1], State: "s"}}, nil)
		case op < 73:
			add(model.TypeSkills, branch, model.Candidate{RunState: model.RunStateFacts{RunID: runs[len(runs)-1]}}, nil)
		case op < 80:
			// A record changed in place: promoted, or an outcome's status.
			if len(ids) > 0 {
				r := ids[len(ids)-1-min(len(ids)-1, int(rng.ExpFloat64()*6))]
				change(r, func(r *Record) {
					at := clock
					r.PromotedAt, r.PromotedTo = &at, "pt_2"
				})
			}
		case op < 85:
			// A run starts or ends.
			if rng.IntN(2) == 0 {
				id := fmt.Sprintf("run_%d", len(runs)+1)
				runs = append(runs, id)
				c.Lock()
				c.MergeRun(Run{ID: id, Rev: 1, ParentRunID: runs[rng.IntN(len(runs))], Status: "running"})
				c.Unlock()
			} else if id := runs[rng.IntN(len(runs))]; !ended[id] {
				ended[id] = true
				clock = clock.Add(time.Second)
				at := clock
				c.Lock()
				c.MergeRun(Run{ID: id, Rev: 2, Status: "completed", EndedAt: &at, EndRecordedAt: &at})
				c.Unlock()
			}
		case op < 88:
			if forkAt == 0 && seqs["br_main"] > 5 {
				forkAt = seqs["br_main"] - int64(rng.IntN(3))
			}
		default:
			// A write on the parent: past the fork point (appended) or before it (a change).
			if forkAt > 0 && rng.IntN(2) == 0 {
				for _, r := range ids {
					if r.BranchID == "br_main" && r.Seq <= forkAt && rng.IntN(4) == 0 {
						change(r, func(r *Record) { r.Base.Tool.ErrorCode = "changed" })
						break
					}
				}
			} else {
				add(model.TypeMessage, "br_main", model.Candidate{Message: model.MessageFacts{Role: "user", Content: "on main"}}, nil)
			}
		}
		check(step)
	}
	return extended, whole
}

func at(cands []*model.Candidate, i int) any {
	if i < len(cands) {
		return *cands[i]
	}
	return "(none)"
}

// TestRetriesExtendTheView writes what an agent loop writes when its model calls the same
// tool with the same arguments again, and when a client retries a call: each write extends
// the view, the earlier call lists its retries as a whole build does (those naming it in
// retryOf first, then its identical repeats), and nothing else is built again.
func TestRetriesExtendTheView(t *testing.T) {
	c := NewConversation("cnv_r", 0)
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var seq int64
	add := func(kind model.RecordType, id string, base model.Candidate, edit func(*Record)) {
		seq++
		at := t0.Add(time.Duration(seq) * time.Second)
		base.Type, base.ID, base.BranchID, base.Seq, base.InLineage, base.CreatedAt = kind, id, "br_main", seq, true, at
		base.OwnerParticipantID, base.OwnerRunID = "pt_1", "run_1"
		r := &Record{Kind: kind, ID: id, ElementID: "4:x:" + id, BranchID: "br_main", Seq: seq, Rev: seq, RecordedAt: at, Baseline: 10, Base: base}
		if edit != nil {
			edit(r)
		}
		c.Lock()
		c.Merge(r)
		c.Advance("br_main", seq)
		c.Unlock()
	}
	call := func(id string, edit func(*Record)) {
		add(model.TypeToolCall, id, model.Candidate{Tool: model.ToolFacts{Name: "search", Status: model.ToolPending},
			Call: model.CallFacts{Arguments: `{"q":"hotels"}`}}, func(r *Record) {
			r.ArgumentsSha256 = "sha_hotels"
			if edit != nil {
				edit(r)
			}
		})
	}
	c.Lock()
	c.MergeRun(Run{ID: "run_1", Rev: 1, Status: "running"})
	c.Unlock()
	for i := range 20 {
		add(model.TypeMessage, fmt.Sprintf("msg_%d", i), model.Candidate{Message: model.MessageFacts{Role: "user", Content: "hello"}}, nil)
	}
	call("call_a", nil)
	lin := Lineage{ConversationID: "cnv_r", Branches: []Branch{{BranchID: "br_main", Cutoff: OpenEnded}}}
	names := map[string]string{"pt_1": "one"}
	selectNow := func() (got, want model.Snapshot) {
		t.Helper()
		req := model.AssemblyRequest{BranchID: "br_main", AsOf: t0.Add(time.Hour)}
		c.RLock()
		defer c.RUnlock()
		if _, err := c.Select(lin, req, model.SnapshotOptions{}, names, &got); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Select(lin, req, model.SnapshotOptions{Fresh: true}, names, &want); err != nil {
			t.Fatal(err)
		}
		return got, want
	}
	selectNow()
	for _, step := range []struct {
		write      func()
		retriedByA []string
	}{
		{func() { call("call_b", nil) }, []string{"call_b"}},
		{func() {
			call("call_c", func(r *Record) { r.ArgumentsSha256, r.Base.Call.RetryOf = "sha_other", "call_a" })
		}, []string{"call_c", "call_b"}},
	} {
		step.write()
		got, want := selectNow()
		if got.ViewParent == "" {
			t.Fatalf("after %v the view was built whole", step.retriedByA)
		}
		if !reflect.DeepEqual(got.Candidates, want.Candidates) {
			t.Fatalf("after %v the extended view differs from a whole build", step.retriedByA)
		}
		rebuilt := 0
		for i, cand := range got.Candidates {
			if cand.ID == "call_a" && !slices.Equal(cand.Call.RetriedBy, step.retriedByA) {
				t.Errorf("call_a is retried by %v, want %v", cand.Call.RetriedBy, step.retriedByA)
			}
			if got.Rebuilt[i] {
				rebuilt++
			}
		}
		if rebuilt != 2 {
			t.Errorf("after %v the extension built %d candidates again, want 2 (the call written and call_a)", step.retriedByA, rebuilt)
		}
	}
}
