package cypher

import (
	"context"
	"sort"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

// conversationRead is one answer of ConversationRecords.
type conversationRead struct {
	conversationID string
	resetRev       int64
	rec            *neo4j.Record
}

// readConversation reads the records changed since the given branch revisions (all of them
// when since is empty).
func (s *Store) readConversation(ctx context.Context, accountID string, req model.AssemblyRequest, since map[string]any) (conversationRead, error) {
	return readTx(ctx, s, func(t *tx) (conversationRead, error) {
		rec, err := t.one("ConversationRecords", map[string]any{
			"accountId": accountID, "branchId": req.BranchID, "participantId": req.ParticipantID,
			"runId": nullable(req.RunID), "since": since,
		})
		if err != nil {
			return conversationRead{}, err
		}
		if rec == nil {
			e := model.NotFound("branch", req.BranchID)
			e.Field = "branchId"
			return conversationRead{}, e
		}
		out := conversationRead{conversationID: strValue(rec, "conversationId"), rec: rec}
		if s.records != nil && len(since) == 0 {
			s.records.full.Add(1)
		} else if s.records != nil {
			s.records.delta.Add(1)
		}
		out.resetRev, _ = value(rec, "resetRev").(int64)
		return out, nil
	})
}

// LineageSnapshot reads the candidates of an assembly: the assembler's copy of the
// conversation, brought up to date with one ConversationRecords read (or read in full when
// there is no copy, when a deletion happened since, or when req.Fresh asks for it), and the
// lineage of the requested branch selected from it as of req.AsOf.
func (s *Store) LineageSnapshot(ctx context.Context, accountID string, req model.AssemblyRequest) (model.Snapshot, error) {
	var copy *conversationRecords
	if !req.Fresh {
		var known bool
		if copy, known = s.records.lookup(accountID, req.BranchID); !known {
			// A branch forked since the conversation was last read: find its conversation.
			convID, err := readTx(ctx, s, func(t *tx) (string, error) {
				rec, err := t.one("BranchConversation", map[string]any{"accountId": accountID, "branchId": req.BranchID})
				if err != nil || rec == nil {
					return "", err
				}
				return strValue(rec, "conversationId"), nil
			})
			if err != nil {
				return model.Snapshot{}, err
			}
			copy = s.records.lookupConversation(accountID, convID)
		}
	}
	since, resetRev := map[string]any{}, int64(0)
	if copy != nil {
		copy.mu.RLock()
		since, resetRev = copy.since(), copy.resetRev
		copy.mu.RUnlock()
	}
	read, err := s.readConversation(ctx, accountID, req, since)
	if err != nil {
		return model.Snapshot{}, err
	}
	if copy == nil || copy.id != read.conversationID || read.resetRev != resetRev {
		if len(since) > 0 {
			if read, err = s.readConversation(ctx, accountID, req, map[string]any{}); err != nil {
				return model.Snapshot{}, err
			}
		}
		copy = newConversationRecords(read.conversationID)
		copy.resetRev = read.resetRev
	}
	copy.mu.Lock()
	for kind, key := range map[string]string{recMessage: "messages", recCall: "calls", recArtifact: "artifacts",
		recMemory: "memories", recCheckpoint: "checkpoints", recSkills: "skills"} {
		copy.merge(kind, list(read.rec, key))
	}
	copy.mergeRuns(list(read.rec, "runs"))
	copy.advance(list(read.rec, "branches"))
	copy.mu.Unlock()
	if !req.Fresh {
		var branchIDs []string
		for _, v := range list(read.rec, "branches") {
			branchIDs = append(branchIDs, asProps(v).str("id"))
		}
		s.records.store(accountID, branchIDs, copy)
	}
	copy.mu.RLock()
	defer copy.mu.RUnlock()
	return buildSnapshot(copy, read.rec, req)
}

// buildSnapshot selects the lineage of req.BranchID from a conversation copy as of req.AsOf
// and turns its records into candidates: each call with its outcome (its latest artifact in
// the lineage) and its retries (calls in the lineage naming it in retryOf, or identical
// repeats later in the same run), each memory with the eligible memories that supersede or
// contradict it, run status and promotion as of req.AsOf; plus the conversation-visible
// memories of other branches, the baseline token sum of naive replay and how many records
// of the conversation lie outside the lineage.
func buildSnapshot(c *conversationRecords, rec *neo4j.Record, req model.AssemblyRequest) (model.Snapshot, error) {
	snap := model.Snapshot{ConversationID: c.id}
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
	branches := list(rec, "branches")
	lin := lineageOf(c.id, req.BranchID, branches)
	snap.Lineage = lin.ids()
	for _, v := range branches {
		b := asProps(v)
		cutoff, in := lin.cutoff(b.str("id"))
		switch {
		case !in:
			snap.StructurallyExcluded += int(b.i64("seq"))
		case b.i64("seq") > cutoff:
			snap.StructurallyExcluded += int(b.i64("seq") - cutoff)
		}
	}

	visible := func(r *cachedRecord) bool { return !r.p.time("recordedAt").After(req.AsOf) }
	byKind := map[string][]*cachedRecord{}
	depth := map[string]int64{}
	for i := len(lin.Branches) - 1; i >= 0; i-- {
		b := lin.Branches[i]
		depth[b.BranchID] = b.Depth
		for _, r := range c.upTo(b.BranchID, b.Cutoff) {
			if visible(r) {
				byKind[r.kind] = append(byKind[r.kind], r)
			}
		}
	}
	var others []*cachedRecord
	for _, r := range c.shared {
		if !lin.contains(r.branchID, r.seq) && visible(r) {
			others = append(others, r)
		}
	}
	sort.Slice(others, func(i, j int) bool {
		if others[i].seq != others[j].seq {
			return others[i].seq < others[j].seq
		}
		return others[i].branchID < others[j].branchID
	})
	runs := runsAsOf(c.runs, req.AsOf)
	promotion := func(p props) (bool, string) {
		at := p.timePtr("promotedAt")
		return at != nil && !at.After(req.AsOf), p.str("promotedTo")
	}

	for _, r := range byKind[recMessage] {
		m := messageCandidate(r.p, depth[r.branchID])
		m.Content, m.ParticipantName = r.p.str("content"), snap.ParticipantNames[m.OwnerParticipantID]
		snap.Candidates = append(snap.Candidates, m)
		snap.BaselineTokens += int(r.p.i64("baselineTokens"))
	}
	outcomes := map[string][]*cachedRecord{}
	var artifacts []model.Candidate
	for _, r := range byKind[recArtifact] {
		outcomes[r.p.str("toolCallId")] = append(outcomes[r.p.str("toolCallId")], r)
		a := artifactCandidate(r.p, depth[r.branchID], runs)
		a.Promoted, a.PromotedTo = promotion(r.p)
		artifacts = append(artifacts, a)
		snap.BaselineTokens += int(r.p.i64("baselineTokens"))
	}
	retries := retriesOf(byKind[recCall])
	for _, r := range byKind[recCall] {
		call := callCandidate(r.p, depth[r.branchID], outcomes[r.id], runs, promotion)
		call.RetriedBy = retries[r.id]
		snap.Candidates = append(snap.Candidates, call)
		snap.BaselineTokens += int(r.p.i64("baselineTokens"))
	}
	snap.Candidates = append(snap.Candidates, artifacts...)
	memories := append(byKind[recMemory], others...)
	supersededBy, conflicts := map[string][]string{}, map[string][]string{}
	for _, r := range memories {
		for _, old := range r.p.strs("supersedes") {
			supersededBy[old] = append(supersededBy[old], r.id)
		}
		for _, other := range r.p.strs("conflictsWith") {
			conflicts[r.id] = appendNew(conflicts[r.id], other)
			conflicts[other] = appendNew(conflicts[other], r.id)
		}
	}
	for _, r := range memories {
		d, inLineage := depth[r.branchID], true
		if !lin.contains(r.branchID, r.seq) {
			d, inLineage = -1, false
		}
		m := memoryCandidate(r.p, d, runs)
		m.InLineage = inLineage
		m.Promoted, m.PromotedTo = promotion(r.p)
		m.SupersededBy, m.ConflictsWith = sorted(supersededBy[r.id]), sorted(conflicts[r.id])
		snap.Candidates = append(snap.Candidates, m)
	}
	for _, r := range byKind[recCheckpoint] {
		snap.Candidates = append(snap.Candidates, model.Candidate{
			Kind: model.KindCheckpoint, ID: r.id, BranchID: r.branchID, Seq: r.seq, Depth: depth[r.branchID],
			InLineage: true, CreatedAt: r.p.time("createdAt"), RunID: r.p.str("runId"), State: r.p.str("state"),
		})
	}
	for _, r := range byKind[recSkills] {
		snap.Candidates = append(snap.Candidates, model.Candidate{
			Kind: model.KindSkills, ID: r.id, BranchID: r.branchID, Seq: r.seq, Depth: depth[r.branchID],
			InLineage: true, CreatedAt: r.p.time("createdAt"), RunID: r.p.str("runId"),
			LoadedSkills: r.p.strs("loadedSkills"), ActiveProfiles: r.p.strs("activeProfiles"), DirectTools: r.p.strs("directTools"),
		})
	}
	if req.Trace {
		snap.ExcludedRefs = excludedRefs(c, lin, visible)
	}
	return snap, nil
}

// excludedRefs lists, for a traced assembly, the conversation's messages, tool calls,
// artifacts and memories outside the lineage (sibling branches, or after a fork point).
func excludedRefs(c *conversationRecords, lin lineage, visible func(*cachedRecord) bool) []string {
	var out []*cachedRecord
	for _, r := range c.byID {
		if r.kind != recCheckpoint && r.kind != recSkills && visible(r) && !lin.contains(r.branchID, r.seq) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.branchID != b.branchID {
			return a.branchID < b.branchID
		}
		return a.seq < b.seq
	})
	ids := make([]string, len(out))
	for i, r := range out {
		ids[i] = r.id
	}
	return ids
}

// runState is a run's parent, and its status and end as of a snapshot.
type runState struct {
	parentRunID, status string
	endedAt             *time.Time
}

func runsAsOf(runs map[string]props, asOf time.Time) func(id string) runState {
	memo := map[string]runState{}
	return func(id string) runState {
		if st, ok := memo[id]; ok {
			return st
		}
		r, ok := runs[id]
		st := runState{}
		if ok {
			st.parentRunID, st.status = r.str("parentRunId"), model.RunStatusRunning
			if end := r.timePtr("endRecordedAt"); end != nil && !end.After(asOf) {
				st.status, st.endedAt = r.str("status"), r.timePtr("endedAt")
			}
		}
		memo[id] = st
		return st
	}
}

// retriesOf finds, for each call of a lineage, the later calls of the lineage that retry it:
// those naming it in retryOf, and identical repeats (same run, same tool, byte-identical
// arguments) later in the same run.
func retriesOf(calls []*cachedRecord) map[string][]string {
	out := map[string][]string{}
	same := map[string][]*cachedRecord{}
	for _, r := range calls {
		if of := r.p.str("retryOf"); of != "" {
			out[of] = appendNew(out[of], r.id)
		}
		if sha := r.p.str("argumentsSha256"); sha != "" {
			key := r.p.str("runId") + "\x00" + r.p.str("tool") + "\x00" + sha
			same[key] = append(same[key], r)
		}
	}
	for _, group := range same {
		for i, r := range group {
			for _, later := range group[i+1:] {
				if later.seq > r.seq {
					out[r.id] = appendNew(out[r.id], later.id)
				}
			}
		}
	}
	return out
}

func appendNew(list []string, id string) []string {
	if model.Contains(list, id) {
		return list
	}
	return append(list, id)
}

func sorted(list []string) []string {
	sort.Strings(list)
	return list
}

func list(rec interface{ Get(string) (any, bool) }, key string) []any {
	v, _ := rec.Get(key)
	l, _ := v.([]any)
	return l
}

func messageCandidate(p props, depth int64) model.Candidate {
	return model.Candidate{
		Kind: model.KindMessage, ID: p.str("id"), BranchID: p.str("branchId"), Seq: p.i64("seq"), Depth: depth,
		InLineage: true, CreatedAt: p.time("createdAt"), Visibility: p.str("visibility"), Role: p.str("role"),
		OwnerParticipantID: p.str("participantId"), OwnerRunID: p.str("runId"),
	}
}

// ownership fills the fields every tool-derived candidate shares; runs gives the owner run's
// parent and status as of the snapshot.
func ownership(c *model.Candidate, p props, runs func(string) runState) {
	c.Visibility = p.str("visibility")
	c.OwnerParticipantID = p.str("ownerParticipantId")
	c.OwnerRunID = p.str("ownerRunId")
	c.SharedWith = p.strs("sharedWith")
	c.PrivacyClass = p.str("privacyClass")
	runOwnership(c, runs)
}

func runOwnership(c *model.Candidate, runs func(string) runState) {
	r := runs(c.OwnerRunID)
	c.OwnerRunParentID, c.OwnerRunStatus = r.parentRunID, r.status
}

// callCandidate builds a tool call with its outcome as of the snapshot: the latest of its
// artifacts in the lineage, or pending when it has none there.
func callCandidate(p props, depth int64, outcomes []*cachedRecord, runs func(string) runState, promotion func(props) (bool, string)) model.Candidate {
	c := model.Candidate{
		Kind: model.KindToolCall, ID: p.str("id"), BranchID: p.str("branchId"), Seq: p.i64("seq"), Depth: depth,
		InLineage: true, CreatedAt: p.time("createdAt"), Tool: p.str("tool"), CallID: p.str("callId"),
		Arguments: p.str("arguments"), ArgumentsRef: p.str("argumentsRef"), Status: model.ToolCallPending,
		RetryOf: p.str("retryOf"), RunID: p.str("runId"), OwnerRunID: p.str("runId"),
		OwnerParticipantID: p.str("participantId"),
		// A call with no outcome yet has no artifact to carry its visibility: it is the
		// requesting participant's own state.
		Visibility: model.DefaultArtifactVisibility,
	}
	for i := len(outcomes) - 1; i >= 0; i-- {
		c.ArtifactIDs = append(c.ArtifactIDs, outcomes[i].id)
	}
	if n := len(outcomes); n > 0 {
		last := outcomes[n-1].p
		c.Status, c.ErrorCode, c.ErrorMessage = last.str("status"), last.str("errorCode"), last.str("errorMessage")
		c.Retryable = last.boolean("retryable")
		c.Visibility, c.PrivacyClass, c.SharedWith = last.str("visibility"), last.str("privacyClass"), last.strs("sharedWith")
		c.Promoted, c.PromotedTo = promotion(last)
	}
	runOwnership(&c, runs)
	return c
}

func artifactCandidate(p props, depth int64, runs func(string) runState) model.Candidate {
	c := model.Candidate{
		Kind: model.KindArtifact, ID: p.str("id"), BranchID: p.str("branchId"), Seq: p.i64("seq"), Depth: depth,
		InLineage: true, CreatedAt: p.time("createdAt"), ToolCallID: p.str("toolCallId"), Tool: p.str("tool"),
		Status: p.str("status"), ResultBytes: p.i64("resultBytes"), ArgsBytes: p.i64("argsBytes"),
		ErrorCode: p.str("errorCode"), ErrorMessage: p.str("errorMessage"),
	}
	ownership(&c, p, runs)
	return c
}

func memoryCandidate(p props, depth int64, runs func(string) runState) model.Candidate {
	c := model.Candidate{
		Kind: model.KindMemory, ID: p.str("id"), BranchID: p.str("branchId"), Seq: p.i64("seq"), Depth: depth,
		CreatedAt: p.time("createdAt"), MemoryKind: p.str("kind"),
		Summary: p.str("summary"), SafeSummary: p.str("safeSummary"), Data: p.str("data"), Confidence: p.float("confidence"),
		FreshnessClass: p.str("freshnessClass"), ObservedAt: p.time("observedAt"), StaleAfter: p.timePtr("staleAfter"),
		RevalidateWith: p.strs("revalidateWith"), SourceArtifactIDs: p.strs("sourceArtifactIds"),
		LiveSourceIDs: p.strs("liveSources"),
	}
	ownership(&c, p, runs)
	if ended := runs(c.OwnerRunID).endedAt; ended != nil && c.FreshnessClass == "session" && c.StaleAfter == nil {
		// A session memory lasts until the run that observed it ends.
		c.StaleAfter = ended
	}
	return c
}
