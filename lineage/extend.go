package lineage

import (
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// An agent writes between its model calls, and every write on a lineage changes its view's
// key: building the view whole again costs as much as the history is long. Most writes
// only add records at the end of the active branch (a message, a tool call, its result and
// memory) or change a few records in place (a call whose result arrived, the records of a
// run that ended, a promotion). extend builds the new view from the previous one: the
// unchanged candidates copied, the added ones appended to their groups, the changed ones
// built again from their records by the same builder a whole build uses; a call that
// retries or repeats earlier ones rebuilds them too, since it joins their lists of retries.
// Whatever could change a candidate it does not rebuild (a supersession or a conflict,
// which adds to the other memory's list; a write on an ancestor; a conversation-visible
// memory) makes it give up, and the view is built whole. TestExtendedViewsMatchWholeBuilds
// compares the two over random writes.

// maxExtension bounds the records an extension builds again; beyond it the view is built
// whole.
const maxExtension = 1024

// extend builds the lineage's view as of asOf from old, the branch's previous view, or
// returns nil when it cannot. The caller holds RLock.
func (c *Conversation) extend(old *view, lin Lineage, asOf time.Time, names map[string]string) *view {
	if old == nil || old.id == "" || old.branches == nil || old.logged > len(c.log) || old.runs > len(c.runLog) ||
		old.sharedGen != c.sharedGen || old.participants != len(names) || !slices.Equal(old.branches, lin.Branches) {
		return nil
	}
	for i := 1; i < len(lin.Branches); i++ {
		if c.seenRev(lin.Branches[i]) != old.revs[i] {
			return nil
		}
	}
	log, runs := c.log[old.logged:], c.runLog[old.runs:]
	if len(log)+len(runs) > maxExtension {
		return nil
	}
	active := lin.Branches[0].BranchID
	b := newBuilder(lin, asOf, names)
	b.latest = old.latest
	baseline, lastSeq := old.baseline, old.lastSeq
	added, changed := map[*Record]bool{}, map[*Record]bool{}
	// retried are the calls whose lists of retries the calls written join (retried).
	b.retried = map[*Record]bool{}
	var appended []*Record
	for _, m := range log {
		r := m.r
		if !lin.Contains(r.BranchID, r.Seq) {
			if r.shared {
				return nil
			}
			continue // another branch's, or an ancestor's past its fork point
		}
		if r.BranchID != active {
			return nil
		}
		if m.added {
			if r.Seq <= old.lastSeq || added[r] {
				return nil
			}
			added[r] = true
			appended = append(appended, r)
			lastSeq = max(lastSeq, r.Seq)
		} else {
			changed[r] = true
		}
		if inBaseline(r.Kind) {
			baseline += m.baseline - m.previous
		}
		switch r.Kind {
		case model.TypeToolCall:
			for _, t := range c.retried(r, lin) {
				b.retried[t], changed[t] = true, true
			}
		case model.TypeMemory:
			if len(r.Supersedes) > 0 || len(r.ConflictsWith) > 0 {
				return nil
			}
		case model.TypeArtifact:
			if call := c.byID[r.Base.Artifact.ToolCallID]; call != nil && lin.Contains(call.BranchID, call.Seq) {
				changed[call] = true
			}
		}
	}
	for _, id := range runs {
		owned := c.byRun[id]
		if len(owned) > maxExtension {
			return nil
		}
		for _, r := range owned {
			switch {
			case lin.Contains(r.BranchID, r.Seq):
				changed[r] = true
			case r.shared:
				return nil
			}
		}
	}
	for r := range added {
		delete(changed, r)
	}
	if len(changed)+len(appended) > maxExtension {
		return nil
	}
	for _, r := range appended {
		if !b.visible(r) {
			return nil
		}
	}
	for r := range changed {
		if !b.visible(r) {
			return nil
		}
	}
	if b.latest.After(asOf) {
		return nil
	}

	// The added records go at the ends of their groups, in seq order.
	var adds [groups][]*Record
	for _, r := range appended {
		g := groupOf(r.Kind)
		adds[g] = append(adds[g], r)
	}
	var shift [groups]int
	n := len(old.candidates) + len(appended)
	cands := make([]*model.Candidate, 0, n)
	// Where each candidate was in the view extended (-1 for one added), and which were built
	// anew: what a judgement of the old view may keep (policy.JudgeAgain).
	places, rebuilt := make([]int, 0, n), make([]bool, n)
	built := make([]model.Candidate, 0, len(appended)+len(changed))
	var bounds groupBounds
	from, moved := 0, 0
	for g := range groups {
		shift[g] = moved
		cands = append(cands, old.candidates[from:old.bounds[g]]...)
		for k := from; k < old.bounds[g]; k++ {
			places = append(places, k)
		}
		sort.Slice(adds[g], func(i, j int) bool { return adds[g][i].Seq < adds[g][j].Seq })
		for _, r := range adds[g] {
			built = append(built, c.build(b, r, lin, nil))
			rebuilt[len(cands)] = true
			cands, places = append(cands, &built[len(built)-1]), append(places, -1)
		}
		moved += len(adds[g])
		from, bounds[g] = old.bounds[g], len(cands)
	}
	// The view holds what its predecessor held (the values it points at stay), its own
	// pointers and the values it built.
	bytes := old.bytes - int64(cap(old.candidates))*8 + int64(cap(cands))*8 + int64(cap(built))*candidateSize +
		int64(cap(places))*8 + int64(n)
	for _, c := range built {
		bytes += candidateLists(&c)
	}
	for r := range changed {
		i := old.locate(r, b.depth[r.BranchID])
		if i < 0 {
			return nil
		}
		built = append(built, c.build(b, r, lin, old.candidates[i]))
		i += shift[groupOf(r.Kind)]
		cands[i], rebuilt[i] = &built[len(built)-1], true
		bytes += candidateLists(&built[len(built)-1])
	}
	v := &view{candidates: cands, baseline: baseline, latest: b.latest, bounds: bounds,
		branches: old.branches, revs: old.revs, sharedGen: old.sharedGen, participants: old.participants,
		logged: len(c.log), runs: len(c.runLog), lastSeq: lastSeq, parent: old.id, places: places, rebuilt: rebuilt, bytes: bytes}
	v.id = c.id + "/" + active + "/" + strconv.FormatInt(viewSeq.Add(1), 10)
	return v
}

// build builds a record's candidate in the lineage. prev is its candidate in the view being
// extended (nil for a record added since): what other records give it (the calls that
// retry a call, the memories that supersede or contradict a memory) is taken from it, since
// extend gives up on any write that changes those, except for the calls a call written
// retries (b.retried), whose retries are listed again.
func (c *Conversation) build(b *builder, r *Record, lin Lineage, prev *model.Candidate) model.Candidate {
	switch r.Kind {
	case model.TypeMessage:
		return b.message(r)
	case model.TypeToolCall:
		var retriedBy []string
		switch {
		case b.retried[r]:
			retriedBy = c.retriesOf(b, r, lin)
		case prev != nil:
			retriedBy = prev.Call.RetriedBy
		}
		return b.call(r, c.lineageOutcomes(b, r.ID, lin), retriedBy)
	case model.TypeArtifact:
		return b.artifact(r)
	case model.TypeMemory:
		var supersededBy, conflicts []string
		if prev != nil {
			supersededBy, conflicts = prev.Memory.SupersededBy, prev.Memory.ConflictsWith
		}
		return b.memory(r, supersededBy, conflicts)
	}
	return b.runState(r)
}

// lineageOutcomes lists a call's artifacts in the lineage that asOf sees, in lineage order.
func (c *Conversation) lineageOutcomes(b *builder, callID string, lin Lineage) []*Record {
	var outs []*Record
	for _, r := range c.outcomes[callID] {
		if lin.Contains(r.BranchID, r.Seq) && b.visible(r) {
			outs = append(outs, r)
		}
	}
	b.sortLineage(outs)
	return outs
}

// retried returns the calls of the lineage whose retries a call written on the active
// branch joins (retriesOf): the call it names in retryOf, and the identical calls (same
// run, tool and arguments) before it.
func (c *Conversation) retried(r *Record, lin Lineage) []*Record {
	var out []*Record
	if t := c.byID[r.Base.Call.RetryOf]; t != nil && t.Kind == model.TypeToolCall && lin.Contains(t.BranchID, t.Seq) {
		out = append(out, t)
	}
	if key := repeatKey(r); key != "" {
		for _, t := range c.repeats[key] {
			if t != r && t.Seq < r.Seq && lin.Contains(t.BranchID, t.Seq) {
				out = append(out, t)
			}
		}
	}
	return out
}

// retriesOf lists the calls of the lineage that retry x, as a whole build does (retriesOf
// in select.go): those naming it in retryOf, then its identical repeats after it, each in
// lineage order.
func (c *Conversation) retriesOf(b *builder, x *Record, lin Lineage) []string {
	var retries, repeats []*Record
	for _, r := range c.retriers[x.ID] {
		if lin.Contains(r.BranchID, r.Seq) && b.visible(r) {
			retries = append(retries, r)
		}
	}
	if key := repeatKey(x); key != "" {
		for _, r := range c.repeats[key] {
			if r.Seq > x.Seq && b.depth[r.BranchID] <= b.depth[x.BranchID] && lin.Contains(r.BranchID, r.Seq) && b.visible(r) {
				repeats = append(repeats, r)
			}
		}
	}
	var out []string
	for _, list := range [][]*Record{retries, repeats} {
		b.sortLineage(list)
		for _, r := range list {
			out = appendNew(out, r.ID)
		}
	}
	return out
}

// locate returns the index of a lineage record's candidate in the view, or -1. Each group
// is in lineage order: ancestors first (greater depth), then by seq.
func (v *view) locate(r *Record, depth int64) int {
	g := groupOf(r.Kind)
	lo := 0
	if g > 0 {
		lo = v.bounds[g-1]
	}
	group := v.candidates[lo:v.bounds[g]]
	i := sort.Search(len(group), func(i int) bool {
		c := group[i]
		return c.Depth < depth || c.Depth == depth && c.Seq >= r.Seq
	})
	if i == len(group) || group[i].ID != r.ID {
		return -1
	}
	return lo + i
}

// inBaseline reports whether naive history replay sends records of a kind.
func inBaseline(kind model.RecordType) bool {
	return kind == model.TypeMessage || kind == model.TypeToolCall || kind == model.TypeArtifact
}
