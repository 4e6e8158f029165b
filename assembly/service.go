package assembly

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
	"github.com/ctxgraph/ctxgraph/tracing"
)

// AssemblerVersion names this assembler's serialisation and budget code; it is recorded with
// every assembly next to the policy version.
const AssemblerVersion = "ctxgraph-assembler/1"

// Service assembles contexts, explains and replays them.
type Service struct {
	Graph model.AssemblyGraph
	// Now is the clock used for a request's default `now` and `asOf`.
	Now func() time.Time
	// Observer, when set, is told of each recorded assembly with its steps' times.
	Observer Observer
	// Policies resolves a request's policy version for its account, and keeps the version
	// an assembly records under (DESIGN §8).
	Policies policy.Resolver

	judgements judgements
}

// Observer is told of each recorded assembly (a metric of assembly latency, tokens and
// omissions); it runs on the request's goroutine and must not block.
type Observer interface {
	ObserveAssembly(a model.Assembly, t model.Timings)
}

// NewService returns a service over a graph with the system clock, resolving the embedded
// policy versions only (the server sets Policies to an account-aware resolver).
func NewService(g model.AssemblyGraph) *Service {
	return &Service{Graph: g, Now: func() time.Time { return time.Now().UTC() }, Policies: policy.Embedded()}
}

// Assemble builds and records the context of one model call, and answers the JSON its
// record keeps. It returns KindInvalid for an unknown policy version or an impossible
// request, KindNotFound for unknown ids.
func (s *Service) Assemble(ctx context.Context, accountID string, req model.AssemblyRequest) (model.Assembly, []byte, error) {
	a, v, err := s.prepare(ctx, accountID, req)
	if err != nil {
		return model.Assembly{}, nil, err
	}
	start := time.Now()
	if err := s.Policies.Keep(ctx, accountID, v); err != nil {
		return model.Assembly{}, nil, err
	}
	doc, err := model.EncodeJSON(a)
	if err != nil {
		return model.Assembly{}, nil, model.Internal("encoding the assembly record", err)
	}
	rctx, span := tracing.Tracer().Start(ctx, "ctxgraph.assembly.record")
	err = s.Graph.RecordAssembly(rctx, accountID, a, doc)
	span.End()
	if err != nil {
		return model.Assembly{}, nil, err
	}
	a.TimingsMs.Record = ms(time.Since(start))
	if s.Observer != nil {
		s.Observer.ObserveAssembly(a, a.TimingsMs)
	}
	return a, doc, nil
}

// Preview computes the context of a model call without recording it: what the policies
// would decide now. The generation path asks it whether a recall may read an artifact.
func (s *Service) Preview(ctx context.Context, accountID string, req model.AssemblyRequest) (model.Assembly, error) {
	a, _, err := s.prepare(ctx, accountID, req)
	return a, err
}

// recordTimeout bounds a record written while its model call runs (AssembleRecording):
// it is written even when the caller has gone, since the call may have been made.
const recordTimeout = 30 * time.Second

// AssembleRecording builds the context of one model call and records it in the
// background, so that the call can start before the record commits; recorded waits for
// the record (its error, and its time in the assembly's timings).
func (s *Service) AssembleRecording(ctx context.Context, accountID string, req model.AssemblyRequest) (model.Assembly, func() (model.Timings, error), error) {
	a, v, err := s.prepare(ctx, accountID, req)
	if err != nil {
		return model.Assembly{}, nil, err
	}
	doc, err := model.EncodeJSON(a)
	if err != nil {
		return model.Assembly{}, nil, model.Internal("encoding the assembly record", err)
	}
	done := make(chan error, 1)
	var took time.Duration
	go func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		defer cancel()
		start := time.Now()
		rctx, span := tracing.Tracer().Start(rctx, "ctxgraph.assembly.record")
		err := s.Policies.Keep(rctx, accountID, v)
		if err == nil {
			err = s.Graph.RecordAssembly(rctx, accountID, a, doc)
		}
		span.End()
		took = time.Since(start)
		done <- err
	}()
	timings := a.TimingsMs
	return a, func() (model.Timings, error) {
		err := <-done
		timings.Record = ms(took)
		if err == nil && s.Observer != nil {
			s.Observer.ObserveAssembly(a, timings)
		}
		return timings, err
	}, nil
}

// prepare computes an assembly with its id, without recording it, under a span with one
// child per step; v is the policy version it was computed under.
func (s *Service) prepare(ctx context.Context, accountID string, req model.AssemblyRequest) (a model.Assembly, v policy.Version, err error) {
	start := time.Now()
	ctx, span := tracing.Tracer().Start(ctx, "ctxgraph.assemble", trace.WithAttributes(
		attribute.String("ctxgraph.branch.id", req.BranchID), attribute.String("ctxgraph.participant.id", req.ParticipantID)))
	defer func() {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, "the assembly failed")
		} else {
			tracing.Steps(ctx, start, []tracing.Step{{Name: "ctxgraph.assembly.graph", Took: msDuration(a.TimingsMs.Graph)},
				{Name: "ctxgraph.assembly.policy", Took: msDuration(a.TimingsMs.Policy)}, {Name: "ctxgraph.assembly.serialize", Took: msDuration(a.TimingsMs.Serialize)}})
			span.SetAttributes(attribute.String("ctxgraph.assembly.id", a.ID), attribute.String("ctxgraph.policy.version", a.PolicyVersion),
				attribute.Int("ctxgraph.tokens.assembled", a.Tokens.Assembled), attribute.Int("ctxgraph.tokens.baseline", a.Tokens.Baseline))
		}
		span.End()
	}()
	return s.build(ctx, accountID, req)
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// build resolves the policy version, computes the assembly and gives it its id.
func (s *Service) build(ctx context.Context, accountID string, req model.AssemblyRequest) (model.Assembly, policy.Version, error) {
	v, err := s.Policies.Resolve(ctx, accountID, req.PolicyVersion)
	if err != nil {
		return model.Assembly{}, policy.Version{}, err
	}
	now := s.Now().UTC()
	if req.Now.IsZero() {
		req.Now = now
	}
	if req.AsOf.IsZero() {
		req.AsOf = now
	}
	req.PolicyVersion = v.ID
	a, err := s.compute(ctx, accountID, req, model.SnapshotOptions{}, v)
	if err != nil {
		return model.Assembly{}, policy.Version{}, err
	}
	a.ID = "asm_" + strings.ReplaceAll(uuid.Must(uuid.NewV7()).String(), "-", "")
	a.CreatedAt = now
	return a, v, nil
}

// compute runs one assembly without recording it: the snapshot of the lineage (read as opts
// say), the policies' judgement of its candidates, the budget's fit, and the rendered
// request with its token counts and decisions.
func (s *Service) compute(ctx context.Context, accountID string, req model.AssemblyRequest, opts model.SnapshotOptions, v policy.Version) (model.Assembly, error) {
	start := time.Now()
	snap, err := s.Graph.LineageSnapshot(ctx, accountID, req, opts)
	if err != nil {
		return model.Assembly{}, err
	}
	var t model.Timings
	t.Graph = ms(time.Since(start))
	req = completed(req, snap, v)
	tk, err := NewTokenizer(EncodingForModel(req.Model))
	if err != nil {
		return model.Assembly{}, model.Internal("tokenizer", err)
	}
	j, err := s.judgement(ctx, accountID, v, req, snap, tk, &t)
	if err != nil {
		return model.Assembly{}, err
	}

	// The judgement is shared: the budget works on a draft.
	start = time.Now()
	d := newDraft(j, req, snap.ParticipantNames, tk)
	// The instructions lead every request, protected: a fixed cost the budget never cuts,
	// in the baseline too, since naive replay sends the system prompt every time.
	first, instructed := leadOf(snap.Instructions, tk)
	d.lead = first
	prices := policy.Prices{Costs: d.costs, Compact: j.compactCosts, Paired: j.paired, Conflicts: j.conflicts, Group: j.group, Alone: j.alone, Fixed: ReplyPriming + first.tokens,
		Head: MessageTokens(tk, "system", "", ""), InBlock: j.inBlock, Clock: tk.Count(d.head + "\n"), Clocked: j.clocked}
	prepared := time.Since(start)
	start = time.Now()
	judged := func(k int) *policy.Verdict { return &j.verdicts[j.budgeted[k]] }
	assembled := policy.Fit(d.verdicts, judged, prices, req.TokenBudget, d.measure)
	fitTime := time.Since(start) - d.took
	t.Policy += ms(fitTime)
	t.Serialize += ms(prepared + d.took)

	a := model.Assembly{
		ConversationID: snap.ConversationID, Request: req, Messages: d.messages, Included: d.included,
		Tokens:             model.TokenCounts{Assembled: assembled, Baseline: snap.BaselineTokens + ReplyPriming + first.tokens, Budget: req.TokenBudget},
		InstructionsSha256: first.sha256,
		Omitted:            maps.Clone(j.settledOmitted),
		PolicyVersion:      v.ID, AssemblerVersion: AssemblerVersion,
		TimingsMs: t,
		Settled:   j.settled,
	}
	for k := range d.verdicts {
		a.Recallable = a.Recallable || (d.verdicts[k].Included() && d.verdicts[k].RecallID != "")
	}
	a.Recallable = a.Recallable || (d.rounds != nil && d.rounds.named)
	if assembled > req.TokenBudget {
		// The trim stopped with only protected records left, compacted as far as they go.
		a.OverBudget, a.Tokens.Protected = true, assembled
	}
	if snap.StructurallyExcluded > 0 {
		a.Omitted[model.ReasonBranchIneligible] = snap.StructurallyExcluded
	}
	n := len(d.verdicts)
	a.Decisions = make([]model.Decision, n, n+len(instructed))
	for k := range d.verdicts {
		vd := &d.verdicts[k]
		a.Decisions[k] = vd.Decision
		if !vd.Included() && vd.Decision.Reason != model.ReasonBranchIneligible {
			a.Omitted[vd.Decision.Reason]++
		}
	}
	a.Decisions = append(a.Decisions, instructed...)
	if req.Trace {
		// Every omitted ref, in the candidates' order (Assemble keeps them only when asked).
		for _, id := range snap.ExcludedRefs {
			a.OmittedRefs = append(a.OmittedRefs, model.OmittedRef{Ref: id, Reason: model.ReasonBranchIneligible})
		}
		k := 0
		for i := range j.verdicts {
			vd := &j.verdicts[i]
			if k < n && j.budgeted[k] == i {
				vd = &d.verdicts[k]
				k++
			}
			if !vd.Included() {
				a.OmittedRefs = append(a.OmittedRefs, model.OmittedRef{Ref: vd.Candidate.ID, Reason: vd.Decision.Reason})
			}
		}
	}
	return a, nil
}

// completed fills in what the request left out: what the read saw of the branch, and the
// participant's provider and model, the run's runtime kind and the version's budget.
func completed(req model.AssemblyRequest, snap model.Snapshot, v policy.Version) model.AssemblyRequest {
	if req.SeenSeq == 0 {
		req.SeenSeq = snap.SeenSeq
	}
	if req.Provider == "" {
		req.Provider = snap.Participant.Provider
	}
	if req.Model == "" {
		req.Model = snap.Participant.Model
	}
	if req.RuntimeKind == "" {
		req.RuntimeKind = model.RuntimeChat
		if snap.Run != nil {
			req.RuntimeKind = snap.Run.RuntimeKind
		}
	}
	if req.TokenBudget <= 0 {
		req.TokenBudget = v.DefaultTokenBudget
	}
	return req
}

// judgement returns the judgement of the snapshot's view for the request's shape when one
// is kept and holds at the request's now, and otherwise judges the candidates (and keeps
// the judgement when the view is shared), adding the time it took to t.
func (s *Service) judgement(ctx context.Context, accountID string, v policy.Version, req model.AssemblyRequest, snap model.Snapshot, tk *Tokenizer, t *model.Timings) (*judgement, error) {
	judgedReq := policy.Request{
		ParticipantID: req.ParticipantID, RunID: req.RunID, RuntimeKind: req.RuntimeKind, Provider: req.Provider,
		ExactArtifactIDs: req.ExactArtifactIDs, Now: req.Now, ToolRounds: req.ToolRounds, Recall: req.Recall,
	}
	key, shape := "", ""
	if snap.View != "" {
		key, shape = judgementKey(snap.View, req.BranchID, v.ID, judgedReq, tk.Name())
		if j := s.judgements.get(key, req.Now); j != nil {
			return j, nil
		}
	}
	j, policyTime, readTime, serializeTime, err := s.judge(ctx, accountID, v, judgedReq, snap, tk)
	if err != nil {
		return nil, err
	}
	t.Graph += ms(readTime)
	t.Policy += ms(policyTime)
	t.Serialize += ms(serializeTime)
	if key != "" {
		j.validFrom, j.validUntil = nowWindow(v, req.Now, snap.Candidates)
		j.shape = shape
		s.judgements.put(key, j)
	}
	return j, nil
}

// draft is an assembly as the budget shapes it: copies of the verdicts of a judgement that
// the budget may change (j.budgeted: the included records and the duplicates it may
// revive), of their texts and of their costs, and the request rendered from them as they
// stand. The judgement's other verdicts stay as judged.
type draft struct {
	verdicts []policy.Verdict
	texts    []string
	costs    []int
	// forms are the forms texts were rendered in.
	forms    []lineForm
	provider string
	raw      map[string]model.ArtifactRaw
	names    map[string]string
	head     string
	rounds   *rounds
	tk       *Tokenizer
	// self is the participant the request is for, whose own answers go unnamed.
	self string
	// lead is the instructions message the request starts with.
	lead lead
	// messages and included are the last rendering, took the time spent rendering.
	messages []model.ChatMessage
	included []model.IncludedItem
	took     time.Duration
}

func newDraft(j *judgement, req model.AssemblyRequest, names map[string]string, tk *Tokenizer) draft {
	n := len(j.budgeted)
	d := draft{verdicts: make([]policy.Verdict, n), texts: slices.Clone(j.texts), costs: slices.Clone(j.costs),
		forms: make([]lineForm, n), provider: req.Provider, raw: j.raw, names: names, head: header(req.Now), tk: tk,
		self: unnamedSpeaker(req.ParticipantID, req.RuntimeKind)}
	for k, i := range j.budgeted {
		d.verdicts[k] = j.verdicts[i]
		d.forms[k] = formOf(&j.verdicts[i])
	}
	if req.ToolRounds {
		d.rounds = &rounds{all: j.verdicts, provider: req.Provider, raw: j.raw, recall: req.Recall}
	}
	return d
}

// unnamedSpeaker is the participant whose own answers a request sends unnamed: the one it is
// for, except in a discussion, where every message names its participant (DESIGN §3).
func unnamedSpeaker(participantID string, runtimeKind model.RuntimeKind) string {
	if runtimeKind == model.RuntimeDiscussion {
		return ""
	}
	return participantID
}

// measure renders the draft as it stands and counts the request's tokens (policy.Fit's
// measure): the lines whose form the budget changed are rendered again, the others keep
// the judgement's text.
func (d *draft) measure() int {
	start := time.Now()
	rerender(d.verdicts, d.texts, d.forms, d.provider, d.raw, d.names)
	d.messages, d.included = render(d.lead, d.verdicts, d.texts, d.head, d.rounds, d.self)
	n := ChatTokens(d.tk, d.messages)
	d.took += time.Since(start)
	return n
}

// judge runs the policies over a snapshot's candidates, reads the raw bodies they selected
// and renders and prices every record they include, as a judgement the budget then works on.
func (s *Service) judge(ctx context.Context, accountID string, v policy.Version, req policy.Request, snap model.Snapshot, tk *Tokenizer) (j *judgement, policyTime, readTime, serializeTime time.Duration, err error) {
	start := time.Now()
	verdicts := policy.Judge(v, req, snap.Candidates)
	policyTime = time.Since(start)

	// Rehydration reads raw bodies only now, after the policy selected them.
	var rawIDs []string
	for i := range verdicts {
		vd := &verdicts[i]
		if vd.Included() && vd.Decision.As == model.AsRaw {
			rawIDs = append(rawIDs, vd.Candidate.ID)
		}
	}
	start = time.Now()
	raw, err := s.Graph.RawPayloads(ctx, accountID, rawIDs)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	readTime = time.Since(start)

	// One pass: the verdicts the budget may change (included ones, and duplicates it may
	// revive when it trims their raw source) are rendered and priced; the others are
	// settled as judged.
	start = time.Now()
	names := snap.ParticipantNames
	j = &judgement{verdicts: verdicts, raw: raw, settledOmitted: map[string]int{}}
	conflicts := false
	lones := map[int]string{} // the lone form of each conflict side, by its place in budgeted
	for i := range verdicts {
		vd := &verdicts[i]
		duplicate := vd.RawDuplicate
		if !vd.Included() && !duplicate {
			j.settled = append(j.settled, vd.Decision)
			if vd.Decision.Reason != model.ReasonBranchIneligible {
				j.settledOmitted[vd.Decision.Reason]++
			}
			continue
		}
		text, cost, compactCost, paired := "", 0, 0, 0
		switch {
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
		conflicts = conflicts || paired > 0
	}
	if !conflicts {
		j.paired = nil
	}
	// The budgeted records, each as if included, for what depends on where they would show.
	budgeted := make([]policy.Verdict, len(j.budgeted))
	for k, i := range j.budgeted {
		budgeted[k] = verdicts[i]
		budgeted[k].Decision.Outcome = policy.OutcomeIncluded
	}
	var rs *rounds
	if req.ToolRounds {
		rs = &rounds{all: verdicts, provider: req.Provider, raw: raw, recall: req.Recall}
		j.group, j.alone = rs.price(budgeted, j.texts, lones, j.costs, tk)
	}
	j.inBlock = inBlock(budgeted, rs)
	j.clocked = make([]bool, len(budgeted))
	for k := range budgeted {
		j.clocked[k] = j.inBlock[k] && policy.Clocked(&budgeted[k])
	}
	if j.paired != nil {
		j.conflicts = policy.NewConflicts(budgeted, j.paired)
	}
	return j, policyTime, readTime, time.Since(start), nil
}

// lead is the system message of instructions a request starts with (DESIGN §8): the same
// text always renders the same first message, so that a provider's prompt cache keeps the
// prefix. A request without instructions has none.
type lead struct {
	message  *model.ChatMessage
	included []model.IncludedItem
	tokens   int
	sha256   string
}

// leadOf renders the instructions of a snapshot as the lead message, with the decisions
// that include them.
func leadOf(ins []model.Instructions, tk *Tokenizer) (lead, []model.Decision) {
	text, decisions := policy.Instructions(ins)
	if text == "" {
		return lead{}, nil
	}
	l := lead{message: &model.ChatMessage{Role: "system", Content: text}, tokens: MessageTokens(tk, "system", text, "")}
	sum := sha256.Sum256([]byte(text))
	l.sha256 = hex.EncodeToString(sum[:])
	for _, d := range decisions {
		l.included = append(l.included, model.IncludedItem{Ref: d.Ref, Type: d.Type, As: d.As})
	}
	return l, decisions
}

// render builds the provider messages: the instructions, one system message holding the
// context block, then the window messages in lineage order. It also lists what was
// included, in that order.
func render(first lead, verdicts []policy.Verdict, texts []string, head string, rs *rounds, self string) ([]model.ChatMessage, []model.IncludedItem) {
	blocks, window, calls, member := sections(verdicts, rs)
	inOrder := func(idx []int, section func(policy.Verdict) int) {
		sort.SliceStable(idx, func(x, y int) bool {
			a, b := verdicts[idx[x]], verdicts[idx[y]]
			if sa, sb := section(a), section(b); sa != sb {
				return sa < sb
			}
			if a.Candidate.Depth != b.Candidate.Depth {
				return a.Candidate.Depth > b.Candidate.Depth
			}
			if a.Candidate.Seq != b.Candidate.Seq {
				return a.Candidate.Seq < b.Candidate.Seq
			}
			return a.Candidate.ID < b.Candidate.ID
		})
	}
	inOrder(blocks, contextSection)
	inOrder(window, func(policy.Verdict) int { return 0 })

	msgs := []model.ChatMessage{}
	included := []model.IncludedItem{}
	if first.message != nil {
		msgs = append(msgs, *first.message)
		included = append(included, first.included...)
	}
	if len(blocks) > 0 {
		lines := make([]string, 0, len(blocks))
		var aggregated []policy.Verdict
		summary := -1
		clocked := false
		for _, i := range blocks {
			clocked = clocked || policy.Clocked(&verdicts[i])
			switch {
			case verdicts[i].CarriesAnswer:
				// Shown in its call's recovery line.
			case verdicts[i].Aggregated:
				// Counted in one summary line, where the first of them stands.
				if summary < 0 {
					summary = len(lines)
					lines = append(lines, "")
				}
				aggregated = append(aggregated, verdicts[i])
			default:
				lines = append(lines, texts[i])
			}
			included = append(included, model.IncludedItem{Ref: verdicts[i].Candidate.ID, Type: verdicts[i].Candidate.Type, As: verdicts[i].Decision.As})
		}
		if summary >= 0 {
			lines[summary] = aggregateLine(aggregated)
		}
		// Every line ends with its newline, as lineTokens prices it. The heading, the
		// clock the lines were judged by, is there only for lines read against it.
		content := ""
		if clocked {
			content = head + "\n"
		}
		if len(lines) > 0 {
			content += strings.Join(lines, "\n") + "\n"
		}
		msgs = append(msgs, model.ChatMessage{Role: "system", Content: content})
	}
	for _, i := range window {
		msgs = append(msgs, chatMessage(verdicts[i].Candidate, self))
		included = append(included, model.IncludedItem{Ref: verdicts[i].Candidate.ID, Type: verdicts[i].Candidate.Type, As: verdicts[i].Decision.As})
	}
	if len(calls) > 0 {
		msgs, included = rs.render(verdicts, texts, calls, member, msgs, included)
	}
	return msgs, included
}

// sections sorts the included records by where the request shows them: in the context
// block, in the window, or in a tool round (calls, and member: each record of a round by
// its call's index).
func sections(verdicts []policy.Verdict, rs *rounds) (blocks, window, calls []int, member map[int]int) {
	if rs != nil {
		calls, member = rs.roundMembers(verdicts)
	}
	for i := range verdicts {
		vd := &verdicts[i]
		_, inRound := member[i]
		switch {
		case !vd.Included():
		case inRound || (vd.Candidate.Type == model.TypeToolCall && vd.Decision.As == model.AsMessage):
			// Sent in its tool round, after the window.
		case vd.Candidate.Type == model.TypeMessage && vd.Decision.As == model.AsMessage:
			window = append(window, i)
		default:
			blocks = append(blocks, i)
		}
	}
	return blocks, window, calls, member
}

// conflictSide says whether an included record is a memory that the budget may show as a
// side of a conflict or as a lone memory (policy's markConflicts).
func conflictSide(vd *policy.Verdict) bool {
	return vd.Included() && vd.Candidate.Type == model.TypeMemory && len(vd.Candidate.Memory.ConflictsWith) > 0 &&
		(vd.Decision.As == model.AsMemory || vd.Decision.As == model.AsConflict)
}

// inBlock says which of the budgeted records (each as if included) the context block would
// show: the others are messages and the records of tool rounds.
func inBlock(budgeted []policy.Verdict, rs *rounds) []bool {
	blocks, _, _, _ := sections(budgeted, rs)
	out := make([]bool, len(budgeted))
	for _, k := range blocks {
		out[k] = true
	}
	return out
}

// contextSection orders the context block: runtime state, then unresolved tool state, then
// exact evidence, then memories.
func contextSection(vd policy.Verdict) int {
	switch vd.Decision.As {
	case model.AsSkills:
		return 0
	case model.AsCheckpoint:
		return 1
	case model.AsRecovery:
		return 2
	case model.AsRaw, model.AsReference:
		return 3
	}
	return 4
}

// lineForm is what the budget can change of how a context record is rendered: whether it
// is included, its form, and whether a recovery item is compact. Everything else a line
// shows was settled by the judge (contextLine).
type lineForm struct {
	included bool
	as       string
	compact  bool
}

func formOf(vd *policy.Verdict) lineForm {
	return lineForm{included: vd.Included(), as: vd.Decision.As, compact: vd.Compact}
}

// rerender refreshes the text of every included context record whose form the budget
// changed since its text was rendered (forms[i]): a revived duplicate, a conflict side that
// became a lone survivor, a recovery item made compact. The others keep the judgement's
// text, which the same verdict in the same form renders to.
func rerender(verdicts []policy.Verdict, texts []string, forms []lineForm, provider string, raw map[string]model.ArtifactRaw, names map[string]string) {
	for i := range verdicts {
		vd := &verdicts[i]
		if !vd.Included() || vd.Candidate.Type == model.TypeMessage {
			continue
		}
		if f := formOf(vd); f != forms[i] {
			texts[i] = contextLine(*vd, provider, raw, names)
			forms[i] = f
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Explain says why a record was included in or omitted from an assembly: the stored policy
// decision where there is one, otherwise the decision recomputed by replaying the assembly
// (the same version, now and asOf decide the same way), with the record's provenance path.
func (s *Service) Explain(ctx context.Context, accountID, assemblyID, ref string) (model.Explanation, error) {
	rec, err := s.Graph.Assembly(ctx, accountID, assemblyID)
	if err != nil {
		return model.Explanation{}, err
	}
	ex := model.Explanation{AssemblyID: assemblyID, Ref: ref, PolicyVersion: rec.PolicyVersion}
	found := false
	for d := range rec.AllDecisions() {
		if d.Ref == ref {
			ex.Outcome, ex.As, ex.Reason, ex.Rule, found = d.Outcome, d.As, d.Reason, d.Rule, true
		}
	}
	if !found {
		again, err := s.recompute(ctx, accountID, rec, false)
		if err != nil {
			return model.Explanation{}, err
		}
		for d := range again.AllDecisions() {
			if d.Ref == ref {
				ex.Type, ex.Outcome, ex.As, ex.Reason, ex.Rule, found = d.Type, d.Outcome, d.As, d.Reason, d.Rule, true
			}
		}
		if !found {
			for _, o := range again.OmittedRefs {
				if o.Ref == ref {
					ex.Outcome, ex.Reason, ex.Rule, found = policy.OutcomeOmitted, o.Reason, model.RuleBranchLineage, true
				}
			}
		}
	}
	for _, inc := range rec.Included {
		if inc.Ref == ref {
			ex.Type, ex.Outcome, ex.As = inc.Type, policy.OutcomeIncluded, inc.As
		}
	}
	if !found && ex.Outcome == "" {
		e := model.NotFound("record", ref)
		e.Field = "ref"
		return model.Explanation{}, e
	}
	path, err := s.Graph.ProvenancePath(ctx, accountID, ref)
	if err != nil && model.KindOf(err) != model.KindNotFound {
		return model.Explanation{}, err
	}
	ex.ProvenancePath = path
	if ex.ProvenancePath == nil {
		ex.ProvenancePath = []model.PathStep{}
	}
	if ex.Type == "" && len(path) > 0 {
		ex.Type = typeOfLabel(path[0].Type)
	}
	return ex, nil
}

func typeOfLabel(label string) model.RecordType {
	switch label {
	case "Message":
		return model.TypeMessage
	case "ToolCall":
		return model.TypeToolCall
	case "ToolArtifact":
		return model.TypeArtifact
	case "ToolMemory":
		return model.TypeMemory
	case "Checkpoint":
		return model.TypeCheckpoint
	case "SkillState":
		return model.TypeSkills
	}
	return model.RecordType(strings.ToLower(label))
}

// recompute re-runs a recorded assembly under its recorded policy version (read from the
// versions stored for the account first, so that it replays after an upgrade changed the
// embedded ones), now and asOf, with a trace so that every omitted record is listed.
func (s *Service) recompute(ctx context.Context, accountID string, rec model.Assembly, fresh bool) (model.Assembly, error) {
	v, err := s.Policies.Recorded(ctx, accountID, rec.PolicyVersion)
	if err != nil {
		return model.Assembly{}, err
	}
	req := rec.Request
	req.Trace = true
	return s.compute(ctx, accountID, req, model.SnapshotOptions{Fresh: fresh}, v)
}

// Replay re-runs a recorded assembly and reports whether it selects the same records in the
// same order with the same forms and text, listing every difference.
func (s *Service) Replay(ctx context.Context, accountID, assemblyID string) (model.ReplayReport, error) {
	rec, err := s.Graph.Assembly(ctx, accountID, assemblyID)
	if err != nil {
		return model.ReplayReport{}, err
	}
	// A replay reads the graph afresh: it checks the assembler's cache as well as the policy.
	again, err := s.recompute(ctx, accountID, rec, true)
	if err != nil {
		return model.ReplayReport{}, err
	}
	rep := model.ReplayReport{AssemblyID: assemblyID, PolicyVersion: rec.PolicyVersion, Differences: []string{}}
	n := len(rec.Included)
	if len(again.Included) > n {
		n = len(again.Included)
	}
	for i := 0; i < n; i++ {
		var was, now model.IncludedItem
		if i < len(rec.Included) {
			was = rec.Included[i]
		}
		if i < len(again.Included) {
			now = again.Included[i]
		}
		if was != now {
			rep.Differences = append(rep.Differences, fmt.Sprintf("included[%d]: recorded %s as %s, replay %s as %s", i, orNone(was.Ref), orNone(was.As), orNone(now.Ref), orNone(now.As)))
		}
	}
	if len(rec.Messages) != len(again.Messages) {
		rep.Differences = append(rep.Differences, fmt.Sprintf("messages: recorded %d, replay %d", len(rec.Messages), len(again.Messages)))
	} else {
		for i := range rec.Messages {
			if !reflect.DeepEqual(rec.Messages[i], again.Messages[i]) {
				rep.Differences = append(rep.Differences, fmt.Sprintf("messages[%d] (%s): text differs", i, rec.Messages[i].Role))
			}
		}
	}
	if rec.InstructionsSha256 != again.InstructionsSha256 {
		rep.Differences = append(rep.Differences, fmt.Sprintf("instructions: recorded sha256 %s, replay %s", orNone(rec.InstructionsSha256), orNone(again.InstructionsSha256)))
	}
	if rec.Tokens.Assembled != again.Tokens.Assembled || rec.Tokens.Baseline != again.Tokens.Baseline {
		rep.Differences = append(rep.Differences, fmt.Sprintf("tokens: recorded %d/%d, replay %d/%d",
			rec.Tokens.Assembled, rec.Tokens.Baseline, again.Tokens.Assembled, again.Tokens.Baseline))
	}
	for _, reason := range model.OmissionReasons {
		if reason == model.ReasonBranchIneligible {
			continue
		}
		if rec.Omitted[reason] != again.Omitted[reason] {
			rep.Differences = append(rep.Differences, fmt.Sprintf("omitted %s: recorded %d, replay %d", reason, rec.Omitted[reason], again.Omitted[reason]))
		}
	}
	rep.Identical = len(rep.Differences) == 0
	return rep, nil
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

var _ model.ContextAssembler = (*Service)(nil)
