package assembly

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// Judging an extension of judged candidates (policy.JudgeAgain) gives the verdicts judging
// them whole does, over generated lineages extended again and again: candidates added
// anywhere and candidates changed (their outcome, visibility, privacy class, owner,
// supersession, conflicts, sources, run), for both embedded policy versions; and judged
// again for another run of the same shape, as a generation's first assembly is, where some
// records are a child run's.
func TestJudgeAgainIsJudge(t *testing.T) {
	for seed := uint64(1); seed <= 400; seed++ {
		g, v, preq := judgedLineage(t, seed)
		if seed%5 == 0 {
			preq.RuntimeKind = model.RuntimeParentResume
		}
		r := rand.New(rand.NewPCG(seed, 5))
		cands := withChildRuns(r, g.snap.Candidates)
		verdicts, ctx := policy.JudgeWithContext(v, preq, cands)
		for step := range 6 {
			more, _ := generatedLineage(seed*1000 + uint64(step))
			next, from, rebuilt := extended(r, cands, withChildRuns(r, more.snap.Candidates), fmt.Sprintf("s%d", step))
			if r.IntN(3) == 0 {
				preq.RunID = pick(r, "run_1", "run_old", "run_child", "run_2", "")
			}
			was := values(verdicts)
			got, gctx := policy.JudgeAgain(v, preq, next, verdicts, ctx, from, rebuilt)
			want := policy.JudgeCandidates(v, preq, next)
			if !reflect.DeepEqual(got, want) {
				for i := range want {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("seed %d, step %d: the verdict on %s %s (rebuilt %v) judged again:\n%s\njudged whole:\n%s", seed, step,
							next[i].Type, next[i].ID, rebuilt[i], describe(*got[i]), describe(*want[i]))
					}
				}
			}
			// The verdicts judged again share those that stay the same, which must not change.
			for i, vd := range verdicts {
				if !reflect.DeepEqual(*vd, was[i]) {
					t.Fatalf("seed %d, step %d: judging again changed the earlier verdict on %s %s:\n%s\nwas:\n%s", seed, step,
						vd.Candidate.Type, vd.Candidate.ID, describe(*vd), describe(was[i]))
				}
			}
			cands, verdicts, ctx = next, got, gctx
		}
	}
}

// withChildRuns makes about a quarter of the calls, artifacts and memories records of a
// child run of one of the lineage's runs (or of a run with no records of its own), in
// every state a child run's records are judged by.
func withChildRuns(r *rand.Rand, cands []*model.Candidate) []*model.Candidate {
	out := slices.Clone(cands)
	for i, c := range cands {
		if (c.Type != model.TypeToolCall && c.Type != model.TypeArtifact && c.Type != model.TypeMemory) || r.IntN(4) > 0 {
			continue
		}
		child := *c
		child.OwnerRunID, child.OwnerRunParentID = pick(r, "run_child", "run_child_2"), pick(r, "run_1", "run_old", "run_2")
		child.OwnerRunStatus, child.Promoted = pick(r, "running", "completed", "failed", "timed_out"), r.IntN(3) == 0
		out[i] = &child
	}
	return out
}

// judgedLineage is the generated lineage of a seed with the policy version it is judged
// under (both embedded versions, and a byte budget that the raw bodies compete for at half
// the seeds) and its request as the policies read it.
func judgedLineage(t *testing.T, seed uint64) (*snapshotGraph, policy.Version, policy.Request) {
	t.Helper()
	g, req := generatedLineage(seed)
	v, err := policy.Embedded().Resolve(t.Context(), "", []string{"default", "strict-freshness"}[seed%2])
	if err != nil {
		t.Fatal(err)
	}
	if seed%4 < 2 {
		v.RehydrationBytes = 2500
	}
	return g, v, policy.Request{ParticipantID: req.ParticipantID, RunID: req.RunID, RuntimeKind: req.RuntimeKind,
		Provider: g.snap.Participant.Provider, ExactArtifactIDs: req.ExactArtifactIDs, Now: req.Now, ToolRounds: req.ToolRounds,
		Recall: seed%3 == 0}
}

// values copies verdicts as they are now.
func values(verdicts []*policy.Verdict) []policy.Verdict {
	out := make([]policy.Verdict, len(verdicts))
	for i, vd := range verdicts {
		out[i] = *vd
	}
	return out
}

func describe(vd policy.Verdict) string {
	c := vd.Candidate
	vd.Candidate = nil
	return fmt.Sprintf("%+v answer %+v revival %+v stale %v\n  of %+v", vd, vd.Answer, vd.Revival, vd.StaleSince, *c)
}

// extended returns cands with some of more added at random places (their ids made unique
// with tag) and some of cands changed, with where each was in cands (-1 for added) and which
// were built anew.
func extended(r *rand.Rand, cands, more []*model.Candidate, tag string) ([]*model.Candidate, []int, []bool) {
	var out []*model.Candidate
	var from []int
	var rebuilt []bool
	var memories, artifacts []string
	for _, c := range cands {
		switch c.Type {
		case model.TypeMemory:
			memories = append(memories, c.ID)
		case model.TypeArtifact:
			artifacts = append(artifacts, c.ID)
		}
	}
	added := make([]*model.Candidate, 0, len(more))
	for _, m := range more {
		if r.IntN(3) == 0 {
			c := renamed(*m, tag)
			c.Seq += 5000
			added = append(added, &c)
		}
	}
	for k, c := range cands {
		for len(added) > 0 && r.IntN(len(cands)) < 2 {
			out, from, rebuilt = append(out, added[0]), append(from, -1), append(rebuilt, true)
			added = added[1:]
		}
		if r.IntN(6) > 0 {
			out, from, rebuilt = append(out, c), append(from, k), append(rebuilt, false)
			continue
		}
		changed := *c
		switch r.IntN(9) {
		case 0:
			changed.Tool.Status = pick(r, model.ToolSucceeded, model.ToolFailed, model.ToolPending, model.ToolDeferred)
		case 1:
			changed.Visibility = pick(r, model.VisibilityParticipant, model.VisibilityBranch, model.VisibilityConversation, model.VisibilityAudit)
		case 2:
			changed.PrivacyClass = pick(r, "public", "internal", "secret")
		case 3:
			changed.OwnerParticipantID = pick(r, "pt_me", "pt_other")
		case 4:
			if len(memories) > 0 {
				changed.Memory.SupersededBy = append(slices.Clone(changed.Memory.SupersededBy), pick(r, memories...))
			}
		case 5:
			if len(memories) > 0 && changed.Type == model.TypeMemory {
				changed.Memory.ConflictsWith = append(slices.Clone(changed.Memory.ConflictsWith), pick(r, memories...))
			}
		case 6:
			if len(artifacts) > 0 {
				src := []string{pick(r, artifacts...)}
				changed.Memory.SourceArtifactIDs, changed.Memory.LiveSourceIDs = src, src
			}
		case 7:
			changed.OwnerRunStatus = pick(r, "running", "completed", "failed")
			changed.Promoted = !changed.Promoted
		case 8:
			changed.Call.RetriedBy = append(slices.Clone(changed.Call.RetriedBy), "tc_retry")
		}
		out, from, rebuilt = append(out, &changed), append(from, k), append(rebuilt, true)
	}
	for _, c := range added {
		out, from, rebuilt = append(out, c), append(from, -1), append(rebuilt, true)
	}
	return out, from, rebuilt
}

// renamed is a candidate with every id it holds or names made unique with tag.
func renamed(c model.Candidate, tag string) model.Candidate {
	id := func(s string) string {
		if s == "" {
			return ""
		}
		return s + "_" + tag
	}
	ids := func(list []string) []string {
		out := make([]string, len(list))
		for i, s := range list {
			out[i] = id(s)
		}
		return out
	}
	c.ID, c.Artifact.ToolCallID = id(c.ID), id(c.Artifact.ToolCallID)
	c.Call.ArtifactIDs, c.Call.RetriedBy = ids(c.Call.ArtifactIDs), ids(c.Call.RetriedBy)
	c.Memory.SourceArtifactIDs, c.Memory.LiveSourceIDs = ids(c.Memory.SourceArtifactIDs), ids(c.Memory.LiveSourceIDs)
	c.Memory.SupersededBy, c.Memory.ConflictsWith = ids(c.Memory.SupersededBy), ids(c.Memory.ConflictsWith)
	return c
}

// A judgement that extends another, taking its lines, prices and settled decisions over
// where its verdicts are the other's, is the judgement made whole: over generated lineages
// extended again and again, with the run changed between some extensions.
func TestExtendedJudgementIsWhole(t *testing.T) {
	tk, err := NewTokenizer(EncodingForModel("gpt-4.1"))
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 200; seed++ {
		g, v, preq := judgedLineage(t, seed)
		s := NewService(g)
		r := rand.New(rand.NewPCG(seed, 9))
		snap := g.snap
		snap.Candidates = withChildRuns(r, snap.Candidates)
		parent, _, _, _, err := s.judge(t.Context(), "acct", v, preq, snap, tk, nil)
		if err != nil {
			t.Fatal(err)
		}
		for step := range 5 {
			more, _ := generatedLineage(seed*1000 + uint64(step))
			tag := fmt.Sprintf("s%d", step)
			for id, raw := range more.raw {
				g.raw[id+"_"+tag] = raw
			}
			next := snap
			next.Candidates, next.ViewPlaces, next.Rebuilt = extended(r, snap.Candidates, withChildRuns(r, more.snap.Candidates), tag)
			if r.IntN(3) == 0 {
				preq.RunID = pick(r, "run_1", "run_old", "run_child", "run_2")
			}
			got, _, _, _, err := s.judge(t.Context(), "acct", v, preq, next, tk, parent)
			if err != nil {
				t.Fatal(err)
			}
			whole := next
			whole.ViewPlaces, whole.Rebuilt = nil, nil
			want, _, _, _, err := s.judge(t.Context(), "acct", v, preq, whole, tk, nil)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := settledOf(got), settledOf(want); !reflect.DeepEqual(g, w) {
				t.Fatalf("seed %d, step %d: the extended judgement's settled decisions and counts differ from a whole one's:\n got %+v\nwant %+v", seed, step, g, w)
			}
			if g, w := pricesOfJudgement(got), pricesOfJudgement(want); !reflect.DeepEqual(g, w) {
				t.Fatalf("seed %d, step %d: the extended judgement's prices differ from a whole one's:\n got %+v\nwant %+v", seed, step, g, w)
			}
			snap, parent = next, got
		}
	}
}

// settled is what a judgement settled: each decision, the omissions counted by reason, and
// the decisions it lists as those its records store.
type settled struct {
	Decisions []model.Decision
	Omitted   map[string]int
	Stored    []model.Decision
}

func settledOf(j *judgement) settled {
	out := settled{Omitted: j.settledOmitted}
	for _, d := range j.settled {
		out.Decisions = append(out.Decisions, *d)
	}
	for _, d := range j.stored {
		out.Stored = append(out.Stored, *d)
	}
	return out
}
