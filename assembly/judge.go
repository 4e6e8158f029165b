package assembly

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// judgement returns the judgement of the snapshot's view for the request's shape when one
// is kept and holds at the request's now, and otherwise judges the candidates (and keeps
// the judgement when the view is shared), adding the time it took to t.
func (s *Service) judgement(ctx context.Context, accountID string, v policy.Version, req model.AssemblyRequest, snap model.Snapshot, tk *Tokenizer, t *model.Timings) (*judgement, error) {
	judgedReq := policy.Request{
		ParticipantID: req.ParticipantID, RunID: req.RunID, RuntimeKind: req.RuntimeKind, Provider: req.Provider,
		ExactArtifactIDs: req.ExactArtifactIDs, Now: req.Now, ToolRounds: req.ToolRounds, Recall: req.Recall,
		KindsInLineageOrder: snap.KindsInLineageOrder,
	}
	key, shape := "", ""
	var parent *judgement
	if snap.View != "" {
		key, shape = judgementKey(snap.View, req.BranchID, v.ID, judgedReq, tk.Name())
		if j := s.judgements.get(key, req.Now); j != nil {
			return j, nil
		}
		if snap.ViewParent != "" {
			parent = s.judgements.ofView(shape, snap.ViewParent, req.RunID)
		}
	}
	j, policyTime, readTime, serializeTime, err := s.judge(ctx, accountID, v, judgedReq, snap, tk, parent)
	if err != nil {
		return nil, err
	}
	t.Graph += ms(readTime)
	t.Policy += ms(policyTime)
	t.Serialize += ms(serializeTime)
	if key != "" {
		j.shape, j.view, j.run = shape, snap.View, req.RunID
		s.judgements.put(key, j)
	}
	return j, nil
}

// judge runs the policies over a snapshot's candidates, reads the raw bodies they selected
// and renders and prices every record they include, as a judgement the budget then works on.
// parent, when given, is the judgement of the view the snapshot's view extends, for the same
// request shape (and the same run, or another: judgements.ofView): a line whose record and
// verdict are the same as there keeps its text and prices (renderedBefore).
func (s *Service) judge(ctx context.Context, accountID string, v policy.Version, req policy.Request, snap model.Snapshot, tk *Tokenizer, parent *judgement) (j *judgement, policyTime, readTime, serializeTime time.Duration, err error) {
	start := time.Now()
	var verdicts []*policy.Verdict
	var judged *policy.Context
	var validFrom, validUntil time.Time
	if parent != nil && parent.judged != nil && len(snap.ViewPlaces) == len(snap.Candidates) && parent.holds(req.Now) {
		// Only what the candidates built anew change is judged again.
		verdicts, judged = policy.JudgeAgain(v, req, snap.Candidates, parent.verdicts, parent.judged, snap.ViewPlaces, snap.Rebuilt)
		// The parent's window holds at now, so the others' staleness turns where it did.
		var rebuilt []*model.Candidate
		for i, c := range snap.Candidates {
			if snap.Rebuilt[i] {
				rebuilt = append(rebuilt, c)
			}
		}
		validFrom, validUntil = nowWindow(v, req.Now, rebuilt)
		validFrom, validUntil = later(validFrom, parent.validFrom), sooner(validUntil, parent.validUntil)
	} else {
		verdicts, judged = policy.JudgeWithContext(v, req, snap.Candidates)
		validFrom, validUntil = nowWindow(v, req.Now, snap.Candidates)
	}
	policyTime = time.Since(start)

	// Rehydration reads raw bodies only now, after the policy selected them: those of
	// records the parent judgement included raw, unchanged since, are what it read (or
	// found gone); the others are read.
	var rawIDs []string
	var kept map[string]model.ArtifactRaw
	// The parent's own verdicts are included raw only where it included them raw: only those,
	// and the verdicts judged again, are loaded.
	var rawBefore []bool
	if parent != nil && len(snap.ViewPlaces) == len(verdicts) {
		rawBefore = make([]bool, len(parent.verdicts))
		for k, p := range parent.budgeted {
			rawBefore[p] = parent.rawForm[k]
		}
	}
	for i := range verdicts {
		if rawBefore != nil {
			if p := snap.ViewPlaces[i]; p >= 0 && p < len(parent.verdicts) && verdicts[i] == parent.verdicts[p] && !rawBefore[p] {
				continue
			}
		}
		vd := verdicts[i]
		if !vd.Included() || vd.Decision.As != model.AsRaw {
			continue
		}
		if parent.readRaw(snap.ViewPlaces, i, vd.Candidate) {
			if r, ok := parent.raw[vd.Candidate.ID]; ok {
				if kept == nil {
					kept = map[string]model.ArtifactRaw{}
				}
				kept[vd.Candidate.ID] = r
			}
			continue
		}
		rawIDs = append(rawIDs, vd.Candidate.ID)
	}
	start = time.Now()
	raw, err := s.Graph.RawPayloads(ctx, accountID, rawIDs)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	if raw == nil {
		raw = map[string]model.ArtifactRaw{}
	}
	maps.Copy(raw, kept)
	readTime = time.Since(start)

	// One pass: the verdicts the budget may change (included ones, and duplicates it may
	// revive when it trims their raw source) are rendered and priced; the others are
	// settled as judged.
	start = time.Now()
	names := snap.ParticipantNames
	j = &judgement{verdicts: verdicts, judged: judged, raw: raw, settledOmitted: map[string]int{}, sides: []int{},
		validFrom: validFrom, validUntil: validUntil}
	settled := 0
	if parent != nil {
		// About as many as the parent's: counting them would load every verdict.
		settled = min(len(parent.settled)+max(len(verdicts)-len(parent.verdicts), 0), len(verdicts))
	} else {
		for i := range verdicts {
			if !verdicts[i].Included() && !verdicts[i].RawDuplicate {
				settled++
			}
		}
	}
	if settled > 0 {
		j.settled, j.settledStored = make([]*model.Decision, 0, settled), make([]bool, 0, settled)
	}
	// The budgeted ones' arrays, made once at about the size they reach.
	n := len(verdicts) - settled
	if parent != nil {
		n = min(len(parent.budgeted)+max(len(verdicts)-len(parent.verdicts), 0), len(verdicts))
	}
	j.budgeted, j.texts, j.costs, j.compactCosts, j.paired = make([]int, 0, n), make([]string, 0, n), make([]int, 0, n), make([]int, 0, n), make([]int, 0, n)
	j.rawForm, j.side = make([]bool, 0, n), make([]bool, 0, n)
	before := renderedBefore{parent: parent, places: snap.ViewPlaces, rebuilt: snap.Rebuilt, tk: tk}
	// A shared verdict is a side of a conflict as it was in the parent, unless a record
	// built anew names new sides.
	sidesAsBefore := parent != nil && judged.SidesAsBefore()
	// Sides all shared, and as many as the parent's: its index of conflicts, moved.
	sidesShared := sidesAsBefore
	conflicts := false
	lones := map[int]string{} // the lone form of each conflict side, by its place in budgeted
	// Each budgeted record's index among the parent's budgeted ones, or -1.
	wasAt := make([]int, 0, n)
	// takeOver budgets verdict i, the parent's own budgeted k, as the parent priced it: its
	// line, prices, lone form and side flag (sides as before), without loading the verdict.
	takeOver := func(i, k int) {
		wasAt = append(wasAt, k)
		side := parent.side[k]
		j.side = append(j.side, side)
		if side {
			j.sides = append(j.sides, len(j.budgeted))
			if lone, ok := parent.lones[k]; ok { // only a side has a lone form
				lones[len(j.budgeted)] = lone
			}
		}
		paired := 0
		if parent.paired != nil {
			paired = parent.paired[k]
		}
		j.budgeted = append(j.budgeted, i)
		j.texts, j.costs, j.compactCosts = append(j.texts, parent.texts[k]), append(j.costs, before.lineCost(k)), append(j.compactCosts, parent.compactCosts[k])
		j.paired = append(j.paired, paired)
		j.rawForm = append(j.rawForm, false)
		conflicts = conflicts || paired > 0
	}
	one := func(i int) {
		vd := verdicts[i]
		duplicate := vd.RawDuplicate
		if !vd.Included() && !duplicate {
			j.settle(&vd.Decision, vd.Decision.Stored())
			if vd.Decision.Reason != model.ReasonBranchIneligible {
				j.settledOmitted[vd.Decision.Reason]++
			}
			return
		}
		// Where the record's verdict was among the parent judgement's budgeted ones: its line
		// and its place in the priority order may be the parent's.
		k := before.in(i)
		shared := before.shared(k, vd)
		if shared && sidesAsBefore {
			takeOver(i, k)
			return
		}
		wasAt = append(wasAt, k)
		text, cost, compactCost, paired := "", 0, 0, 0
		side := vd.Candidate.Type == model.TypeMemory && judged.Side(vd.Candidate.ID)
		j.side = append(j.side, side)
		if side {
			j.sides = append(j.sides, len(j.budgeted))
			sidesShared = sidesShared && shared
		}
		switch {
		case shared || ((duplicate || conflictSide(vd)) && before.find(i, k, vd)):
			// The parent judgement's own verdict, on a record not rebuilt since, or a
			// duplicate or conflict side shown the same way: its line and every price, lone
			// form and mark included, are the parent's. A shared verdict's record is not read
			// again.
			text, cost, compactCost = parent.texts[k], before.lineCost(k), parent.compactCosts[k]
			if parent.paired != nil {
				paired = parent.paired[k]
			}
			if lone, ok := parent.lones[k]; ok {
				lones[len(j.budgeted)] = lone
			}
		case duplicate || conflictSide(vd):
			// A duplicate is priced in the form it comes back in when the budget trims its
			// raw source; a conflict side as a lone memory, and its mark apart.
			lone := *vd
			if duplicate {
				lone.Decision = *vd.Revival
			} else {
				lone.Decision.As = model.AsMemory
			}
			loneText := contextLine(lone, req.Provider, raw, names)
			cost = lineTokens(tk, loneText)
			if lone.Decision.As == model.AsMemory && len(vd.Candidate.Memory.ConflictsWith) > 0 {
				both := lone
				both.Decision.As = model.AsConflict
				paired = lineTokens(tk, contextLine(both, req.Provider, raw, names)) - cost
			}
			if !duplicate {
				text = contextLine(*vd, req.Provider, raw, names)
				lones[len(j.budgeted)] = loneText
			}
		case vd.Candidate.Type == model.TypeMessage && vd.Decision.As == model.AsMessage:
			m := chatMessage(vd.Candidate, unnamedSpeaker(req.ParticipantID, req.RuntimeKind))
			cost = MessageTokens(tk, m.Role, m.Content, m.Name)
		case policy.InToolRound(req, vd.Candidate):
			// Sent as a native call of its round, priced with it (rounds.price).
		case vd.CarriesAnswer:
			// Shown, and priced, in its call's recovery line.
		case before.find(i, k, vd):
			text, cost, compactCost = before.text, before.cost, before.compactCost
		default:
			text = contextLine(*vd, req.Provider, raw, names)
			cost = lineTokens(tk, text)
			compactCost = cost
			if vd.Decision.As == model.AsRecovery {
				compact := *vd
				compact.Compact = true
				compactCost = lineTokens(tk, contextLine(compact, req.Provider, raw, names))
			}
		}
		j.budgeted = append(j.budgeted, i)
		j.texts, j.costs, j.compactCosts = append(j.texts, text), append(j.costs, cost), append(j.compactCosts, compactCost)
		j.paired = append(j.paired, paired)
		j.rawForm = append(j.rawForm, showsRaw(vd))
		conflicts = conflicts || paired > 0
	}
	// A run of verdicts shared with the parent in its order is taken over by the parent's
	// arrays, side by side, without loading a verdict: a budgeted one's line and prices
	// (but one showing a raw body, rendered again, or with sides of conflicts added since,
	// which one prices), a settled one's decision. Their omissions are the parent's counts,
	// less those of the parent's settled verdicts not taken over (below).
	var carried []bool
	took := false
	if parent != nil {
		carried = make([]bool, len(parent.verdicts))
	}
	for i := 0; i < len(verdicts); {
		end := before.sharedRun(i, verdicts)
		if end == i {
			one(i)
			i++
			continue
		}
		a := before.places[i]
		kp, _ := slices.BinarySearch(parent.budgeted, a)
		for ; i < end; i++ {
			p := before.places[i]
			if kp >= len(parent.budgeted) || parent.budgeted[kp] != p {
				// Settled up to the parent's next budgeted verdict or the run's end: places
				// in a run follow each other, and so do their settled decisions.
				m := end - i
				if kp < len(parent.budgeted) {
					m = min(m, parent.budgeted[kp]-p)
				}
				j.settleAll(parent.settled[p-kp:p-kp+m], parent.settledStored[p-kp:p-kp+m])
				for q := p; q < p+m; q++ {
					carried[q] = true
				}
				took = true
				i += m - 1
				continue
			}
			k := kp
			kp++
			if parent.rawForm[k] || !sidesAsBefore {
				one(i)
				continue
			}
			takeOver(i, k)
		}
	}
	if took {
		// The parent's counts, less its settled verdicts not taken over.
		counts := maps.Clone(parent.settledOmitted)
		kp := 0
		for p, ok := range carried {
			for kp < len(parent.budgeted) && parent.budgeted[kp] < p {
				kp++
			}
			if ok || (kp < len(parent.budgeted) && parent.budgeted[kp] == p) {
				continue
			}
			if r := parent.verdicts[p].Decision.Reason; r != model.ReasonBranchIneligible {
				counts[r]--
			}
		}
		for r, n := range j.settledOmitted {
			counts[r] += n
		}
		for r, n := range counts {
			if n == 0 {
				delete(counts, r)
			}
		}
		j.settledOmitted = counts
	}
	if !conflicts {
		j.paired = nil
	}
	j.lones = lones
	// The budgeted records, each as if included, for what depends on where they would show.
	budgeted := make([]policy.Verdict, len(j.budgeted))
	j.judgedIn, j.window = make([]bool, len(j.budgeted)), make([]bool, len(j.budgeted))
	for k, i := range j.budgeted {
		budgeted[k] = *verdicts[i]
		j.judgedIn[k], j.window[k] = budgeted[k].Included(), budgeted[k].Tier == policy.TierWindow
		budgeted[k].Decision.Outcome = policy.OutcomeIncluded
	}
	var rs *rounds
	if req.ToolRounds {
		rs = &rounds{all: verdicts, judged: judged, budgeted: j.budgeted, provider: req.Provider, raw: raw, recall: req.Recall}
		j.group, j.alone = rs.price(budgeted, j.texts, lones, j.costs, tk)
	}
	j.inBlock = inBlock(budgeted, rs)
	j.clocked = make([]bool, len(budgeted))
	for k := range budgeted {
		j.clocked[k] = j.inBlock[k] && policy.Clocked(&budgeted[k])
	}
	switch {
	case j.paired == nil:
	case sidesShared && parent.conflicts != nil && len(j.sides) == len(parent.sides):
		// Every side where it was among the parent's budgeted ones: its index as it is (an
		// index is never changed once made); otherwise the index moved to their places.
		j.conflicts = parent.conflicts
		if slices.ContainsFunc(j.sides, func(k int) bool { return wasAt[k] != k }) {
			to := make([]int, len(parent.budgeted))
			for _, k := range j.sides {
				to[wasAt[k]] = k
			}
			j.conflicts = parent.conflicts.Moved(func(pk int) int { return to[pk] })
		}
	default:
		j.conflicts = policy.NewConflicts(budgeted, j.paired)
	}
	j.priority = priorityOf(budgeted, wasAt, parent)
	return j, policyTime, readTime, time.Since(start), nil
}

// priorityOf orders a judgement's budgeted verdicts by the budget's priority: from the
// order of the parent judgement when there is one (wasAt[k] is where budgeted verdict k was
// among the parent's budgeted ones, or -1), where every verdict on the same candidate with
// the same tier and relevance keeps its order relative to the others
// (policy.ExtendPriority).
func priorityOf(budgeted []policy.Verdict, wasAt []int, parent *judgement) *policy.Priority {
	if parent == nil || parent.priority == nil {
		return policy.NewPriority(budgeted)
	}
	was := make([]int, len(budgeted))
	for k, pk := range wasAt {
		was[k] = -1
		if pk < 0 {
			continue
		}
		before, now := parent.verdicts[parent.budgeted[pk]], &budgeted[k]
		if before.Candidate == now.Candidate && before.Tier == now.Tier && before.Relevance == now.Relevance {
			was[k] = pk
		}
	}
	return policy.ExtendPriority(parent.priority, budgeted, was)
}

// renderedBefore finds a record's line in the judgement of the view a snapshot's view
// extends: the same record (not rebuilt since) with the same verdict is rendered the same,
// with the same prices, since a line depends on nothing else but the request's shape, which
// the two judgements share, the run aside: no line reads it, and the verdicts that depend on
// it are judged again (policy.JudgeAgain); a record shown in a tool round is priced there,
// as a line again (lineCost). Raw bodies are rendered again: a line holding one is rare and
// costs its read.
type renderedBefore struct {
	parent *judgement
	// places and rebuilt are the snapshot's ViewPlaces and Rebuilt.
	places            []int
	rebuilt           []bool
	tk                *Tokenizer
	text              string
	cost, compactCost int
}

// in returns the index among the parent judgement's budgeted verdicts of candidate i's
// verdict there, or -1: no parent, a candidate built anew, or one the parent did not budget.
func (b *renderedBefore) in(i int) int {
	if b.parent == nil || len(b.places) <= i || b.rebuilt[i] {
		return -1
	}
	k, ok := slices.BinarySearch(b.parent.budgeted, b.places[i])
	if !ok {
		return -1
	}
	return k
}

// sharedRun returns where the run of verdicts from i shared with the parent in its order
// ends: candidates not rebuilt, in their places there one after another, judged by the
// parent's own verdicts (policy.JudgeAgain shares those it did not judge again). It is i
// when verdict i is not one.
func (b *renderedBefore) sharedRun(i int, verdicts []*policy.Verdict) int {
	if b.parent == nil || len(b.places) != len(verdicts) {
		return i
	}
	end := i
	for end < len(verdicts) && !b.rebuilt[end] && b.places[end] >= 0 && b.places[end] == b.places[i]+(end-i) &&
		b.places[end] < len(b.parent.verdicts) && verdicts[end] == b.parent.verdicts[b.places[end]] {
		end++
	}
	return end
}

// showsRaw reports whether a budgeted verdict's line shows a raw body: such a line is
// rendered again for each judgement, from the bodies the judgement holds.
func showsRaw(vd *policy.Verdict) bool {
	return vd.Decision.As == model.AsRaw || (vd.Answer != nil && vd.Answer.As == model.AsRaw)
}

// readRaw reports whether the judgement read the raw body of candidate i, whose place in the
// view the judgement's view extends is places[i]: the candidate is the one it judged there
// (not built anew, so its record is unchanged: a write that changes a record, a redaction
// included, builds it anew), and included raw. False without a judgement.
func (j *judgement) readRaw(places []int, i int, c *model.Candidate) bool {
	if j == nil || i >= len(places) || places[i] < 0 || places[i] >= len(j.verdicts) {
		return false
	}
	pv := j.verdicts[places[i]]
	return pv.Candidate == c && pv.Included() && pv.Decision.As == model.AsRaw
}

// shared reports whether vd, the verdict of a budgeted record that was the parent's budgeted
// k (in), is the parent judgement's own verdict (JudgeAgain shares those it did not judge
// again) and shows no raw body (showsRaw).
func (b *renderedBefore) shared(k int, vd *policy.Verdict) bool {
	return k >= 0 && b.parent.verdicts[b.parent.budgeted[k]] == vd && !showsRaw(vd)
}

// find reports whether the line of candidate i, judged vd, whose verdict was the parent's
// budgeted k (in), is in the parent judgement, and holds it.
func (b *renderedBefore) find(i, k int, vd *policy.Verdict) bool {
	if k < 0 || showsRaw(vd) ||
		!policy.SameLine(b.parent.verdicts[b.places[i]], vd) {
		return false
	}
	b.text, b.cost, b.compactCost = b.parent.texts[k], b.lineCost(k), b.parent.compactCosts[k]
	return true
}

// lineCost returns the parent's price of its budgeted k as a line: the rounds price a record of
// a round's result as that result shows it (rounds.price), and whether a record is one
// depends on the run the judgement is for, so such a line is priced again.
func (b *renderedBefore) lineCost(k int) int {
	p := b.parent
	if p.group == nil || p.group[k] < 0 {
		return p.costs[k]
	}
	if lone, ok := p.lones[k]; ok {
		return lineTokens(b.tk, lone)
	}
	if p.texts[k] != "" {
		return lineTokens(b.tk, p.texts[k])
	}
	return p.costs[k] // a duplicate keeps the price of its line
}
