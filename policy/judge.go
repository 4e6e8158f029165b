package policy

import (
	"sort"
	"strings"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// Request is what the policies need to know about the model call being assembled.
type Request struct {
	ParticipantID    string
	RunID            string
	RuntimeKind      string
	Provider         string
	ExactArtifactIDs []string
	// Now is the clock freshness is judged by.
	Now time.Time
	// ToolRounds asks for the assembly run's answered calls as tool rounds in the
	// provider's native form (DESIGN §6): each call with its result, never one without
	// the other. The generation path sets it.
	ToolRounds bool
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
	// CarriesAnswer is set on the artifact that holds a pending or deferred call's answer
	// so far (an envelope id, a job handle, a picker session): recovery state, never
	// trimmed, shown in its call's recovery line, raw or as a reference.
	CarriesAnswer bool
	// Answer is set on such a call's recovery item: the artifact holding its answer so far.
	Answer *Answer
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

func include(c *model.Candidate, as, kind, rule, reason string) model.Decision {
	return model.Decision{Ref: c.ID, Type: c.Kind, Kind: kind, Outcome: OutcomeIncluded, As: as, Reason: reason, Rule: rule}
}

func omit(c *model.Candidate, kind, reason, rule string) model.Decision {
	return model.Decision{Ref: c.ID, Type: c.Kind, Kind: kind, Outcome: OutcomeOmitted, Reason: reason, Rule: rule}
}

// Judge applies every policy of DESIGN §4 to the candidates of one snapshot, in order:
// ownership / visibility, privacy and routing, provenance, supersession, freshness,
// recovery, rehydration, the conversation window and conflicts. It returns one verdict per
// candidate in the candidates' order. The budget is fitted afterwards (Fit).
func Judge(v Version, req Request, cands []model.Candidate) []Verdict {
	verdicts := make([]Verdict, len(cands))
	byID := make(map[string]int, len(cands))
	for i := range cands {
		byID[cands[i].ID] = i
		verdicts[i] = Verdict{Candidate: &cands[i], Tier: tierNone}
	}
	// Ownership first: supersession needs to know which memories are eligible.
	visible := make([]bool, len(cands))
	for i := range cands {
		if d, ok := Ownership(req, &cands[i]); ok {
			verdicts[i].Decision = d
		} else {
			visible[i] = true
		}
	}
	eligible := func(id string) bool {
		i, ok := byID[id]
		return ok && visible[i] && cands[i].InLineage
	}

	window := conversationWindow(v, req, cands, visible)
	current := currentUserMessage(cands, visible)
	latestCheckpoint, latestSkills := latestRunState(req, cands)
	relevanceTerms := map[string]bool{}
	if i, ok := byID[current]; ok {
		relevanceTerms = terms(cands[i].Content)
	}

	// Artifacts that a visible memory stands in for: their raw bodies are not needed unless
	// the request names them.
	summarised := map[string]bool{}
	for i := range cands {
		if cands[i].Kind == model.KindMemory && visible[i] {
			for _, src := range cands[i].LiveSourceIDs {
				summarised[src] = true
			}
		}
	}
	var rawBytes int64
	rawArtifacts := map[string]bool{}
	recoveryCalls := map[string]bool{}

	// Calls and artifacts before memories: a memory is a duplicate of a raw artifact that is
	// included, and a failed artifact is represented by its call's recovery item.
	order := make([]int, 0, len(cands))
	for _, kind := range []string{model.KindToolCall, model.KindArtifact, model.KindMessage, model.KindCheckpoint, model.KindSkills, model.KindMemory} {
		for i := range cands {
			if cands[i].Kind == kind {
				order = append(order, i)
			}
		}
	}
	for _, i := range order {
		c := &cands[i]
		vd := &verdicts[i]
		if !visible[i] && !recoveryForParent(req, c) {
			continue
		}
		switch c.Kind {
		case model.KindToolCall:
			*vd = judgeCall(v, req, c, vd.Decision)
			if vd.Included() && vd.Decision.As == model.AsRecovery {
				recoveryCalls[c.ID] = true
			}
		case model.KindArtifact:
			*vd = judgeArtifact(v, req, c, recoveryCalls, summarised, &rawBytes)
			if vd.Included() && vd.Decision.As == model.AsRaw {
				rawArtifacts[c.ID] = true
			}
		case model.KindMessage:
			*vd = judgeMessage(req, c, window, current)
		case model.KindCheckpoint:
			*vd = judgeRunState(c, latestCheckpoint, model.AsCheckpoint, "checkpoint")
		case model.KindSkills:
			*vd = judgeRunState(c, latestSkills, model.AsSkills, "skills")
		case model.KindMemory:
			*vd = judgeMemory(v, req, c, eligible, rawArtifacts)
			vd.Relevance = overlap(relevanceTerms, c.Summary)
		}
	}
	for i := range verdicts {
		if vd := &verdicts[i]; vd.CarriesAnswer && vd.Included() {
			if k, ok := byID[vd.Candidate.ToolCallID]; ok {
				verdicts[k].Answer = &Answer{ArtifactID: vd.Candidate.ID, As: vd.Decision.As, Restricted: vd.Restricted, Bytes: vd.Candidate.ResultBytes}
			}
		}
	}
	markConflicts(verdicts)
	return verdicts
}

// Ownership decides whether the participant may see a record at all: another branch's
// record, an audit-only record, a child run's unpromoted state and another participant's
// private state are excluded, each with its reason. ok is true when the record is excluded.
func Ownership(req Request, c *model.Candidate) (model.Decision, bool) {
	switch {
	case !c.InLineage && c.Visibility != "conversation":
		return omit(c, "visibility", model.ReasonBranchIneligible, model.RuleBranchLineage), true
	case c.Visibility == "audit":
		return omit(c, "visibility", model.ReasonAuditOnly, "visibility.audit_only"), true
	case c.Kind == model.KindMessage:
		if c.Visibility == "participant" && c.OwnerParticipantID != "" && c.OwnerParticipantID != req.ParticipantID {
			return omit(c, "visibility", model.ReasonParticipant, "visibility.participant_private"), true
		}
		return model.Decision{}, false
	case c.Kind == model.KindCheckpoint || c.Kind == model.KindSkills:
		return model.Decision{}, false
	}
	ownRun := req.RunID != "" && req.RunID == c.OwnerRunID
	if c.OwnerRunParentID != "" && !c.Promoted && !ownRun && !(req.RunID == "" && req.ParticipantID == c.OwnerParticipantID) {
		return omit(c, "visibility", model.ReasonNotPromoted, "visibility.child_not_promoted"), true
	}
	if c.Visibility == "participant" || c.Visibility == "" {
		shared := c.OwnerParticipantID == req.ParticipantID || model.Contains(c.SharedWith, req.ParticipantID) ||
			(c.Promoted && c.PromotedTo == req.ParticipantID)
		if !shared {
			return omit(c, "visibility", model.ReasonParticipant, "visibility.participant_private"), true
		}
	}
	return model.Decision{}, false
}

// recoveryForParent reports whether a child run's unresolved call reaches its parent as
// recovery context: on parent_resume, a failed or timed-out child's state does, promoted or
// not (DESIGN §3).
func recoveryForParent(req Request, c *model.Candidate) bool {
	return c.Kind == model.KindToolCall && req.RuntimeKind == "parent_resume" && req.RunID != "" &&
		c.OwnerRunParentID == req.RunID && (c.OwnerRunStatus == "failed" || c.OwnerRunStatus == "timed_out") &&
		unresolved(c) && c.Visibility != "audit"
}

// InToolRound reports whether a call goes to the provider as a native tool round: the
// request asks for rounds, the call is the assembly run's own and it has an outcome.
func InToolRound(req Request, c *model.Candidate) bool {
	return req.ToolRounds && req.RunID != "" && c.Kind == model.KindToolCall && c.OwnerRunID == req.RunID && len(c.ArtifactIDs) > 0
}

// unresolved reports whether a call is pending, deferred, or failed with no later retry.
func unresolved(c *model.Candidate) bool {
	switch c.Status {
	case "pending", "deferred":
		return true
	case "failed":
		return len(c.RetriedBy) == 0
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
		vd.Decision = include(c, model.AsMessage, "rehydration", "rehydration.current_run_round", "a tool round of the run being generated, sent with its result")
		vd.Tier, vd.Protected = TierProtected, true
		return vd
	}
	if unresolved(c) {
		rule := "recovery.unresolved_" + c.Status
		switch {
		case recoveryForParent(req, c):
			rule = "recovery.child_" + c.OwnerRunStatus
		case c.OwnerParticipantID != req.ParticipantID:
			// Another participant's unresolved state stays private to it, whatever its
			// artifact's visibility says (DESIGN §4, recovery).
			vd.Decision = omit(c, "recovery", model.ReasonParticipant, "recovery.other_participant")
			return vd
		}
		vd.Decision = include(c, model.AsRecovery, "recovery", rule, "unresolved tool state is protected")
		vd.Tier, vd.Protected = TierProtected, true
		// A call with no outcome yet has no privacy class: its arguments came from the model
		// itself. Once it has an outcome, that artifact's class covers the arguments, and an
		// outcome with no class fails closed.
		if (c.PrivacyClass != "" || len(c.ArtifactIDs) > 0) && !v.MayReceive(req.Provider, c.PrivacyClass) {
			vd.ArgsWithheld = true
			vd.Decision.Rule += "+privacy.arguments_withheld"
		}
		return vd
	}
	if c.Status == "failed" && len(c.RetriedBy) > 0 {
		vd.Decision = omit(c, "recovery", model.ReasonWindow, "recovery.resolved_by_retry")
		return vd
	}
	if req.RunID != "" && c.OwnerRunID == req.RunID {
		vd.Decision = omit(c, "rehydration", model.ReasonDuplicate, "rehydration.current_run_call_in_artifact")
		return vd
	}
	vd.Decision = omit(c, "window", model.ReasonWindow, "window.completed_tool_round")
	return vd
}

// judgeArtifact includes a raw body only when exact evidence is needed — the request names
// the artifact, or it is a result of the assembly run's own calls that no memory stands in
// for — privacy allows it for the provider, and it fits the rehydration byte budget;
// otherwise its memory, a reference or nothing.
func judgeArtifact(v Version, req Request, c *model.Candidate, recoveryCalls, summarised map[string]bool, rawBytes *int64) Verdict {
	vd := Verdict{Candidate: c, Tier: tierNone}
	exact := model.Contains(req.ExactArtifactIDs, c.ID)
	currentRun := req.RunID != "" && c.OwnerRunID == req.RunID
	// Reasons in precedence order: privacy before duplicate before window.
	switch {
	case !v.MayReceive(req.Provider, c.PrivacyClass) && recoveryCalls[c.ToolCallID] && !exact && isHandle(c):
		// The body may not go to this provider, but that the call has an answer, and where
		// it is kept, may.
		vd = Verdict{Candidate: c, Tier: TierProtected, Protected: true, CarriesAnswer: true, Restricted: true}
		vd.Decision = include(c, model.AsReference, "recovery", "recovery.handle_restricted", "the answer so far of an unresolved call, restricted for the provider")
		return vd
	case !v.MayReceive(req.Provider, c.PrivacyClass):
		vd.Decision = omit(c, "privacy", model.ReasonPrivacy, "privacy.raw_restricted_for_provider")
		// Only a body the request needed (named, or its own run's) makes this decision
		// part of what shaped the request.
		vd.Decision.Bulk = !exact && !currentRun
		return vd
	case recoveryCalls[c.ToolCallID] && !exact && isHandle(c):
		return judgeHandle(v, c, rawBytes)
	case recoveryCalls[c.ToolCallID] && !exact:
		vd.Decision = omit(c, "recovery", model.ReasonDuplicate, "recovery.represented_by_call")
		return vd
	case !exact && currentRun && summarised[c.ID]:
		vd.Decision = omit(c, "rehydration", model.ReasonDuplicate, "rehydration.memory_stands_in")
		return vd
	case !exact && !currentRun:
		vd.Decision = omit(c, "window", model.ReasonWindow, "window.raw_not_replayed")
		return vd
	}
	size := c.ResultBytes + c.ArgsBytes
	if *rawBytes+size > v.RehydrationBytes {
		vd.Decision = include(c, model.AsReference, "rehydration", "rehydration.over_byte_budget", "raw body exceeds the rehydration byte budget")
		vd.Tier = TierEvidence
		return vd
	}
	*rawBytes += size
	rule := "rehydration.exact_requested"
	if !exact {
		rule = "rehydration.current_run_result"
	}
	vd.Decision = include(c, model.AsRaw, "rehydration", rule, "exact evidence")
	vd.Tier = TierEvidence
	return vd
}

// isHandle reports whether an artifact is a pending or deferred tool's answer so far: an
// outcome that is not final, with a body.
func isHandle(c *model.Candidate) bool {
	return (c.Status == "pending" || c.Status == "deferred") && c.ResultBytes > 0
}

// judgeHandle keeps the answer so far of an unresolved call with its recovery state, so
// that the model is never told there is no result when there is one, and keeps the id it
// needs to resume: raw within the rehydration byte budget (privacy was checked before),
// else as a reference to the artifact.
func judgeHandle(v Version, c *model.Candidate, rawBytes *int64) Verdict {
	vd := Verdict{Candidate: c, Tier: TierProtected, Protected: true, CarriesAnswer: true}
	if size := c.ResultBytes + c.ArgsBytes; *rawBytes+size <= v.RehydrationBytes {
		*rawBytes += size
		vd.Decision = include(c, model.AsRaw, "recovery", "recovery.handle_raw", "the answer so far of an unresolved call")
		return vd
	}
	vd.Decision = include(c, model.AsReference, "recovery", "recovery.handle_over_byte_budget", "the answer so far of an unresolved call, over the rehydration byte budget")
	return vd
}

// judgeMessage keeps the conversation window as messages; in a discussion every system
// message is a moderator directive and is always kept.
func judgeMessage(req Request, c *model.Candidate, window map[string]bool, current string) Verdict {
	vd := Verdict{Candidate: c, Tier: tierNone}
	switch {
	case c.ID == current:
		vd.Decision = include(c, model.AsMessage, "window", "window.current_message", "the message being answered")
		vd.Tier, vd.Protected = TierProtected, true
	case req.RuntimeKind == "discussion" && c.Role == "system":
		vd.Decision = include(c, model.AsMessage, "window", "window.discussion_directive", "moderator directive")
		vd.Tier, vd.Protected = TierProtected, true
	case window[c.ID]:
		vd.Decision = include(c, model.AsMessage, "window", "window.recent_turn", "within the conversation window")
		vd.Tier = TierWindow
	default:
		vd.Decision = omit(c, "window", model.ReasonWindow, "window.older_turn")
	}
	return vd
}

// judgeRunState includes the latest checkpoint or skill state of the assembly run; earlier
// ones of that run are superseded, other runs' are outside the window.
func judgeRunState(c *model.Candidate, latest map[string]string, as, what string) Verdict {
	vd := Verdict{Candidate: c, Tier: tierNone}
	id, ours := latest[c.RunID]
	switch {
	case ours && id == c.ID:
		vd.Decision = include(c, as, what, what+".latest_of_run", "the run's current "+what)
		vd.Tier = TierRuntime
	case ours:
		vd.Decision = omit(c, "supersession", model.ReasonSuperseded, what+".earlier_of_run")
	default:
		vd.Decision = omit(c, "window", model.ReasonWindow, what+".other_run")
	}
	return vd
}

// judgeMemory applies privacy, provenance, supersession and freshness to a visible memory.
func judgeMemory(v Version, req Request, c *model.Candidate, eligible func(string) bool, rawArtifacts map[string]bool) Verdict {
	vd := Verdict{Candidate: c, Tier: TierMemory}
	as := model.AsMemory
	rule := "memory.current"
	if !v.MayReceive(req.Provider, c.PrivacyClass) {
		if c.SafeSummary == "" || v.NeverSend(c.PrivacyClass) {
			vd.Decision = omit(c, "privacy", model.ReasonPrivacy, "privacy.restricted_no_safe_summary")
			if v.NeverSend(c.PrivacyClass) {
				vd.Decision.Rule = "privacy.never_sent"
			}
			vd.Tier = tierNone
			return vd
		}
		as, rule, vd.Restricted = model.AsSafeSummary, "privacy.safe_summary_only", true
	}
	if len(c.LiveSourceIDs) < len(c.SourceArtifactIDs) {
		vd.Broken = true
		if v.StaleHandling == StaleOmit {
			vd.Decision = omit(c, "provenance", model.ReasonProvenanceBroken, "provenance.source_missing")
			vd.Tier = tierNone
			return vd
		}
		if as == model.AsMemory {
			as = model.AsStaleMarker
		}
		rule = "provenance.source_missing_marked"
	}
	for _, newer := range c.SupersededBy {
		if eligible(newer) {
			vd.Decision = omit(c, "supersession", model.ReasonSuperseded, "supersession.replaced_by_eligible")
			vd.Tier = tierNone
			return vd
		}
	}
	if since, stale := Stale(v, req.Now, c); stale {
		vd.StaleSince = &since
		if v.StaleHandling == StaleOmit {
			vd.Decision = omit(c, "freshness", model.ReasonStale, "freshness.stale_omitted")
			vd.Tier = tierNone
			return vd
		}
		if as == model.AsMemory {
			as = model.AsStaleMarker
		}
		rule += "+freshness.stale_marked"
	}
	if len(c.LiveSourceIDs) > 0 && allIn(c.LiveSourceIDs, rawArtifacts) && !vd.Broken {
		vd.Decision = omit(c, "rehydration", model.ReasonDuplicate, "rehydration.raw_source_included")
		vd.Tier = tierNone
		return vd
	}
	kind := "memory"
	switch {
	case vd.Restricted:
		kind = "privacy"
	case vd.Broken:
		kind = "provenance"
	case vd.StaleSince != nil:
		kind = "freshness"
	}
	vd.Decision = include(c, as, kind, rule, "")
	return vd
}

// Stale reports whether a memory is past its staleAfter (or its class's default TTL from
// observedAt) at now, and since when. Durable and permanent memories never go stale; a
// session memory goes stale when the run that observed it ends.
func Stale(v Version, now time.Time, c *model.Candidate) (time.Time, bool) {
	switch c.FreshnessClass {
	case "durable", "permanent":
		return time.Time{}, false
	}
	var until time.Time
	switch {
	case c.StaleAfter != nil:
		until = *c.StaleAfter
	default:
		ttl, ok := v.TTLOf(c.FreshnessClass)
		if !ok {
			return time.Time{}, false
		}
		until = c.ObservedAt.Add(ttl)
	}
	return until, now.After(until)
}

// markConflicts turns every included side of a conflict into `conflict` when two or more
// sides are included, and turns a side back into an ordinary memory when it is the lone
// survivor (its other sides were omitted, by a policy or by the budget). Privacy- and
// freshness-reduced forms are kept: a restricted side stays a safe summary. Fit calls it
// again after each trim.
func markConflicts(verdicts []Verdict) {
	included := map[string]bool{}
	for i := range verdicts {
		vd := &verdicts[i]
		if vd.Included() {
			included[vd.Candidate.ID] = true
		}
	}
	for i := range verdicts {
		vd := &verdicts[i]
		if !vd.Included() || vd.Candidate.Kind != model.KindMemory {
			continue
		}
		if vd.Decision.As != model.AsMemory && vd.Decision.As != model.AsConflict {
			continue
		}
		paired := false
		for _, other := range vd.Candidate.ConflictsWith {
			paired = paired || included[other]
		}
		switch {
		case paired:
			vd.Decision.As, vd.Decision.Kind, vd.Decision.Rule = model.AsConflict, "conflict", "conflict.both_sides_included"
		case vd.Decision.As == model.AsConflict:
			vd.Decision.As, vd.Decision.Kind, vd.Decision.Rule = model.AsMemory, "memory", "conflict.lone_survivor"
		}
	}
}

// conversationWindow returns the ids of the last WindowMessages user/assistant messages the
// participant may see, and the system messages among them and right before the oldest.
func conversationWindow(v Version, req Request, cands []model.Candidate, visible []bool) map[string]bool {
	var msgs []int
	for i := range cands {
		c := &cands[i]
		if c.Kind == model.KindMessage && visible[i] {
			msgs = append(msgs, i)
		}
	}
	sortLineage(cands, msgs)
	window := map[string]bool{}
	turns := 0
	for k := len(msgs) - 1; k >= 0; k-- {
		c := cands[msgs[k]]
		if c.Role != "system" {
			if turns == v.WindowMessages {
				break
			}
			turns++
		}
		window[c.ID] = true
	}
	return window
}

// currentUserMessage is the latest user message the participant may see: the one the call
// answers.
func currentUserMessage(cands []model.Candidate, visible []bool) string {
	var msgs []int
	for i := range cands {
		c := &cands[i]
		if c.Kind == model.KindMessage && c.Role == "user" && visible[i] {
			msgs = append(msgs, i)
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	sortLineage(cands, msgs)
	return cands[msgs[len(msgs)-1]].ID
}

// latestRunState maps the assembly run to its latest checkpoint and latest skill state.
func latestRunState(req Request, cands []model.Candidate) (checkpoint, skills map[string]string) {
	checkpoint, skills = map[string]string{}, map[string]string{}
	if req.RunID == "" {
		return
	}
	best := map[string]*model.Candidate{}
	for i := range cands {
		c := &cands[i]
		if (c.Kind != model.KindCheckpoint && c.Kind != model.KindSkills) || c.RunID != req.RunID {
			continue
		}
		if b, ok := best[c.Kind]; !ok || lineageLess(b, c) {
			best[c.Kind] = c
		}
	}
	if c, ok := best[model.KindCheckpoint]; ok {
		checkpoint[req.RunID] = c.ID
	}
	if c, ok := best[model.KindSkills]; ok {
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

func sortLineage(cands []model.Candidate, idx []int) {
	sort.SliceStable(idx, func(x, y int) bool { return lineageLess(&cands[idx[x]], &cands[idx[y]]) })
}

func allIn(ids []string, set map[string]bool) bool {
	for _, id := range ids {
		if !set[id] {
			return false
		}
	}
	return true
}

// stopwords are left out of relevance matching.
var stopwords = map[string]bool{"the": true, "and": true, "for": true, "with": true, "that": true, "this": true,
	"what": true, "are": true, "was": true, "you": true, "your": true, "from": true, "have": true, "has": true,
	"can": true, "will": true, "not": true, "but": true, "our": true, "all": true, "any": true, "its": true}

// terms are the words of a text that relevance matching compares.
func terms(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if len(w) > 2 && !stopwords[w] {
			out[w] = true
		}
	}
	return out
}

// overlap counts the distinct words of text (as terms splits them) that the current message
// also uses. It reads text in place: it runs for every memory of every assembly.
func overlap(current map[string]bool, text string) int {
	if len(current) == 0 {
		return 0
	}
	word := make([]byte, 0, 64)
	var seen []string
	n := 0
	flush := func() {
		if len(word) > 2 && current[string(word)] && !model.Contains(seen, string(word)) {
			seen = append(seen, string(word))
			n++
		}
		word = word[:0]
	}
	for _, r := range strings.ToLower(text) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			word = append(word, byte(r))
			continue
		}
		flush()
	}
	flush()
	return n
}
