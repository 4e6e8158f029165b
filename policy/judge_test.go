package policy

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/extract"
	"github.com/ctxgraph/ctxgraph/model"
)

// now is the clock every test judges by; it is deliberately far from the wall clock, so a
// policy that read time.Now would decide differently.
var now = time.Date(2001, 3, 1, 12, 0, 0, 0, time.UTC)

// Participants and runs of the hand-built graphs.
const (
	me        = "p-me"
	other     = "p-other"
	child     = "p-child"
	myRun     = "run-me"
	oldRun    = "run-old"
	parentRun = "run-parent"
	childRun  = "run-child"
)

// opt changes one field of a hand-built candidate.
type opt func(*model.Candidate)

func build(c model.Candidate, opts []opt) model.Candidate {
	for _, o := range opts {
		o(&c)
	}
	return c
}

func message(id string, seq int64, role string, opts ...opt) model.Candidate {
	return build(model.Candidate{Type: model.TypeMessage, ID: id, Seq: seq, InLineage: true, Visibility: model.VisibilityBranch,
		Message: model.MessageFacts{Role: role, Content: "message " + id}}, opts)
}

// toolCall is a call of the assembly run by the assembling participant.
func toolCall(id string, seq int64, status model.ToolStatus, opts ...opt) model.Candidate {
	return build(model.Candidate{Type: model.TypeToolCall, ID: id, Seq: seq, InLineage: true, Visibility: model.VisibilityParticipant,
		OwnerParticipantID: me, OwnerRunID: myRun, OwnerRunStatus: "running", Tool: model.ToolFacts{Name: "search", Status: status},
		Call: model.CallFacts{Arguments: `{"q":"hotels"}`}}, opts)
}

// artifact is an internal artifact of an earlier run of the assembling participant.
func artifact(id string, seq int64, opts ...opt) model.Candidate {
	return build(model.Candidate{Type: model.TypeArtifact, ID: id, Seq: seq, InLineage: true, Visibility: model.VisibilityParticipant,
		OwnerParticipantID: me, OwnerRunID: oldRun, OwnerRunStatus: "completed", PrivacyClass: "internal",
		Tool: model.ToolFacts{Name: "search", Status: model.ToolSucceeded}, Artifact: model.ArtifactFacts{ResultBytes: 1000, ArgsBytes: 24}}, opts)
}

// memory is a durable, internal memory of the assembling participant with no sources.
func memory(id string, seq int64, opts ...opt) model.Candidate {
	return build(model.Candidate{Type: model.TypeMemory, ID: id, Seq: seq, InLineage: true, Visibility: model.VisibilityParticipant,
		OwnerParticipantID: me, OwnerRunID: oldRun, OwnerRunStatus: "completed", PrivacyClass: "internal",
		Memory: model.MemoryFacts{FreshnessClass: "durable", ObservedAt: now.Add(-time.Hour), Summary: "memory " + id}}, opts)
}

func checkpoint(id, run string, seq int64, opts ...opt) model.Candidate {
	return build(model.Candidate{Type: model.TypeCheckpoint, ID: id, Seq: seq, InLineage: true,
		RunState: model.RunStateFacts{RunID: run, State: `{}`}}, opts)
}

func skillState(id, run string, seq int64, opts ...opt) model.Candidate {
	return build(model.Candidate{Type: model.TypeSkills, ID: id, Seq: seq, InLineage: true,
		RunState: model.RunStateFacts{RunID: run, LoadedSkills: []string{"csv"}}}, opts)
}

func ownedBy(p string) opt              { return func(c *model.Candidate) { c.OwnerParticipantID = p } }
func visibility(v model.Visibility) opt { return func(c *model.Candidate) { c.Visibility = v } }
func privacy(class string) opt          { return func(c *model.Candidate) { c.PrivacyClass = class } }
func safeSummary(s string) opt          { return func(c *model.Candidate) { c.Memory.SafeSummary = s } }
func sharedWith(ps ...string) opt       { return func(c *model.Candidate) { c.SharedWith = ps } }
func supersededBy(ids ...string) opt    { return func(c *model.Candidate) { c.Memory.SupersededBy = ids } }
func conflictsWith(ids ...string) opt {
	return func(c *model.Candidate) { c.Memory.ConflictsWith = ids }
}
func retriedBy(ids ...string) opt    { return func(c *model.Candidate) { c.Call.RetriedBy = ids } }
func status(st model.ToolStatus) opt { return func(c *model.Candidate) { c.Tool.Status = st } }

// handled gives a call the artifact of its latest outcome and that artifact's privacy
// class, as the snapshot does.
func handled(artifactID, class string) opt {
	return func(c *model.Candidate) {
		c.Call.ArtifactIDs, c.PrivacyClass = append(c.Call.ArtifactIDs, artifactID), class
	}
}
func ofCall(id string) opt    { return func(c *model.Candidate) { c.Artifact.ToolCallID = id } }
func resultBytes(n int64) opt { return func(c *model.Candidate) { c.Artifact.ResultBytes = n } }
func seqDepth(seq, depth int64) opt {
	return func(c *model.Candidate) { c.Seq, c.Depth = seq, depth }
}
func inRun(run string) opt { return func(c *model.Candidate) { c.OwnerRunID = run } }

// offLineage puts a record on another branch of the conversation.
func offLineage() opt { return func(c *model.Candidate) { c.InLineage, c.Depth = false, -1 } }

// fresh sets a memory's freshness class and when it was observed.
func fresh(class string, observed time.Time) opt {
	return func(c *model.Candidate) { c.Memory.FreshnessClass, c.Memory.ObservedAt = class, observed }
}

func staleAfter(t time.Time) opt { return func(c *model.Candidate) { c.Memory.StaleAfter = &t } }

// derivedFrom sets a memory's source artifacts; live lists those that still exist.
func derivedFrom(all []string, live ...string) opt {
	return func(c *model.Candidate) { c.Memory.SourceArtifactIDs, c.Memory.LiveSourceIDs = all, live }
}

// ofChild makes a record belong to a child run of parentRun, owned by the child participant.
func ofChild(status string) opt {
	return func(c *model.Candidate) {
		c.OwnerParticipantID, c.OwnerRunID, c.OwnerRunParentID, c.OwnerRunStatus = child, childRun, parentRun, status
	}
}

func promotedTo(p string) opt { return func(c *model.Candidate) { c.Promoted, c.PromotedTo = true, p } }

func baseRequest() Request {
	return Request{ParticipantID: me, RunID: myRun, RuntimeKind: "chat", Provider: "openai", Now: now}
}

// want is the expected verdict of one candidate: included `as` a form, or omitted for a reason.
type want struct {
	as     string     // the included form; empty means omitted
	reason string     // the omission reason
	rule   model.Rule // the exact rule; empty skips the check
	// protected, restricted, broken and argsWithheld are always checked.
	protected, restricted, broken, argsWithheld bool
	// staleSince is checked always: zero means the verdict carries none.
	staleSince time.Time
}

// ruleReasons is every omission rule the judge tests have seen, with the reason it gave: a
// rule gives one reason wherever it is used, so that explain, omittedRefs and the counts
// cannot tell different stories about one record.
var ruleReasons sync.Map

func checkVerdicts(t *testing.T, vds []*Verdict, wants map[string]want) {
	t.Helper()
	byID := map[string]*Verdict{}
	for _, vd := range vds {
		byID[vd.Candidate.ID] = vd
		if d := vd.Decision; d.Outcome == OutcomeOmitted {
			if first, seen := ruleReasons.LoadOrStore(d.Rule, d.Reason); seen && first != d.Reason {
				t.Errorf("%s: rule %s gave reason %s here and %s elsewhere, want one reason per rule", vd.Candidate.ID, d.Rule, d.Reason, first)
			}
		}
	}
	ids := make([]string, 0, len(wants))
	for id := range wants {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		w := wants[id]
		vd, ok := byID[id]
		if !ok {
			t.Errorf("%s: got no verdict, want one", id)
			continue
		}
		d := vd.Decision
		if d.Ref != id || d.Type != vd.Candidate.Type {
			t.Errorf("%s: got decision ref %q type %q, want ref %q type %q", id, d.Ref, d.Type, id, vd.Candidate.Type)
		}
		switch {
		case w.as != "" && (d.Outcome != OutcomeIncluded || d.As != w.as):
			t.Errorf("%s: got %s as %q reason %q (rule %q), want included as %q", id, d.Outcome, d.As, d.Reason, d.Rule, w.as)
		case w.as == "" && (d.Outcome != OutcomeOmitted || d.Reason != w.reason):
			t.Errorf("%s: got %s as %q reason %q (rule %q), want omitted with reason %q", id, d.Outcome, d.As, d.Reason, d.Rule, w.reason)
		}
		if w.rule != "" && d.Rule != w.rule {
			t.Errorf("%s: got rule %q, want %q", id, d.Rule, w.rule)
		}
		if vd.Protected != w.protected {
			t.Errorf("%s: got protected %v, want %v", id, vd.Protected, w.protected)
		}
		if vd.Restricted != w.restricted {
			t.Errorf("%s: got restricted %v, want %v", id, vd.Restricted, w.restricted)
		}
		if vd.Broken != w.broken {
			t.Errorf("%s: got broken %v, want %v", id, vd.Broken, w.broken)
		}
		if vd.ArgsWithheld != w.argsWithheld {
			t.Errorf("%s: got argsWithheld %v, want %v", id, vd.ArgsWithheld, w.argsWithheld)
		}
		switch {
		case w.staleSince.IsZero() && vd.StaleSince != nil:
			t.Errorf("%s: got staleSince %v, want none", id, *vd.StaleSince)
		case !w.staleSince.IsZero() && vd.StaleSince == nil:
			t.Errorf("%s: got no staleSince, want %v", id, w.staleSince)
		case !w.staleSince.IsZero() && !vd.StaleSince.Equal(w.staleSince):
			t.Errorf("%s: got staleSince %v, want %v", id, *vd.StaleSince, w.staleSince)
		}
	}
}

// judgeCase is one hand-built snapshot and what the policies must decide about it.
type judgeCase struct {
	name    string
	version string // policy version name; empty is the default
	req     func(*Request)
	cands   []model.Candidate
	want    map[string]want
}

func mustResolve(t *testing.T, name string) Version {
	t.Helper()
	v, err := Resolve(name)
	if err != nil {
		t.Fatalf("Resolve(%q): got error %v, want none", name, err)
	}
	return v
}

func runJudgeCases(t *testing.T, cases []judgeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := mustResolve(t, tc.version)
			req := baseRequest()
			if tc.req != nil {
				tc.req(&req)
			}
			vds := Judge(v, req, tc.cands)
			if len(vds) != len(tc.cands) {
				t.Fatalf("got %d verdicts, want %d", len(vds), len(tc.cands))
			}
			for i := range vds {
				if vds[i].Candidate.ID != tc.cands[i].ID {
					t.Errorf("verdict %d: got %q, want %q (verdicts keep the candidates' order)", i, vds[i].Candidate.ID, tc.cands[i].ID)
				}
			}
			checkVerdicts(t, vds, tc.want)
		})
	}
}

// Expected forms, for brevity in the tables.
var (
	asMemory = want{as: model.AsMemory, rule: "memory.current"}
)

func omitted(reason string, rule model.Rule) want { return want{reason: reason, rule: rule} }

func TestJudgeVisibility(t *testing.T) {
	runJudgeCases(t, []judgeCase{
		{
			name:  "own private memory is included",
			cands: []model.Candidate{memory("m1", 1)},
			want:  map[string]want{"m1": asMemory},
		},
		{
			name:  "another participant's private memory, artifact and call are participant_private",
			req:   func(r *Request) { r.ExactArtifactIDs = []string{"a1"} },
			cands: []model.Candidate{memory("m1", 1, ownedBy(other)), artifact("a1", 2, ownedBy(other)), toolCall("c1", 3, "succeeded", ownedBy(other), inRun("run-o"))},
			want: map[string]want{
				"m1": omitted(model.ReasonParticipant, "visibility.participant_private"),
				"a1": omitted(model.ReasonParticipant, "visibility.participant_private"),
				"c1": omitted(model.ReasonParticipant, "visibility.participant_private"),
			},
		},
		{
			name:  "empty visibility is private, fail closed",
			cands: []model.Candidate{memory("m1", 1, ownedBy(other), visibility(""))},
			want:  map[string]want{"m1": omitted(model.ReasonParticipant, "visibility.participant_private")},
		},
		{
			name:  "a private memory shared with the participant is included",
			cands: []model.Candidate{memory("m1", 1, ownedBy(other), sharedWith("p-x", me))},
			want:  map[string]want{"m1": asMemory},
		},
		{
			name:  "branch and conversation visible memories of others are included",
			cands: []model.Candidate{memory("m1", 1, ownedBy(other), visibility("branch")), memory("m2", 2, ownedBy(other), visibility("conversation"))},
			want:  map[string]want{"m1": asMemory, "m2": asMemory},
		},
		{
			name:  "a conversation-visible memory of another branch is included",
			cands: []model.Candidate{memory("m1", 1, offLineage(), visibility("conversation"))},
			want:  map[string]want{"m1": asMemory},
		},
		{
			name:  "records outside the lineage are branch_ineligible",
			cands: []model.Candidate{memory("m1", 1, offLineage(), visibility("branch")), memory("m2", 2, offLineage())},
			want: map[string]want{
				"m1": omitted(model.ReasonBranchIneligible, "visibility.branch_lineage"),
				"m2": omitted(model.ReasonBranchIneligible, "visibility.branch_lineage"),
			},
		},
		{
			name: "audit records are audit_only, even the participant's own and run state",
			cands: []model.Candidate{
				memory("m1", 1, visibility("audit")),
				message("u1", 2, "user", visibility("audit")),
				checkpoint("cp1", myRun, 3, visibility("audit")),
				toolCall("c1", 4, "failed", visibility("audit")),
			},
			want: map[string]want{
				"m1":  omitted(model.ReasonAuditOnly, "visibility.audit_only"),
				"u1":  omitted(model.ReasonAuditOnly, "visibility.audit_only"),
				"cp1": omitted(model.ReasonAuditOnly, "visibility.audit_only"),
				"c1":  omitted(model.ReasonAuditOnly, "visibility.audit_only"),
			},
		},
		{
			name: "precedence: branch_ineligible before audit_only before not_promoted before participant_private",
			cands: []model.Candidate{
				memory("off-audit", 1, offLineage(), visibility("audit")),
				memory("audit-other", 2, visibility("audit"), ownedBy(other)),
				memory("audit-child", 3, visibility("audit"), ofChild("completed")),
				memory("child-private", 4, ofChild("completed")),
			},
			want: map[string]want{
				"off-audit":     omitted(model.ReasonBranchIneligible, "visibility.branch_lineage"),
				"audit-other":   omitted(model.ReasonAuditOnly, "visibility.audit_only"),
				"audit-child":   omitted(model.ReasonAuditOnly, "visibility.audit_only"),
				"child-private": omitted(model.ReasonNotPromoted, "visibility.child_not_promoted"),
			},
		},
		{
			name: "another participant's private message is participant_private",
			cands: []model.Candidate{
				message("u1", 1, "user"),
				message("x1", 2, "assistant", ownedBy(other), visibility("participant")),
			},
			want: map[string]want{
				"u1": {as: model.AsMessage, rule: "window.current_message", protected: true},
				"x1": omitted(model.ReasonParticipant, "visibility.participant_private"),
			},
		},
	})
}

func TestJudgeRecovery(t *testing.T) {
	parentResume := func(r *Request) { r.RuntimeKind, r.RunID = "parent_resume", parentRun }
	runJudgeCases(t, []judgeCase{
		{
			name: "own unresolved calls are protected recovery",
			cands: []model.Candidate{
				toolCall("pending", 1, "pending"),
				toolCall("deferred", 2, "deferred"),
				toolCall("failed", 3, "failed", func(c *model.Candidate) { c.Call.Retryable = true; c.PrivacyClass = "internal" }),
			},
			want: map[string]want{
				"pending":  {as: model.AsRecovery, rule: "recovery.unresolved_pending", protected: true},
				"deferred": {as: model.AsRecovery, rule: "recovery.unresolved_deferred", protected: true},
				"failed":   {as: model.AsRecovery, rule: "recovery.unresolved_failed", protected: true},
			},
		},
		{
			name:  "own failed call of an earlier run with no retry is recovery",
			cands: []model.Candidate{toolCall("c1", 1, "failed", inRun(oldRun))},
			want:  map[string]want{"c1": {as: model.AsRecovery, rule: "recovery.unresolved_failed", protected: true}},
		},
		{
			name: "a failed call with a retry is not recovery; the retry is",
			cands: []model.Candidate{
				toolCall("c1", 1, "failed", retriedBy("c2"), func(c *model.Candidate) { c.Call.Retryable = true }),
				toolCall("c2", 2, "pending", func(c *model.Candidate) { c.Call.RetryOf = "c1" }),
			},
			want: map[string]want{
				"c1": omitted(model.ReasonWindow, "recovery.resolved_by_retry"),
				"c2": {as: model.AsRecovery, rule: "recovery.unresolved_pending", protected: true},
			},
		},
		{
			name: "another participant's failed retryable call is participant_private, never recovery",
			cands: []model.Candidate{
				toolCall("c1", 1, "failed", ownedBy(other), inRun("run-o"), func(c *model.Candidate) { c.Call.Retryable = true }),
				toolCall("c2", 2, "pending", ownedBy(other), inRun("run-o")),
			},
			want: map[string]want{
				"c1": omitted(model.ReasonParticipant, "visibility.participant_private"),
				"c2": omitted(model.ReasonParticipant, "visibility.participant_private"),
			},
		},
		{
			name: "resolved calls are represented by their artifacts",
			cands: []model.Candidate{
				toolCall("current", 1, "succeeded"),
				toolCall("old", 2, "succeeded", inRun(oldRun)),
				toolCall("cancelled", 3, "cancelled", inRun(oldRun)),
			},
			want: map[string]want{
				"current":   omitted(model.ReasonDuplicate, "rehydration.current_run_call_in_artifact"),
				"old":       omitted(model.ReasonWindow, "window.completed_tool_round"),
				"cancelled": omitted(model.ReasonWindow, "window.completed_tool_round"),
			},
		},
		{
			name: "a recovery call's arguments are withheld when the provider may not receive its class",
			cands: []model.Candidate{
				toolCall("restricted", 1, "failed", privacy("google_derived")),
				toolCall("allowed", 2, "failed", privacy("user_private")),
				toolCall("no-class", 3, "pending"),
			},
			want: map[string]want{
				"restricted": {as: model.AsRecovery, rule: "recovery.unresolved_failed+privacy.arguments_withheld", protected: true, argsWithheld: true},
				"allowed":    {as: model.AsRecovery, rule: "recovery.unresolved_failed", protected: true},
				"no-class":   {as: model.AsRecovery, rule: "recovery.unresolved_pending", protected: true},
			},
		},
		{
			name: "a recovery call's arguments are withheld from a provider the policy does not know",
			req:  func(r *Request) { r.Provider = "acme-llm" },
			cands: []model.Candidate{
				toolCall("classed", 1, "failed", privacy("public")),
				toolCall("no-class", 2, "pending"),
			},
			want: map[string]want{
				"classed":  {as: model.AsRecovery, rule: "recovery.unresolved_failed+privacy.arguments_withheld", protected: true, argsWithheld: true},
				"no-class": {as: model.AsRecovery, rule: "recovery.unresolved_pending", protected: true},
			},
		},
		{
			name: "a recovery call with an outcome but no class withholds its arguments",
			cands: []model.Candidate{
				toolCall("unclassed", 1, "failed", func(c *model.Candidate) { c.Call.ArtifactIDs = []string{"a1"} }),
				toolCall("deferred", 2, "deferred", func(c *model.Candidate) { c.Call.ArtifactIDs = []string{"a2"} }),
			},
			want: map[string]want{
				"unclassed": {as: model.AsRecovery, rule: "recovery.unresolved_failed+privacy.arguments_withheld", protected: true, argsWithheld: true},
				"deferred":  {as: model.AsRecovery, rule: "recovery.unresolved_deferred+privacy.arguments_withheld", protected: true, argsWithheld: true},
			},
		},
		{
			name: "the artifact of a recovery call is a duplicate unless asked for exactly",
			req:  func(r *Request) { r.ExactArtifactIDs = []string{"a2"} },
			cands: []model.Candidate{
				toolCall("c1", 1, "failed"),
				artifact("a1", 2, ofCall("c1"), inRun(myRun), func(c *model.Candidate) { c.Tool.Status = "failed" }),
				toolCall("c2", 3, "failed"),
				artifact("a2", 4, ofCall("c2"), inRun(myRun), func(c *model.Candidate) { c.Tool.Status = "failed" }),
			},
			want: map[string]want{
				"c1": {as: model.AsRecovery, rule: "recovery.unresolved_failed", protected: true},
				"a1": omitted(model.ReasonDuplicate, "recovery.represented_by_call"),
				"c2": {as: model.AsRecovery, rule: "recovery.unresolved_failed", protected: true},
				"a2": {as: model.AsRaw, rule: "rehydration.exact_requested"},
			},
		},
		{
			name: "a pending or deferred call's answer so far is recovery state: raw, or a reference when it cannot be",
			req:  func(r *Request) { r.Provider = "openai" },
			cands: []model.Candidate{
				toolCall("envelope", 1, "pending", handled("h-envelope", "internal")),
				artifact("h-envelope", 2, ofCall("envelope"), inRun(myRun), status("pending"), resultBytes(200)),
				toolCall("picker", 3, "deferred", handled("h-picker", "google_derived")),
				artifact("h-picker", 4, ofCall("picker"), inRun(myRun), status("deferred"), resultBytes(200), privacy("google_derived")),
				toolCall("export", 5, "pending", handled("h-export", "internal")),
				artifact("h-export", 6, ofCall("export"), inRun(myRun), status("pending"), resultBytes(40000)),
				toolCall("bare", 7, "pending", handled("h-bare", "internal")),
				artifact("h-bare", 8, ofCall("bare"), inRun(myRun), status("pending"), resultBytes(0)),
			},
			want: map[string]want{
				"envelope":   {as: model.AsRecovery, rule: "recovery.unresolved_pending", protected: true},
				"h-envelope": {as: model.AsRaw, rule: "recovery.handle_raw", protected: true},
				"picker":     {as: model.AsRecovery, rule: "recovery.unresolved_deferred+privacy.arguments_withheld", protected: true, argsWithheld: true},
				"h-picker":   {as: model.AsReference, rule: "recovery.handle_restricted", protected: true, restricted: true},
				"export":     {as: model.AsRecovery, rule: "recovery.unresolved_pending", protected: true},
				"h-export":   {as: model.AsReference, rule: "recovery.handle_over_byte_budget", protected: true},
				"bare":       {as: model.AsRecovery, rule: "recovery.unresolved_pending", protected: true},
				"h-bare":     omitted(model.ReasonDuplicate, "recovery.represented_by_call"),
			},
		},
		{
			name: "parent_resume: a failed or timed-out child's unresolved calls are recovery even unpromoted",
			req:  parentResume,
			cands: []model.Candidate{
				toolCall("failed-child", 1, "failed", ofChild("failed")),
				toolCall("timed-out-child", 2, "pending", ofChild("timed_out")),
			},
			want: map[string]want{
				"failed-child":    {as: model.AsRecovery, rule: "recovery.child_failed", protected: true},
				"timed-out-child": {as: model.AsRecovery, rule: "recovery.child_timed_out", protected: true},
			},
		},
		{
			name: "parent_resume: a child's resolved state and a running or completed child's calls stay not_promoted",
			req:  parentResume,
			cands: []model.Candidate{
				toolCall("succeeded", 1, "succeeded", ofChild("failed")),
				toolCall("retried", 2, "failed", ofChild("failed"), retriedBy("x")),
				toolCall("completed-child", 3, "pending", ofChild("completed")),
				toolCall("running-child", 4, "pending", ofChild("running")),
				artifact("child-raw", 5, ofChild("failed")),
			},
			want: map[string]want{
				"succeeded":       omitted(model.ReasonNotPromoted, "visibility.child_not_promoted"),
				"retried":         omitted(model.ReasonNotPromoted, "visibility.child_not_promoted"),
				"completed-child": omitted(model.ReasonNotPromoted, "visibility.child_not_promoted"),
				"running-child":   omitted(model.ReasonNotPromoted, "visibility.child_not_promoted"),
				"child-raw":       omitted(model.ReasonNotPromoted, "visibility.child_not_promoted"),
			},
		},
		{
			name: "parent_resume: an audit-only child call is never recovery",
			req:  parentResume,
			cands: []model.Candidate{
				toolCall("c1", 1, "failed", ofChild("failed"), visibility("audit")),
			},
			want: map[string]want{"c1": omitted(model.ReasonAuditOnly, "visibility.audit_only")},
		},
		{
			name: "outside parent_resume a failed child's call is not_promoted",
			req:  func(r *Request) { r.RunID = parentRun },
			cands: []model.Candidate{
				toolCall("c1", 1, "failed", ofChild("failed")),
			},
			want: map[string]want{"c1": omitted(model.ReasonNotPromoted, "visibility.child_not_promoted")},
		},
		{
			name: "parent_resume: another parent's failed child is not this run's recovery",
			req:  parentResume,
			cands: []model.Candidate{
				toolCall("c1", 1, "failed", ofChild("failed"), func(c *model.Candidate) { c.OwnerRunParentID = "run-elsewhere" }),
			},
			want: map[string]want{"c1": omitted(model.ReasonNotPromoted, "visibility.child_not_promoted")},
		},
	})
}

// TestJudgeOtherParticipantsSharedUnresolvedCall holds the policy to DESIGN §4 recovery:
// "Another participant's unresolved state stays private to it", also when the call's artifact
// was shared branch-wide.
func TestJudgeOtherParticipantsSharedUnresolvedCall(t *testing.T) {

	runJudgeCases(t, []judgeCase{{
		name:  "another participant's branch-visible failed call",
		cands: []model.Candidate{toolCall("c1", 1, "failed", ownedBy(other), inRun("run-o"), visibility("branch"))},
		want:  map[string]want{"c1": omitted(model.ReasonParticipant, "")},
	}})
}

func TestJudgeRehydration(t *testing.T) {
	exact := func(ids ...string) func(*Request) { return func(r *Request) { r.ExactArtifactIDs = ids } }
	runJudgeCases(t, []judgeCase{
		{
			name:  "an exact artifact the provider may receive is raw",
			req:   exact("a1"),
			cands: []model.Candidate{artifact("a1", 1)},
			want:  map[string]want{"a1": {as: model.AsRaw, rule: "rehydration.exact_requested"}},
		},
		{
			name: "an exact artifact whose class the provider may not receive is privacy_restricted, never raw",
			req:  exact("a1", "a2", "a3"),
			cands: []model.Candidate{
				artifact("a1", 1, privacy("google_derived")),
				artifact("a2", 2, privacy("secret")),
				artifact("a3", 3, privacy("no-such-class")),
			},
			want: map[string]want{
				"a1": omitted(model.ReasonPrivacy, "privacy.raw_restricted_for_provider"),
				"a2": omitted(model.ReasonPrivacy, "privacy.raw_restricted_for_provider"),
				"a3": omitted(model.ReasonPrivacy, "privacy.raw_restricted_for_provider"),
			},
		},
		{
			name: "an exact or current-run artifact is never raw for a provider the policy does not know",
			req:  func(r *Request) { r.Provider, r.ExactArtifactIDs = "acme-llm", []string{"a1"} },
			cands: []model.Candidate{
				artifact("a1", 1, privacy("public")),
				artifact("a2", 2, privacy("public"), inRun(myRun)),
			},
			want: map[string]want{
				"a1": omitted(model.ReasonPrivacy, "privacy.raw_restricted_for_provider"),
				"a2": omitted(model.ReasonPrivacy, "privacy.raw_restricted_for_provider"),
			},
		},
		{
			name: "an exact or current-run artifact with no class is never raw",
			req:  exact("a1"),
			cands: []model.Candidate{
				artifact("a1", 1, privacy("")),
				artifact("a2", 2, privacy(""), inRun(myRun)),
			},
			want: map[string]want{
				"a1": omitted(model.ReasonPrivacy, "privacy.raw_restricted_for_provider"),
				"a2": omitted(model.ReasonPrivacy, "privacy.raw_restricted_for_provider"),
			},
		},
		{
			name:  "an exact oauth-derived artifact is raw for openai but restricted for openrouter",
			req:   func(r *Request) { r.ExactArtifactIDs = []string{"a1"}; r.Provider = "openrouter" },
			cands: []model.Candidate{artifact("a1", 1, privacy("oauth_derived"))},
			want:  map[string]want{"a1": omitted(model.ReasonPrivacy, "privacy.raw_restricted_for_provider")},
		},
		{
			name:  "an exact artifact over the rehydration byte budget is a reference",
			req:   exact("a1"),
			cands: []model.Candidate{artifact("a1", 1, resultBytes(32<<10))},
			want:  map[string]want{"a1": {as: model.AsReference, rule: "rehydration.over_byte_budget"}},
		},
		{
			name:  "an exact artifact that exactly fills the byte budget is raw",
			req:   exact("a1"),
			cands: []model.Candidate{artifact("a1", 1, resultBytes(32<<10-24))},
			want:  map[string]want{"a1": {as: model.AsRaw, rule: "rehydration.exact_requested"}},
		},
		{
			name:  "the byte budget is shared by one assembly's raw artifacts",
			req:   exact("a1", "a2", "a3"),
			cands: []model.Candidate{artifact("a1", 1, resultBytes(20000)), artifact("a2", 2, resultBytes(20000)), artifact("a3", 3, resultBytes(1000))},
			want: map[string]want{
				"a1": {as: model.AsRaw, rule: "rehydration.exact_requested"},
				"a2": {as: model.AsReference, rule: "rehydration.over_byte_budget"},
				"a3": {as: model.AsRaw, rule: "rehydration.exact_requested"},
			},
		},
		{
			name:  "an audit-visibility artifact asked for exactly is audit_only",
			req:   exact("a1"),
			cands: []model.Candidate{artifact("a1", 1, visibility("audit"))},
			want:  map[string]want{"a1": omitted(model.ReasonAuditOnly, "visibility.audit_only")},
		},
		{
			name:  "another participant's private artifact asked for exactly is participant_private",
			req:   exact("a1"),
			cands: []model.Candidate{artifact("a1", 1, ownedBy(other))},
			want:  map[string]want{"a1": omitted(model.ReasonParticipant, "visibility.participant_private")},
		},
		{
			name:    "under a version without promotion rules, an artifact of an earlier run is not replayed",
			version: retired[0].ID,
			cands:   []model.Candidate{artifact("a1", 1)},
			want:    map[string]want{"a1": omitted(model.ReasonWindow, "window.raw_not_replayed")},
		},
		{
			name:  "an earlier run's completed round that no memory stands in for is a reference, never silence",
			cands: []model.Candidate{artifact("a1", 1), artifact("a2", 2, status(model.ToolFailed))},
			want: map[string]want{
				"a1": {as: model.AsReference, rule: "window.round_reference"},
				"a2": omitted(model.ReasonWindow, "window.raw_not_replayed"),
			},
		},
		{
			name:  "an earlier run's round is left to the memory that stands in for it",
			cands: []model.Candidate{artifact("a1", 1), memory("m1", 2, derivedFrom([]string{"a1"}, "a1"))},
			want:  map[string]want{"a1": omitted(model.ReasonWindow, "window.raw_not_replayed"), "m1": asMemory},
		},
		{
			name: "the run's latest round is raw though a memory could stand in; an earlier round is its memory",
			req:  func(r *Request) { r.ToolRounds = true },
			cands: []model.Candidate{
				toolCall("c1", 1, "succeeded", func(c *model.Candidate) { c.Call.ArtifactIDs = []string{"a1"} }),
				artifact("a1", 2, inRun(myRun), ofCall("c1")),
				memory("m1", 3, derivedFrom([]string{"a1"}, "a1"), inRun(myRun)),
				toolCall("c2", 4, "succeeded", func(c *model.Candidate) { c.Call.ArtifactIDs = []string{"a2"} }),
				toolCall("c3", 5, "succeeded", func(c *model.Candidate) { c.Call.ArtifactIDs = []string{"a3"} }),
				artifact("a2", 6, inRun(myRun), ofCall("c2")),
				memory("m2", 7, derivedFrom([]string{"a2"}, "a2"), inRun(myRun)),
				artifact("a3", 8, inRun(myRun), ofCall("c3")),
			},
			want: map[string]want{
				"a1": omitted(model.ReasonDuplicate, "rehydration.memory_stands_in"),
				"m1": asMemory,
				"a2": {as: model.AsRaw, rule: "rehydration.latest_round"},
				"m2": omitted(model.ReasonDuplicate, "rehydration.raw_source_included"),
				"a3": {as: model.AsRaw, rule: "rehydration.current_run_result"},
			},
		},
		{
			name: "outside the generation path, the memory a client wrote stands in for the latest round",
			cands: []model.Candidate{
				toolCall("c1", 1, "succeeded", func(c *model.Candidate) { c.Call.ArtifactIDs = []string{"a1"} }),
				artifact("a1", 2, inRun(myRun), ofCall("c1")),
				memory("m1", 3, derivedFrom([]string{"a1"}, "a1"), inRun(myRun)),
			},
			want: map[string]want{"a1": omitted(model.ReasonDuplicate, "rehydration.memory_stands_in"), "m1": asMemory},
		},
		{
			name:    "under a version without promotion rules, a memory stands in for the latest round too",
			version: retired[0].ID,
			req:     func(r *Request) { r.ToolRounds = true },
			cands: []model.Candidate{
				toolCall("c1", 1, "succeeded", func(c *model.Candidate) { c.Call.ArtifactIDs = []string{"a1"} }),
				artifact("a1", 2, inRun(myRun), ofCall("c1")),
				memory("m1", 3, derivedFrom([]string{"a1"}, "a1"), inRun(myRun)),
			},
			want: map[string]want{"a1": omitted(model.ReasonDuplicate, "rehydration.memory_stands_in"), "m1": asMemory},
		},
		{
			name: "a recall's answer is the model's own request",
			cands: []model.Candidate{
				toolCall("c1", 1, "succeeded", func(c *model.Candidate) { c.Tool.Name, c.Call.ArtifactIDs = model.RecallTool, []string{"a1"} }),
				artifact("a1", 2, inRun(myRun), ofCall("c1"), func(c *model.Candidate) { c.Tool.Name = model.RecallTool }),
			},
			want: map[string]want{"a1": {as: model.AsRaw, rule: "rehydration.model_requested"}},
		},
		{
			name: "a current-run result is raw unless a memory stands in for it",
			cands: []model.Candidate{
				artifact("a1", 1, inRun(myRun)),
				artifact("a2", 2, inRun(myRun)),
				memory("m2", 3, derivedFrom([]string{"a2"}, "a2")),
			},
			want: map[string]want{
				"a1": {as: model.AsRaw, rule: "rehydration.current_run_result"},
				"a2": omitted(model.ReasonDuplicate, "rehydration.memory_stands_in"),
				"m2": asMemory,
			},
		},
		{
			name:  "a restricted current-run result is privacy_restricted",
			cands: []model.Candidate{artifact("a1", 1, inRun(myRun), privacy("google_derived"))},
			want:  map[string]want{"a1": omitted(model.ReasonPrivacy, "privacy.raw_restricted_for_provider")},
		},
		{
			name: "a memory whose sources are all included raw is a duplicate",
			req:  exact("a1"),
			cands: []model.Candidate{
				artifact("a1", 1),
				artifact("a2", 2),
				memory("m1", 3, derivedFrom([]string{"a1"}, "a1")),
				memory("m12", 4, derivedFrom([]string{"a1", "a2"}, "a1", "a2")),
			},
			want: map[string]want{
				"a1":  {as: model.AsRaw, rule: "rehydration.exact_requested"},
				"a2":  omitted(model.ReasonWindow, "window.raw_not_replayed"),
				"m1":  omitted(model.ReasonDuplicate, "rehydration.raw_source_included"),
				"m12": asMemory,
			},
		},
		{
			name: "a broken memory is never a duplicate of its surviving raw source",
			req:  exact("a1"),
			cands: []model.Candidate{
				artifact("a1", 1),
				memory("m1", 2, derivedFrom([]string{"a1", "gone"}, "a1")),
			},
			want: map[string]want{
				"a1": {as: model.AsRaw, rule: "rehydration.exact_requested"},
				"m1": {as: model.AsStaleMarker, rule: "provenance.source_missing_marked", broken: true},
			},
		},
	})
}

func TestJudgePrivacyRouting(t *testing.T) {
	restricted := want{as: model.AsSafeSummary, rule: "privacy.safe_summary_only", restricted: true}
	cases := []struct {
		name     string
		provider string
		class    string
		safe     string
		want     want
	}{
		{"internal to openai", "openai", "internal", "", asMemory},
		{"user_private to google", "google", "user_private", "", asMemory},
		{"public to an unknown provider, no safe summary", "acme-llm", "public", "", omitted(model.ReasonPrivacy, "privacy.restricted_no_safe_summary")},
		{"public to an unknown provider, with safe summary", "acme-llm", "public", "a hotel list", restricted},
		{"public to no provider at all", "", "public", "", omitted(model.ReasonPrivacy, "privacy.restricted_no_safe_summary")},
		{"unknown class to openai, with safe summary", "openai", "top-secret-ish", "a hotel list", restricted},
		{"unknown class to openai, no safe summary", "openai", "top-secret-ish", "", omitted(model.ReasonPrivacy, "privacy.restricted_no_safe_summary")},
		{"empty class is restricted", "openai", "", "", omitted(model.ReasonPrivacy, "privacy.restricted_no_safe_summary")},
		{"secret with safe summary to openai", "openai", "secret", "a hotel list", omitted(model.ReasonPrivacy, "privacy.never_sent")},
		{"secret with safe summary to anthropic", "anthropic", "secret", "a hotel list", omitted(model.ReasonPrivacy, "privacy.never_sent")},
		{"secret with no safe summary", "openai", "secret", "", omitted(model.ReasonPrivacy, "privacy.never_sent")},
		{"google_derived with safe summary to openai", "openai", "google_derived", "a hotel list", restricted},
		{"google_derived with no safe summary to openai", "openai", "google_derived", "", omitted(model.ReasonPrivacy, "privacy.restricted_no_safe_summary")},
		{"oauth_derived to anthropic", "anthropic", "oauth_derived", "", asMemory},
		{"oauth_derived to openai", "openai", "oauth_derived", "", asMemory},
		{"oauth_derived to openrouter, no safe summary", "openrouter", "oauth_derived", "", omitted(model.ReasonPrivacy, "privacy.restricted_no_safe_summary")},
		{"oauth_derived to openrouter, with safe summary", "openrouter", "oauth_derived", "a hotel list", restricted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := baseRequest()
			req.Provider = tc.provider
			vds := Judge(mustResolve(t, ""), req, []model.Candidate{memory("m1", 1, privacy(tc.class), safeSummary(tc.safe))})
			checkVerdicts(t, vds, map[string]want{"m1": tc.want})
			if vds[0].Included() {
				wantPolicy := model.PolicyMemory
				if tc.want.restricted {
					wantPolicy = model.PolicyPrivacy
				}
				if got := vds[0].Decision.Policy; got != wantPolicy {
					t.Errorf("got decision policy %q, want %q", got, wantPolicy)
				}
			}
		})
	}
}

func TestJudgeFreshness(t *testing.T) {
	hour := time.Hour
	day := 24 * time.Hour
	cases := []struct {
		name    string
		version string
		opts    []opt
		want    want
	}{
		{"volatile within its default TTL of one hour", "", []opt{fresh("volatile", now.Add(-59*time.Minute))}, asMemory},
		{"volatile exactly at its TTL is not yet stale", "", []opt{fresh("volatile", now.Add(-hour))}, asMemory},
		{"volatile past its default TTL is marked stale", "", []opt{fresh("volatile", now.Add(-61*time.Minute))},
			want{as: model.AsStaleMarker, rule: "memory.current+freshness.stale_marked", staleSince: now.Add(-time.Minute)}},
		{"bounded within its default TTL of 7 days", "", []opt{fresh("bounded", now.Add(-6*day))}, asMemory},
		{"bounded past 7 days is marked stale", "", []opt{fresh("bounded", now.Add(-8*day))},
			want{as: model.AsStaleMarker, rule: "memory.current+freshness.stale_marked", staleSince: now.Add(-day)}},
		{"staleAfter in the future overrides the volatile TTL", "", []opt{fresh("volatile", now.Add(-5*hour)), staleAfter(now.Add(hour))}, asMemory},
		{"staleAfter in the past overrides the bounded TTL", "", []opt{fresh("bounded", now.Add(-2*hour)), staleAfter(now.Add(-hour))},
			want{as: model.AsStaleMarker, rule: "memory.current+freshness.stale_marked", staleSince: now.Add(-hour)}},
		{"durable never goes stale", "", []opt{fresh("durable", now.Add(-3650*day))}, asMemory},
		{"permanent never goes stale, even past a staleAfter", "", []opt{fresh("permanent", now.Add(-3650*day)), staleAfter(now.Add(-day))}, asMemory},
		{"durable never goes stale under strict-freshness", "strict-freshness", []opt{fresh("durable", now.Add(-3650*day)), staleAfter(now.Add(-day))}, asMemory},
		{"session while its run lasts", "", []opt{fresh("session", now.Add(-30*day))}, asMemory},
		{"session after its run ended (staleAfter from the run end)", "", []opt{fresh("session", now.Add(-2*hour)), staleAfter(now.Add(-hour))},
			want{as: model.AsStaleMarker, rule: "memory.current+freshness.stale_marked", staleSince: now.Add(-hour)}},
		{"strict-freshness omits a stale volatile memory", "strict-freshness", []opt{fresh("volatile", now.Add(-2*hour))},
			want{reason: model.ReasonStale, rule: "freshness.stale_omitted", staleSince: now.Add(-hour)}},
		{"strict-freshness omits a session memory whose run ended", "strict-freshness", []opt{fresh("session", now.Add(-2*hour)), staleAfter(now.Add(-hour))},
			want{reason: model.ReasonStale, rule: "freshness.stale_omitted", staleSince: now.Add(-hour)}},
		{"strict-freshness keeps a fresh memory", "strict-freshness", []opt{fresh("volatile", now.Add(-10*time.Minute))}, asMemory},
		{"a stale restricted memory stays a safe summary with its marker", "", []opt{fresh("volatile", now.Add(-2*hour)), privacy("google_derived"), safeSummary("s")},
			want{as: model.AsSafeSummary, rule: "privacy.safe_summary_only+freshness.stale_marked", restricted: true, staleSince: now.Add(-hour)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vds := Judge(mustResolve(t, tc.version), baseRequest(), []model.Candidate{memory("m1", 1, tc.opts...)})
			checkVerdicts(t, vds, map[string]want{"m1": tc.want})
			if tc.want.as == model.AsStaleMarker {
				if got := vds[0].Decision.Policy; got != model.PolicyFreshness {
					t.Errorf("got decision policy %q, want %q", got, model.PolicyFreshness)
				}
			}
		})
	}
}

func TestStale(t *testing.T) {
	v := mustResolve(t, "")
	observed := now.Add(-2 * time.Hour)
	cases := []struct {
		name      string
		c         model.Candidate
		wantSince time.Time
		wantStale bool
	}{
		{"volatile since observedAt plus 1h", memory("m", 1, fresh("volatile", observed)), observed.Add(time.Hour), true},
		{"bounded since observedAt plus 7d", memory("m", 1, fresh("bounded", observed)), observed.Add(7 * 24 * time.Hour), false},
		{"staleAfter wins over the class TTL", memory("m", 1, fresh("volatile", observed), staleAfter(now.Add(time.Minute))), now.Add(time.Minute), false},
		{"session without an end never goes stale by age", memory("m", 1, fresh("session", observed)), time.Time{}, false},
		{"unknown class has no TTL", memory("m", 1, fresh("", observed)), time.Time{}, false},
		{"durable", memory("m", 1, fresh("durable", observed), staleAfter(observed)), time.Time{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			since, stale := Stale(v, now, &tc.c)
			if stale != tc.wantStale || !since.Equal(tc.wantSince) {
				t.Errorf("got (%v, %v), want (%v, %v)", since, stale, tc.wantSince, tc.wantStale)
			}
		})
	}
}

func TestJudgeSupersession(t *testing.T) {
	staleOld := fresh("volatile", now.Add(-3*time.Hour))
	runJudgeCases(t, []judgeCase{
		{
			name:  "a memory superseded by an eligible one is omitted; the replacement stays",
			cands: []model.Candidate{memory("old", 1, supersededBy("new")), memory("new", 2)},
			want: map[string]want{
				"old": omitted(model.ReasonSuperseded, "supersession.replaced_by_eligible"),
				"new": asMemory,
			},
		},
		{
			name:  "superseded and stale reports superseded",
			cands: []model.Candidate{memory("old", 1, supersededBy("new"), staleOld), memory("new", 2)},
			want: map[string]want{
				"old": omitted(model.ReasonSuperseded, "supersession.replaced_by_eligible"),
				"new": asMemory,
			},
		},
		{
			name:    "superseded and stale reports superseded under strict-freshness too",
			version: "strict-freshness",
			cands:   []model.Candidate{memory("old", 1, supersededBy("new"), staleOld), memory("new", 2)},
			want: map[string]want{
				"old": omitted(model.ReasonSuperseded, "supersession.replaced_by_eligible"),
				"new": asMemory,
			},
		},
		{
			name:  "a superseder that is another participant's private memory does not supersede",
			cands: []model.Candidate{memory("old", 1, supersededBy("new")), memory("new", 2, ownedBy(other))},
			want: map[string]want{
				"old": asMemory,
				"new": omitted(model.ReasonParticipant, "visibility.participant_private"),
			},
		},
		{
			name:  "a conversation-visible superseder from another branch does not supersede",
			cands: []model.Candidate{memory("old", 1, supersededBy("new")), memory("new", 2, offLineage(), visibility("conversation"))},
			want:  map[string]want{"old": asMemory, "new": asMemory},
		},
		{
			name:  "a branch-ineligible superseder does not supersede",
			cands: []model.Candidate{memory("old", 1, supersededBy("new")), memory("new", 2, offLineage(), visibility("branch"))},
			want: map[string]want{
				"old": asMemory,
				"new": omitted(model.ReasonBranchIneligible, "visibility.branch_lineage"),
			},
		},
		{
			name:  "an unpromoted child's superseder does not supersede",
			req:   func(r *Request) { r.RunID = parentRun },
			cands: []model.Candidate{memory("old", 1, supersededBy("new")), memory("new", 2, ofChild("completed"))},
			want: map[string]want{
				"old": asMemory,
				"new": omitted(model.ReasonNotPromoted, "visibility.child_not_promoted"),
			},
		},
		{
			name:  "a superseder outside the snapshot does not supersede",
			cands: []model.Candidate{memory("old", 1, supersededBy("missing"))},
			want:  map[string]want{"old": asMemory},
		},
		{
			name:  "one eligible superseder among ineligible ones supersedes",
			cands: []model.Candidate{memory("old", 1, supersededBy("private", "new")), memory("private", 2, ownedBy(other)), memory("new", 3)},
			want: map[string]want{
				"old":     omitted(model.ReasonSuperseded, "supersession.replaced_by_eligible"),
				"private": omitted(model.ReasonParticipant, "visibility.participant_private"),
				"new":     asMemory,
			},
		},
		{
			name:  "precedence: privacy_restricted before superseded",
			cands: []model.Candidate{memory("old", 1, supersededBy("new"), privacy("google_derived")), memory("new", 2)},
			want: map[string]want{
				"old": omitted(model.ReasonPrivacy, "privacy.restricted_no_safe_summary"),
				"new": asMemory,
			},
		},
		{
			name:    "precedence: provenance_broken before superseded under strict-freshness",
			version: "strict-freshness",
			cands:   []model.Candidate{memory("old", 1, supersededBy("new"), derivedFrom([]string{"gone"})), memory("new", 2)},
			want: map[string]want{
				"old": {reason: model.ReasonProvenanceBroken, rule: "provenance.source_missing", broken: true},
				"new": asMemory,
			},
		},
		{
			name:  "a broken superseded memory is superseded under the default policy",
			cands: []model.Candidate{memory("old", 1, supersededBy("new"), derivedFrom([]string{"gone"})), memory("new", 2)},
			want: map[string]want{
				"old": {reason: model.ReasonSuperseded, rule: "supersession.replaced_by_eligible", broken: true},
				"new": asMemory,
			},
		},
	})
}

func TestJudgeProvenance(t *testing.T) {
	broken := derivedFrom([]string{"a1", "a2"}, "a1")
	runJudgeCases(t, []judgeCase{
		{
			name:  "intact provenance is an ordinary memory",
			cands: []model.Candidate{memory("m1", 1, derivedFrom([]string{"a1", "a2"}, "a1", "a2"))},
			want:  map[string]want{"m1": asMemory},
		},
		{
			name:  "a missing source is a stale marker under the default policy",
			cands: []model.Candidate{memory("m1", 1, broken)},
			want:  map[string]want{"m1": {as: model.AsStaleMarker, rule: "provenance.source_missing_marked", broken: true}},
		},
		{
			name:  "every source missing is a stale marker",
			cands: []model.Candidate{memory("m1", 1, derivedFrom([]string{"a1"}))},
			want:  map[string]want{"m1": {as: model.AsStaleMarker, rule: "provenance.source_missing_marked", broken: true}},
		},
		{
			name:    "a missing source is provenance_broken under strict-freshness",
			version: "strict-freshness",
			cands:   []model.Candidate{memory("m1", 1, broken)},
			want:    map[string]want{"m1": {reason: model.ReasonProvenanceBroken, rule: "provenance.source_missing", broken: true}},
		},
		{
			name:  "broken and stale is one stale marker with both rules",
			cands: []model.Candidate{memory("m1", 1, broken, fresh("volatile", now.Add(-2*time.Hour)))},
			want: map[string]want{"m1": {as: model.AsStaleMarker, rule: "provenance.source_missing_marked+freshness.stale_marked",
				broken: true, staleSince: now.Add(-time.Hour)}},
		},
		{
			name:    "broken and stale under strict-freshness reports provenance_broken first",
			version: "strict-freshness",
			cands:   []model.Candidate{memory("m1", 1, broken, fresh("volatile", now.Add(-2*time.Hour)))},
			want:    map[string]want{"m1": {reason: model.ReasonProvenanceBroken, rule: "provenance.source_missing", broken: true}},
		},
		{
			name:  "a broken restricted memory stays a safe summary, never a plain memory",
			cands: []model.Candidate{memory("m1", 1, broken, privacy("google_derived"), safeSummary("s"))},
			want:  map[string]want{"m1": {as: model.AsSafeSummary, rule: "provenance.source_missing_marked", broken: true, restricted: true}},
		},
		{
			name:  "a broken restricted memory with no safe summary is privacy_restricted first",
			cands: []model.Candidate{memory("m1", 1, broken, privacy("google_derived"))},
			want:  map[string]want{"m1": omitted(model.ReasonPrivacy, "privacy.restricted_no_safe_summary")},
		},
	})
}

func TestJudgeConflicts(t *testing.T) {
	conflict := want{as: model.AsConflict, rule: "conflict.both_sides_included"}
	runJudgeCases(t, []judgeCase{
		{
			name:  "both sides included are each a conflict",
			cands: []model.Candidate{memory("m1", 1, conflictsWith("m2")), memory("m2", 2, conflictsWith("m1"))},
			want:  map[string]want{"m1": conflict, "m2": conflict},
		},
		{
			name: "three sides included are each a conflict, never last-write-wins",
			cands: []model.Candidate{
				memory("m1", 1, conflictsWith("m2", "m3")),
				memory("m2", 2, conflictsWith("m1", "m3")),
				memory("m3", 3, conflictsWith("m1", "m2")),
			},
			want: map[string]want{"m1": conflict, "m2": conflict, "m3": conflict},
		},
		{
			name: "a restricted side stays a safe summary; the other side is a conflict",
			cands: []model.Candidate{
				memory("m1", 1, conflictsWith("m2")),
				memory("m2", 2, conflictsWith("m1"), privacy("google_derived"), safeSummary("s")),
			},
			want: map[string]want{
				"m1": conflict,
				"m2": {as: model.AsSafeSummary, rule: "privacy.safe_summary_only", restricted: true},
			},
		},
		{
			name: "a stale side keeps its stale marker; the other side is a conflict",
			cands: []model.Candidate{
				memory("m1", 1, conflictsWith("m2")),
				memory("m2", 2, conflictsWith("m1"), fresh("volatile", now.Add(-2*time.Hour))),
			},
			want: map[string]want{
				"m1": conflict,
				"m2": {as: model.AsStaleMarker, rule: "memory.current+freshness.stale_marked", staleSince: now.Add(-time.Hour)},
			},
		},
		{
			name: "a lone surviving side keeps memory when the other is restricted away",
			cands: []model.Candidate{
				memory("m1", 1, conflictsWith("m2")),
				memory("m2", 2, conflictsWith("m1"), privacy("secret"), safeSummary("s")),
			},
			want: map[string]want{
				"m1": asMemory,
				"m2": omitted(model.ReasonPrivacy, "privacy.never_sent"),
			},
		},
		{
			name: "a lone surviving side keeps memory when the other is private or superseded",
			cands: []model.Candidate{
				memory("m1", 1, conflictsWith("m2", "m3")),
				memory("m2", 2, conflictsWith("m1"), ownedBy(other)),
				memory("m3", 3, conflictsWith("m1"), supersededBy("m4")),
				memory("m4", 4),
			},
			want: map[string]want{
				"m1": asMemory,
				"m2": omitted(model.ReasonParticipant, "visibility.participant_private"),
				"m3": omitted(model.ReasonSuperseded, "supersession.replaced_by_eligible"),
				"m4": asMemory,
			},
		},
		{
			name:  "a side outside the snapshot leaves a lone memory",
			cands: []model.Candidate{memory("m1", 1, conflictsWith("elsewhere"))},
			want:  map[string]want{"m1": asMemory},
		},
	})
}

func TestJudgeChildPromotion(t *testing.T) {
	asParent := func(r *Request) { r.RunID = parentRun }
	runJudgeCases(t, []judgeCase{
		{
			name:  "before promotion a child's memory is not_promoted for the parent",
			req:   asParent,
			cands: []model.Candidate{memory("m1", 1, ofChild("completed"))},
			want:  map[string]want{"m1": omitted(model.ReasonNotPromoted, "visibility.child_not_promoted")},
		},
		{
			name:  "a branch-visible child memory is still not_promoted before promotion",
			req:   asParent,
			cands: []model.Candidate{memory("m1", 1, ofChild("completed"), visibility("branch"))},
			want:  map[string]want{"m1": omitted(model.ReasonNotPromoted, "visibility.child_not_promoted")},
		},
		{
			name:  "after promotion to the parent's participant the memory is included",
			req:   asParent,
			cands: []model.Candidate{memory("m1", 1, ofChild("completed"), promotedTo(me))},
			want:  map[string]want{"m1": asMemory},
		},
		{
			name:  "a child's memory promoted to another participant stays participant_private",
			req:   asParent,
			cands: []model.Candidate{memory("m1", 1, ofChild("completed"), promotedTo(other))},
			want:  map[string]want{"m1": omitted(model.ReasonParticipant, "visibility.participant_private")},
		},
		{
			name:  "a promoted child artifact asked for exactly is raw for the parent",
			req:   func(r *Request) { r.RunID = parentRun; r.ExactArtifactIDs = []string{"a1", "a2"} },
			cands: []model.Candidate{artifact("a1", 1, ofChild("completed"), promotedTo(me)), artifact("a2", 2, ofChild("completed"))},
			want: map[string]want{
				"a1": {as: model.AsRaw, rule: "rehydration.exact_requested"},
				"a2": omitted(model.ReasonNotPromoted, "visibility.child_not_promoted"),
			},
		},
		{
			name:  "the child's own run sees its unpromoted memory",
			req:   func(r *Request) { r.ParticipantID, r.RunID, r.RuntimeKind = child, childRun, "subagent" },
			cands: []model.Candidate{memory("m1", 1, ofChild("running"))},
			want:  map[string]want{"m1": asMemory},
		},
		{
			name:  "the child participant with no run sees its unpromoted memory",
			req:   func(r *Request) { r.ParticipantID, r.RunID = child, "" },
			cands: []model.Candidate{memory("m1", 1, ofChild("completed"))},
			want:  map[string]want{"m1": asMemory},
		},
		{
			name:  "the child participant in another run does not see an unpromoted memory",
			req:   func(r *Request) { r.ParticipantID, r.RunID = child, "run-child-2" },
			cands: []model.Candidate{memory("m1", 1, ofChild("completed"))},
			want:  map[string]want{"m1": omitted(model.ReasonNotPromoted, "visibility.child_not_promoted")},
		},
	})
}

// turns builds n alternating user/assistant messages from seq first on, ending with a user
// message.
func turns(first int64, n int) []model.Candidate {
	out := make([]model.Candidate, 0, n)
	for k := 0; k < n; k++ {
		role := "assistant"
		if (n-1-k)%2 == 0 {
			role = "user"
		}
		out = append(out, message(msgID(first+int64(k)), first+int64(k), role))
	}
	return out
}

func msgID(seq int64) string { return "msg-" + string(rune('a'+seq)) }

func TestJudgeWindow(t *testing.T) {
	recent := want{as: model.AsMessage, rule: "window.recent_turn"}
	current := want{as: model.AsMessage, rule: "window.current_message", protected: true}
	older := omitted(model.ReasonWindow, "window.older_turn")
	directive := want{as: model.AsMessage, rule: "window.discussion_directive", protected: true}

	tenTurns := func(kind model.RuntimeKind) judgeCase {
		c := judgeCase{
			name:  string(kind) + ": only the last 8 user/assistant messages stay, the latest user message is protected",
			req:   func(r *Request) { r.RuntimeKind = kind },
			cands: append([]model.Candidate{message("sys", 0, "system")}, turns(1, 10)...),
			want:  map[string]want{},
		}
		for s := int64(1); s <= 10; s++ {
			switch {
			case s == 10:
				c.want[msgID(s)] = current
			case s >= 3:
				c.want[msgID(s)] = recent
			default:
				c.want[msgID(s)] = older
			}
		}
		if kind == model.RuntimeDiscussion {
			c.want["sys"] = directive
		} else {
			c.want["sys"] = older
		}
		return c
	}

	runJudgeCases(t, []judgeCase{
		tenTurns(model.RuntimeChat),
		tenTurns(model.RuntimeDiscussion),
		{
			name:  "a system message inside the window is kept as a recent turn",
			cands: append(append(turns(1, 4), message("sys", 5, "system")), message("u6", 6, "user")),
			want:  map[string]want{"sys": recent, "u6": current, msgID(1): recent},
		},
		{
			name: "discussion: every system message is a protected directive",
			req:  func(r *Request) { r.RuntimeKind = "discussion" },
			cands: []model.Candidate{
				message("sys1", 1, "system"), message("u2", 2, "user"), message("sys3", 3, "system"),
			},
			want: map[string]want{"sys1": directive, "u2": current, "sys3": directive},
		},
		{
			name:  "the latest user message is protected even when older than the window",
			cands: append([]model.Candidate{message("u0", 0, "user")}, assistantTurns(1, 9)...),
			want: map[string]want{
				"u0":     current,
				"asst-1": older,
				"asst-2": recent,
				"asst-9": recent,
			},
		},
		{
			name: "another participant's private messages do not take window places",
			cands: func() []model.Candidate {
				cs := turns(1, 9)
				cs[4] = message(msgID(5), 5, cs[4].Message.Role, ownedBy(other), visibility("participant"))
				return cs
			}(),
			want: map[string]want{
				msgID(1): recent,
				msgID(5): omitted(model.ReasonParticipant, "visibility.participant_private"),
				msgID(9): current,
			},
		},
		{
			name: "lineage order: ancestors first, then seq; the current message is the branch's",
			cands: []model.Candidate{
				message("branch-user", 2, "user", seqDepth(2, 0)),
				message("ancestor-user", 10, "user", seqDepth(10, 1)),
			},
			want: map[string]want{
				"branch-user":   current,
				"ancestor-user": recent,
			},
		},
	})
}

// assistantTurns builds n assistant messages asst-1..asst-n from seq first on.
func assistantTurns(first int64, n int) []model.Candidate {
	out := make([]model.Candidate, 0, n)
	for k := 1; k <= n; k++ {
		out = append(out, message("asst-"+string(rune('0'+k)), first+int64(k-1), "assistant"))
	}
	return out
}

func TestJudgeRunState(t *testing.T) {
	cands := []model.Candidate{
		checkpoint("cp1", myRun, 3),
		checkpoint("cp2", myRun, 5),
		checkpoint("cp-other", oldRun, 9),
		skillState("sk1", myRun, 2),
		skillState("sk2", myRun, 4),
		skillState("sk-other", oldRun, 8),
	}
	runJudgeCases(t, []judgeCase{
		{
			name:  "the assembly run's latest checkpoint and skills are included; earlier ones superseded; others' window",
			cands: cands,
			want: map[string]want{
				"cp2":      {as: model.AsCheckpoint, rule: "checkpoint.latest_of_run"},
				"cp1":      omitted(model.ReasonSuperseded, "checkpoint.earlier_of_run"),
				"cp-other": omitted(model.ReasonWindow, "checkpoint.other_run"),
				"sk2":      {as: model.AsSkills, rule: "skills.latest_of_run"},
				"sk1":      omitted(model.ReasonSuperseded, "skills.earlier_of_run"),
				"sk-other": omitted(model.ReasonWindow, "skills.other_run"),
			},
		},
		{
			name:  "with no assembly run every checkpoint and skill state is another run's",
			req:   func(r *Request) { r.RunID = "" },
			cands: cands,
			want: map[string]want{
				"cp2": omitted(model.ReasonWindow, "checkpoint.other_run"),
				"sk2": omitted(model.ReasonWindow, "skills.other_run"),
			},
		},
		{
			name: "latest follows lineage order: a branch record beats an ancestor's higher seq",
			cands: []model.Candidate{
				checkpoint("ancestor", myRun, 10, seqDepth(10, 1)),
				checkpoint("branch", myRun, 2, seqDepth(2, 0)),
			},
			want: map[string]want{
				"branch":   {as: model.AsCheckpoint, rule: "checkpoint.latest_of_run"},
				"ancestor": omitted(model.ReasonSuperseded, "checkpoint.earlier_of_run"),
			},
		},
	})
}

func TestJudgeRelevance(t *testing.T) {
	cands := []model.Candidate{
		message("u1", 1, "user", func(c *model.Candidate) { c.Message.Content = "Which hotel in Lisbon has a pool and the best view?" }),
		memory("hit", 2, func(c *model.Candidate) { c.Memory.Summary = "Lisbon HOTEL list, with pool info" }),
		memory("miss", 3, func(c *model.Candidate) { c.Memory.Summary = "the weather in Porto has been fine" }),
	}
	vds := Judge(mustResolve(t, ""), baseRequest(), cands)
	// hotel, lisbon, pool match; "with", "the", "has" are stopwords and "in", "a" too short.
	for _, tc := range []struct {
		id   string
		want int
	}{{"hit", 3}, {"miss", 0}} {
		for _, vd := range vds {
			if vd.Candidate.ID == tc.id && vd.Relevance != tc.want {
				t.Errorf("%s: got relevance %d, want %d", tc.id, vd.Relevance, tc.want)
			}
		}
	}
}

func TestJudgeDeterminism(t *testing.T) {
	cands := []model.Candidate{
		message("sys", 0, "system"),
		message("u1", 1, "user"),
		message("a2", 2, "assistant"),
		toolCall("c1", 3, "failed", privacy("google_derived")),
		toolCall("c2", 4, "succeeded"),
		artifact("art1", 5, ofCall("c2"), inRun(myRun)),
		artifact("art2", 6, resultBytes(40000)),
		memory("m1", 7, derivedFrom([]string{"art1"}, "art1"), conflictsWith("m2")),
		memory("m2", 8, conflictsWith("m1"), fresh("volatile", now.Add(-30*time.Minute))),
		memory("m3", 9, supersededBy("m2"), fresh("bounded", now.Add(-30*24*time.Hour))),
		memory("m4", 10, ownedBy(other)),
		checkpoint("cp1", myRun, 11),
		skillState("sk1", myRun, 12),
		message("u13", 13, "user", func(c *model.Candidate) { c.Message.Content = "memory m1 please" }),
	}
	snapshot := make([]model.Candidate, len(cands))
	copy(snapshot, cands)
	req := baseRequest()
	req.ExactArtifactIDs = []string{"art2"}
	v := mustResolve(t, "")

	first := Judge(v, req, cands)
	second := Judge(v, req, cands)
	if len(first) != len(cands) || len(second) != len(cands) {
		t.Fatalf("got %d and %d verdicts for %d candidates, want one each", len(first), len(second), len(cands))
	}
	if !reflect.DeepEqual(first, second) {
		t.Errorf("got different verdicts from two judgments of the same snapshot:\n%+v\n%+v", first, second)
	}
	if !reflect.DeepEqual(cands, snapshot) {
		t.Errorf("got candidates changed by Judge, want them untouched")
	}

	// The clock is only req.Now: the same snapshot judged later marks the volatile memory
	// stale, and judged at its own now (decades before the wall clock) does not.
	later := req
	later.Now = now.Add(2 * time.Hour)
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{{"at now", req, model.AsConflict}, {"two hours later", later, model.AsStaleMarker}} {
		t.Run(tc.name, func(t *testing.T) {
			judged := false
			for _, vd := range Judge(v, tc.req, cands) {
				if vd.Candidate.ID == "m2" {
					judged = true
					if vd.Decision.As != tc.want {
						t.Errorf("m2: got as %q, want %q", vd.Decision.As, tc.want)
					}
				}
			}
			if !judged {
				t.Error("m2 got no verdict")
			}
		})
	}
}

func TestOwnershipDirect(t *testing.T) {
	req := baseRequest()
	cases := []struct {
		name       string
		c          model.Candidate
		wantReason string // empty: visible
	}{
		{"own memory", memory("m", 1), ""},
		{"checkpoint of another run", checkpoint("cp", oldRun, 1), ""},
		{"branch message of another participant", message("x", 1, "assistant", ownedBy(other)), ""},
		{"private message with no owner", message("x", 1, "assistant", visibility("participant")), ""},
		{"off-lineage conversation memory", memory("m", 1, offLineage(), visibility("conversation")), ""},
		{"off-lineage private memory", memory("m", 1, offLineage()), model.ReasonBranchIneligible},
		{"audit memory", memory("m", 1, visibility("audit")), model.ReasonAuditOnly},
		{"unpromoted child memory", memory("m", 1, ofChild("completed")), model.ReasonNotPromoted},
		{"private memory of another", memory("m", 1, ownedBy(other)), model.ReasonParticipant},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, excluded := Ownership(req, &tc.c)
			if excluded != (tc.wantReason != "") || d.Reason != tc.wantReason {
				t.Errorf("got (%q, excluded %v), want (%q, excluded %v)", d.Reason, excluded, tc.wantReason, tc.wantReason != "")
			}
			if excluded && d.Outcome != OutcomeOmitted {
				t.Errorf("got outcome %q, want %q", d.Outcome, OutcomeOmitted)
			}
		})
	}
}

// TestRelevanceCountsDistinctSharedTerms checks relevance against its definition: the size
// of the intersection of the current message's terms and the summary's, each the words of
// the lower-cased text longer than two bytes and not stopwords. It reads the same with the
// summary's terms worked out beforehand (as the copy does) and without.
func TestRelevanceCountsDistinctSharedTerms(t *testing.T) {
	split := func(text string) map[string]bool {
		out := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
		}) {
			if len(w) > 2 && !map[string]bool{"the": true, "with": true, "and": true, "for": true}[w] {
				out[w] = true
			}
		}
		return out
	}
	message := "Compare the Q3 revenue CSV with the vendor-contracts sheet, revenue first"
	current := terms(message)
	if want := split(message); !maps.Equal(current, want) {
		t.Fatalf("terms(%q) = %v, want %v", message, current, want)
	}
	for _, text := range []string{
		"", "revenue revenue REVENUE", "Q3 revenue: 4.1M (vendor contracts sheet)", "the and for",
		"revenuecsv csv-vendor/contracts", "über revenue — naïve sheet", "\u212aSV vendor\u0130ng",
		"an extraordinarilylongwordthatgoesonandonbeyondsixtyfourcharactersxxxxxxxxxxxxxxxxxxxxx revenue",
	} {
		want := 0
		for w := range split(text) {
			if current[w] {
				want++
			}
		}
		if got := relevance(current, &model.MemoryFacts{Summary: text}); got != want {
			t.Errorf("relevance(%q) = %d, want %d", text, got, want)
		}
		if got := relevance(current, &model.MemoryFacts{Summary: text, Terms: extract.Terms(text)}); got != want {
			t.Errorf("relevance(%q) with its terms = %d, want %d", text, got, want)
		}
	}
}

// A call whose answer so far is included names it, so that its recovery line points there
// instead of saying there is no result.
func TestJudgeHandleNamesItsCall(t *testing.T) {
	cands := []model.Candidate{
		toolCall("envelope", 1, "pending", handled("h-envelope", "internal")),
		artifact("h-envelope", 2, ofCall("envelope"), inRun(myRun), status("pending"), resultBytes(200)),
		toolCall("bare", 3, "pending"),
	}
	got := map[string]string{}
	for _, vd := range Judge(mustResolve(t, ""), baseRequest(), cands) {
		if vd.Answer != nil {
			got[vd.Candidate.ID] = vd.Answer.ArtifactID + " " + vd.Answer.As
		}
	}
	if got["envelope"] != "h-envelope raw" || got["bare"] != "" {
		t.Errorf("got handles %v, want envelope's h-envelope and none for bare", got)
	}
}

func TestJudgeOlderTurnValues(t *testing.T) {
	// A user message's record carries the values it states, as the store reads it.
	said := func(text string) opt {
		return func(c *model.Candidate) {
			c.Message.Content, c.Message.Stated = text, extract.StatedValues(text, extract.MaxStatedValues)
		}
	}
	var cands []model.Candidate
	cands = append(cands, message("u0", 0, "user", said("My access token is tok_9f8e7d; I fly from SFO.")),
		message("u1", 1, "user", said("thanks, that is all")))
	for i := int64(2); i < 12; i++ {
		cands = append(cands, message(fmt.Sprintf("m%d", i), i, "assistant"))
	}
	cands = append(cands, message("u12", 12, "user"))
	runJudgeCases(t, []judgeCase{
		{
			name:  "an older user turn that stated values stands in as them; one that stated none stays out",
			cands: cands,
			want: map[string]want{
				"u0": {as: model.AsMemory, rule: "window.older_turn_values"},
				"u1": omitted(model.ReasonWindow, "window.older_turn"),
			},
		},
		{
			name:    "under a version without promotion rules, older turns stay out",
			version: retired[0].ID,
			cands:   cands,
			want:    map[string]want{"u0": omitted(model.ReasonWindow, "window.older_turn")},
		},
	})
	for _, vd := range Judge(mustResolve(t, ""), baseRequest(), cands) {
		if vd.Candidate.ID != "u0" {
			continue
		}
		var got []string
		for _, s := range vd.Stated {
			got = append(got, s.Text)
		}
		if want := []string{"tok_9f8e7d", "SFO"}; !reflect.DeepEqual(got, want) {
			t.Errorf("u0 stated: got %q, want %q", got, want)
		}
		if !strings.Contains(vd.Decision.Reason, "bytes=") {
			t.Errorf("u0: got reason %q, want it to locate each value", vd.Decision.Reason)
		}
	}
}

func TestJudgeRecallNamesArtifacts(t *testing.T) {
	cands := []model.Candidate{
		artifact("a1", 1),
		artifact("a2", 2),
		memory("m2", 3, derivedFrom([]string{"a2"}, "a2")),
		artifact("a3", 4, privacy("google_derived")),
		memory("m3", 5, derivedFrom([]string{"a3"}, "a3"), privacy("google_derived"), safeSummary("a table")),
		artifact("a4", 6),
		memory("m4", 7, derivedFrom([]string{"a4"}, "a4"), func(c *model.Candidate) { c.Memory.QuotesWhole = true }),
	}
	for _, recall := range []bool{true, false} {
		req := baseRequest()
		req.Recall = recall
		got := map[string]string{}
		for _, vd := range Judge(mustResolve(t, ""), req, cands) {
			got[vd.Candidate.ID] = vd.RecallID
		}
		want := map[string]string{"a1": "a1", "a2": "", "m2": "a2", "a3": "", "m3": "", "a4": "", "m4": ""}
		if !recall {
			want = map[string]string{"a1": "", "a2": "", "m2": "", "a3": "", "m3": "", "a4": "", "m4": ""}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("recall %v: got %v, want %v", recall, got, want)
		}
	}
}

// An artifact whose body went by retention is omitted, reason redacted, even when the
// request names it (then as a decision that shaped the request, not a bulk one); a memory
// of it stands in as before and names no recall of it.
func TestRedactedArtifactsSendNothing(t *testing.T) {
	v := mustResolve(t, "")
	redacted := func(c *model.Candidate) { c.Artifact.Redacted = true }
	cands := []model.Candidate{
		artifact("art-r", 1, redacted),
		artifact("art-k", 2),
		memory("mem-r", 3, derivedFrom([]string{"art-r"}, "art-r"), func(c *model.Candidate) { c.Memory.RedactedSourceIDs = []string{"art-r"} }),
		memory("mem-both", 4, derivedFrom([]string{"art-r", "art-k"}, "art-r", "art-k"), func(c *model.Candidate) { c.Memory.RedactedSourceIDs = []string{"art-r"} }),
	}
	for _, exact := range []bool{false, true} {
		req := baseRequest()
		req.Recall = true
		if exact {
			req.ExactArtifactIDs = []string{"art-r"}
		}
		got := map[string]*Verdict{}
		for _, vd := range Judge(v, req, cands) {
			got[vd.Candidate.ID] = vd
		}
		if d := got["art-r"].Decision; d.Outcome != OutcomeOmitted || d.Reason != model.ReasonRedacted || d.Rule != RuleBodyRedacted || d.Bulk == exact {
			t.Errorf("exact %v: the redacted artifact: %+v", exact, d)
		}
		if vd := got["mem-r"]; !vd.Included() || vd.RecallID != "" {
			t.Errorf("exact %v: the memory of the redacted artifact: included %v, recall %q", exact, vd.Included(), vd.RecallID)
		}
		if vd := got["mem-both"]; !vd.Included() || vd.RecallID != "art-k" {
			t.Errorf("exact %v: the memory of both: included %v, recall %q, want art-k", exact, vd.Included(), vd.RecallID)
		}
	}
}

// TestFindNamesWhereEachIDWasJudged finds a few and many ids among a judgement's candidates,
// and one judged nowhere.
func TestFindNamesWhereEachIDWasJudged(t *testing.T) {
	var cands []*model.Candidate
	for i := range 3000 {
		c := artifact(fmt.Sprintf("a%d", i), int64(i+1))
		if i%3 == 0 {
			c = message(fmt.Sprintf("m%d", i), int64(i+1), "user")
		}
		cands = append(cands, &c)
	}
	verdicts, ctx := JudgeWithContext(mustResolve(t, ""), baseRequest(), cands)
	for _, n := range []int{1, 5, 300} {
		want := map[string]int{}
		ids := []string{"nowhere"}
		for k := range n {
			i := (k*7 + 1) % len(cands)
			ids = append(ids, cands[i].ID)
			want[cands[i].ID] = i
		}
		if got := ctx.Find(verdicts, ids); !reflect.DeepEqual(got, want) {
			t.Errorf("%d ids: found %v, want %v", n, got, want)
		}
	}
}

// A request whose candidates come in lineage order by kind reads the window and the message
// answered from the last messages back; it judges as the sorting of every message does, on
// random lineages of three branches with messages other participants keep private, system
// messages, and memories that the message answered ranks.
func TestLatestMessagesReadFromTheEndAreTheSortedOnes(t *testing.T) {
	v := mustResolve(t, "")
	r := rand.New(rand.NewPCG(7, 9))
	for round := range 300 {
		var cands []model.Candidate
		for depth := int64(2); depth >= 0; depth-- {
			for seq := range int64(r.IntN(12)) {
				var opts []opt
				if r.IntN(4) == 0 {
					opts = append(opts, visibility(model.VisibilityParticipant), ownedBy("pt_other"))
				}
				role := []string{"user", "assistant", "user", "system"}[r.IntN(4)]
				m := message(fmt.Sprintf("m%d_%d", depth, seq), seq+1, role, opts...)
				m.Depth, m.Message.Content = depth, []string{"renewal figures", "the forecast", "acme renewal"}[r.IntN(3)]
				cands = append(cands, m)
			}
		}
		for k := range 4 {
			cands = append(cands, memory(fmt.Sprintf("mem%d", k), int64(k+1), func(c *model.Candidate) {
				c.Memory.Summary = []string{"acme renewal in May", "forecast for Q3", "nothing here"}[r.IntN(3)]
			}))
		}
		sorted := Judge(v, baseRequest(), cands)
		req := baseRequest()
		req.KindsInLineageOrder = true
		fromEnd := Judge(v, req, cands)
		for i := range sorted {
			if sorted[i].Decision != fromEnd[i].Decision || sorted[i].Tier != fromEnd[i].Tier || sorted[i].Relevance != fromEnd[i].Relevance {
				t.Fatalf("round %d: %s judged %+v (tier %d, relevance %d) read from the end, %+v (tier %d, relevance %d) sorted",
					round, cands[i].ID, fromEnd[i].Decision, fromEnd[i].Tier, fromEnd[i].Relevance, sorted[i].Decision, sorted[i].Tier, sorted[i].Relevance)
			}
		}
	}
}
