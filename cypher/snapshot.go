package cypher

import (
	"context"

	"github.com/ctxgraph/ctxgraph/model"
)

// LineageSnapshot runs the one lineage traversal of an assembly (LineageCandidates) and, for
// a traced assembly, lists the records it excluded structurally (ExcludedRecords).
func (s *Store) LineageSnapshot(ctx context.Context, accountID string, req model.AssemblyRequest) (model.Snapshot, error) {
	return readTx(ctx, s, func(t *tx) (model.Snapshot, error) {
		rec, err := t.one("LineageCandidates", map[string]any{
			"accountId": accountID, "branchId": req.BranchID, "participantId": req.ParticipantID,
			"runId": nullable(req.RunID), "asOf": req.AsOf.UTC(), "openEnded": openEnded,
			"contentTail": contentTail(req.MessageContentTail),
		})
		if err != nil {
			return model.Snapshot{}, err
		}
		if rec == nil {
			e := model.NotFound("branch", req.BranchID)
			e.Field = "branchId"
			return model.Snapshot{}, e
		}
		snap := model.Snapshot{ConversationID: strValue(rec, "conversationId")}
		p := nodeProps(rec, "p")
		if p.str("conversationId") != snap.ConversationID {
			e := model.NotFound("participant", req.ParticipantID)
			e.Field = "participantId"
			return model.Snapshot{}, e
		}
		snap.Participant = participantOf(p)
		snap.ParticipantNames = map[string]string{}
		for _, v := range list(rec, "participants") {
			pt := asProps(v)
			snap.ParticipantNames[pt.str("id")] = pt.str("name")
		}
		if req.RunID != "" {
			r := nodeProps(rec, "run")
			if r.str("conversationId") != snap.ConversationID {
				e := model.NotFound("run", req.RunID)
				e.Field = "runId"
				return model.Snapshot{}, e
			}
			run := runOf(r)
			if r.timePtr("endRecordedAt") == nil || r.time("endRecordedAt").After(req.AsOf) {
				run.Status, run.EndedAt = model.RunStatusRunning, nil
			}
			snap.Run = &run
		}
		var lin lineage
		lin.ConversationID = snap.ConversationID
		for _, v := range list(rec, "lineage") {
			l := asProps(v)
			lin.Branches = append(lin.Branches, lineageBranch{BranchID: l.str("branchId"), Depth: l.i64("depth"), Cutoff: l.i64("cutoff")})
		}
		snap.Lineage = lin.ids()
		contents := map[string]props{}
		for _, v := range list(rec, "messageContent") {
			c := asProps(v)
			contents[c.str("id")] = c
		}
		for _, v := range list(rec, "messages") {
			m := messageCandidate(asProps(v))
			if c, ok := contents[m.ID]; ok {
				m.Content, m.ParticipantName, m.ContentLoaded = c.str("content"), c.str("participantName"), true
			}
			snap.Candidates = append(snap.Candidates, m)
		}
		retries := map[string][]props{}
		for _, v := range list(rec, "retries") {
			r := asProps(v)
			if r.str("id") != "" {
				retries[r.str("of")] = append(retries[r.str("of")], r)
			}
		}
		runs := map[string]props{}
		for _, v := range list(rec, "runs") {
			r := asProps(v)
			runs[r.str("id")] = r
		}
		// A call's outcome is its latest artifact in the lineage: artifacts come in lineage
		// order, so the last one seen per call wins.
		outcomes := map[string][]props{}
		var artifacts []model.Candidate
		for _, v := range list(rec, "artifacts") {
			a := asProps(v)
			outcomes[a.str("toolCallId")] = append(outcomes[a.str("toolCallId")], a)
			artifacts = append(artifacts, artifactCandidate(a, runs))
		}
		for _, v := range list(rec, "calls") {
			snap.Candidates = append(snap.Candidates, callCandidate(asProps(v), lin, retries, outcomes[asProps(v).str("id")], runs))
		}
		snap.Candidates = append(snap.Candidates, artifacts...)
		for _, v := range list(rec, "memories") {
			snap.Candidates = append(snap.Candidates, memoryCandidate(asProps(v), runs))
		}
		for _, v := range list(rec, "checkpoints") {
			c := asProps(v)
			snap.Candidates = append(snap.Candidates, model.Candidate{
				Kind: model.KindCheckpoint, ID: c.str("id"), BranchID: c.str("branchId"), Seq: c.i64("seq"),
				Depth: c.i64("depth"), InLineage: true, CreatedAt: c.time("createdAt"), RunID: c.str("runId"), State: c.str("state"),
			})
		}
		for _, v := range list(rec, "skills") {
			c := asProps(v)
			snap.Candidates = append(snap.Candidates, model.Candidate{
				Kind: model.KindSkills, ID: c.str("id"), BranchID: c.str("branchId"), Seq: c.i64("seq"),
				Depth: c.i64("depth"), InLineage: true, CreatedAt: c.time("createdAt"), RunID: c.str("runId"),
				LoadedSkills: c.strs("loadedSkills"), ActiveProfiles: c.strs("activeProfiles"), DirectTools: c.strs("directTools"),
			})
		}
		sum := func(k string) int { n, _ := value(rec, k).(int64); return int(n) }
		snap.BaselineTokens = sum("messageTokens") + sum("callTokens") + sum("artifactTokens")
		snap.StructurallyExcluded = sum("excluded")
		if req.Trace {
			ex, err := t.one("ExcludedRecords", map[string]any{
				"accountId": accountID, "conversationId": snap.ConversationID, "asOf": req.AsOf.UTC(), "lineage": lin.params(),
			})
			if err != nil {
				return model.Snapshot{}, err
			}
			snap.ExcludedRefs = strList(ex, "ids")
		}
		return snap, nil
	})
}

func list(rec interface{ Get(string) (any, bool) }, key string) []any {
	v, _ := rec.Get(key)
	l, _ := v.([]any)
	return l
}

func messageCandidate(p props) model.Candidate {
	return model.Candidate{
		Kind: model.KindMessage, ID: p.str("id"), BranchID: p.str("branchId"), Seq: p.i64("seq"), Depth: p.i64("depth"),
		InLineage: true, CreatedAt: p.time("createdAt"), Visibility: p.str("visibility"), Role: p.str("role"),
		OwnerParticipantID: p.str("participantId"), OwnerRunID: p.str("runId"),
	}
}

// ownership fills the fields every tool-derived candidate shares; run is the owner run's
// parent and status as of the snapshot.
func ownership(c *model.Candidate, p props, runs map[string]props) {
	c.Visibility = p.str("visibility")
	c.OwnerParticipantID = p.str("ownerParticipantId")
	c.OwnerRunID = p.str("ownerRunId")
	c.SharedWith = p.strs("sharedWith")
	c.Promoted = p.boolean("promoted")
	c.PromotedTo = p.str("promotedTo")
	c.PrivacyClass = p.str("privacyClass")
	runOwnership(c, runs)
}

func runOwnership(c *model.Candidate, runs map[string]props) {
	if r, ok := runs[c.OwnerRunID]; ok {
		c.OwnerRunParentID = r.str("parentRunId")
		c.OwnerRunStatus = r.str("status")
	}
}

// callCandidate builds a tool call with its outcome as of the snapshot: the latest of its
// artifacts in the lineage, or pending when it has none there.
func callCandidate(p props, lin lineage, retries map[string][]props, outcomes []props, runs map[string]props) model.Candidate {
	c := model.Candidate{
		Kind: model.KindToolCall, ID: p.str("id"), BranchID: p.str("branchId"), Seq: p.i64("seq"), Depth: p.i64("depth"),
		InLineage: true, CreatedAt: p.time("createdAt"), Tool: p.str("tool"), CallID: p.str("callId"),
		Arguments: p.str("arguments"), ArgumentsRef: p.str("argumentsRef"), Status: model.ToolCallPending,
		RetryOf: p.str("retryOf"), RunID: p.str("runId"), OwnerRunID: p.str("runId"),
		OwnerParticipantID: p.str("participantId"),
		// A call with no outcome yet has no artifact to carry its visibility: it is the
		// requesting participant's own state.
		Visibility: model.DefaultArtifactVisibility,
	}
	for i := len(outcomes) - 1; i >= 0; i-- {
		c.ArtifactIDs = append(c.ArtifactIDs, outcomes[i].str("id"))
	}
	if n := len(outcomes); n > 0 {
		last := outcomes[n-1]
		c.Status, c.ErrorCode, c.ErrorMessage = last.str("status"), last.str("errorCode"), last.str("errorMessage")
		c.Retryable = last.boolean("retryable")
		c.Visibility, c.PrivacyClass, c.SharedWith = last.str("visibility"), last.str("privacyClass"), last.strs("sharedWith")
		c.Promoted, c.PromotedTo = last.boolean("promoted"), last.str("promotedTo")
	}
	runOwnership(&c, runs)
	for _, r := range retries[c.ID] {
		if lin.contains(r.str("branchId"), r.i64("seq")) && !model.Contains(c.RetriedBy, r.str("id")) {
			c.RetriedBy = append(c.RetriedBy, r.str("id"))
		}
	}
	return c
}

func artifactCandidate(p props, runs map[string]props) model.Candidate {
	c := model.Candidate{
		Kind: model.KindArtifact, ID: p.str("id"), BranchID: p.str("branchId"), Seq: p.i64("seq"), Depth: p.i64("depth"),
		InLineage: true, CreatedAt: p.time("createdAt"), ToolCallID: p.str("toolCallId"), Tool: p.str("tool"),
		Status: p.str("status"), ResultBytes: p.i64("resultBytes"), ArgsBytes: p.i64("argsBytes"),
		ErrorCode: p.str("errorCode"), ErrorMessage: p.str("errorMessage"),
	}
	ownership(&c, p, runs)
	return c
}

func memoryCandidate(p props, runs map[string]props) model.Candidate {
	c := model.Candidate{
		Kind: model.KindMemory, ID: p.str("id"), BranchID: p.str("branchId"), Seq: p.i64("seq"), Depth: p.i64("depth"),
		InLineage: p.boolean("inLineage"), CreatedAt: p.time("createdAt"), MemoryKind: p.str("kind"),
		Summary: p.str("summary"), SafeSummary: p.str("safeSummary"), Data: p.str("data"), Confidence: p.float("confidence"),
		FreshnessClass: p.str("freshnessClass"), ObservedAt: p.time("observedAt"), StaleAfter: p.timePtr("staleAfter"),
		RevalidateWith: p.strs("revalidateWith"), SourceArtifactIDs: p.strs("sourceArtifactIds"),
		LiveSourceIDs: p.strs("liveSources"), SupersededBy: p.strs("supersededBy"),
		ConflictsWith: p.strs("conflictsWith"),
	}
	ownership(&c, p, runs)
	if ended := runs[c.OwnerRunID].timePtr("endedAt"); ended != nil && c.FreshnessClass == "session" && c.StaleAfter == nil {
		// A session memory lasts until the run that observed it ends.
		c.StaleAfter = ended
	}
	return c
}

// contentTail is how many of the latest lineage messages come with their content; 0 means
// all of them.
func contentTail(n int) int64 {
	if n <= 0 {
		return openEnded
	}
	return int64(n)
}
