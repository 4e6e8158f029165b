package assembly

import (
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// A judgement is the policies' verdicts on one lineage view (model.Snapshot.View) for one
// request shape, with the raw bodies they selected and the text and token cost of every
// record they include: everything an assembly computes before the budget. An assembly of an
// unchanged lineage for the same participant, run, runtime kind, provider, exact artifacts,
// policy version and encoding takes it over instead of judging every candidate again, as
// long as its `now` lies in the window in which no memory's staleness changes. The budget,
// the final fit and the rendering still run for every assembly, on copies.
type judgement struct {
	// verdicts are shared with the judgement this one extends, where they are the same:
	// neither changes a verdict.
	verdicts []*policy.Verdict
	// judged is what judging the verdicts worked out, for judging an extension of the view.
	judged *policy.Context
	raw    map[string]model.ArtifactRaw
	// budgeted are the indices of the verdicts the budget works on (included, or a
	// duplicate it may revive), in the candidates' order, and texts, costs and
	// compactCosts their lines and token costs, in the same order; settled are the
	// decisions of all the others, and settledOmitted their omissions counted by reason
	// (branch_ineligible aside).
	budgeted []int
	texts    []string
	// lones are the lone forms of the conflict sides among them, by place in budgeted;
	// side says which of them is a side of a conflict, and sides lists those
	// (policy.Prices.Sides).
	lones map[int]string
	// rawForm says which of them shows a raw body (showsRaw).
	rawForm             []bool
	side                []bool
	sides               []int
	costs, compactCosts []int
	// paired, group, alone, inBlock and clocked are the rest of their prices
	// (policy.Prices).
	paired, group, alone []int
	conflicts            *policy.Conflicts
	inBlock, clocked     []bool
	// judgedIn and window say which of them the judge included, and tiered in the window
	// (policy.Prices).
	judgedIn, window []bool
	// priority is the budgeted verdicts' priority order (policy.Priority).
	priority *policy.Priority
	settled  []*model.Decision
	// settledStored says which of settled the record stores (model.Decision.Stored), and
	// stored lists those.
	settledStored  []bool
	stored         []*model.Decision
	settledOmitted map[string]int
	// The verdicts hold for any now after validFrom (zero: any) and not after validUntil
	// (zero: any).
	validFrom, validUntil time.Time
	used                  time.Time
	// shape is the key without the view's revision and the run: the branch and the request
	// shape; view the lineage view judged, and run the run judged for.
	shape, view, run string
	// bytes is the heap it holds (size), counted when it is kept.
	bytes int64
}

// judgementCacheSize is how many judgements a Service keeps at most; DefaultJudgementBytes
// the heap they may hold in all unless Service.JudgementBytes says otherwise (each holds a
// verdict per candidate of its lineage and keeps its view's candidates alive: a lineage of
// 10,000 rounds is tens of megabytes).
const (
	judgementCacheSize    = 32
	DefaultJudgementBytes = 256 << 20
)

type judgements struct {
	mu      sync.Mutex
	entries map[string]*judgement
	reused  int64
	// limit is the bytes the judgements may hold (size); held what they held at the last put.
	limit, held int64
}

var (
	verdictSize   = int64(unsafe.Sizeof(policy.Verdict{}))
	candidateSize = int64(unsafe.Sizeof(model.Candidate{}))
)

// settle adds a settled decision, with whether the record stores it.
func (j *judgement) settle(d *model.Decision, stored bool) {
	j.settled, j.settledStored = append(j.settled, d), append(j.settledStored, stored)
	if stored {
		j.stored = append(j.stored, d)
	}
}

// settleAll adds settled decisions, with whether the record stores each.
func (j *judgement) settleAll(ds []*model.Decision, stored []bool) {
	j.settled, j.settledStored = append(j.settled, ds...), append(j.settledStored, stored...)
	for n, s := range stored {
		if s {
			j.stored = append(j.stored, ds[n])
		}
	}
}

// size estimates the heap a judgement holds: its verdicts with the candidates they point at
// (a view the copies may have dropped stays alive through them; verdicts shared with the
// judgement it extends are counted in both, so the bound errs high), the lists of the
// decisions it settled (pointers into its verdicts) and of those stored, the texts and
// prices of the budgeted records, and the raw bodies it read.
func (j *judgement) size() int64 {
	n := int64(len(j.verdicts))*(8+verdictSize+candidateSize+1+8+16) + int64(len(j.settled))*(int64(unsafe.Sizeof(&model.Decision{}))+1) +
		int64(len(j.stored))*8 +
		int64(len(j.budgeted))*(8*9+6) + int64(len(j.sides))*8
	for _, t := range j.texts {
		n += int64(len(t)) + 16
	}
	for _, t := range j.lones {
		n += int64(len(t)) + 48
	}
	for id, r := range j.raw {
		n += int64(len(id)+len(r.Result)+len(r.Arguments)) + 64
	}
	return n
}

// JudgementMemory reports the bytes the kept judgements hold (as estimated when one was
// last kept) and the limit.
func (s *Service) JudgementMemory() (held, limit int64) {
	s.judgements.mu.Lock()
	defer s.judgements.mu.Unlock()
	return s.judgements.held, s.judgements.limit
}

// ReusedJudgements counts the assemblies that took over an earlier judgement instead of
// judging their candidates again.
func (s *Service) ReusedJudgements() int64 {
	s.judgements.mu.Lock()
	defer s.judgements.mu.Unlock()
	return s.judgements.reused
}

// judgementKey returns the key of a judgement of a view of a branch for a run, and its
// shape: the branch and the request's shape but for the run. A branch has one current view,
// so a judgement of an earlier view of it will not be asked for again; a judgement for
// another run of the same shape is where a run's first judgement starts from.
func judgementKey(view, branchID, policyVersion string, req policy.Request, encoding string) (key, shape string) {
	rest := strings.Join([]string{policyVersion, req.ParticipantID, string(req.RuntimeKind), req.Provider,
		encoding, strings.Join(req.ExactArtifactIDs, ","), strconv.FormatBool(req.ToolRounds), strconv.FormatBool(req.Recall)}, "\x00")
	return view + "\x00" + req.RunID + "\x00" + rest, branchID + "\x00" + rest
}

// holds reports whether the judgement's verdicts hold at now: no memory's staleness differs.
func (j *judgement) holds(now time.Time) bool {
	return (j.validFrom.IsZero() || now.After(j.validFrom)) && (j.validUntil.IsZero() || !now.After(j.validUntil))
}

// get returns the judgement kept under key when it holds at now, or nil.
func (js *judgements) get(key string, now time.Time) *judgement {
	js.mu.Lock()
	defer js.mu.Unlock()
	j := js.entries[key]
	if j == nil || !j.holds(now) {
		return nil
	}
	j.used = time.Now()
	js.reused++
	return j
}

// ofView returns the judgement of a view for a request shape and run when one is kept, or
// else one for another run of that shape (a generation's run after the one before it;
// neither of them none: policy.JudgeAgain judges again what depends on the run), or nil.
func (js *judgements) ofView(shape, view, run string) *judgement {
	js.mu.Lock()
	defer js.mu.Unlock()
	var other *judgement
	for _, j := range js.entries {
		if j.shape != shape || j.view != view {
			continue
		}
		if j.run == run {
			return j
		}
		if run != "" && j.run != "" && (other == nil || j.used.After(other.used)) {
			other = j
		}
	}
	return other
}

// put keeps a judgement in place of any of the same shape and run, and of any of the same
// shape of another view (an earlier view of the branch, whoever's run), dropping the least
// recently used beyond judgementCacheSize entries or the bytes limit (the new one too, when
// it alone is larger).
func (js *judgements) put(key string, j *judgement) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.entries == nil {
		js.entries = map[string]*judgement{}
	}
	j.used = time.Now()
	j.bytes = j.size()
	for k, e := range js.entries {
		if e.shape == j.shape && (e.run == j.run || e.view != j.view) {
			delete(js.entries, k)
		}
	}
	js.entries[key] = j
	held := func() int64 {
		var n int64
		for _, e := range js.entries {
			n += e.bytes
		}
		js.held = n
		return n
	}
	for len(js.entries) > judgementCacheSize || (len(js.entries) > 0 && held() > js.limit) {
		var oldest string
		for k, e := range js.entries {
			if oldest == "" || e.used.Before(js.entries[oldest].used) {
				oldest = k
			}
		}
		delete(js.entries, oldest)
	}
	held()
}

// SetJudgementMemory sets the bytes the judgements kept for reuse may hold; 0 keeps none.
func (s *Service) SetJudgementMemory(bytes int64) {
	s.judgements.mu.Lock()
	defer s.judgements.mu.Unlock()
	s.judgements.limit = bytes
}

// nowWindow is the window of `now` around now in which every memory among cands is as stale
// or as fresh as at now (policy.Stale): the judge reads the clock nowhere else. Memories stale
// at now stay stale for any later-than-validFrom clock, fresh ones stay fresh up to
// validUntil.
func nowWindow(v policy.Version, now time.Time, cands []*model.Candidate) (validFrom, validUntil time.Time) {
	for _, c := range cands {
		if c.Type != model.TypeMemory {
			continue
		}
		until, stale := policy.Stale(v, now, c)
		switch {
		case until.IsZero():
		case stale:
			if until.After(validFrom) {
				validFrom = until
			}
		case validUntil.IsZero() || until.Before(validUntil):
			validUntil = until
		}
	}
	return validFrom, validUntil
}

// later is the later of two bounds of a window, the zero time being none.
func later(a, b time.Time) time.Time {
	if a.IsZero() || b.After(a) {
		return b
	}
	return a
}

// sooner is the sooner of two bounds of a window, the zero time being none.
func sooner(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
