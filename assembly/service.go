package assembly

import (
	"context"
	"maps"
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
	s := &Service{Graph: g, Now: func() time.Time { return time.Now().UTC() }, Policies: policy.Embedded()}
	s.judgements.limit = DefaultJudgementBytes
	return s
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
	a.Keeping = v.RecordKeeping(a.ID, req.Trace)
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
	first, instructed := leadOf(snap.Instructions, tk)
	d, prices := budgetDraft(j, req, snap, tk, first)
	prepared := time.Since(start)
	start = time.Now()
	assembled := fit(j, &d, prices, req.TokenBudget)
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
		Settled:   j.settled, SettledStored: j.stored,
	}
	a.Tokens.Sections = d.sections
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
			vd := j.verdicts[i]
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

// budgetDraft is what the budget works on for one assembly of judgement j: its verdicts, lines and
// costs copied, led by the instructions (first), and their prices.
func budgetDraft(j *judgement, req model.AssemblyRequest, snap model.Snapshot, tk *Tokenizer, first lead) (draft, policy.Prices) {
	d := newDraft(j, req, snap.ParticipantNames, tk)
	// The instructions lead every request, protected: a fixed cost the budget never cuts,
	// in the baseline too, since naive replay sends the system prompt every time.
	d.lead = first
	return d, policy.Prices{Costs: d.costs, Compact: j.compactCosts, Paired: j.paired, Conflicts: j.conflicts, Group: j.group, Alone: j.alone,
		Fixed: ReplyPriming + first.tokens, Head: MessageTokens(tk, "system", "", ""), InBlock: j.inBlock, Clock: tk.Count(d.head + "\n"),
		Clocked: j.clocked, Priority: j.priority, Sides: j.sides, JudgedIn: j.judgedIn, Window: j.window, Aggregate: func(vs []policy.Verdict) int { return aggregateTokens(tk, vs) }}
}

// aggregateTokens is what the summary line of the aggregated recovery items among vs costs
// as render shows it, 0 when none is aggregated.
func aggregateTokens(tk *Tokenizer, vs []policy.Verdict) int {
	var aggregated []policy.Verdict
	for i := range vs {
		if vs[i].Included() && vs[i].Aggregated {
			aggregated = append(aggregated, vs[i])
		}
	}
	if len(aggregated) == 0 {
		return 0
	}
	return lineTokens(tk, aggregateLine(aggregated))
}

// fit fits draft d of judgement j into budget tokens (policy.Fit) and returns the tokens
// its request counts.
func fit(j *judgement, d *draft, prices policy.Prices, budget int) int {
	judged := func(k int) *policy.Verdict { return j.verdicts[j.budgeted[k]] }
	return policy.Fit(d.verdicts, judged, prices, budget, d.measure)
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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
