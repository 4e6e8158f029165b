package policy

import (
	"hash/maphash"
	"maps"
	"slices"
	"sync"

	"github.com/ctxgraph/ctxgraph/model"
)

// Context is what judging a snapshot's candidates worked out besides the verdicts: who may
// see each candidate, the conversation window, the message being answered, the run's latest
// checkpoint and skills, which artifacts visible memories stand in for, the latest round and
// which artifacts reached the rehydration byte budget. JudgeAgain starts from it to judge
// an extension of the same candidates.
type Context struct {
	visible    []bool
	window     map[string]bool
	current    string
	terms      map[string]bool
	checkpoint map[string]string
	skills     map[string]string
	// summarised counts the visible memories standing in for each artifact.
	summarised map[string]int
	latest     map[string]bool
	// byteUsers are the artifacts whose judgement reached the byte budget, in order.
	byteUsers []int
	// kinds is each candidate's record type; conflicts says whether a memory may name
	// another side of a conflict (false: none does), and sides holds the ids of the
	// memories that name another side or are named as one.
	kinds     []kind
	conflicts bool
	sides     map[string]bool
	// sidesAsBefore says sides are the context's it extends, none added since.
	sidesAsBefore bool
	// ids are the candidates' ids hashed (idHash), for finding a few of them by id
	// without reading every candidate (markIDs).
	ids []uint64
	// run is the run the candidates were judged for (Request.RunID); runs and parents hash
	// (runHash) each candidate's own run (its run state's, for checkpoints and skills) and
	// its run's parent: what JudgeAgain judges again for another run.
	run           string
	runs, parents []uint64
	// superseding holds the ids the memories name as superseding them, or more: a whole
	// judgement's, with those of the memories each extension judges again added.
	superseding *idSet
}

// idSet is a set of ids worked out by collect when it is first asked for, once, by
// whichever judgement sharing it asks first.
type idSet struct {
	once    sync.Once
	collect func() map[string]bool
	ids     map[string]bool
}

// get returns the set, worked out the first time.
func (s *idSet) get() map[string]bool {
	s.once.Do(func() { s.ids, s.collect = s.collect(), nil })
	return s.ids
}

// idSeed seeds idHash: one per process, so every judgement's hashes agree.
var idSeed = maphash.MakeSeed()

func idHash(id string) uint64 { return maphash.String(idSeed, id) }

// runHash is a run id hashed, never 0, which stands for no run.
func runHash(id string) uint64 {
	if id == "" {
		return 0
	}
	return idHash(id) | 1
}

// Side reports whether the memory of that id names another side of a conflict or is named
// as one, among the candidates judged.
func (c *Context) Side(id string) bool { return c.sides[id] }

// SidesAsBefore reports whether the context extends another (JudgeAgain) whose sides of
// conflicts are all there are: no candidate built anew names a side.
func (c *Context) SidesAsBefore() bool { return c.sidesAsBefore }

// Find returns where the candidates of those ids are among the candidates judged (their
// verdicts' order), for a few ids: a pass over the candidates' id hashes, side by side, that
// reads a verdict only when its hash is one of theirs. A bit per hash in a 4,096-bit filter
// turns away nearly every other candidate before the set of hashes is looked up. An id
// judged nowhere is absent.
func (c *Context) Find(verdicts []*Verdict, ids []string) map[string]int {
	out := make(map[string]int, len(ids))
	if len(ids) == 0 {
		return out
	}
	var filter [64]uint64
	hashes := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		h := idHash(id)
		hashes[h] = true
		filter[h>>58] |= 1 << (h & 63)
	}
	for i, h := range c.ids {
		if filter[h>>58]&(1<<(h&63)) != 0 && hashes[h] && slices.Contains(ids, verdicts[i].Candidate.ID) {
			out[verdicts[i].Candidate.ID] = i
		}
	}
	return out
}

// kind is a candidate's record type in one byte (kindOther, or 1 + its model ordinal): a
// pass over the candidates of one type reads their positions (judging.of), not every
// candidate.
type kind uint8

const (
	kindOther kind = iota
	kindMessage
	kindCall
	kindArtifact
	kindMemory
	kindCheckpoint
	kindSkills
	kindCount
)

func kindOf(t model.RecordType) kind { return kind(t.Ordinal() + 1) }

// JudgeCandidates applies every policy of DESIGN §4 to the candidates of one snapshot, in
// order: ownership / visibility, privacy and routing, provenance, supersession, freshness,
// recovery, rehydration, the conversation window and conflicts. It returns one verdict per
// candidate in the candidates' order. The budget is fitted afterwards (Fit).
func JudgeCandidates(v Version, req Request, cands []*model.Candidate) []*Verdict {
	verdicts, _ := JudgeWithContext(v, req, cands)
	return verdicts
}

// JudgeWithContext is JudgeCandidates, with what the judgement worked out (JudgeAgain).
func JudgeWithContext(v Version, req Request, cands []*model.Candidate) ([]*Verdict, *Context) {
	n := len(cands)
	j := &judging{v: v, req: req, cands: cands, verdicts: make([]*Verdict, n), backing: make([]Verdict, n),
		ctx: &Context{visible: make([]bool, n), kinds: make([]kind, n), ids: make([]uint64, n), sides: map[string]bool{},
			run: req.RunID, runs: make([]uint64, n), parents: make([]uint64, n)}, marked: make([]bool, n)}
	for i := range cands {
		// Ownership first: supersession needs to know which memories are eligible.
		j.start(i)
	}
	j.findWindow()
	memories := j.of(kindMemory)
	j.ctx.superseding = &idSet{collect: func() map[string]bool {
		named := map[string]bool{}
		for _, i := range memories {
			for _, id := range cands[i].Memory.SupersededBy {
				named[id] = true
			}
		}
		return named
	}}
	j.ctx.checkpoint, j.ctx.skills = latestRunState(req, cands, j.of(kindCheckpoint), j.of(kindSkills))
	// Artifacts that a visible memory stands in for: their raw bodies are not needed unless
	// the request names them.
	j.ctx.summarised = map[string]int{}
	for _, i := range j.of(kindMemory) {
		if j.ctx.visible[i] {
			for _, src := range cands[i].Memory.LiveSourceIDs {
				j.ctx.summarised[src]++
			}
		}
	}
	j.ctx.latest = latestRound(v, req, cands, j.of(kindCall), j.of(kindArtifact))
	j.judgeMarked(nil)
	return j.verdicts, j.ctx
}

// JudgeAgain judges an extension of candidates judged before: cands are the snapshot's,
// prev and pctx the verdicts and context of the candidates it extends, from the place of
// each candidate among those (-1 for one added), and rebuilt says which candidates were
// built anew (added or changed). A candidate that was not rebuilt keeps its verdict unless
// what it was judged by changed: the window or the message being answered (messages), the
// run's latest state (checkpoints and skills), the memories standing in for it, the latest
// round or its call's recovery (artifacts), the byte budget (those that reached it), the
// raw inclusion of a source or the eligibility of a memory superseding it (memories);
// memories in a conflict are judged again. req may be for another run than pctx's (the
// same participant and shape otherwise): the candidates of either run, and of their child
// runs, are then judged anew as if rebuilt. The verdicts are the ones JudgeCandidates gives
// (TestJudgeAgainIsJudge). now must lie where no memory of prev changes its staleness.
// A verdict that stays as it was is prev's own, shared: neither judgement changes a verdict
// once it is returned, so one judged again is copied first (judging.own).
func JudgeAgain(v Version, req Request, cands []*model.Candidate, prev []*Verdict, pctx *Context, from []int, rebuilt []bool) ([]*Verdict, *Context) {
	n := len(cands)
	j := &judging{v: v, req: req, cands: cands, verdicts: make([]*Verdict, n), marked: make([]bool, n), prev: prev, prevCtx: pctx, from: from,
		ctx: &Context{visible: make([]bool, n), kinds: make([]kind, n), ids: make([]uint64, n), terms: pctx.terms, summarised: pctx.summarised, latest: pctx.latest,
			window: pctx.window, current: pctx.current, checkpoint: pctx.checkpoint, skills: pctx.skills, conflicts: pctx.conflicts,
			sides: pctx.sides, sidesAsBefore: true, run: req.RunID, runs: make([]uint64, n), parents: make([]uint64, n),
			superseding: pctx.superseding}}
	if req.RunID != pctx.run {
		rebuilt = pctx.ofRuns(req.RunID, from, rebuilt)
	}
	messages, runState, memories := false, false, false
	for i := 0; i < n; {
		if !rebuilt[i] {
			// A run of candidates taken over in their order is copied at once: an extension
			// is a few long runs, and one bulk copy is far cheaper than one per verdict.
			end := i + 1
			for end < n && !rebuilt[end] && from[end] == from[i]+(end-i) {
				end++
			}
			copy(j.verdicts[i:end], prev[from[i]:from[i]+(end-i)])
			copy(j.ctx.visible[i:end], pctx.visible[from[i]:from[i]+(end-i)])
			copy(j.ctx.kinds[i:end], pctx.kinds[from[i]:from[i]+(end-i)])
			copy(j.ctx.ids[i:end], pctx.ids[from[i]:from[i]+(end-i)])
			copy(j.ctx.runs[i:end], pctx.runs[from[i]:from[i]+(end-i)])
			copy(j.ctx.parents[i:end], pctx.parents[from[i]:from[i]+(end-i)])
			i = end
			continue
		}
		j.start(i)
		switch cands[i].Type {
		case model.TypeMessage:
			messages = true
		case model.TypeCheckpoint, model.TypeSkills:
			runState = true
		case model.TypeMemory:
			memories = true
		}
		i++
	}
	if messages {
		j.findWindow()
		changed := map[string]bool{pctx.current: true, j.ctx.current: true}
		for id := range symmetricDifference(pctx.window, j.ctx.window) {
			changed[id] = true
		}
		j.markIDs(kindMessage, changed)
	}
	if runState {
		j.ctx.checkpoint, j.ctx.skills = latestRunState(req, cands, j.of(kindCheckpoint), j.of(kindSkills))
		if !maps.Equal(j.ctx.checkpoint, pctx.checkpoint) || !maps.Equal(j.ctx.skills, pctx.skills) {
			ofRun := func(c *model.Candidate) bool { return c.RunState.RunID == req.RunID }
			j.markWhere(kindCheckpoint, ofRun)
			j.markWhere(kindSkills, ofRun)
		}
	}
	if memories {
		// The memories standing in for each artifact, counted again where one was rebuilt.
		j.ctx.summarised = maps.Clone(pctx.summarised)
		changed := map[string]bool{}
		count := func(c *model.Candidate, d int) {
			for _, src := range c.Memory.LiveSourceIDs {
				was := j.ctx.summarised[src] > 0
				j.ctx.summarised[src] += d
				if was != (j.ctx.summarised[src] > 0) {
					changed[src] = !changed[src]
				}
			}
		}
		var named [][]string
		for i, c := range cands {
			if !rebuilt[i] || c.Type != model.TypeMemory {
				continue
			}
			if len(c.Memory.SupersededBy) > 0 {
				named = append(named, c.Memory.SupersededBy)
			}
			if k := from[i]; k >= 0 && pctx.visible[k] && prev[k].Candidate.Type == model.TypeMemory {
				count(prev[k].Candidate, -1)
			}
			if j.ctx.visible[i] {
				count(c, +1)
			}
		}
		if len(changed) > 0 {
			j.markIDs(kindArtifact, changed)
		}
		if len(named) > 0 {
			parent := pctx.superseding
			j.ctx.superseding = &idSet{collect: func() map[string]bool {
				ids := maps.Clone(parent.get())
				for _, list := range named {
					for _, id := range list {
						ids[id] = true
					}
				}
				return ids
			}}
		}
	}
	j.ctx.latest = latestRound(v, req, cands, j.of(kindCall), j.of(kindArtifact))
	if !maps.Equal(j.ctx.latest, pctx.latest) {
		changed := symmetricDifference(pctx.latest, j.ctx.latest)
		j.markIDs(kindArtifact, changed)
	}
	if j.ctx.current != pctx.current {
		// Every memory's relevance is read against the message being answered.
		for _, i := range j.of(kindMemory) {
			if !j.ctx.visible[i] {
				continue
			}
			if r := relevance(j.ctx.terms, &cands[i].Memory); r != j.verdicts[i].Relevance {
				j.own(i).Relevance = r
			}
		}
	}
	j.judgeMarked(pctx.byteUsers)
	return j.verdicts, j.ctx
}

// ofRuns returns rebuilt with more candidates marked: those taken over from the context
// (from) whose verdicts differ when judged for run instead of the context's run. They are
// the records of either run (Ownership, tool rounds, latest round, run state) and of their
// child runs (Ownership, recovery for a parent). When either run is none, every child
// run's record is, since Ownership shows them to their participant only when no run is
// named.
func (c *Context) ofRuns(run string, from []int, rebuilt []bool) []bool {
	out := slices.Clone(rebuilt)
	a, b := runHash(c.run), runHash(run)
	anyChild := a == 0 || b == 0
	for i, k := range from {
		if k < 0 || out[i] {
			continue
		}
		r, p := c.runs[k], c.parents[k]
		out[i] = (r != 0 && (r == a || r == b)) || (p != 0 && (p == a || p == b || anyChild))
	}
	return out
}

// judging is one judgement in progress: the verdicts so far, the context, the candidates
// still to judge (marked), and for JudgeAgain the verdicts judged before and where each
// candidate was among them.
type judging struct {
	v        Version
	req      Request
	cands    []*model.Candidate
	verdicts []*Verdict
	// backing holds a whole judgement's verdicts; JudgeAgain allocates the few it judges.
	backing []Verdict
	ctx     *Context
	marked  []bool
	prev    []*Verdict
	prevCtx *Context
	from    []int
	// positions lists the candidates of each kind (of), once listed.
	positions [kindCount][]int
	listed    bool
}

// of returns the positions of the candidates of kind k, in order.
func (j *judging) of(k kind) []int {
	if !j.listed {
		var counts [kindCount]int
		for _, ck := range j.ctx.kinds {
			counts[ck]++
		}
		for ck, n := range counts {
			j.positions[ck] = make([]int, 0, n)
		}
		for i, ck := range j.ctx.kinds {
			j.positions[ck] = append(j.positions[ck], i)
		}
		j.listed = true
	}
	return j.positions[k]
}

// fresh gives candidate i a new verdict of this judgement's own.
func (j *judging) fresh(i int) *Verdict {
	vd := new(Verdict)
	if j.backing != nil {
		vd = &j.backing[i]
	}
	j.verdicts[i] = vd
	return vd
}

// own returns candidate i's verdict to be written: one taken over from the judgement
// extended is copied first, so that the judgement extended stays as it was.
func (j *judging) own(i int) *Verdict {
	vd := j.verdicts[i]
	if j.prev != nil && j.from[i] >= 0 && j.prev[j.from[i]] == vd {
		vd = new(Verdict)
		*vd = *j.verdicts[i]
		j.verdicts[i] = vd
	}
	return vd
}

// start begins judging candidate i: who may see it, and marked to be judged.
func (j *judging) start(i int) {
	c := j.cands[i]
	vd := j.fresh(i)
	*vd = Verdict{Candidate: c, Tier: tierNone}
	j.ctx.kinds[i] = kindOf(c.Type)
	j.ctx.ids[i] = idHash(c.ID)
	j.ctx.runs[i] = runHash(c.OwnerRunID)
	if c.Type == model.TypeCheckpoint || c.Type == model.TypeSkills {
		j.ctx.runs[i] = runHash(c.RunState.RunID)
	}
	j.ctx.parents[i] = runHash(c.OwnerRunParentID)
	if c.Type == model.TypeMemory && len(c.Memory.ConflictsWith) > 0 {
		j.ctx.conflicts = true
		if j.ctx.sidesAsBefore {
			// The context extended shares its sides until one is added.
			j.ctx.sides, j.ctx.sidesAsBefore = maps.Clone(j.ctx.sides), false
		}
		j.ctx.sides[c.ID] = true
		for _, other := range c.Memory.ConflictsWith {
			j.ctx.sides[other] = true
		}
	}
	if d, ok := Ownership(j.req, c); ok {
		vd.Decision = d
	} else {
		j.ctx.visible[i] = true
	}
	j.marked[i] = true
}

// findWindow finds the conversation window, the message being answered and the terms
// memories' relevance is read against.
func (j *judging) findWindow() {
	latest := fromLatest(j.req, j.cands, j.of(kindMessage), j.ctx.visible)
	j.ctx.window = conversationWindow(j.v, j.cands, latest)
	j.ctx.current, j.ctx.terms = "", map[string]bool{}
	if c := currentUserMessage(j.cands, latest); c != nil {
		j.ctx.current, j.ctx.terms = c.ID, terms(c.Message.Content)
	}
}

// markWhere marks the candidates of kind k that match.
func (j *judging) markWhere(k kind, match func(*model.Candidate) bool) {
	for _, i := range j.of(k) {
		if !j.marked[i] && match(j.cands[i]) {
			j.marked[i] = true
		}
	}
}

// markIDs marks the candidates of kind k whose ids are in ids.
func (j *judging) markIDs(k kind, ids map[string]bool) {
	j.findIDs(k, ids, func(i int) { j.marked[i] = true })
}

// findIDs calls found with the position of each candidate of kind k whose id is in ids:
// for a few ids, a pass over the kind's id hashes, side by side, that reads a candidate
// only when its hash is one of theirs.
func (j *judging) findIDs(k kind, ids map[string]bool, found func(i int)) {
	if len(ids) == 0 {
		return
	}
	if len(ids) > 16 {
		for _, i := range j.of(k) {
			if ids[j.cands[i].ID] {
				found(i)
			}
		}
		return
	}
	hashes := make([]uint64, 0, len(ids))
	for id := range ids {
		hashes = append(hashes, idHash(id))
	}
	for _, i := range j.of(k) {
		if slices.Contains(hashes, j.ctx.ids[i]) && ids[j.cands[i].ID] {
			found(i)
		}
	}
}

// maySupersede reports whether a memory may name one of ids as superseding it: whether
// one is among the ids the memories name (Context.superseding).
func (j *judging) maySupersede(ids map[string]bool) bool {
	named := j.ctx.superseding.get()
	for id := range ids {
		if named[id] {
			return true
		}
	}
	return false
}

// before is the verdict a candidate had in the judgement extended (nil: none, or a whole
// judgement).
func (j *judging) before(i int) *Verdict {
	if j.prev == nil || j.from[i] < 0 {
		return nil
	}
	return j.prev[j.from[i]]
}

// judgeMarked judges the marked candidates by type: calls and artifacts before memories (a
// memory is a duplicate of a raw artifact that is included, and a failed artifact is
// represented by its call's recovery item), marking what their new verdicts change;
// byteUsers (places in the judgement extended) are judged again with them, since the byte
// budget is spent in the candidates' order. Then answers, recall and conflicts.
func (j *judging) judgeMarked(byteUsers []int) {
	v, req, cands, verdicts := j.v, j.req, j.cands, j.verdicts
	judged := make([]int, 0, 64)
	judge := func(i int, judgeOne func(c *model.Candidate) Verdict) bool {
		c := cands[i]
		judged = append(judged, i)
		if !j.ctx.visible[i] && !recoveryForParent(req, c) {
			return false
		}
		*j.own(i) = judgeOne(c)
		return true
	}
	// Calls: a call's recovery decides its artifacts'.
	recoveryChanged := map[string]bool{}
	for _, i := range j.of(kindCall) {
		if !j.marked[i] {
			continue
		}
		c, old := cands[i], j.before(i)
		judge(i, func(c *model.Candidate) Verdict { return judgeCall(v, req, c, verdicts[i].Decision) })
		if isRecovery(old) != isRecovery(verdicts[i]) {
			recoveryChanged[c.ID] = true
		}
	}
	if len(recoveryChanged) > 0 {
		j.markWhere(kindArtifact, func(c *model.Candidate) bool { return recoveryChanged[c.Artifact.ToolCallID] })
	}
	recovery := map[string]bool{}
	for _, i := range j.of(kindCall) {
		if isRecovery(verdicts[i]) {
			recovery[cands[i].ID] = true
		}
	}
	// Artifacts, in order: the byte budget is spent by those that reach it.
	if j.prev != nil {
		users := map[int]bool{}
		for _, k := range byteUsers {
			users[k] = true
		}
		for i, k := range j.from {
			if k >= 0 && users[k] {
				j.marked[i] = true
			}
		}
	}
	var rawBytes int64
	rawChanged := map[string]bool{}
	answered := map[string]bool{}
	for _, i := range j.of(kindArtifact) {
		if !j.marked[i] {
			continue
		}
		c, old := cands[i], j.before(i)
		if judge(i, func(c *model.Candidate) Verdict {
			return judgeArtifact(v, req, c, recovery[c.Artifact.ToolCallID], j.ctx.summarised[c.ID] > 0, j.ctx.latest[c.ID], &rawBytes)
		}) && reachedByteBudget(verdicts[i]) {
			j.ctx.byteUsers = append(j.ctx.byteUsers, i)
		}
		if isRaw(old) != isRaw(verdicts[i]) {
			rawChanged[c.ID] = true
		}
		answered[c.Artifact.ToolCallID] = true
	}
	// The other unchanged artifacts did not reach the byte budget before, and nothing they
	// are judged by changed.
	if len(rawChanged) > 0 {
		j.markWhere(kindMemory, func(c *model.Candidate) bool { return anyIn(c.Memory.LiveSourceIDs, rawChanged) })
	}
	raw := map[string]bool{}
	for _, i := range j.of(kindArtifact) {
		if isRaw(verdicts[i]) {
			raw[cands[i].ID] = true
		}
	}
	for _, i := range j.of(kindMessage) {
		if j.marked[i] {
			judge(i, func(c *model.Candidate) Verdict { return judgeMessage(v, req, c, j.ctx.window, j.ctx.current) })
		}
	}
	for _, i := range j.of(kindCheckpoint) {
		if j.marked[i] {
			judge(i, func(c *model.Candidate) Verdict { return judgeRunState(c, j.ctx.checkpoint, checkpointState) })
		}
	}
	for _, i := range j.of(kindSkills) {
		if j.marked[i] {
			judge(i, func(c *model.Candidate) Verdict { return judgeRunState(c, j.ctx.skills, skillsState) })
		}
	}
	// Memories: a memory superseded by one whose eligibility changed is judged again.
	eligibleChanged := map[string]bool{}
	for _, i := range j.of(kindMemory) {
		if j.prev != nil && j.marked[i] {
			c, old := cands[i], j.before(i)
			was := old != nil && j.prevCtx.visible[j.from[i]] && old.Candidate.InLineage
			if was != (j.ctx.visible[i] && c.InLineage) {
				eligibleChanged[c.ID] = true
			}
		}
	}
	if len(eligibleChanged) > 0 && j.maySupersede(eligibleChanged) {
		j.markWhere(kindMemory, func(c *model.Candidate) bool { return anyIn(c.Memory.SupersededBy, eligibleChanged) })
	}
	// Conflicts: marking a side depends on whether its other sides are included, so when a
	// memory in a conflict is judged again, every memory in a conflict is. When none is,
	// each keeps its verdict, marks included: the sides it was marked against are the same.
	sides := j.ctx.conflicts && j.prev == nil
	if j.ctx.conflicts && j.prev != nil {
		for _, i := range j.of(kindMemory) {
			if j.marked[i] && j.ctx.sides[cands[i].ID] {
				sides = true
				break
			}
		}
		if sides {
			j.markWhere(kindMemory, func(c *model.Candidate) bool { return len(c.Memory.ConflictsWith) > 0 })
		}
	}
	eligible := j.eligibility()
	for _, i := range j.of(kindMemory) {
		if j.marked[i] && judge(i, func(c *model.Candidate) Verdict { return judgeMemory(v, req, c, eligible, raw) }) {
			verdicts[i].Relevance = relevance(j.ctx.terms, &cands[i].Memory) // judge made it this judgement's own
		}
	}
	// A call's answer so far is the last included artifact carrying one.
	for _, i := range judged {
		if cands[i].Type == model.TypeToolCall {
			answered[cands[i].ID] = true
		}
	}
	// The calls whose answer may have changed lose it, and take it again below.
	calls := map[string]int{}
	j.findIDs(kindCall, answered, func(i int) { calls[cands[i].ID] = i })
	answers := make(map[int]*Answer, len(calls))
	for _, i := range j.of(kindArtifact) {
		if vd := verdicts[i]; vd.CarriesAnswer && vd.Included() {
			if k, ok := calls[vd.Candidate.Artifact.ToolCallID]; ok {
				answers[k] = &Answer{ArtifactID: vd.Candidate.ID, As: vd.Decision.As, Restricted: vd.Restricted, Bytes: vd.Candidate.Artifact.ResultBytes}
			}
		}
	}
	for _, k := range calls {
		if a := answers[k]; !samePtr(a, verdicts[k].Answer) {
			j.own(k).Answer = a
		}
	}
	if req.Recall {
		for _, i := range judged {
			if id := recallID(verdicts[i]); id != verdicts[i].RecallID {
				j.own(i).RecallID = id
			}
		}
	}
	if sides {
		memories := j.of(kindMemory)
		markConflicts(len(memories), func(k int) *Verdict { return verdicts[memories[k]] }, func(k int) *Verdict { return j.own(memories[k]) })
	}
}

// eligibility returns whether a memory of the candidates may supersede another: it is in
// the lineage and the participant may see it. Only the ids the memories to judge name as
// superseding them are looked up.
func (j *judging) eligibility() func(string) bool {
	named := map[string]bool{}
	for _, i := range j.of(kindMemory) {
		if j.marked[i] {
			for _, id := range j.cands[i].Memory.SupersededBy {
				named[id] = false
			}
		}
	}
	if len(named) > 0 {
		for _, i := range j.of(kindMemory) { // only a memory supersedes one
			c := j.cands[i]
			if _, ok := named[c.ID]; ok {
				named[c.ID] = j.ctx.visible[i] && c.InLineage
			}
		}
	}
	return func(id string) bool { return named[id] }
}

func isRecovery(vd *Verdict) bool {
	return vd != nil && vd.Included() && vd.Decision.As == model.AsRecovery
}

func isRaw(vd *Verdict) bool {
	return vd != nil && vd.Included() && vd.Decision.As == model.AsRaw
}

// reachedByteBudget reports whether an artifact's judgement weighed it against the
// rehydration byte budget (judgeArtifact, judgeHandle).
func reachedByteBudget(vd *Verdict) bool {
	switch vd.Decision.Rule {
	case RuleOverByteBudget, RuleExactRequested, RuleRecallRefused, RuleModelRequested, RuleLatestRound, RuleCurrentRunResult,
		RuleHandleRaw, RuleHandleOverByteBudget:
		return true
	}
	return false
}

func anyIn(ids []string, set map[string]bool) bool {
	for _, id := range ids {
		if set[id] {
			return true
		}
	}
	return false
}

func symmetricDifference(a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	for id := range a {
		if !b[id] {
			out[id] = true
		}
	}
	for id := range b {
		if !a[id] {
			out[id] = true
		}
	}
	return out
}
