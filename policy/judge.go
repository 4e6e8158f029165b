package policy

import (
	"iter"
	"sort"
	"strings"
	"time"

	"github.com/ctxgraph/ctxgraph/extract"
	"github.com/ctxgraph/ctxgraph/model"
)

// Request is what the policies need to know about the model call being assembled.
type Request struct {
	ParticipantID    string
	RunID            string
	RuntimeKind      model.RuntimeKind
	Provider         string
	ExactArtifactIDs []string
	// Now is the clock freshness is judged by.
	Now time.Time
	// ToolRounds asks for the assembly run's answered calls as tool rounds in the
	// provider's native form (DESIGN §6): each call with its result, never one without
	// the other. The generation path sets it.
	ToolRounds bool
	// Recall says the request offers the recall tool: memory lines and references then
	// name the artifact to recall (Verdict.RecallID).
	Recall bool
	// KindsInLineageOrder says the candidates of each type come in lineage order
	// (model.Snapshot.KindsInLineageOrder): the window and the message answered are then
	// read from the last messages back, not from all of them sorted.
	KindsInLineageOrder bool
}

// Budget tiers, filled in this order.
const (
	TierProtected = iota
	TierWindow
	TierEvidence
	TierRuntime
	TierMemory
	tierNone
)

// Verdict is the policies' judgment of one candidate, before the budget.
type Verdict struct {
	Candidate *model.Candidate
	Decision  model.Decision
	// Tier is the budget tier of an included record; Protected ones are never trimmed.
	Tier      int
	Protected bool
	// Relevance ranks memories against the current user message.
	Relevance int
	// StaleSince is set on stale and provenance-broken records, for their marker.
	StaleSince *time.Time
	// Broken is set on a memory whose source artifact is missing.
	Broken bool
	// Restricted is set when the record is shown in a privacy-reduced form.
	Restricted bool
	// ArgsWithheld is set on recovery items whose arguments the provider may not receive.
	ArgsWithheld bool
	// Compact is set on recovery items shown in their compact form because protected state
	// alone would overflow the budget (Fit).
	Compact bool
	// Aggregated is set on compact recovery items that even one line each would not fit:
	// they are still included, counted in one summary line of older open calls per tool,
	// status and error code.
	Aggregated bool
	// RawDuplicate is set on a memory left out because the raw bodies of all its live
	// sources are included: the budget brings it back when it trims one of them, as
	// Revival, the decision it would have had (a restricted memory as its safe summary, a
	// stale one with its marker).
	RawDuplicate bool
	Revival      *model.Decision
	// CarriesAnswer is set on the artifact that holds a pending or deferred call's answer
	// so far (an envelope id, a job handle, a picker session): recovery state, never
	// trimmed, shown in its call's recovery line, raw or as a reference.
	CarriesAnswer bool
	// Answer is set on such a call's recovery item: the artifact holding its answer so far.
	Answer *Answer
	// RecallID is the artifact a memory line or a reference names for recall, when the
	// request offers it.
	RecallID string
	// Stated are the values an older user message stated, quoted where it left the window.
	Stated []extract.Value
}

// SameLine reports whether two verdicts on the same record show it the same way: the
// same decision and everything else its line is rendered from.
func SameLine(a, b *Verdict) bool {
	return a.Decision == b.Decision && a.Tier == b.Tier && a.Protected == b.Protected && a.Broken == b.Broken &&
		a.Restricted == b.Restricted && a.ArgsWithheld == b.ArgsWithheld && a.Compact == b.Compact &&
		a.Aggregated == b.Aggregated && a.RawDuplicate == b.RawDuplicate && a.CarriesAnswer == b.CarriesAnswer &&
		a.RecallID == b.RecallID && len(a.Stated) == len(b.Stated) &&
		samePtr(a.StaleSince, b.StaleSince) && samePtr(a.Answer, b.Answer) && samePtr(a.Revival, b.Revival)
}

func samePtr[T comparable](a, b *T) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}

// Answer is how an unresolved call's answer so far is shown with it.
type Answer struct {
	ArtifactID string
	// As is raw (the body, within the rehydration byte budget) or reference.
	As string
	// Restricted says the body may not go to the provider; Bytes is its size.
	Restricted bool
	Bytes      int64
}

// Included reports whether the verdict includes the record.
func (v *Verdict) Included() bool { return v.Decision.Outcome == OutcomeIncluded }

// Outcomes of a decision.
const (
	OutcomeIncluded = "included"
	OutcomeOmitted  = "omitted"
)

// include is the decision of policy, by rule, to include a record as `as`, and why.
func include(c *model.Candidate, policy model.Policy, rule model.Rule, as, why string) model.Decision {
	return model.Decision{Ref: c.ID, Type: c.Type, Policy: policy, Outcome: OutcomeIncluded, As: as, Reason: why, Rule: rule}
}

// omit is the decision of policy, by rule, to leave a record out for reason.
func omit(c *model.Candidate, policy model.Policy, rule model.Rule, reason string) model.Decision {
	return model.Decision{Ref: c.ID, Type: c.Type, Policy: policy, Outcome: OutcomeOmitted, Reason: reason, Rule: rule}
}

// omitIncluded turns an included record's decision into an omission: omit, with the
// record's id and type taken from the decision, which holds them, rather than from its
// candidate, which a pass over thousands of verdicts would otherwise load each of.
func omitIncluded(d model.Decision, policy model.Policy, rule model.Rule, reason string) model.Decision {
	return model.Decision{Ref: d.Ref, Type: d.Type, Policy: policy, Outcome: OutcomeOmitted, Reason: reason, Rule: rule}
}

// Judge judges candidates held by value: see JudgeCandidates.
func Judge(v Version, req Request, cands []model.Candidate) []*Verdict {
	return JudgeCandidates(v, req, model.CandidatePointers(cands))
}

// recallID is the artifact a record's line names for recall: a reference's own, a memory's
// first live source. A memory shown through its safe summary names none (its provider may
// not receive the body), and neither does one that quotes its source whole.
func recallID(vd *Verdict) string {
	c := vd.Candidate
	switch {
	case c.Type == model.TypeArtifact && vd.Decision.As == model.AsReference && !vd.CarriesAnswer:
		return c.ID
	case c.Type == model.TypeMemory && !vd.Restricted && !c.Memory.Report && !c.Memory.QuotesWhole:
		// A source whose body was redacted has nothing left to recall.
		for _, id := range c.Memory.LiveSourceIDs {
			if !model.Contains(c.Memory.RedactedSourceIDs, id) {
				return id
			}
		}
	}
	return ""
}

// latestRound returns the artifacts of the latest tool round of the run being generated:
// the outcomes of the calls made after the run's last earlier outcome. The model asked for
// them in its last answer, so they go back raw, within privacy and the budgets, even where a
// memory could stand in (judgeArtifact). It is empty but on the generation path (a request
// for tool rounds: elsewhere the memory a client wrote stands in, as it always has) and
// under versions without promotion rules. calls and artifacts are the positions of the
// candidates of those types.
func latestRound(v Version, req Request, cands []*model.Candidate, calls, artifacts []int) map[string]bool {
	out := map[string]bool{}
	if v.Promotion == nil || req.RunID == "" || !req.ToolRounds {
		return out
	}
	var lastCall int64 = -1
	callSeq := map[string]int64{}
	for _, i := range calls {
		if c := cands[i]; c.OwnerRunID == req.RunID {
			callSeq[c.ID] = c.Seq
			lastCall = max(lastCall, c.Seq)
		}
	}
	// The round starts after the last outcome recorded before its last call.
	var after int64 = -1
	for _, i := range artifacts {
		if c := cands[i]; c.OwnerRunID == req.RunID && c.Seq < lastCall && c.Seq > after {
			after = c.Seq
		}
	}
	for _, i := range artifacts {
		c := cands[i]
		if seq, ok := callSeq[c.Artifact.ToolCallID]; ok && seq > after {
			out[c.ID] = true
		}
	}
	return out
}

// Ownership decides whether the participant may see a record at all: another branch's
// record, an audit-only record, a child run's unpromoted state and another participant's
// private state are excluded, each with its reason. ok is true when the record is excluded.
func Ownership(req Request, c *model.Candidate) (model.Decision, bool) {
	switch {
	case !c.InLineage && c.Visibility != model.VisibilityConversation:
		return omit(c, model.PolicyVisibility, model.RuleBranchLineage, model.ReasonBranchIneligible), true
	case c.Visibility == model.VisibilityAudit:
		return omit(c, model.PolicyVisibility, RuleAuditOnly, model.ReasonAuditOnly), true
	case c.Type == model.TypeMessage:
		if c.Visibility == model.VisibilityParticipant && c.OwnerParticipantID != "" && c.OwnerParticipantID != req.ParticipantID {
			return omit(c, model.PolicyVisibility, RuleParticipantPrivate, model.ReasonParticipant), true
		}
		return model.Decision{}, false
	case c.Type == model.TypeCheckpoint || c.Type == model.TypeSkills:
		return model.Decision{}, false
	}
	ownRun := req.RunID != "" && req.RunID == c.OwnerRunID
	if c.OwnerRunParentID != "" && !c.Promoted && !ownRun && !(req.RunID == "" && req.ParticipantID == c.OwnerParticipantID) {
		return omit(c, model.PolicyVisibility, RuleChildNotPromoted, model.ReasonNotPromoted), true
	}
	if c.Visibility == model.VisibilityParticipant || c.Visibility == "" {
		shared := c.OwnerParticipantID == req.ParticipantID || model.Contains(c.SharedWith, req.ParticipantID) ||
			(c.Promoted && c.PromotedTo == req.ParticipantID)
		if !shared {
			return omit(c, model.PolicyVisibility, RuleParticipantPrivate, model.ReasonParticipant), true
		}
	}
	return model.Decision{}, false
}

// recoveryForParent reports whether a child run's unresolved call reaches its parent as
// recovery context: on parent_resume, a failed or timed-out child's state does, promoted or
// not (DESIGN §3).
func recoveryForParent(req Request, c *model.Candidate) bool {
	return c.Type == model.TypeToolCall && req.RuntimeKind == model.RuntimeParentResume && req.RunID != "" &&
		c.OwnerRunParentID == req.RunID && (c.OwnerRunStatus == "failed" || c.OwnerRunStatus == "timed_out") &&
		unresolved(c) && c.Visibility != model.VisibilityAudit
}

// InToolRound reports whether a call goes to the provider as a native tool round: the
// request asks for rounds, the call is the assembly run's own and it has an outcome.
func InToolRound(req Request, c *model.Candidate) bool {
	return req.ToolRounds && req.RunID != "" && c.Type == model.TypeToolCall && c.OwnerRunID == req.RunID && len(c.Call.ArtifactIDs) > 0
}

// unresolvedRules are the rules of an unresolved call's recovery item by its status, and
// childRules those of a failed or timed-out child's call by the child run's status.
var (
	unresolvedRules = map[model.ToolStatus]model.Rule{model.ToolPending: RuleUnresolvedPending,
		model.ToolDeferred: RuleUnresolvedDeferred, model.ToolFailed: RuleUnresolvedFailed}
	childRules = map[string]model.Rule{"failed": RuleChildFailed, "timed_out": RuleChildTimedOut}
)

// unresolved reports whether a call is pending, deferred, or failed with no later retry. A
// refused recall is not: ctxgraph answered it, and there is nothing to resume.
func unresolved(c *model.Candidate) bool {
	if c.Tool.Name == model.RecallTool {
		return false
	}
	switch c.Tool.Status {
	case model.ToolPending, model.ToolDeferred:
		return true
	case model.ToolFailed:
		return len(c.Call.RetriedBy) == 0
	}
	return false
}

// judgeCall keeps unresolved tool state as protected recovery context; resolved calls are
// represented by their artifacts and memories.
func judgeCall(v Version, req Request, c *model.Candidate, _ model.Decision) Verdict {
	vd := Verdict{Candidate: c, Tier: tierNone}
	if InToolRound(req, c) {
		// The model asked for this call in the run being generated: it goes back as the
		// native call, its result beside it, so that neither is ever sent alone.
		vd.Decision = include(c, model.PolicyRehydration, RuleCurrentRunRound, model.AsMessage, "a tool round of the run being generated, sent with its result")
		vd.Tier, vd.Protected = TierProtected, true
		return vd
	}
	if unresolved(c) {
		rule := unresolvedRules[c.Tool.Status]
		switch {
		case recoveryForParent(req, c):
			rule = childRules[c.OwnerRunStatus]
		case c.OwnerParticipantID != req.ParticipantID:
			// Another participant's unresolved state stays private to it, whatever its
			// artifact's visibility says (DESIGN §4, recovery).
			vd.Decision = omit(c, model.PolicyRecovery, RuleOtherParticipant, model.ReasonParticipant)
			return vd
		}
		vd.Decision = include(c, model.PolicyRecovery, rule, model.AsRecovery, "unresolved tool state is protected")
		vd.Tier, vd.Protected = TierProtected, true
		// A call with no outcome yet has no privacy class: its arguments came from the model
		// itself. Once it has an outcome, that artifact's class covers the arguments, and an
		// outcome with no class fails closed.
		if (c.PrivacyClass != "" || len(c.Call.ArtifactIDs) > 0) && !v.MayReceive(req.Provider, c.PrivacyClass) {
			vd.ArgsWithheld = true
			vd.Decision.Rule = vd.Decision.Rule.And(RulePrivacyArgsWithheld)
		}
		return vd
	}
	if c.Tool.Status == model.ToolFailed && len(c.Call.RetriedBy) > 0 {
		vd.Decision = omit(c, model.PolicyRecovery, RuleResolvedByRetry, model.ReasonWindow)
		return vd
	}
	if req.RunID != "" && c.OwnerRunID == req.RunID {
		vd.Decision = omit(c, model.PolicyRehydration, RuleCurrentRunCallInArtifact, model.ReasonDuplicate)
		return vd
	}
	vd.Decision = omit(c, model.PolicyWindow, RuleCompletedToolRound, model.ReasonWindow)
	return vd
}

// judgeArtifact includes a raw body only when exact evidence is needed — the request names
// the artifact, or it is a result of the assembly run's own calls that no memory stands in
// for — privacy allows it for the provider, and it fits the rehydration byte budget;
// otherwise its memory, a reference or nothing.
func judgeArtifact(v Version, req Request, c *model.Candidate, recovery, summarised, latest bool, rawBytes *int64) Verdict {
	vd := Verdict{Candidate: c, Tier: tierNone}
	exact := model.Contains(req.ExactArtifactIDs, c.ID)
	currentRun := req.RunID != "" && c.OwnerRunID == req.RunID
	// Reasons in precedence order: privacy before duplicate before window.
	switch {
	case !v.MayReceive(req.Provider, c.PrivacyClass) && recovery && !exact && isHandle(c):
		// The body may not go to this provider, but that the call has an answer, and where
		// it is kept, may.
		vd = Verdict{Candidate: c, Tier: TierProtected, Protected: true, CarriesAnswer: true, Restricted: true}
		vd.Decision = include(c, model.PolicyRecovery, RuleHandleRestricted, model.AsReference, "the answer so far of an unresolved call, restricted for the provider")
		return vd
	case !v.MayReceive(req.Provider, c.PrivacyClass):
		vd.Decision = omit(c, model.PolicyPrivacy, RuleRawRestricted, model.ReasonPrivacy)
		// Only a body the request needed (named, or its own run's) makes this decision
		// part of what shaped the request.
		vd.Decision.Bulk = !exact && !currentRun
		return vd
	case c.Artifact.Redacted:
		// Its body went by retention (DESIGN §10): nothing of it can go, its memories stand
		// in. Only a body the request needed makes this decision part of what shaped it.
		vd.Decision = omit(c, model.PolicyProvenance, RuleBodyRedacted, model.ReasonRedacted)
		vd.Decision.Bulk = !exact && !currentRun
		return vd
	case recovery && !exact && isHandle(c):
		return judgeHandle(v, c, rawBytes)
	case recovery && !exact:
		vd.Decision = omit(c, model.PolicyRecovery, RuleRepresentedByCall, model.ReasonDuplicate)
		return vd
	case !exact && currentRun && summarised && !latest:
		vd.Decision = omit(c, model.PolicyRehydration, RuleMemoryStandsIn, model.ReasonDuplicate)
		return vd
	case !exact && !currentRun && v.Promotion != nil && !summarised && c.Tool.Status == model.ToolSucceeded:
		// Nothing stands in for this completed round: it is named, never left out silently.
		vd.Decision = include(c, model.PolicyWindow, RuleRoundReference, model.AsReference, "an older completed round with no memory")
		vd.Tier = TierMemory
		return vd
	case !exact && !currentRun:
		vd.Decision = omit(c, model.PolicyWindow, RuleRawNotReplayed, model.ReasonWindow)
		return vd
	}
	size := c.Artifact.ResultBytes + c.Artifact.ArgsBytes
	if *rawBytes+size > v.RehydrationBytes {
		vd.Decision = include(c, model.PolicyRehydration, RuleOverByteBudget, model.AsReference, "raw body exceeds the rehydration byte budget")
		vd.Tier = TierEvidence
		return vd
	}
	*rawBytes += size
	rule := RuleExactRequested
	switch {
	case exact:
	case c.Tool.Name == model.RecallTool && c.Tool.Status == model.ToolFailed:
		rule = RuleRecallRefused
	case c.Tool.Name == model.RecallTool:
		rule = RuleModelRequested
	case latest && summarised:
		rule = RuleLatestRound
	default:
		rule = RuleCurrentRunResult
	}
	vd.Decision = include(c, model.PolicyRehydration, rule, model.AsRaw, "exact evidence")
	vd.Tier = TierEvidence
	return vd
}

// isHandle reports whether an artifact is a pending or deferred tool's answer so far: an
// outcome that is not final, with a body.
func isHandle(c *model.Candidate) bool {
	return (c.Tool.Status == model.ToolPending || c.Tool.Status == model.ToolDeferred) && c.Artifact.ResultBytes > 0
}

// judgeHandle keeps the answer so far of an unresolved call with its recovery state, so
// that the model is never told there is no result when there is one, and keeps the id it
// needs to resume: raw within the rehydration byte budget (privacy was checked before),
// else as a reference to the artifact.
func judgeHandle(v Version, c *model.Candidate, rawBytes *int64) Verdict {
	vd := Verdict{Candidate: c, Tier: TierProtected, Protected: true, CarriesAnswer: true}
	if size := c.Artifact.ResultBytes + c.Artifact.ArgsBytes; *rawBytes+size <= v.RehydrationBytes {
		*rawBytes += size
		vd.Decision = include(c, model.PolicyRecovery, RuleHandleRaw, model.AsRaw, "the answer so far of an unresolved call")
		return vd
	}
	vd.Decision = include(c, model.PolicyRecovery, RuleHandleOverByteBudget, model.AsReference, "the answer so far of an unresolved call, over the rehydration byte budget")
	return vd
}

// judgeMessage keeps the conversation window as messages; in a discussion every system
// message is a moderator directive and is always kept.
func judgeMessage(v Version, req Request, c *model.Candidate, window map[string]bool, current string) Verdict {
	vd := Verdict{Candidate: c, Tier: tierNone}
	switch {
	case c.ID == current:
		vd.Decision = include(c, model.PolicyWindow, RuleCurrentMessage, model.AsMessage, "the message being answered")
		vd.Tier, vd.Protected = TierProtected, true
	case req.RuntimeKind == model.RuntimeDiscussion && c.Message.Role == "system":
		vd.Decision = include(c, model.PolicyWindow, RuleDiscussionDirective, model.AsMessage, "moderator directive")
		vd.Tier, vd.Protected = TierProtected, true
	case window[c.ID]:
		vd.Decision = include(c, model.PolicyWindow, RuleRecentTurn, model.AsMessage, "within the conversation window")
		vd.Tier = TierWindow
	default:
		vd.Decision = omit(c, model.PolicyWindow, RuleOlderTurn, model.ReasonWindow)
		if p := v.Promotion; p != nil && p.UserMessageValues > 0 && c.Message.Role == "user" {
			// What a later turn may need of it stands in: the values it stated, quoted.
			if stated := c.Message.Stated[:min(len(c.Message.Stated), p.UserMessageValues)]; len(stated) > 0 {
				vd.Stated = stated
				vd.Decision = include(c, model.PolicyWindow, RuleOlderTurnValues, model.AsMemory, "values stated in a turn that left the window, at "+locators(stated))
				vd.Tier = TierMemory
			}
		}
	}
	return vd
}

// locators lists where stated values stand in their message.
func locators(stated []extract.Value) string {
	locs := make([]string, len(stated))
	for i, s := range stated {
		locs[i] = s.Locator
	}
	return strings.Join(locs, ", ")
}

// runState is how the policies decide about one kind of run state: its form and policy
// when it is included, the rules for its latest, an earlier and another run's, and why the
// latest is included.
type runState struct {
	as                      string
	policy                  model.Policy
	latest, earlier, others model.Rule
	why                     string
}

var (
	checkpointState = runState{model.AsCheckpoint, model.PolicyCheckpoint, RuleCheckpointLatest, RuleCheckpointEarlier,
		RuleCheckpointOtherRun, "the run's current checkpoint"}
	skillsState = runState{model.AsSkills, model.PolicySkills, RuleSkillsLatest, RuleSkillsEarlier, RuleSkillsOtherRun,
		"the run's current skills"}
)

// judgeRunState includes the latest checkpoint or skill state of the assembly run; earlier
// ones of that run are superseded, other runs' are outside the window.
func judgeRunState(c *model.Candidate, latest map[string]string, st runState) Verdict {
	vd := Verdict{Candidate: c, Tier: tierNone}
	id, ours := latest[c.RunState.RunID]
	switch {
	case ours && id == c.ID:
		vd.Decision = include(c, st.policy, st.latest, st.as, st.why)
		vd.Tier = TierRuntime
	case ours:
		vd.Decision = omit(c, model.PolicySupersession, st.earlier, model.ReasonSuperseded)
	default:
		vd.Decision = omit(c, model.PolicyWindow, st.others, model.ReasonWindow)
	}
	return vd
}

// judgeMemory applies privacy, provenance, supersession and freshness to a visible memory.
func judgeMemory(v Version, req Request, c *model.Candidate, eligible func(string) bool, rawArtifacts map[string]bool) Verdict {
	vd := Verdict{Candidate: c, Tier: TierMemory}
	as := model.AsMemory
	rule := RuleMemoryCurrent
	if !v.MayReceive(req.Provider, c.PrivacyClass) {
		if c.Memory.SafeSummary == "" || v.NeverSend(c.PrivacyClass) {
			vd.Decision = omit(c, model.PolicyPrivacy, RuleNoSafeSummary, model.ReasonPrivacy)
			if v.NeverSend(c.PrivacyClass) {
				vd.Decision.Rule = RuleNeverSent
			}
			vd.Tier = tierNone
			return vd
		}
		as, rule, vd.Restricted = model.AsSafeSummary, RuleSafeSummaryOnly, true
	}
	if len(c.Memory.LiveSourceIDs) < len(c.Memory.SourceArtifactIDs) {
		vd.Broken = true
		if v.StaleHandling == StaleOmit {
			vd.Decision = omit(c, model.PolicyProvenance, RuleSourceMissing, model.ReasonProvenanceBroken)
			vd.Tier = tierNone
			return vd
		}
		if as == model.AsMemory {
			as = model.AsStaleMarker
		}
		rule = RuleSourceMissingMarked
	}
	for _, newer := range c.Memory.SupersededBy {
		if eligible(newer) {
			vd.Decision = omit(c, model.PolicySupersession, RuleReplacedByEligible, model.ReasonSuperseded)
			vd.Tier = tierNone
			return vd
		}
	}
	if since, stale := Stale(v, req.Now, c); stale {
		vd.StaleSince = &since
		if v.StaleHandling == StaleOmit {
			vd.Decision = omit(c, model.PolicyFreshness, RuleStaleOmitted, model.ReasonStale)
			vd.Tier = tierNone
			return vd
		}
		if as == model.AsMemory {
			as = model.AsStaleMarker
		}
		rule = rule.And(RuleStaleMarked)
	}
	policy := model.PolicyMemory
	switch {
	case vd.Restricted:
		policy = model.PolicyPrivacy
	case vd.Broken:
		policy = model.PolicyProvenance
	case vd.StaleSince != nil:
		policy = model.PolicyFreshness
	}
	if len(c.Memory.LiveSourceIDs) > 0 && allIn(c.Memory.LiveSourceIDs, rawArtifacts) && !vd.Broken {
		revival := include(c, policy, rule.And(RuleRawSourceTrimmed), as, "")
		vd.Decision = omit(c, model.PolicyRehydration, RuleRawSourceIncluded, model.ReasonDuplicate)
		vd.Tier = tierNone
		vd.RawDuplicate, vd.Revival = true, &revival
		return vd
	}
	vd.Decision = include(c, policy, rule, as, "")
	return vd
}

// Stale reports whether a memory is past its staleAfter (or its class's default TTL from
// observedAt) at now, and since when. Durable and permanent memories never go stale; a
// session memory goes stale when the run that observed it ends.
func Stale(v Version, now time.Time, c *model.Candidate) (time.Time, bool) {
	switch c.Memory.FreshnessClass {
	case "durable", "permanent":
		return time.Time{}, false
	}
	var until time.Time
	switch {
	case c.Memory.StaleAfter != nil:
		until = *c.Memory.StaleAfter
	default:
		ttl, ok := v.TTLOf(c.Memory.FreshnessClass)
		if !ok {
			return time.Time{}, false
		}
		until = c.Memory.ObservedAt.Add(ttl)
	}
	return until, now.After(until)
}

// markConflicts turns every included side of a conflict into `conflict` when two or more
// sides are included, and turns a side back into an ordinary memory when it is the lone
// survivor (its other sides were omitted, by a policy or by the budget). Privacy- and
// freshness-reduced forms are kept: a restricted side stays a safe summary. Fit calls it
// again after each trim (markDraftConflicts). The n verdicts are read through at and written
// through own.
func markConflicts(n int, at, own func(i int) *Verdict) {
	// Only the records an included memory names as its other sides are looked up.
	included := map[string]bool{}
	for i := range n {
		if vd := at(i); vd.Included() && vd.Candidate.Type == model.TypeMemory {
			for _, other := range vd.Candidate.Memory.ConflictsWith {
				included[other] = false
			}
		}
	}
	if len(included) == 0 {
		return
	}
	for i := range n {
		vd := at(i)
		if vd.Candidate.Type != model.TypeMemory || !vd.Included() {
			continue // only a memory is a side, and only an included one counts
		}
		if _, named := included[vd.Candidate.ID]; named {
			included[vd.Candidate.ID] = true
		}
	}
	for i := range n {
		vd := at(i)
		if !vd.Included() || vd.Candidate.Type != model.TypeMemory {
			continue
		}
		if vd.Decision.As != model.AsMemory && vd.Decision.As != model.AsConflict {
			continue
		}
		paired := false
		for _, other := range vd.Candidate.Memory.ConflictsWith {
			paired = paired || included[other]
		}
		switch {
		case paired && vd.Decision.As != model.AsConflict: // as conflict, it is marked already
			vd = own(i)
			vd.Decision.As, vd.Decision.Policy, vd.Decision.Rule = model.AsConflict, model.PolicyConflict, RuleBothSidesIncluded
		case !paired && vd.Decision.As == model.AsConflict:
			vd = own(i)
			vd.Decision.As, vd.Decision.Policy, vd.Decision.Rule = model.AsMemory, model.PolicyMemory, RuleLoneSurvivor
		}
	}
}

// conversationWindow returns the ids of the last WindowMessages user/assistant messages the
// participant may see, and the system messages among them and right before the oldest;
// latest yields the positions of those it may see, the latest first (fromLatest).
func conversationWindow(v Version, cands []*model.Candidate, latest iter.Seq[int]) map[string]bool {
	window := map[string]bool{}
	turns := 0
	for i := range latest {
		c := cands[i]
		if c.Message.Role != "system" {
			if turns == v.WindowMessages {
				break
			}
			turns++
		}
		window[c.ID] = true
	}
	return window
}

// currentUserMessage is the latest user message the participant may see, in lineage order:
// the one the call answers (nil when there is none); latest is as for conversationWindow.
func currentUserMessage(cands []*model.Candidate, latest iter.Seq[int]) *model.Candidate {
	for i := range latest {
		if c := cands[i]; c.Message.Role == "user" {
			return c
		}
	}
	return nil
}

// fromLatest yields the positions of the visible messages, the latest in lineage order
// first: read back from the end when the candidates come in lineage order
// (Request.KindsInLineageOrder), so that the few latest cost what they are, not what the
// lineage holds; otherwise sorted, once, before any is yielded.
func fromLatest(req Request, cands []*model.Candidate, messages []int, visible []bool) iter.Seq[int] {
	if req.KindsInLineageOrder {
		return func(yield func(int) bool) {
			for k := len(messages) - 1; k >= 0; k-- {
				if i := messages[k]; visible[i] && !yield(i) {
					return
				}
			}
		}
	}
	var msgs []int
	for _, i := range messages {
		if visible[i] {
			msgs = append(msgs, i)
		}
	}
	sortLineage(cands, msgs)
	return func(yield func(int) bool) {
		for k := len(msgs) - 1; k >= 0; k-- {
			if !yield(msgs[k]) {
				return
			}
		}
	}
}

// latestRunState maps the assembly run to its latest checkpoint and latest skill state,
// among the candidates at the positions given for each.
func latestRunState(req Request, cands []*model.Candidate, checkpoints, skillStates []int) (checkpoint, skills map[string]string) {
	checkpoint, skills = map[string]string{}, map[string]string{}
	if req.RunID == "" {
		return
	}
	latest := func(at []int) *model.Candidate {
		var best *model.Candidate
		for _, i := range at {
			if c := cands[i]; c.RunState.RunID == req.RunID && (best == nil || lineageLess(best, c)) {
				best = c
			}
		}
		return best
	}
	if c := latest(checkpoints); c != nil {
		checkpoint[req.RunID] = c.ID
	}
	if c := latest(skillStates); c != nil {
		skills[req.RunID] = c.ID
	}
	return
}

// lineageLess orders records as history does: ancestors first, then by seq.
func lineageLess(a, b *model.Candidate) bool {
	if a.Depth != b.Depth {
		return a.Depth > b.Depth
	}
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	return a.ID < b.ID
}

func sortLineage(cands []*model.Candidate, idx []int) {
	sort.SliceStable(idx, func(x, y int) bool { return lineageLess(cands[idx[x]], cands[idx[y]]) })
}

func allIn(ids []string, set map[string]bool) bool {
	for _, id := range ids {
		if !set[id] {
			return false
		}
	}
	return true
}

// terms are the words of a text that relevance matching compares (extract.Terms), as a set.
func terms(text string) map[string]bool {
	words := extract.Terms(text)
	out := make(map[string]bool, len(words))
	for _, w := range words {
		out[w] = true
	}
	return out
}

// relevance counts the distinct words of a memory's summary (extract.Terms) that the current
// message also uses. It runs for every memory of every assembly whose message answered
// changed, so it reads the terms the copy worked out once when it took the record
// (model.MemoryFacts.Terms), and works them out only for a memory that has none.
func relevance(current map[string]bool, m *model.MemoryFacts) int {
	if len(current) == 0 {
		return 0
	}
	words := m.Terms
	if words == nil {
		words = extract.Terms(m.Summary)
	}
	n := 0
	for _, w := range words {
		if current[w] {
			n++
		}
	}
	return n
}
