package assembly

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// recordedGraph serves one snapshot and answers its recorded assembly.
type recordedGraph struct {
	snapshotGraph
	record model.Assembly
}

func (g *recordedGraph) Assembly(context.Context, string, string) (model.Assembly, error) {
	return g.record, nil
}

// versions resolves the embedded versions and a few made for a test, by name.
type versions map[string]policy.Version

func (vs versions) Resolve(ctx context.Context, accountID, nameOrID string) (policy.Version, error) {
	for _, v := range vs {
		if v.Name == nameOrID || v.ID == nameOrID {
			return v, nil
		}
	}
	return policy.Embedded().Resolve(ctx, accountID, nameOrID)
}

func (vs versions) Recorded(ctx context.Context, accountID, id string) (policy.Version, error) {
	return vs.Resolve(ctx, accountID, id)
}

func (versions) Keep(context.Context, string, policy.Version) error { return nil }

// diffLineage is a lineage with what the diff's cases turn on: a run whose call was
// answered by an internal artifact (raw under the default version, since it answers a call
// of the run being generated), an earlier run's deferred call whose tool answered with a picker session
// (its handle, raw in its recovery state), and a bounded memory past its TTL (a stale marker
// under the default version).
func diffLineage(now time.Time) (*recordedGraph, model.AssemblyRequest) {
	const run = "run_1"
	mine := func(c model.Candidate) model.Candidate {
		c.BranchID, c.InLineage, c.OwnerParticipantID, c.OwnerRunID, c.OwnerRunStatus = "br", true, "pt_me", run, "running"
		if c.Visibility == "" {
			c.Visibility = model.VisibilityParticipant
		}
		return c
	}
	// round is a call of an internal tool and the artifact of its outcome.
	round := func(n int64, tool string, status model.ToolStatus, args string, resultBytes int64) (call, art model.Candidate) {
		callID, artID := fmt.Sprintf("tc_%d", n), fmt.Sprintf("art_%d", n)
		call = mine(model.Candidate{Type: model.TypeToolCall, ID: callID, Seq: 2 * n, PrivacyClass: "internal",
			Tool: model.ToolFacts{Name: tool, Status: status},
			Call: model.CallFacts{CallID: fmt.Sprintf("call_%d", n), Arguments: args, ArtifactIDs: []string{artID}}})
		art = mine(model.Candidate{Type: model.TypeArtifact, ID: artID, Seq: 2*n + 1, PrivacyClass: "internal",
			Tool: call.Tool, Artifact: model.ArtifactFacts{ToolCallID: callID, ResultBytes: resultBytes, ArgsBytes: int64(len(args))}})
		return call, art
	}
	read, readResult := round(1, "read_csv", model.ToolSucceeded, `{"path":"q3.csv"}`, 40)
	pick, picker := round(2, "pick_document", model.ToolDeferred, `{"folder":"finance"}`, 24)
	// The picker's call is an earlier run's, still unresolved: recovery state.
	pick.OwnerRunID, pick.OwnerRunStatus, picker.OwnerRunID, picker.OwnerRunStatus = "run_old", "completed", "run_old", "completed"
	stale := mine(model.Candidate{Type: model.TypeMemory, ID: "mem_stale", Seq: 6, PrivacyClass: "public",
		Memory: model.MemoryFacts{Summary: "EU Q3 revenue: 3.46M", FreshnessClass: "bounded", ObservedAt: now.Add(-10 * 24 * time.Hour),
			RevalidateWith: []string{"read_csv"}}})
	stale.OwnerRunID, stale.OwnerRunStatus = "run_old", "completed"
	cands := []model.Candidate{
		mine(model.Candidate{Type: model.TypeMessage, ID: "msg_1", Seq: 1, Visibility: model.VisibilityBranch,
			Message: model.MessageFacts{Role: "user", Content: "What was Q3 revenue for EU?"}}),
		read, readResult, pick, picker, stale,
	}
	g := &recordedGraph{snapshotGraph: snapshotGraph{raw: map[string]model.ArtifactRaw{
		"art_1": {ArtifactID: "art_1", Arguments: json.RawMessage(`{"path":"q3.csv"}`), Result: json.RawMessage(`{"eu":3460000}`)},
		"art_2": {ArtifactID: "art_2", Arguments: json.RawMessage(`{"folder":"finance"}`), Result: json.RawMessage(`{"session":"pick_123"}`)},
	}}}
	g.snap = model.Snapshot{ConversationID: "cnv_1", Candidates: model.CandidatePointers(cands), ParticipantNames: map[string]string{"pt_me": "me"},
		Participant: model.Participant{ID: "pt_me", Provider: "openai", Model: "gpt-4.1"},
		Run:         &model.Run{ID: run, RuntimeKind: model.RuntimeChat, Status: "running"}}
	req := model.AssemblyRequest{BranchID: "br", ParticipantID: "pt_me", RunID: run, TokenBudget: 4000, Now: now, AsOf: now, ToolRounds: true}
	return g, req
}

// TestDiffUnderAnotherVersion diffs one recorded assembly against the versions of the
// issue's cases: its own version changes nothing; strict freshness turns the stale marker
// into an omission; a version that withholds the artifacts' class from the provider turns
// the handle's raw body into a reference and withholds the round's. Every record the
// lineage offered is listed once.
func TestDiffUnderAnotherVersion(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	def, err := policy.Resolve("default")
	if err != nil {
		t.Fatal(err)
	}
	withheld, err := policy.Derive(def, "no-internal", map[string]json.RawMessage{"providerClasses": json.RawMessage(`{"openai":["public"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	g, req := diffLineage(now)
	s := NewService(g)
	s.Policies = versions{withheld.ID: withheld}
	req.PolicyVersion = def.ID
	rec, err := s.compute(context.Background(), "acct", req, model.SnapshotOptions{}, def)
	if err != nil {
		t.Fatal(err)
	}
	g.record = rec
	forms := map[string]string{}
	for _, inc := range rec.Included {
		forms[inc.Ref] = inc.As
	}
	if forms["art_1"] != model.AsRaw || forms["art_2"] != model.AsRaw || forms["mem_stale"] != model.AsStaleMarker {
		t.Fatalf("the recorded assembly included %v, want art_1 and art_2 raw and mem_stale as a stale marker", rec.Included)
	}

	type want struct {
		change   string
		outcome  string
		asReason string // the other version's form, or its reason when it omits the record
	}
	for _, tc := range []struct {
		version   string
		identical bool
		records   map[string]want
	}{
		{version: "default", identical: true, records: map[string]want{
			"art_1":     {model.ChangeNone, policy.OutcomeIncluded, model.AsRaw},
			"art_2":     {model.ChangeNone, policy.OutcomeIncluded, model.AsRaw},
			"mem_stale": {model.ChangeNone, policy.OutcomeIncluded, model.AsStaleMarker}}},
		{version: "strict-freshness", records: map[string]want{
			"art_1":     {model.ChangeNone, policy.OutcomeIncluded, model.AsRaw},
			"art_2":     {model.ChangeNone, policy.OutcomeIncluded, model.AsRaw},
			"mem_stale": {model.ChangeOnlyRecorded, policy.OutcomeOmitted, model.ReasonStale}}},
		// The handle becomes a reference to its artifact; the round's body is withheld
		// (the round's result then says so in a reference line).
		{version: "no-internal", records: map[string]want{
			"art_1":     {model.ChangeOnlyRecorded, policy.OutcomeOmitted, model.ReasonPrivacy},
			"art_2":     {model.ChangeForm, policy.OutcomeIncluded, model.AsReference},
			"mem_stale": {model.ChangeNone, policy.OutcomeIncluded, model.AsStaleMarker}}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			d, err := s.Diff(context.Background(), "acct", "asm_1", tc.version)
			if err != nil {
				t.Fatal(err)
			}
			if d.Identical != tc.identical {
				t.Errorf("got identical %v, want %v (changes %v)", d.Identical, tc.identical, d.Changes)
			}
			if d.AssemblyID != "asm_1" || !d.Now.Equal(now) || d.Recorded.PolicyVersion != def.ID || d.Other.PolicyVersion == "" {
				t.Errorf("got assembly %q, now %v, versions %q and %q", d.AssemblyID, d.Now, d.Recorded.PolicyVersion, d.Other.PolicyVersion)
			}
			seen := map[string]int{}
			changed := 0
			for _, r := range d.Records {
				seen[r.Ref]++
				if r.Change != model.ChangeNone {
					changed++
				}
				w, ok := tc.records[r.Ref]
				if !ok {
					continue
				}
				got := r.Other.As
				if r.Other.Outcome == policy.OutcomeOmitted {
					got = r.Other.Reason
				}
				if r.Change != w.change || r.Other.Outcome != w.outcome || got != w.asReason {
					t.Errorf("%s: got %s, other %s %s (rule %s), want %s, %s %s", r.Ref, r.Change, r.Other.Outcome, got, r.Other.Rule, w.change, w.outcome, w.asReason)
				}
			}
			for _, ref := range []string{"msg_1", "tc_1", "art_1", "tc_2", "art_2", "mem_stale"} {
				if seen[ref] != 1 {
					t.Errorf("%s is listed %d times, want once", ref, seen[ref])
				}
			}
			if d.Changes[model.ChangeNone] != len(d.Records)-changed {
				t.Errorf("got changes %v for %d records of which %d changed", d.Changes, len(d.Records), changed)
			}
			if tc.identical && (d.Recorded.Tokens != d.Other.Tokens || len(d.Other.Messages) != len(rec.Messages)) {
				t.Errorf("the same version sent %d tokens, recorded %d", d.Other.Tokens.Assembled, d.Recorded.Tokens.Assembled)
			}
			if !tc.identical && d.Recorded.Tokens.Assembled == d.Other.Tokens.Assembled {
				t.Errorf("another request, the same %d tokens", d.Other.Tokens.Assembled)
			}
		})
	}

	if _, err := s.Diff(context.Background(), "acct", "asm_1", "nonesuch"); model.KindOf(err) != model.KindInvalid {
		t.Errorf("an unknown version: got %v, want an invalid policyVersion", err)
	}
}
