// Package generation runs turns on the generation path (DESIGN §6): it records the user
// message, starts one run per participant, assembles each model call's context (§4) with
// the run's tool rounds in native form, calls the participant's provider and records what
// came back — the assistant message, or the tool calls the client is to run.
package generation

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
	"github.com/ctxgraph/ctxgraph/tracing"
)

// recordTimeout bounds the writes that record a model call's outcome. They run even when
// the client has gone (a cancelled run is still recorded as such).
const recordTimeout = 30 * time.Second

// Service runs turns and continuations.
type Service struct {
	Graph     model.ExecutionGraph
	Calls     model.GenerationGraph
	Assembler model.RecordingAssembler
	Providers model.Providers
	// Policies resolves a turn's policy version for its account (DESIGN §8).
	Policies policy.Resolver
	// Observe, when set, is told how long each step of a turn took (the Step names), so
	// that a benchmark or a metric can say where a generation's time goes. It runs on the
	// request's goroutines and must not block.
	Observe func(step Step, d time.Duration)
	// ProviderCalls, when set, is told of each provider call: a metric of provider latency,
	// errors and token usage.
	ProviderCalls ProviderObserver
	// Leases, when set, holds a lease on each run while this process serves its model call,
	// so that a run whose server died is ended as interrupted, and ends a run whose call
	// could not be recorded while Neo4j was unavailable with that cause once it is back
	// (DESIGN §6).
	Leases model.LeaseHolder
}

// lease is what a run this service serves is leased with: none without Leases.
func (s *Service) lease() model.RunLease {
	if s.Leases == nil {
		return model.RunLease{}
	}
	return s.Leases.Lease()
}

// holdRun renews the lease on run runID until release.
func (s *Service) holdRun(runID string) (release func()) {
	if s.Leases == nil {
		return func() {}
	}
	return s.Leases.HoldRun(runID)
}

// unrecorded has the run ended as database_unavailable once Neo4j is back, when err says a
// model call of its step could not be recorded because Neo4j was unavailable; calls is how
// many model calls the run had recorded when that call began. Without Leases, or should
// this process die first, its lease lapses and a sweep ends it as interrupted.
func (s *Service) unrecorded(accountID string, run model.Run, sr stepRequest, calls int64, err error) {
	if s.Leases == nil || err == nil || model.KindOf(err) != model.KindUnavailable {
		return
	}
	s.Leases.EndUnrecorded(model.UnrecordedCall{AccountID: accountID, RunID: run.ID, Claim: sr.claim, ModelCalls: calls,
		Interruptions: run.Interruptions})
}

// ProviderObserver is told of each provider call, with its error when it failed; it runs
// on the request's goroutines and must not block.
type ProviderObserver interface {
	ObserveProviderCall(provider, model string, d time.Duration, usage model.Usage, failure *model.ProviderError)
}

// Step names a step of a turn, in the order a turn takes them.
type Step string

const (
	// StepResolve reads the branch's conversation and resolves each participant's provider.
	StepResolve Step = "resolve"
	// StepBeginTurn records the user message and starts the runs (one transaction).
	StepBeginTurn Step = "begin_turn"
	// StepAssemble assembles a run's context; its record is written during StepProvider.
	StepAssemble Step = "assemble"
	// StepProvider is the provider call, the request's serialisation included.
	StepProvider Step = "provider"
	// StepRecordWait waits for the assembly's record to commit after the provider answered.
	StepRecordWait Step = "record_wait"
	// StepFinish records what came back: the answer and the run's end, or the tool calls.
	StepFinish Step = "finish"
	// StepClaim is what a continue or a resume does before its assembly: it claims the run's
	// step (one statement, which reads the run; a resume has read it before) and resolves
	// its participant.
	StepClaim Step = "claim"
)

// timed reports the time since start for step to Observe, when set, and returns now, the
// start of the next step.
func (s *Service) timed(step Step, start time.Time) time.Time {
	now := time.Now()
	if s.Observe != nil {
		s.Observe(step, now.Sub(start))
	}
	return now
}

// participantCall is one participant's resolved provider and model.
type participantCall struct {
	participant model.Participant
	provider    model.Provider
	model       string
}

// Generate runs a turn: see model.Generator.
func (s *Service) Generate(ctx context.Context, accountID string, req model.GenerationRequest) (model.Generation, error) {
	start := time.Now()
	calls, err := s.branchCalls(ctx, accountID, req.BranchID, req.ParticipantIDs)
	if err != nil {
		return model.Generation{}, err
	}
	kind := req.RuntimeKind
	switch {
	case kind != "":
	case len(req.ParentMessageIDs) > 0:
		kind = model.RuntimeBranchSubmission
	case len(calls) > 1:
		kind = model.RuntimeMultiModel
	default:
		kind = model.RuntimeChat
	}
	if req.UserMessage == nil && len(req.ParentMessageIDs) > 0 {
		return model.Generation{}, model.Invalid("parentMessageIds", "parentMessageIds needs a userMessage: it is what replies to them")
	}

	out := model.Generation{Runs: make([]model.RunResult, len(calls))}
	var msg *model.NewMessage
	if req.UserMessage != nil {
		msg = &model.NewMessage{BranchID: req.BranchID, Role: "user", Content: req.UserMessage.Content,
			ParentMessageIDs: req.ParentMessageIDs, At: req.UserMessage.At}
	}
	sr := stepRequest{policyVersion: req.PolicyVersion, tokenBudget: req.TokenBudget, exactArtifactIDs: req.ExactArtifactIDs, options: req.Options}
	if key := model.TurnKeyOf(ctx); key != nil && key.Turn != nil {
		return s.completeTurn(ctx, accountID, *key.Turn, calls, sr)
	}
	starts := make([]model.NewRun, len(calls))
	for i, pc := range calls {
		starts[i] = model.NewRun{BranchID: req.BranchID, ParticipantID: pc.participant.ID, RuntimeKind: kind,
			Provider: pc.provider.Name(), Model: pc.model, Tools: clientTools(req.Options.Tools), ToolChoice: req.Options.ToolChoice,
			Lease: s.lease()}
	}
	start = s.timed(StepResolve, start)
	user, runs, err := s.Calls.BeginTurn(ctx, accountID, msg, starts)
	if err != nil {
		return model.Generation{}, err
	}
	s.timed(StepBeginTurn, start)
	out.UserMessageID = user.ID
	sr.replyTo = user.ID
	var wg sync.WaitGroup
	errs := make([]error, len(calls))
	for i, pc := range calls {
		wg.Add(1)
		release := s.holdRun(runs[i].ID)
		go func() {
			defer wg.Done()
			defer release()
			out.Runs[i], errs[i] = s.step(ctx, accountID, runs[i], pc, sr)
		}()
	}
	wg.Wait()
	return out, answer(out, errs)
}

// completeTurn completes a turn that an earlier request with the same Idempotency-Key began
// before its server died or Neo4j went away (DESIGN §6): its user message is reused, not
// written again; each of its runs that was interrupted or ended as database_unavailable, or
// whose lease lapsed before a sweep ended it, calls its
// model again (as a continue would, replying to that message); a run that got past its
// model call answers as recorded.
func (s *Service) completeTurn(ctx context.Context, accountID string, turn model.KeyedTurn, calls []participantCall, sr stepRequest) (model.Generation, error) {
	if len(turn.RunIDs) != len(calls) {
		return model.Generation{}, model.Internal("the turn kept under the Idempotency-Key does not match its request", nil)
	}
	out := model.Generation{UserMessageID: turn.UserMessageID, Runs: make([]model.RunResult, len(calls))}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, id := range turn.RunIDs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			run, err := s.Graph.Run(ctx, accountID, id)
			if err != nil {
				errs[i] = err
				return
			}
			if run.Status == model.RunStatusRunning && run.ModelCalls == 0 || run.Resumable() {
				// Tools and tool choice are the run's: the request that began it offered them.
				again := sr
				again.options.Tools, again.options.ToolChoice, again.options.ToolsNamed = nil, "", false
				gen, err := s.callAgain(ctx, start, accountID, run.ID, "", again, false)
				if len(gen.Runs) > 0 {
					out.Runs[i] = gen.Runs[0]
				}
				var pe *model.ProviderError
				if !errors.As(err, &pe) { // a run's failure at its provider is in its result, as in a first try
					errs[i] = err
				}
				return
			}
			out.Runs[i], errs[i] = s.recordedResult(ctx, accountID, run)
		}()
	}
	wg.Wait()
	return out, answer(out, errs)
}

// recordedResult is the result a run answered when its last model call was recorded, read
// from the graph for a turn whose stored answer was lost: awaiting the results of the tool
// calls it requested, or ended, with its answer when completed. Usage and finish reason
// are the last call's, and the tokens its assembly's.
func (s *Service) recordedResult(ctx context.Context, accountID string, run model.Run) (model.RunResult, error) {
	res := model.RunResult{RunID: run.ID, ParticipantID: run.ParticipantID, Provider: run.Provider, Model: run.Model,
		Status: run.Status, AssemblyID: run.LastAssembly, FinishReason: run.FinishReason, Error: run.Error}
	if run.Usage != nil {
		res.Usage = *run.Usage
	}
	if run.LastAssembly != "" {
		tokens, err := s.Calls.AssemblyTokens(ctx, accountID, run.LastAssembly)
		if err != nil {
			return res, err
		}
		res.Tokens = tokens
	}
	switch run.Status {
	case model.RunStatusRunning:
		res.Status = model.RunAwaitingTools
		requested, err := s.Calls.RunToolCalls(ctx, accountID, run.ID)
		if err != nil {
			return res, err
		}
		for _, c := range requested {
			if len(c.ArtifactIDs) == 0 {
				res.ToolCalls = append(res.ToolCalls, model.RequestedToolCall{ID: c.ID, CallID: c.CallID, Tool: c.Tool, Arguments: c.Arguments})
			}
		}
	case model.RunCompleted:
		msg, err := s.answerOf(ctx, accountID, run)
		if err != nil {
			return res, err
		}
		res.Message = msg
	}
	return res, nil
}

// answerOf is the assistant message a completed run recorded, as a generation answers it:
// read from its branch's transcript, for a turn whose stored answer was lost.
func (s *Service) answerOf(ctx context.Context, accountID string, run model.Run) (*model.GeneratedMessage, error) {
	h, err := s.Graph.History(ctx, accountID, run.BranchID)
	if err != nil {
		return nil, err
	}
	for i := len(h.Items) - 1; i >= 0; i-- {
		if it := h.Items[i]; it.Type == "message" && it.Role == "assistant" && it.RunID == run.ID {
			return &model.GeneratedMessage{ID: it.ID, Content: it.Content}, nil
		}
	}
	return nil, nil
}

// Continue calls the model again for a run whose calls all have results.
func (s *Service) Continue(ctx context.Context, accountID string, req model.ContinueRequest) (model.Generation, error) {
	// The claim checks what a continue needs (the run is the generation path's and no call
	// waits for its result) and reads the run: nothing is read before it.
	return s.callAgain(ctx, time.Now(), accountID, req.RunID, "", stepRequest{tokenBudget: req.TokenBudget, options: req.Options}, true)
}

// callAgain makes another model call of a running or resumable run, assembled as kind (the
// run's own when empty; the caller began at start): it claims the run's step under this
// process's lease (so that two callers never call its model at once; a resumable run is
// reopened), a continue's claim (continuing) only as Continue allows, and steps with the
// tools the run offers (reoffer), replying to the run's trigger message.
func (s *Service) callAgain(ctx context.Context, start time.Time, accountID, runID string, kind model.RuntimeKind, sr stepRequest, continuing bool) (model.Generation, error) {
	claim := uuid.NewString()
	run, err := s.Calls.ClaimRunStep(ctx, accountID, runID, claim, s.lease(), continuing)
	if err != nil {
		return model.Generation{}, err
	}
	defer s.holdRun(run.ID)()
	recorded := false
	defer func() {
		// The model call's record released the claim; a refused or failed call frees the
		// run now rather than when the claim is stale.
		if !recorded {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
			defer cancel()
			_ = s.Calls.ReleaseRunStep(rctx, accountID, run.ID, claim)
		}
	}()
	if sr.options, sr.offer, err = reoffer(run, sr.options); err != nil {
		return model.Generation{}, err
	}
	calls, err := s.branchCalls(ctx, accountID, run.BranchID, []string{run.ParticipantID})
	if err != nil {
		return model.Generation{}, err
	}
	if run.Model != "" {
		calls[0].model = run.Model
	}
	run.RuntimeKind = cmp.Or(kind, run.RuntimeKind)
	s.timed(StepClaim, start)
	// A run interrupted in its first call has recorded no policy version: the request's.
	// The run's counts are as claimed (a resumable run is reopened): see unrecorded.
	sr.replyTo, sr.policyVersion, sr.claim = run.TriggerMessageID, cmp.Or(run.PolicyVersion, sr.policyVersion), claim
	res, err := s.step(ctx, accountID, run, calls[0], sr)
	recorded = err == nil
	out := model.Generation{Runs: []model.RunResult{res}}
	return out, answer(out, []error{err})
}

// reoffer resolves the tools and tool choice of a later model call of run (a continue, a
// resume): the request's when it names them, else the run's (DESIGN §8). Tools named
// make a new offer with the request's choice (none named leaves it to the provider); a
// choice named alone keeps the run's tools. A request that names either returns the
// offer the run keeps for its later calls; a choice that names no tool offered is
// KindInvalid.
func reoffer(run model.Run, o model.CallOptions) (model.CallOptions, *model.ToolOffer, error) {
	if !o.ToolsNamed && o.ToolChoice == "" {
		o.Tools, o.ToolChoice = run.Tools, run.ToolChoice
		return o, nil, nil
	}
	if !o.ToolsNamed {
		o.Tools = run.Tools
	}
	if !model.ToolChoiceFits(o.Tools, o.ToolChoice) {
		return o, nil, model.Invalid("toolChoice", "toolChoice is auto, none, required or the name of a tool the run is offered")
	}
	return o, &model.ToolOffer{Tools: clientTools(o.Tools), ToolChoice: o.ToolChoice}, nil
}

// clientTools are the tools a run records as offered: the client's, never ctxgraph's
// recall, which policy offers per call (DESIGN §7).
func clientTools(tools []model.ToolSpec) []model.ToolSpec {
	return slices.DeleteFunc(slices.Clone(tools), func(t model.ToolSpec) bool { return t.Name == model.RecallTool })
}

// Discuss runs a discussion: see model.Generator. It writes the directive (and the topic,
// replying to it), then runs each speaker in turn, each run TRIGGERED_BY and its answer
// REPLIES_TO the message before it, so that the discussion is one thread. A speaker whose
// provider fails is recorded failed and the next one speaks; a client that disconnects
// ends the discussion after the run it cancelled.
func (s *Service) Discuss(ctx context.Context, accountID string, req model.DiscussionRequest) (model.Generation, error) {
	start := time.Now()
	calls, err := s.branchCalls(ctx, accountID, req.BranchID, req.ParticipantIDs)
	if err != nil {
		return model.Generation{}, err
	}
	s.timed(StepResolve, start)
	directive, err := s.Graph.AppendMessage(ctx, accountID, model.NewMessage{BranchID: req.BranchID, Role: "system", Content: req.Directive})
	if err != nil {
		return model.Generation{}, err
	}
	out := model.Generation{DirectiveMessageID: directive.ID, Runs: []model.RunResult{}}
	last := directive.ID
	if req.Topic != nil {
		topic, err := s.Graph.AppendMessage(ctx, accountID, model.NewMessage{BranchID: req.BranchID, Role: "user",
			Content: req.Topic.Content, At: req.Topic.At, ParentMessageIDs: []string{directive.ID}})
		if err != nil {
			return out, err
		}
		out.UserMessageID, last = topic.ID, topic.ID
	}
	for round := 0; round < max(1, req.Rounds); round++ {
		for _, pc := range calls {
			if ctx.Err() != nil {
				return out, nil
			}
			start := time.Now()
			_, runs, err := s.Calls.BeginTurn(ctx, accountID, nil, []model.NewRun{{BranchID: req.BranchID, ParticipantID: pc.participant.ID,
				RuntimeKind: model.RuntimeDiscussion, Provider: pc.provider.Name(), Model: pc.model, TriggerMessageID: last, Lease: s.lease()}})
			if err != nil {
				return out, err
			}
			s.timed(StepBeginTurn, start)
			release := s.holdRun(runs[0].ID)
			res, err := s.step(ctx, accountID, runs[0], pc, stepRequest{policyVersion: req.PolicyVersion, tokenBudget: req.TokenBudget,
				replyTo: last, options: req.Options})
			release()
			out.Runs = append(out.Runs, res)
			if err != nil {
				return out, err
			}
			if res.Message != nil {
				last = res.Message.ID
			}
		}
	}
	return out, answer(out, nil)
}

// Subagents starts a parent run's children: see model.Generator. Each child's task is a
// user message private to the child's participant (so a child is another participant
// than its parent), the child run is CHILD_OF the parent on the parent's branch, and the
// children are called concurrently. The parent first gets a checkpoint naming its
// children, from which its resume starts.
func (s *Service) Subagents(ctx context.Context, accountID string, req model.SubagentRequest) (model.Generation, error) {
	parent, err := s.runningRun(ctx, accountID, req.RunID, "start subagents")
	if err != nil {
		return model.Generation{}, err
	}
	conv, err := s.Graph.Conversation(ctx, accountID, parent.ConversationID)
	if err != nil {
		return model.Generation{}, err
	}
	ids := make([]string, len(req.Children))
	for i, c := range req.Children {
		if c.ParticipantID == parent.ParticipantID {
			return model.Generation{}, model.Invalid(fmt.Sprintf("children[%d].participantId", i),
				"a subagent is another participant than its parent: a child's task and answer are private to the child")
		}
		ids[i] = c.ParticipantID
	}
	calls, err := s.resolve(conv, ids)
	if err != nil {
		var me *model.Error
		if errors.As(err, &me) && me.Field == "participantIds" {
			me.Field = "children"
		}
		return model.Generation{}, err
	}
	out := model.Generation{Runs: make([]model.RunResult, len(calls))}
	runs := make([]model.Run, len(calls))
	tasks := make([]model.Message, len(calls))
	type childState struct {
		RunID         string `json:"runId"`
		ParticipantID string `json:"participantId"`
		Name          string `json:"name"`
	}
	state := struct {
		Step     string       `json:"step"`
		Children []childState `json:"children"`
	}{Step: "waiting_for_subagents"}
	releases := make([]func(), 0, len(calls))
	defer func() {
		for _, release := range releases {
			release()
		}
	}()
	for i, pc := range calls {
		task, started, err := s.Calls.BeginTurn(ctx, accountID,
			&model.NewMessage{BranchID: parent.BranchID, Role: "user", Content: req.Children[i].Task, ParticipantID: pc.participant.ID, Visibility: "participant"},
			[]model.NewRun{{BranchID: parent.BranchID, ParticipantID: pc.participant.ID, RuntimeKind: model.RuntimeSubagent, ParentRunID: parent.ID,
				Provider: pc.provider.Name(), Model: pc.model, Tools: clientTools(req.Children[i].Tools), Lease: s.lease()}})
		if err != nil {
			return out, err
		}
		releases = append(releases, s.holdRun(started[0].ID))
		tasks[i], runs[i] = task, started[0]
		state.Children = append(state.Children, childState{started[0].ID, pc.participant.ID, pc.participant.Name})
	}
	encoded, err := json.Marshal(state)
	if err != nil {
		return out, model.Internal("encoding the parent's checkpoint failed", err)
	}
	if _, err := s.Graph.RecordCheckpoint(ctx, accountID, model.NewCheckpoint{RunID: parent.ID, State: encoded}); err != nil {
		return out, err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(calls))
	for i, pc := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opts := req.Options
			opts.Tools = req.Children[i].Tools
			out.Runs[i], errs[i] = s.step(ctx, accountID, runs[i], pc, stepRequest{
				policyVersion: req.PolicyVersion, tokenBudget: req.TokenBudget, replyTo: tasks[i].ID, options: opts,
			})
		}()
	}
	wg.Wait()
	return out, answer(out, errs)
}

// Resume calls a parent run again as parent_resume: see model.Generator. Its assembly
// starts from the parent's latest checkpoint with its children's promoted reports, file
// references and failure state (DESIGN §3), never a child's raw workspace.
func (s *Service) Resume(ctx context.Context, accountID string, req model.ResumeRequest) (model.Generation, error) {
	start := time.Now()
	parent, err := s.callableRun(ctx, accountID, req.RunID, "resume")
	if err != nil {
		return model.Generation{}, err
	}
	children, err := s.Calls.ChildRuns(ctx, accountID, parent.ID)
	if err != nil {
		return model.Generation{}, err
	}
	var running []string
	for _, c := range children {
		if c.Status == model.RunStatusRunning {
			running = append(running, c.ID)
		}
	}
	switch {
	case len(children) == 0:
		return model.Generation{}, model.Conflict("run %q has no subagents to resume from: start them with POST /v1/runs/{id}/subagents", parent.ID)
	case len(running) > 0:
		return model.Generation{}, &model.Error{Kind: model.KindConflict, Field: "children",
			Message: fmt.Sprintf("run %q waits for its subagents %s: each must end before the parent resumes", parent.ID, strings.Join(running, ", "))}
	}
	return s.callAgain(ctx, start, accountID, parent.ID, model.RuntimeParentResume, stepRequest{tokenBudget: req.TokenBudget, options: req.Options}, false)
}

// runningRun reads a run that is to make a model call, KindConflict when it has ended.
func (s *Service) runningRun(ctx context.Context, accountID, runID, what string) (model.Run, error) {
	return s.runTo(ctx, accountID, runID, what, false)
}

// callableRun reads a run that is to call its model again (a resume): running, or
// ended resumable (interrupted, database_unavailable); KindConflict when it has otherwise
// ended.
func (s *Service) callableRun(ctx context.Context, accountID, runID, what string) (model.Run, error) {
	return s.runTo(ctx, accountID, runID, what, true)
}

// runTo reads a run that is to make a model call: running, or ended resumable when
// orInterrupted; KindConflict when it has otherwise ended.
func (s *Service) runTo(ctx context.Context, accountID, runID, what string, orInterrupted bool) (model.Run, error) {
	run, err := s.Graph.Run(ctx, accountID, runID)
	if err != nil {
		return model.Run{}, err
	}
	if run.Status != model.RunStatusRunning && !(orInterrupted && run.Resumable()) {
		return model.Run{}, model.Conflict("run %q has ended with status %s: a finished run cannot %s", run.ID, run.Status, what)
	}
	return run, nil
}

// branchCalls resolves the participants of a branch's conversation (resolve).
func (s *Service) branchCalls(ctx context.Context, accountID, branchID string, participantIDs []string) ([]participantCall, error) {
	conv, err := s.Calls.BranchParticipants(ctx, accountID, branchID, participantIDs)
	if err != nil {
		return nil, err
	}
	return s.resolve(conv, participantIDs)
}

// resolve finds each participant and the provider and model it calls; a participant that
// is not the conversation's, or whose provider or model is not configured, is invalid.
func (s *Service) resolve(conv model.Conversation, ids []string) ([]participantCall, error) {
	byID := map[string]model.Participant{}
	for _, p := range conv.Participants {
		byID[p.ID] = p
	}
	out := make([]participantCall, 0, len(ids))
	for _, id := range ids {
		p, ok := byID[id]
		if !ok {
			return nil, model.Invalid("participantIds", "participant %q is not a participant of conversation %s", id, conv.ID)
		}
		name := p.Provider
		if name == "" {
			name = s.Providers.Default()
		}
		prov, ok := s.Providers.Provider(name)
		if !ok {
			return nil, model.Invalid("participantIds", "participant %q names provider %q, which is not configured (CTXGRAPH_PROVIDERS_FILE)", id, name)
		}
		m, ok := s.Providers.Model(name, p.Model)
		if !ok {
			if p.Model == "" {
				return nil, model.Invalid("participantIds", "participant %q names no model and provider %q lists none", id, name)
			}
			return nil, model.Invalid("participantIds", "participant %q asks for model %q, which provider %q does not allow", id, p.Model, name)
		}
		out = append(out, participantCall{participant: p, provider: prov, model: m})
	}
	return out, nil
}

type stepRequest struct {
	policyVersion    string
	tokenBudget      int
	exactArtifactIDs []string
	replyTo          string
	options          model.CallOptions
	// offer, when set, is a new offer of tools that the run records with the call.
	offer *model.ToolOffer
	// claim is the run's step claim the step runs under: empty for a turn's first call,
	// which takes none.
	claim string
}

// step makes the model calls of one request of a run: assemble, call, record, and again
// while the model does nothing but recall (DESIGN §7), which ctxgraph answers itself. The
// recall tool is offered at most the policy's recall.maxRounds times in a row. The result
// is the last call's, with the usage of them all. run's ModelCalls and Interruptions are
// its counts when the step began.
func (s *Service) step(ctx context.Context, accountID string, run model.Run, pc participantCall, sr stepRequest) (model.RunResult, error) {
	v, err := s.Policies.Resolve(ctx, accountID, sr.policyVersion)
	if err != nil {
		// The assembler refuses the version as it always has, recording the run's failure.
		v = policy.Version{ID: sr.policyVersion}
	}
	var usage model.Usage
	for n := 0; ; n++ {
		mc := modelCall{first: n == 0, policy: v, recall: v.Recall != nil && sr.options.ToolChoice != model.ToolChoiceNone}
		mc.offer = mc.recall && n < v.Recall.MaxRounds
		res, recalled, err := s.call(ctx, accountID, run, pc, sr, mc)
		usage.InputTokens += res.Usage.InputTokens
		usage.OutputTokens += res.Usage.OutputTokens
		res.Usage = usage
		if err != nil || !recalled {
			s.unrecorded(accountID, run, sr, run.ModelCalls+int64(n), err)
			return res, err
		}
	}
}

// modelCall says how one model call of a step is made: whether it is the step's first,
// under which policy version, whether its lines name artifacts for recall and whether the
// recall tool is offered.
type modelCall struct {
	first         bool
	policy        policy.Version
	recall, offer bool
}

// runCall is one model call of a run as call makes it: whose run and participant, what
// the step asked, how the call is made, and the result it answers so far.
type runCall struct {
	accountID string
	run       model.Run
	pc        participantCall
	sr        stepRequest
	mc        modelCall
	// offered says the recall tool is offered: the policy offers it and the assembly names
	// an artifact to recall.
	offered bool
	emit    func(model.GenerationEvent)
	res     model.RunResult
}

// call makes one model call of a run: assemble, call the provider, record what came back.
// recalled says the model asked for nothing but recalls, which are answered: the step
// calls the model again.
func (s *Service) call(ctx context.Context, accountID string, run model.Run, pc participantCall, sr stepRequest, mc modelCall) (_ model.RunResult, recalled bool, err error) {
	c := &runCall{accountID: accountID, run: run, pc: pc, sr: sr, mc: mc, emit: sr.options.OnEvent,
		res: model.RunResult{RunID: run.ID, ParticipantID: pc.participant.ID, Provider: pc.provider.Name(), Model: pc.model}}
	start := time.Now()
	a, recorded, err := s.assemble(ctx, c)
	if err != nil {
		return c.res, false, err
	}
	start = s.timed(StepAssemble, start)
	c.started(a)

	resp, call, err := s.callProvider(ctx, c, a)
	start = s.timed(StepProvider, start)
	s.observeProviderCall(pc, call, resp, err)

	rec := model.ModelCallRecord{RunID: run.ID, AssemblyID: a.ID, PolicyVersion: a.PolicyVersion, RequestSHA256: call.RequestSHA256, RequestBody: call.RequestBody, Latency: call.Latency,
		Offer: sr.offer}
	// The assembly's record, written meanwhile, commits before anything it explains.
	if _, rerr := recorded(); rerr != nil {
		rec.AssemblyID = ""
		s.fail(ctx, accountID, rec, &model.ProviderError{Code: "assembly_failed", Message: "the assembly could not be recorded"})
		return c.res, false, rerr
	}
	start = s.timed(StepRecordWait, start)
	// What came back is recorded even when the client has gone.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err != nil {
		s.recordFailure(rctx, c, rec, providerFailure(ctx, err))
		return c.res, false, nil
	}
	rec.ResponseID, rec.ResponseModel, rec.FinishReason, rec.Usage = resp.ID, resp.Model, resp.FinishReason, resp.Usage
	c.res.FinishReason, c.res.Usage = resp.FinishReason, resp.Usage
	if len(resp.ToolCalls) > 0 {
		recalled, err = s.recordToolCalls(rctx, c, rec, resp.ToolCalls)
	} else {
		err = s.recordAnswer(rctx, c, rec, resp.Content)
	}
	if err != nil {
		return c.res, false, err
	}
	s.timed(StepFinish, start)
	if !recalled {
		s.emitEnd(c.emit, c.res)
	}
	return c.res, recalled, nil
}

// assemble assembles the call's context, recording it in the background (recorded waits
// for the record). A context that cannot be assembled fails the run.
func (s *Service) assemble(ctx context.Context, c *runCall) (a model.Assembly, recorded func() (model.Timings, error), err error) {
	a, recorded, err = s.Assembler.AssembleRecording(ctx, c.accountID, model.AssemblyRequest{
		BranchID: c.run.BranchID, ParticipantID: c.pc.participant.ID, RunID: c.run.ID, RuntimeKind: c.run.RuntimeKind,
		Provider: c.pc.provider.Name(), Model: c.pc.model, TokenBudget: c.sr.tokenBudget, ExactArtifactIDs: orEmpty(c.sr.exactArtifactIDs),
		PolicyVersion: c.mc.policy.ID, ToolRounds: true, Recall: c.mc.recall,
	})
	if err != nil {
		s.fail(ctx, c.accountID, model.ModelCallRecord{RunID: c.run.ID}, &model.ProviderError{Code: "assembly_failed", Message: "the context could not be assembled"})
	}
	return a, recorded, err
}

// started takes what the call learns from its assembly: its id, its tokens and whether
// recall is offered; the step's first call tells a streaming client the run started.
func (c *runCall) started(a model.Assembly) {
	c.res.AssemblyID = a.ID
	c.res.Tokens = model.GenerationTokens{Assembled: a.Tokens.Assembled, Baseline: a.Tokens.Baseline}
	c.offered = c.mc.offer && a.Recallable
	if c.emit != nil && c.mc.first {
		c.emit(model.GenerationEvent{Name: model.EventRunStarted, Data: map[string]any{"runId": c.run.ID, "participantId": c.pc.participant.ID,
			"assemblyId": a.ID, "tokens": c.res.Tokens}})
	}
}

// callProvider sends the assembly to the participant's provider with the tools offered,
// under a span, streaming the answer's text to a streaming client.
func (s *Service) callProvider(ctx context.Context, c *runCall, a model.Assembly) (model.ProviderResponse, model.ProviderCall, error) {
	tools := c.sr.options.Tools
	if c.offered {
		// Recall comes after the client's own tools: a model that calls the first tool it
		// is offered calls the client's.
		tools = append(slices.Clone(tools), recallSpec)
	}
	preq := model.ProviderRequest{
		Model: c.pc.model, Messages: a.Messages, Tools: tools, ToolChoice: c.sr.options.ToolChoice,
		MaxOutputTokens: c.sr.options.MaxOutputTokens, Temperature: c.sr.options.Temperature,
	}
	if emit := c.emit; emit != nil {
		preq.OnDelta = func(text string) {
			emit(model.GenerationEvent{Name: model.EventMessageDelta, Data: map[string]string{"runId": c.run.ID, "text": text}})
		}
	}
	var call model.ProviderCall
	pctx, span := tracing.Tracer().Start(ctx, "chat "+c.pc.model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", c.pc.provider.Name()),
		attribute.String("gen_ai.request.model", c.pc.model), attribute.String("gen_ai.conversation.id", c.run.ConversationID),
		attribute.String("ctxgraph.run.id", c.run.ID), attribute.String("ctxgraph.runtime_kind", string(c.run.RuntimeKind)),
		attribute.String("ctxgraph.assembly.id", a.ID)))
	resp, err := c.pc.provider.Generate(pctx, preq, &call)
	endProviderSpan(span, resp, err)
	return resp, call, err
}

// observeProviderCall tells ProviderCalls, when set, of a provider call.
func (s *Service) observeProviderCall(pc participantCall, call model.ProviderCall, resp model.ProviderResponse, err error) {
	if s.ProviderCalls == nil {
		return
	}
	var failure *model.ProviderError
	if err != nil && !errors.As(err, &failure) {
		failure = &model.ProviderError{Code: "provider_error"}
	}
	s.ProviderCalls.ObserveProviderCall(pc.provider.Name(), pc.model, call.Latency, resp.Usage, failure)
}

// providerFailure is what a failed provider call ends its run with: the provider's error,
// or cancelled when the client went away (or the server shut down) first.
func providerFailure(ctx context.Context, err error) *model.ProviderError {
	var pe *model.ProviderError
	if !errors.As(err, &pe) {
		pe = &model.ProviderError{Code: "provider_error", Message: "the provider call failed"}
	}
	if ctx.Err() != nil {
		pe = &model.ProviderError{Code: "cancelled", Message: "the turn was cancelled before the provider answered: its client disconnected or the server shut down"}
	}
	return pe
}

// recordFailure ends the run as failed with pe; a failed subagent reports it to its parent.
func (s *Service) recordFailure(ctx context.Context, c *runCall, rec model.ModelCallRecord, pe *model.ProviderError) {
	c.res.Status, c.res.Error = model.RunFailed, pe
	s.fail(ctx, c.accountID, rec, pe)
	if c.run.RuntimeKind == model.RuntimeSubagent {
		s.reportFailure(ctx, c.accountID, c.run.ID, pe)
	}
	s.emitEnd(c.emit, c.res)
}

// recordToolCalls records the tool calls the model asked for and the call that asked: in
// one write (RecordRequestedCalls) when every call is the client's, otherwise one write per
// call, the recalls' answers, then the call's record. recalled says the model asked for nothing but recalls: the
// run keeps its lease for the step's next call; otherwise it awaits the client's tools.
func (s *Service) recordToolCalls(ctx context.Context, c *runCall, rec model.ModelCallRecord, calls []model.ChatToolCall) (recalled bool, err error) {
	requested := make([]model.NewToolCall, len(calls))
	answersRecall := false
	for i, tc := range calls {
		callID := tc.ID
		if callID == "" {
			callID = "call_" + strings.ReplaceAll(uuid.NewString(), "-", "")
		}
		requested[i] = model.NewToolCall{RunID: c.run.ID, Tool: tc.Name, Arguments: []byte(tc.Arguments),
			CallID: callID, Freshness: model.DeclaredFreshness(c.sr.options.Tools, tc.Name), Retention: model.DeclaredRetention(c.sr.options.Tools, tc.Name)}
		answersRecall = answersRecall || c.answers(tc)
	}
	if !answersRecall {
		// Every call is the client's: the calls and the call's record are one write.
		written, err := s.Calls.RecordRequestedCalls(ctx, c.accountID, rec, requested)
		if err != nil {
			return false, err
		}
		for _, t := range written {
			rt := model.RequestedToolCall{ID: t.ID, CallID: t.CallID, Tool: t.Tool, Arguments: t.Arguments}
			c.res.ToolCalls = append(c.res.ToolCalls, rt)
			if c.emit != nil {
				c.emit(model.GenerationEvent{Name: model.EventToolCall, Data: map[string]any{"runId": c.run.ID, "toolCall": rt}})
			}
		}
		c.res.Status = model.RunAwaitingTools
		return false, nil
	}
	// A recall's result is recorded before the call's record releases the run, so its call
	// is written first; the client's calls of the same answer are written with it, one
	// round, in the order the model asked.
	var recalls []model.ToolCall
	for i, tc := range calls {
		t, err := s.Graph.RequestToolCall(ctx, c.accountID, requested[i])
		if err != nil {
			return false, err
		}
		rt := model.RequestedToolCall{ID: t.ID, CallID: t.CallID, Tool: t.Tool, Arguments: t.Arguments}
		if c.answers(tc) {
			rt.AnsweredBy = model.AnsweredByCtxgraph
			recalls = append(recalls, t)
		} else {
			c.res.ToolCalls = append(c.res.ToolCalls, rt)
		}
		if c.emit != nil {
			c.emit(model.GenerationEvent{Name: model.EventToolCall, Data: map[string]any{"runId": c.run.ID, "toolCall": rt}})
		}
	}
	// Recalls are answered before the call's record releases the run, so that a continue
	// never finds them without a result.
	for _, t := range recalls {
		if err := s.answerRecall(ctx, c.accountID, c.run, c.pc, c.mc, c.offered, t); err != nil {
			return false, err
		}
	}
	// A step whose model asked for nothing but recalls calls it again under the lease.
	rec.KeepLease = len(c.res.ToolCalls) == 0 && c.offered
	if _, err := s.Calls.RecordModelCall(ctx, c.accountID, rec); err != nil {
		return false, err
	}
	if !rec.KeepLease {
		c.res.Status = model.RunAwaitingTools
	}
	return rec.KeepLease, nil
}

// answers says whether ctxgraph answers tc itself: a recall, while the call's lines name
// artifacts for recall (DESIGN §7).
func (c *runCall) answers(tc model.ChatToolCall) bool {
	return tc.Name == model.RecallTool && c.mc.recall
}

// recordAnswer records the model's answer as the assistant message replying to the step's
// trigger and ends the run as completed; a subagent's answer is private to it and promoted
// to its parent as its report.
func (s *Service) recordAnswer(ctx context.Context, c *runCall, rec model.ModelCallRecord, content string) error {
	var parents []string
	if c.sr.replyTo != "" {
		parents = []string{c.sr.replyTo}
	}
	rec.Status = model.RunCompleted
	visibility := ""
	if c.run.RuntimeKind == model.RuntimeSubagent {
		visibility = "participant" // a child's answer is private to it; its report is promoted
	}
	msg, err := s.Calls.FinishTurn(ctx, c.accountID, model.NewMessage{
		BranchID: c.run.BranchID, Role: "assistant", Content: content, ParticipantID: c.pc.participant.ID, RunID: c.run.ID,
		ParentMessageIDs: parents, Visibility: visibility, Speaker: c.pc.participant.Name,
	}, rec)
	if err != nil {
		return err
	}
	if c.run.RuntimeKind == model.RuntimeSubagent {
		if _, err := s.Graph.Promote(ctx, c.accountID, model.NewPromotion{RunID: c.run.ID, Report: content}); err != nil {
			return err
		}
	}
	c.res.Status, c.res.Message = model.RunCompleted, &model.GeneratedMessage{ID: msg.ID, Content: msg.Content}
	return nil
}

// endProviderSpan ends a provider call's span with what the GenAI semantic conventions ask
// of a chat call's answer, or its error.
func endProviderSpan(span trace.Span, resp model.ProviderResponse, err error) {
	defer span.End()
	if err != nil {
		code := "provider_error"
		var pe *model.ProviderError
		if errors.As(err, &pe) {
			code = pe.Code
		}
		span.SetAttributes(attribute.String("error.type", code))
		span.SetStatus(codes.Error, code)
		return
	}
	span.SetAttributes(attribute.String("gen_ai.response.model", resp.Model), attribute.String("gen_ai.response.id", resp.ID),
		attribute.StringSlice("gen_ai.response.finish_reasons", []string{resp.FinishReason}),
		attribute.Int("gen_ai.usage.input_tokens", resp.Usage.InputTokens), attribute.Int("gen_ai.usage.output_tokens", resp.Usage.OutputTokens))
}

// reportFailure promotes a failed child's compact failure report to its parent: its error
// and its last call without a result, best effort (the failure is on the run either way).
func (s *Service) reportFailure(ctx context.Context, accountID, runID string, pe *model.ProviderError) {
	report := fmt.Sprintf("The subagent failed: %s: %s.", pe.Code, pe.Message)
	if calls, err := s.Calls.RunToolCalls(ctx, accountID, runID); err == nil {
		for i := len(calls) - 1; i >= 0; i-- {
			if len(calls[i].ArtifactIDs) == 0 {
				report += fmt.Sprintf(" Its last call without a result: %s %s (%s).", calls[i].Tool, calls[i].Arguments, calls[i].ID)
				break
			}
		}
	}
	_, _ = s.Graph.Promote(ctx, accountID, model.NewPromotion{RunID: runID, Report: report})
}

// fail records a run's failed model call, ending the run with pe, best effort: the run's
// failure is answered either way.
func (s *Service) fail(ctx context.Context, accountID string, rec model.ModelCallRecord, pe *model.ProviderError) {
	rec.Status, rec.Error = model.RunFailed, pe
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	_, _ = s.Calls.RecordModelCall(rctx, accountID, rec)
}

func (s *Service) emitEnd(emit func(model.GenerationEvent), res model.RunResult) {
	if emit == nil {
		return
	}
	name := map[string]string{model.RunCompleted: model.EventRunCompleted, model.RunAwaitingTools: model.EventRunAwaitingTools, model.RunFailed: model.EventRunFailed}[res.Status]
	emit(model.GenerationEvent{Name: name, Data: res})
}

// answer is the error a turn answers with: the first error that is not a provider's,
// else a *model.ProviderError when every run failed at its provider.
func answer(out model.Generation, errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for _, r := range out.Runs {
		if r.Status != model.RunFailed {
			return nil
		}
	}
	if len(out.Runs) == 0 {
		return nil
	}
	return &model.ProviderError{Code: "provider_error", Message: "every run of the turn failed at its provider"}
}

func orEmpty(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}
