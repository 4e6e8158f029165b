package lineage

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// Select fills snap with what the lineage of req.BranchID sees of the copy as of req.AsOf:
// the lineage's ids, the last seq of the branch's own records, the candidates
// (lineageCandidates, or the lineage's current view when the snapshot sees the whole copy)
// with their baseline tokens, and how many records of the conversation lie outside the
// lineage. names maps the conversation's participants to their names. shared reports that
// the candidates were a view built before. The caller holds RLock.
func (c *Conversation) Select(lin Lineage, req model.AssemblyRequest, opts model.SnapshotOptions, names map[string]string, snap *model.Snapshot) (shared bool, err error) {
	snap.Lineage = lin.IDs()
	if own := c.byBranch[req.BranchID]; len(own) > 0 {
		snap.SeenSeq = own[len(own)-1].Seq
	}
	if req.SeenSeq > 0 && len(lin.Branches) > 0 {
		// What the assembly being replayed saw of its own branch, and nothing written after.
		lin.Branches[0].Cutoff = min(lin.Branches[0].Cutoff, req.SeenSeq)
	}

	visible := func(r *Record) bool { return !r.RecordedAt.After(req.AsOf) }
	// An exact artifact the conversation does not hold (as of the snapshot) is a mistake
	// of the request, not a request for nothing.
	for _, id := range req.ExactArtifactIDs {
		if r, ok := c.byID[id]; !ok || r.Kind != model.TypeArtifact || !visible(r) {
			return false, &model.Error{Kind: model.KindNotFound, Field: "exactArtifactIds",
				Message: fmt.Sprintf("artifact %q is not in the conversation of branch %q", id, req.BranchID)}
		}
	}
	// A snapshot that sees everything the lineage's view was built from shares the view
	// with every other such snapshot until a write changes it. Records recorded after asOf
	// elsewhere in the conversation (a sibling branch, an ancestor past the fork point) do
	// not matter: under concurrent writes, an assembly's asOf is often older than the copy.
	var v *view
	key := ""
	if !opts.Fresh && req.SeenSeq == 0 {
		key = c.viewKey(lin, len(names))
		if kept := c.view(req.BranchID, key); kept != nil && !kept.latest.After(req.AsOf) {
			v, shared = kept, true
		} else if v = c.extend(c.view(req.BranchID, ""), lin, req.AsOf, names); v != nil {
			v.key = key
			c.keepView(req.BranchID, v)
		}
	}
	if v == nil {
		v = &view{key: key}
		v.candidates, v.baseline, v.latest, v.bounds = lineageCandidates(c, lin, req.AsOf, names)
		// Built from nothing later than asOf, the view is what any later snapshot of the
		// same copy sees: the lineage's current view.
		if key != "" && !v.latest.After(req.AsOf) {
			v.id = c.id + "/" + req.BranchID + "/" + strconv.FormatInt(viewSeq.Add(1), 10)
			c.builtFrom(v, lin, len(names))
			v.bytes = v.size()
			c.keepView(req.BranchID, v)
		}
	}
	snap.Candidates, snap.BaselineTokens, snap.View = v.candidates, v.baseline, v.id
	snap.ViewParent, snap.ViewPlaces, snap.Rebuilt = v.parent, v.places, v.rebuilt
	snap.KindsInLineageOrder = true
	snap.StructurallyExcluded, snap.ExcludedRefs = excludedRecords(c, lin, req.AsOf, req.Trace)
	return shared, nil
}

// view is the candidates of one branch's lineage built from records that the
// snapshot sees whole (asOf at or after the latest time stamped on any of them). Assemblies
// of the lineage share it, read-only, until a write reaches one of the lineage's branches, a
// conversation-visible memory, a run or the participants.
type view struct {
	key string
	// id names the view to the assembler, which keeps its judgements of the view.
	id string
	// candidates point at values no view changes: an extension points at its
	// predecessor's where they hold (extend).
	candidates []*model.Candidate
	baseline   int
	// latest is the latest time stamped on anything the view was built from (lineageCandidates):
	// a snapshot as of that time or later sees the same candidates.
	latest time.Time
	// bounds ends each group of candidates (groupOf).
	bounds groupBounds
	// What the view was built from, for extend: the lineage with the revision of what it
	// saw of each branch (seenRev), the changes to conversation-visible memories, the
	// number of participants, how far the copy's logs went, and the last seq of the active
	// branch among the candidates.
	branches     []Branch
	revs         []int64
	sharedGen    int64
	participants int
	logged, runs int
	lastSeq      int64
	// parent is the view this one extends, places where each candidate was in it (-1 for
	// one added) and rebuilt which candidates it built anew (added or changed); empty for a
	// view built whole.
	parent  string
	places  []int
	rebuilt []bool
	// bytes is the heap it holds (size, or what extend adds to its predecessor's), counted
	// when it is kept.
	bytes int64
}

// builtFrom notes what a view built whole was built from, for extend.
func (c *Conversation) builtFrom(v *view, lin Lineage, participants int) {
	v.branches = slices.Clone(lin.Branches)
	v.revs = make([]int64, len(lin.Branches))
	for i, br := range lin.Branches {
		v.revs[i] = c.seenRev(br)
	}
	v.sharedGen, v.participants = c.sharedGen, participants
	v.logged, v.runs = len(c.log), len(c.runLog)
	if len(lin.Branches) > 0 {
		if own := c.byBranch[lin.Branches[0].BranchID]; len(own) > 0 {
			v.lastSeq = own[len(own)-1].Seq
		}
	}
}

var viewSeq atomic.Int64

// viewKey says what a lineage view depends on: the lineage's branches with their depths,
// fork points and the revisions of what the lineage sees of them, the conversation-visible
// memories, the runs and the number of participants.
func (c *Conversation) viewKey(lin Lineage, participants int) string {
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
func (c *Conversation) seenRev(br Branch) int64 {
	mark := c.marks[br.BranchID]
	if br.Cutoff == OpenEnded {
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
		rev = max(rev, r.Rev)
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

// view returns the branch's view when it was built under key (any key: ""), or nil.
func (c *Conversation) view(branchID, key string) *view {
	c.viewMu.Lock()
	defer c.viewMu.Unlock()
	if v := c.views[branchID]; v != nil && (key == "" || v.key == key) {
		return v
	}
	return nil
}

func (c *Conversation) keepView(branchID string, v *view) {
	c.viewMu.Lock()
	defer c.viewMu.Unlock()
	if c.views == nil {
		c.views = map[string]*view{}
	}
	if old := c.views[branchID]; old != nil {
		c.bytes.Add(-old.bytes)
	}
	c.bytes.Add(v.bytes)
	c.views[branchID] = v
}

// lineageCandidates turns the records of a lineage, as of asOf, into candidates: each call
// with its outcome (its latest artifact in the lineage) and its retries (calls in the
// lineage naming it in retryOf, or identical repeats later in the same run), each memory
// with the eligible memories that supersede or contradict it, run status and promotion as
// of asOf; plus the conversation-visible memories of other branches. It also sums the
// baseline tokens of naive replay, and returns the latest time stamped on the records it
// read (whether asOf sees them or not), their promotions and their owner runs' ends: the
// candidates are the same for any asOf from then on. The candidates come in groups, by
// kind (groupOf), each in lineage order; bounds ends each group.
func lineageCandidates(c *Conversation, lin Lineage, asOf time.Time, names map[string]string) (ptrs []*model.Candidate, baseline int, latest time.Time, bounds groupBounds) {
	b := newBuilder(lin, asOf, names)
	byKind := map[model.RecordType][]*Record{}
	for i := len(lin.Branches) - 1; i >= 0; i-- {
		br := lin.Branches[i]
		for _, r := range c.upTo(br.BranchID, br.Cutoff) {
			if b.visible(r) {
				byKind[r.Kind] = append(byKind[r.Kind], r)
			}
		}
	}
	var others []*Record
	for _, r := range c.shared {
		if !lin.Contains(r.BranchID, r.Seq) && b.visible(r) {
			others = append(others, r)
		}
	}
	sort.Slice(others, func(i, j int) bool {
		if others[i].Seq != others[j].Seq {
			return others[i].Seq < others[j].Seq
		}
		return others[i].BranchID < others[j].BranchID
	})

	n := 0
	for _, list := range byKind {
		n += len(list)
	}
	cands := make([]model.Candidate, 0, n+len(others))
	for _, r := range byKind[model.TypeMessage] {
		cands = append(cands, b.message(r))
		baseline += r.Baseline
	}
	bounds[groupMessages] = len(cands)
	// A call's outcome is its latest artifact in the lineage.
	outcomes := map[string][]*Record{}
	for _, r := range byKind[model.TypeArtifact] {
		outcomes[r.Base.Artifact.ToolCallID] = append(outcomes[r.Base.Artifact.ToolCallID], r)
	}
	retries := retriesOf(byKind[model.TypeToolCall])
	for _, r := range byKind[model.TypeToolCall] {
		cands = append(cands, b.call(r, outcomes[r.ID], retries[r.ID]))
		baseline += r.Baseline
	}
	bounds[groupCalls] = len(cands)
	for _, r := range byKind[model.TypeArtifact] {
		cands = append(cands, b.artifact(r))
		baseline += r.Baseline
	}
	bounds[groupArtifacts] = len(cands)
	memories := append(byKind[model.TypeMemory], others...)
	supersededBy, conflicts := map[string][]string{}, map[string][]string{}
	for _, r := range memories {
		for _, old := range r.Supersedes {
			supersededBy[old] = append(supersededBy[old], r.ID)
		}
		for _, other := range r.ConflictsWith {
			conflicts[r.ID] = appendNew(conflicts[r.ID], other)
			conflicts[other] = appendNew(conflicts[other], r.ID)
		}
	}
	for _, r := range memories {
		cands = append(cands, b.memory(r, sorted(supersededBy[r.ID]), sorted(conflicts[r.ID])))
	}
	bounds[groupMemories] = bounds[groupArtifacts] + len(byKind[model.TypeMemory])
	bounds[groupShared] = len(cands)
	for _, r := range byKind[model.TypeCheckpoint] {
		cands = append(cands, b.runState(r))
	}
	bounds[groupCheckpoints] = len(cands)
	for _, r := range byKind[model.TypeSkills] {
		cands = append(cands, b.runState(r))
	}
	bounds[groupSkills] = len(cands)
	return model.CandidatePointers(cands), baseline, b.latest, bounds
}

// The groups of a view's candidates, in their order: each kind in lineage order, the
// lineage's memories before the conversation-visible memories of other branches.
const (
	groupMessages = iota
	groupCalls
	groupArtifacts
	groupMemories
	groupShared
	groupCheckpoints
	groupSkills
	groups
)

// groupBounds ends each group of a view's candidates: group g is [bounds[g-1], bounds[g]).
type groupBounds [groups]int

// groupOf is the group of a lineage record of kind.
func groupOf(kind model.RecordType) int {
	if g := kind.Ordinal(); g >= 0 && g <= groupMemories {
		return g
	} else if g > groupMemories {
		return g + 1 // after the shared memories' group
	}
	return groupSkills
}

// builder builds the candidates of one lineage as of asOf, one record at a time, noting the
// latest time stamped on the records it saw (visible).
type builder struct {
	lin    Lineage
	asOf   time.Time
	names  map[string]string
	depth  map[string]int64
	latest time.Time
	// retried are the calls whose retries an extension lists again (Conversation.extend).
	retried map[*Record]bool
}

// sortLineage sorts records of the lineage in lineage order: ancestors first (greater
// depth), then by seq.
func (b *builder) sortLineage(rs []*Record) {
	sort.Slice(rs, func(i, j int) bool {
		di, dj := b.depth[rs[i].BranchID], b.depth[rs[j].BranchID]
		if di != dj {
			return di > dj
		}
		return rs[i].Seq < rs[j].Seq
	})
}

func newBuilder(lin Lineage, asOf time.Time, names map[string]string) *builder {
	b := &builder{lin: lin, asOf: asOf, names: names, depth: make(map[string]int64, len(lin.Branches))}
	for _, br := range lin.Branches {
		b.depth[br.BranchID] = br.Depth
	}
	return b
}

// visible reports whether asOf sees a record, and notes its times: when it was recorded,
// promoted, and when its owner run's end was.
func (b *builder) visible(r *Record) bool {
	for _, t := range []*time.Time{&r.RecordedAt, r.PromotedAt, r.ownerRun.endRecorded()} {
		if t != nil && t.After(b.latest) {
			b.latest = *t
		}
	}
	return !r.RecordedAt.After(b.asOf)
}

// promote fills promotion as of the snapshot.
func (b *builder) promote(cand *model.Candidate, r *Record) {
	cand.Promoted = r.PromotedAt != nil && !r.PromotedAt.After(b.asOf)
	cand.PromotedTo = r.PromotedTo
}

// runOwnership fills the owner run's parent and status as of the snapshot.
func (b *builder) runOwnership(cand *model.Candidate, r *Record) runState {
	st := r.ownerRun.asOf(b.asOf)
	cand.OwnerRunParentID, cand.OwnerRunStatus = st.parentRunID, st.status
	return st
}

func (b *builder) message(r *Record) model.Candidate {
	m := r.Base
	m.Depth, m.Message.ParticipantName = b.depth[r.BranchID], b.names[m.OwnerParticipantID]
	return m
}

// call builds a call with its outcomes (its artifacts in the lineage, in lineage order)
// and the calls that retry it.
func (b *builder) call(r *Record, outs []*Record, retriedBy []string) model.Candidate {
	call := r.Base
	call.Depth, call.Call.RetriedBy = b.depth[r.BranchID], retriedBy
	if len(outs) > 0 {
		for i := len(outs) - 1; i >= 0; i-- {
			call.Call.ArtifactIDs = append(call.Call.ArtifactIDs, outs[i].ID)
		}
		last := outs[len(outs)-1]
		call.Tool.Status, call.Tool.ErrorCode, call.Tool.ErrorMessage = last.Base.Tool.Status, last.Base.Tool.ErrorCode, last.Base.Tool.ErrorMessage
		call.Call.Retryable, call.Visibility = last.Retryable, last.Base.Visibility
		call.PrivacyClass, call.SharedWith = last.Base.PrivacyClass, last.Base.SharedWith
		b.promote(&call, last)
	}
	b.runOwnership(&call, r)
	return call
}

func (b *builder) artifact(r *Record) model.Candidate {
	a := r.Base
	a.Depth = b.depth[r.BranchID]
	b.runOwnership(&a, r)
	b.promote(&a, r)
	return a
}

// memory builds a memory of the lineage, or a conversation-visible one of another branch,
// with the eligible memories that supersede it and those it conflicts with (sorted).
func (b *builder) memory(r *Record, supersededBy, conflicts []string) model.Candidate {
	m := r.Base
	m.Depth, m.InLineage = b.depth[r.BranchID], true
	if !b.lin.Contains(r.BranchID, r.Seq) {
		m.Depth, m.InLineage = -1, false
	}
	owner := b.runOwnership(&m, r)
	b.promote(&m, r)
	if ended := owner.endedAt; ended != nil && m.Memory.FreshnessClass == "session" && m.Memory.StaleAfter == nil {
		// A session memory lasts until the run that observed it ends.
		m.Memory.StaleAfter = ended
	}
	m.Memory.SupersededBy, m.Memory.ConflictsWith = supersededBy, conflicts
	return m
}

// runState builds a checkpoint or a skill state.
func (b *builder) runState(r *Record) model.Candidate {
	cp := r.Base
	cp.Depth = b.depth[r.BranchID]
	return cp
}

// excludedRecords counts the records the lineage leaves out as of the snapshot: other
// branches' records and a lineage branch's records after its fork point, but not the
// conversation-visible memories that every branch sees (they are candidates), nor
// checkpoints and skill states (run state, not records a model would be shown). With refs
// it also lists their ids in branch and seq order, so that a traced assembly's
// omittedRefs and its branch_ineligible count name the same records. Without refs it counts
// from each branch's tally, so that an untraced assembly does not walk the conversation.
func excludedRecords(c *Conversation, lin Lineage, asOf time.Time, refs bool) (int, []string) {
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
		cutoff, in := lin.Cutoff(id)
		list := c.byBranch[id]
		if !refs {
			if t := c.tally(id, list); !t.latest.After(asOf) {
				from := 0
				if in {
					from = sort.Search(len(list), func(i int) bool { return list[i].Seq > cutoff })
				}
				n += int(t.prefix[len(list)] - t.prefix[from])
				continue
			}
		}
		for _, r := range list {
			if in && r.Seq <= cutoff || !countsAsExcluded(r) || r.RecordedAt.After(asOf) {
				continue
			}
			n++
			if refs {
				ids = append(ids, r.ID)
			}
		}
	}
	return n, ids
}

// countsAsExcluded reports whether a record outside the lineage counts as left out: not
// run state, and not a conversation-visible memory (a candidate on every branch).
func countsAsExcluded(r *Record) bool {
	return r.Kind != model.TypeCheckpoint && r.Kind != model.TypeSkills && !r.shared
}

// branchTally counts a branch's records that count as excluded, by position (prefix[i]
// among its first i records), with the latest time one was recorded.
type branchTally struct {
	last   *Record
	prefix []int32
	latest time.Time
}

// tally returns the branch's tally, extended over records appended since, rebuilt when a
// record was inserted before the end. The caller holds c.mu (to read) and c.viewMu.
func (c *Conversation) tally(id string, list []*Record) *branchTally {
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
		if r.RecordedAt.After(t.latest) {
			t.latest = r.RecordedAt
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
func (r *run) endRecorded() *time.Time {
	if r == nil {
		return nil
	}
	return r.endRecordedAt
}

// asOf is the run's state as of a snapshot time; the zero state for no run or a run not
// (yet) read.
func (r *run) asOf(t time.Time) runState {
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
func retriesOf(calls []*Record) map[string][]string {
	out := map[string][]string{}
	same := map[string][]*Record{}
	for _, r := range calls {
		if of := r.Base.Call.RetryOf; of != "" {
			out[of] = appendNew(out[of], r.ID)
		}
		if key := repeatKey(r); key != "" {
			same[key] = append(same[key], r)
		}
	}
	for _, group := range same {
		for i, r := range group {
			for _, later := range group[i+1:] {
				if later.Seq > r.Seq {
					out[r.ID] = appendNew(out[r.ID], later.ID)
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
