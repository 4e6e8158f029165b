package cypher

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync/atomic"
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
	rec, err := readSingle(ctx, s, "ConversationRecords", map[string]any{
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
	if s.records != nil {
		if len(since) == 0 {
			s.records.full.Add(1)
		} else {
			s.records.delta.Add(1)
		}
	}
	out.resetRev, _ = value(rec, "resetRev").(int64)
	return out, nil
}

// LineageSnapshot reads the candidates of an assembly: the assembler's copy of the
// conversation, brought up to date with one ConversationRecords read (or read in full when
// there is no copy, when a deletion happened since, or when req.Fresh asks for it), and the
// lineage of the requested branch selected from it as of req.AsOf.
func (s *Store) LineageSnapshot(ctx context.Context, accountID string, req model.AssemblyRequest) (model.Snapshot, error) {
	var copy *conversationRecords
	release := func() {}
	defer func() { release() }()
	for !req.Fresh && s.records != nil {
		c, err := s.cachedCopy(ctx, accountID, req.BranchID)
		if err != nil {
			return model.Snapshot{}, err
		}
		if c != nil {
			copy = c
			break
		}
		// No copy: read the conversation in full, unless another request is doing so;
		// then wait for it and take its copy.
		lead, done, err := s.records.firstRead(ctx, accountID+"/"+req.BranchID)
		if err != nil {
			return model.Snapshot{}, translate(err)
		}
		if lead {
			release = done
			break
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
	copy.mergeRuns(list(read.rec, "runs"))
	for kind, key := range map[string]string{recMessage: "messages", recCall: "calls", recArtifact: "artifacts",
		recMemory: "memories", recCheckpoint: "checkpoints", recSkills: "skills"} {
		copy.merge(kind, list(read.rec, key))
	}
	branchIDs := copy.advance(list(read.rec, "branches"))
	copy.mu.Unlock()
	if !req.Fresh {
		s.records.store(accountID, branchIDs, copy)
	}
	release()
	copy.mu.RLock()
	defer copy.mu.RUnlock()
	snap, shared, err := buildSnapshot(copy, read.rec, req)
	if shared && s.records != nil {
		s.records.shared.Add(1)
	}
	return snap, err
}

// cachedCopy returns the copy of the conversation a branch belongs to, or nil.
func (s *Store) cachedCopy(ctx context.Context, accountID, branchID string) (*conversationRecords, error) {
	if copy, known := s.records.lookup(accountID, branchID); known {
		return copy, nil
	}
	// A branch forked since the conversation was last read: find its conversation.
	convID, err := readTx(ctx, s, func(t *tx) (string, error) {
		rec, err := t.one("BranchConversation", map[string]any{"accountId": accountID, "branchId": branchID})
		if err != nil || rec == nil {
			return "", err
		}
		return strValue(rec, "conversationId"), nil
	})
	if err != nil {
		return nil, err
	}
	return s.records.lookupConversation(accountID, convID), nil
}

// buildSnapshot selects the lineage of req.BranchID from a conversation copy as of req.AsOf,
// with its candidates (lineageCandidates, or the lineage's current view when the snapshot
// sees the whole copy), the participant and run of the request, and how many records of the
// conversation lie outside the lineage. shared reports that the candidates were a view built
// before.
func buildSnapshot(c *conversationRecords, rec *neo4j.Record, req model.AssemblyRequest) (snap model.Snapshot, shared bool, err error) {
	snap = model.Snapshot{ConversationID: c.id}
	p := nodeProps(rec, "p")
	if p.str("conversationId") != snap.ConversationID {
		e := model.NotFound("participant", req.ParticipantID)
		e.Field = "participantId"
		return model.Snapshot{}, false, e
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
			return model.Snapshot{}, false, e
		}
		run := runOf(r)
		// The run is one of the conversation's, merged into the copy with its end.
		st := c.runs[req.RunID].asOf(req.AsOf)
		run.Status, run.EndedAt = st.status, st.endedAt
		snap.Run = &run
	}
	branches := list(rec, "branches")
	lin := lineageOf(c.id, req.BranchID, branches)
	snap.Lineage = lin.ids()
	if own := c.byBranch[req.BranchID]; len(own) > 0 {
		snap.SeenSeq = own[len(own)-1].seq
	}
	if req.SeenSeq > 0 && len(lin.Branches) > 0 {
		// What the assembly being replayed saw of its own branch, and nothing written after.
		lin.Branches[0].Cutoff = min(lin.Branches[0].Cutoff, req.SeenSeq)
	}

	visible := func(r *cachedRecord) bool { return !r.recordedAt.After(req.AsOf) }
	// An exact artifact the conversation does not hold (as of the snapshot) is a mistake
	// of the request, not a request for nothing.
	for _, id := range req.ExactArtifactIDs {
		if r, ok := c.byID[id]; !ok || r.kind != recArtifact || !visible(r) {
			return model.Snapshot{}, false, &model.Error{Kind: model.KindNotFound, Field: "exactArtifactIds",
				Message: fmt.Sprintf("artifact %q is not in the conversation of branch %q", id, req.BranchID)}
		}
	}
	// A snapshot that sees everything the lineage's view was built from shares the view
	// with every other such snapshot until a write changes it. Records recorded after asOf
	// elsewhere in the conversation (a sibling branch, an ancestor past the fork point) do
	// not matter: under concurrent writes, an assembly's asOf is often older than the copy.
	var view *lineageView
	key := ""
	if !req.Fresh && req.SeenSeq == 0 {
		key = c.viewKey(lin, len(snap.ParticipantNames))
		if v := c.view(req.BranchID, key); v != nil && !v.latest.After(req.AsOf) {
			view, shared = v, true
		}
	}
	if view == nil {
		view = &lineageView{key: key}
		view.candidates, view.baseline, view.latest = lineageCandidates(c, lin, req.AsOf, snap.ParticipantNames)
		// Built from nothing later than asOf, the view is what any later snapshot of the
		// same copy sees: the lineage's current view.
		if key != "" && !view.latest.After(req.AsOf) {
			view.id = c.id + "/" + req.BranchID + "/" + strconv.FormatInt(viewSeq.Add(1), 10)
			c.keepView(req.BranchID, view)
		}
	}
	snap.Candidates, snap.BaselineTokens, snap.View = view.candidates, view.baseline, view.id
	snap.StructurallyExcluded, snap.ExcludedRefs = excludedRecords(c, lin, req.AsOf, req.Trace)
	return snap, shared, nil
}

// lineageView is the candidates of one branch's lineage built from records that the
// snapshot sees whole (asOf at or after the latest time stamped on any of them). Assemblies
// of the lineage share it, read-only, until a write reaches one of the lineage's branches, a
// conversation-visible memory, a run or the participants.
type lineageView struct {
	key string
	// id names the view to the assembler, which keeps its judgements of the view.
	id         string
	candidates []model.Candidate
	baseline   int
	// latest is the latest time stamped on anything the view was built from (lineageCandidates):
	// a snapshot as of that time or later sees the same candidates.
	latest time.Time
}

var viewSeq atomic.Int64

// viewKey says what a lineage view depends on: the lineage's branches with their depths,
// fork points and the revisions of what the lineage sees of them, the conversation-visible
// memories, the runs and the number of participants.
func (c *conversationRecords) viewKey(lin lineage, participants int) string {
	b := make([]byte, 0, 64*len(lin.Branches)+32)
	for _, br := range lin.Branches {
		b = append(b, br.BranchID...)
		b = append(b, ':')
		b = strconv.AppendInt(b, br.Depth, 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, br.Cutoff, 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, c.seenRev(br), 10)
		b = append(b, ';')
	}
	for _, n := range []int64{c.sharedGen, c.runsGen, int64(participants)} {
		b = append(b, '|')
		b = strconv.AppendInt(b, n, 10)
	}
	return string(b)
}

// seenRev is the revision of what a lineage sees of one of its branches: the branch's own
// revision for the active branch, and for an ancestor the latest revision among its records
// up to the fork point. Writes on an ancestor after the fork point (new records, whose seq
// is past it, and the calls they resolve there) leave the lineage's view as it was; a write
// that changes a record the lineage inherits stamps it with a newer revision. lineageCandidates
// reads nothing of an ancestor past its cutoff but conversation-visible memories and runs,
// which viewKey counts apart.
func (c *conversationRecords) seenRev(br lineageBranch) int64 {
	mark := c.marks[br.BranchID]
	if br.Cutoff == openEnded {
		return mark
	}
	key := prefixKey{br.BranchID, br.Cutoff}
	c.viewMu.Lock()
	defer c.viewMu.Unlock()
	if p, ok := c.prefixRevs[key]; ok && p.mark == mark {
		return p.rev
	}
	var rev int64
	for _, r := range c.upTo(br.BranchID, br.Cutoff) {
		rev = max(rev, r.rev)
	}
	if c.prefixRevs == nil {
		c.prefixRevs = map[prefixKey]prefixRev{}
	}
	c.prefixRevs[key] = prefixRev{mark: mark, rev: rev}
	return rev
}

// prefixKey names the records of a branch up to a fork point; prefixRev is their latest
// revision, computed when the branch was at revision mark.
type prefixKey struct {
	branchID string
	cutoff   int64
}

type prefixRev struct{ mark, rev int64 }

// view returns the branch's view when it was built under key, or nil.
func (c *conversationRecords) view(branchID, key string) *lineageView {
	c.viewMu.Lock()
	defer c.viewMu.Unlock()
	if v := c.views[branchID]; v != nil && v.key == key {
		return v
	}
	return nil
}

func (c *conversationRecords) keepView(branchID string, v *lineageView) {
	c.viewMu.Lock()
	defer c.viewMu.Unlock()
	if c.views == nil {
		c.views = map[string]*lineageView{}
	}
	c.views[branchID] = v
}

// lineageCandidates turns the records of a lineage, as of asOf, into candidates: each call
// with its outcome (its latest artifact in the lineage) and its retries (calls in the
// lineage naming it in retryOf, or identical repeats later in the same run), each memory
// with the eligible memories that supersede or contradict it, run status and promotion as
// of asOf; plus the conversation-visible memories of other branches. It also sums the
// baseline tokens of naive replay, and returns the latest time stamped on the records it
// read (whether asOf sees them or not), their promotions and their owner runs' ends: the
// candidates are the same for any asOf from then on.
func lineageCandidates(c *conversationRecords, lin lineage, asOf time.Time, names map[string]string) (cands []model.Candidate, baseline int, latest time.Time) {
	visible := func(r *cachedRecord) bool {
		for _, t := range []*time.Time{&r.recordedAt, r.promotedAt, r.ownerRun.endRecorded()} {
			if t != nil && t.After(latest) {
				latest = *t
			}
		}
		return !r.recordedAt.After(asOf)
	}
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
	// promote fills promotion as of the snapshot; runOwnership the owner run's parent and
	// status as of the snapshot.
	promote := func(cand *model.Candidate, r *cachedRecord) {
		cand.Promoted = r.promotedAt != nil && !r.promotedAt.After(asOf)
		cand.PromotedTo = r.promotedTo
	}
	runOwnership := func(cand *model.Candidate, r *cachedRecord) runState {
		st := r.ownerRun.asOf(asOf)
		cand.OwnerRunParentID, cand.OwnerRunStatus = st.parentRunID, st.status
		return st
	}

	n := 0
	for _, list := range byKind {
		n += len(list)
	}
	cands = make([]model.Candidate, 0, n+len(others))
	for _, r := range byKind[recMessage] {
		m := r.base
		m.Depth, m.Message.ParticipantName = depth[r.branchID], names[m.OwnerParticipantID]
		cands = append(cands, m)
		baseline += r.baseline
	}
	// A call's outcome is its latest artifact in the lineage.
	outcomes := map[string][]*cachedRecord{}
	for _, r := range byKind[recArtifact] {
		outcomes[r.base.Artifact.ToolCallID] = append(outcomes[r.base.Artifact.ToolCallID], r)
	}
	retries := retriesOf(byKind[recCall])
	for _, r := range byKind[recCall] {
		call := r.base
		call.Depth, call.Call.RetriedBy = depth[r.branchID], retries[r.id]
		if outs := outcomes[r.id]; len(outs) > 0 {
			for i := len(outs) - 1; i >= 0; i-- {
				call.Call.ArtifactIDs = append(call.Call.ArtifactIDs, outs[i].id)
			}
			last := outs[len(outs)-1]
			call.Tool.Status, call.Tool.ErrorCode, call.Tool.ErrorMessage = last.base.Tool.Status, last.base.Tool.ErrorCode, last.base.Tool.ErrorMessage
			call.Call.Retryable, call.Visibility = last.retryable, last.base.Visibility
			call.PrivacyClass, call.SharedWith = last.base.PrivacyClass, last.base.SharedWith
			promote(&call, last)
		}
		runOwnership(&call, r)
		cands = append(cands, call)
		baseline += r.baseline
	}
	for _, r := range byKind[recArtifact] {
		a := r.base
		a.Depth = depth[r.branchID]
		runOwnership(&a, r)
		promote(&a, r)
		cands = append(cands, a)
		baseline += r.baseline
	}
	memories := append(byKind[recMemory], others...)
	supersededBy, conflicts := map[string][]string{}, map[string][]string{}
	for _, r := range memories {
		for _, old := range r.supersedes {
			supersededBy[old] = append(supersededBy[old], r.id)
		}
		for _, other := range r.conflictsWith {
			conflicts[r.id] = appendNew(conflicts[r.id], other)
			conflicts[other] = appendNew(conflicts[other], r.id)
		}
	}
	for _, r := range memories {
		m := r.base
		m.Depth, m.InLineage = depth[r.branchID], true
		if !lin.contains(r.branchID, r.seq) {
			m.Depth, m.InLineage = -1, false
		}
		owner := runOwnership(&m, r)
		promote(&m, r)
		if ended := owner.endedAt; ended != nil && m.Memory.FreshnessClass == "session" && m.Memory.StaleAfter == nil {
			// A session memory lasts until the run that observed it ends.
			m.Memory.StaleAfter = ended
		}
		m.Memory.SupersededBy, m.Memory.ConflictsWith = sorted(supersededBy[r.id]), sorted(conflicts[r.id])
		cands = append(cands, m)
	}
	for _, r := range byKind[recCheckpoint] {
		cp := r.base
		cp.Depth = depth[r.branchID]
		cands = append(cands, cp)
	}
	for _, r := range byKind[recSkills] {
		sk := r.base
		sk.Depth = depth[r.branchID]
		cands = append(cands, sk)
	}
	return cands, baseline, latest
}

// excludedRecords counts the records the lineage leaves out as of the snapshot: other
// branches' records and a lineage branch's records after its fork point, but not the
// conversation-visible memories that every branch sees (they are candidates), nor
// checkpoints and skill states (run state, not records a model would be shown). With refs
// it also lists their ids in branch and seq order, so that a traced assembly's
// omittedRefs and its branch_ineligible count name the same records. Without refs it counts
// from each branch's tally, so that an untraced assembly does not walk the conversation.
func excludedRecords(c *conversationRecords, lin lineage, asOf time.Time, refs bool) (int, []string) {
	branches := make([]string, 0, len(c.byBranch))
	for id := range c.byBranch {
		branches = append(branches, id)
	}
	if refs {
		sort.Strings(branches)
	} else {
		c.viewMu.Lock()
		defer c.viewMu.Unlock()
	}
	n := 0
	var ids []string
	for _, id := range branches {
		if len(lin.Branches) > 0 && id == lin.Branches[0].BranchID {
			continue // the lineage's own branch: its records are in the lineage or not yet seen
		}
		cutoff, in := lin.cutoff(id)
		list := c.byBranch[id]
		if !refs {
			if t := c.tally(id, list); !t.latest.After(asOf) {
				from := 0
				if in {
					from = sort.Search(len(list), func(i int) bool { return list[i].seq > cutoff })
				}
				n += int(t.prefix[len(list)] - t.prefix[from])
				continue
			}
		}
		for _, r := range list {
			if in && r.seq <= cutoff || !countsAsExcluded(r) || r.recordedAt.After(asOf) {
				continue
			}
			n++
			if refs {
				ids = append(ids, r.id)
			}
		}
	}
	return n, ids
}

// countsAsExcluded reports whether a record outside the lineage counts as left out: not
// run state, and not a conversation-visible memory (a candidate on every branch).
func countsAsExcluded(r *cachedRecord) bool {
	return r.kind != recCheckpoint && r.kind != recSkills && !r.shared
}

// branchTally counts a branch's records that count as excluded, by position (prefix[i]
// among its first i records), with the latest time one was recorded.
type branchTally struct {
	last   *cachedRecord
	prefix []int32
	latest time.Time
}

// tally returns the branch's tally, extended over records appended since, rebuilt when a
// record was inserted before the end. The caller holds c.mu (to read) and c.viewMu.
func (c *conversationRecords) tally(id string, list []*cachedRecord) *branchTally {
	if c.tallies == nil {
		c.tallies = map[string]*branchTally{}
	}
	t := c.tallies[id]
	if t != nil && len(t.prefix) == len(list)+1 && (len(list) == 0 || list[len(list)-1] == t.last) {
		return t
	}
	from := 0
	if t != nil && len(t.prefix)-1 < len(list) && len(t.prefix) > 1 && list[len(t.prefix)-2] == t.last {
		from = len(t.prefix) - 1 // only appended since
	} else {
		t = &branchTally{prefix: make([]int32, 1, len(list)+1)}
	}
	for _, r := range list[from:] {
		k := t.prefix[len(t.prefix)-1]
		if countsAsExcluded(r) {
			k++
		}
		t.prefix = append(t.prefix, k)
		if r.recordedAt.After(t.latest) {
			t.latest = r.recordedAt
		}
	}
	if len(list) > 0 {
		t.last = list[len(list)-1]
	}
	c.tallies[id] = t
	return t
}

// runState is a run's parent, and its status and end as of a snapshot.
type runState struct {
	parentRunID, status string
	endedAt             *time.Time
}

// endRecorded is when the run's end was recorded: nil for no run or a run not ended.
func (r *cachedRun) endRecorded() *time.Time {
	if r == nil {
		return nil
	}
	return r.endRecordedAt
}

// asOf is the run's state as of a snapshot time; the zero state for no run or a run not
// (yet) read.
func (r *cachedRun) asOf(t time.Time) runState {
	if r == nil || !r.known {
		return runState{}
	}
	st := runState{parentRunID: r.parentRunID, status: model.RunStatusRunning}
	if r.endRecordedAt != nil && !r.endRecordedAt.After(t) {
		st.status, st.endedAt = r.status, r.endedAt
	}
	return st
}

// retriesOf finds, for each call of a lineage, the later calls of the lineage that retry it:
// those naming it in retryOf, and identical repeats (same run, same tool, byte-identical
// arguments) later in the same run.
func retriesOf(calls []*cachedRecord) map[string][]string {
	out := map[string][]string{}
	same := map[string][]*cachedRecord{}
	for _, r := range calls {
		if of := r.base.Call.RetryOf; of != "" {
			out[of] = appendNew(out[of], r.id)
		}
		if sha := r.argumentsSha256; sha != "" {
			key := r.base.OwnerRunID + "\x00" + r.base.Tool.Name + "\x00" + sha
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

// baseCandidate builds the part of a record's candidate that depends on the record alone:
// not its depth in a lineage, nor run status, promotion or a call's outcome, which depend on
// the lineage and the snapshot time.
func baseCandidate(kind string, p props) model.Candidate {
	c := model.Candidate{ID: p.str("id"), BranchID: p.str("branchId"), Seq: p.i64("seq"), InLineage: true,
		CreatedAt: p.time("createdAt")}
	switch kind {
	case recMessage:
		c.Type, c.Visibility = model.TypeMessage, model.Visibility(p.str("visibility"))
		c.OwnerParticipantID, c.OwnerRunID = p.str("participantId"), p.str("runId")
		c.Message = model.MessageFacts{Role: p.str("role"), Content: p.str("content")}
	case recCall:
		c.Type, c.OwnerRunID, c.OwnerParticipantID = model.TypeToolCall, p.str("runId"), p.str("participantId")
		c.Tool = model.ToolFacts{Name: p.str("tool"), Status: model.ToolPending}
		c.Call = model.CallFacts{CallID: p.str("callId"), Arguments: p.str("arguments"), ArgumentsRef: p.str("argumentsRef"),
			RetryOf: p.str("retryOf")}
		// A call with no outcome yet has no artifact to carry its visibility: it is the
		// requesting participant's own state.
		c.Visibility = model.VisibilityParticipant
	case recArtifact:
		c.Type = model.TypeArtifact
		c.Tool = model.ToolFacts{Name: p.str("tool"), Status: model.ToolStatus(p.str("status")),
			ErrorCode: p.str("errorCode"), ErrorMessage: p.str("errorMessage")}
		c.Artifact = model.ArtifactFacts{ToolCallID: p.str("toolCallId"), ResultBytes: p.i64("resultBytes"), ArgsBytes: p.i64("argsBytes")}
		ownership(&c, p)
	case recMemory:
		c.Type = model.TypeMemory
		c.Memory = model.MemoryFacts{Report: p.str("kind") == model.MemoryKindReport, Summary: p.str("summary"),
			SafeSummary: p.str("safeSummary"), Data: p.str("data"), Confidence: p.float("confidence"),
			FreshnessClass: p.str("freshnessClass"), ObservedAt: p.time("observedAt"), StaleAfter: p.timePtr("staleAfter"),
			RevalidateWith: p.strs("revalidateWith"), SourceArtifactIDs: p.strs("sourceArtifactIds"), LiveSourceIDs: p.strs("liveSources")}
		ownership(&c, p)
	case recCheckpoint:
		c.Type, c.RunState = model.TypeCheckpoint, model.RunStateFacts{RunID: p.str("runId"), State: p.str("state")}
	case recSkills:
		c.Type, c.RunState = model.TypeSkills, model.RunStateFacts{RunID: p.str("runId"), LoadedSkills: p.strs("loadedSkills"),
			ActiveProfiles: p.strs("activeProfiles"), DirectTools: p.strs("directTools")}
	}
	return c
}

// ownership fills the fields every tool-derived record carries.
func ownership(c *model.Candidate, p props) {
	c.Visibility = model.Visibility(p.str("visibility"))
	c.OwnerParticipantID = p.str("ownerParticipantId")
	c.OwnerRunID = p.str("ownerRunId")
	c.SharedWith = p.strs("sharedWith")
	c.PrivacyClass = p.str("privacyClass")
}
