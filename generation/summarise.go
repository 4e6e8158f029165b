package generation

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
	"github.com/ctxgraph/ctxgraph/promotion"
	"github.com/ctxgraph/ctxgraph/tracing"
)

// DefaultSummariseTimeout bounds one summarisation, its provider's retries included.
const DefaultSummariseTimeout = 2 * time.Minute

// Summariser is the optional model summariser (DESIGN §7). After a successful tool result
// is recorded without client memories and the structural extractor has derived its memory,
// it summarises the result with the provider and model the promotion policy names, when
// that provider may receive the result's privacy class: as a run of kind memory_extraction
// of the artifact's owner, with its own assembly FOR_RUN it, whose memory supersedes the
// structural one and keeps its provenance. It runs in the background, never in the
// result's request: a summariser that fails or times out is recorded on its run, and the
// structural memory stays current.
type Summariser struct {
	Graph     model.ExecutionGraph
	Calls     model.GenerationGraph
	Assembler model.RecordingAssembler
	Providers model.Providers
	// Policy returns the version a result of the account is promoted under (the account's
	// default): the same one the store's Promoter derived the structural memory under.
	Policy func(ctx context.Context, accountID string) (policy.Version, error)
	// Timeout bounds one summarisation (DefaultSummariseTimeout when zero).
	Timeout time.Duration
	// ProviderCalls, when set, is told of each provider call.
	ProviderCalls ProviderObserver
	// Log reports what could not be recorded; nil logs nothing.
	Log *zap.Logger

	running sync.WaitGroup
}

// SummarisingGraph is an ExecutionGraph whose RecordToolResult starts the summariser on
// each result it records. The API's result route and the recall answers of the generation
// path both record through it, so that every result recorded without client memories is
// summarised under the same rules, from one place.
type SummarisingGraph struct {
	model.ExecutionGraph
	Summariser *Summariser
}

// RecordToolResult records the result (model.ExecutionGraph) and then starts the
// summariser on it; the answer never waits for the summariser.
func (g SummarisingGraph) RecordToolResult(ctx context.Context, accountID string, in model.ToolResult) (model.ToolResultRecorded, error) {
	out, err := g.ExecutionGraph.RecordToolResult(ctx, accountID, in)
	if err == nil && g.Summariser != nil {
		g.Summariser.After(ctx, accountID, in, out)
	}
	return out, err
}

// Wait returns once every summarisation started so far has ended, or with ctx's error when
// ctx ends first: tests wait for the summariser with it, and a stopping server lets the
// summarisations in flight finish.
func (s *Summariser) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.running.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// After starts the summariser on a result just recorded, when the policy configures one and
// the store derived the result's structural memory: a final success recorded without client
// memories. Everything else it reads and writes in the background.
func (s *Summariser) After(ctx context.Context, accountID string, in model.ToolResult, out model.ToolResultRecorded) {
	if in.Status != string(model.ToolSucceeded) || len(in.Memories) > 0 || len(out.MemoryIDs) != 1 || s.Policy == nil {
		return
	}
	v, err := s.Policy(ctx, accountID)
	if err != nil || v.Promotion == nil || v.Promotion.Summarizer == nil {
		return
	}
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		s.summarise(accountID, v, out.ArtifactID, out.MemoryIDs[0])
	}()
}

func (s *Summariser) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultSummariseTimeout
}

func (s *Summariser) log() *zap.Logger {
	if s.Log == nil {
		return zap.NewNop()
	}
	return s.Log
}

// summarise summarises one artifact whose structural memory is memoryID. Its context is
// detached from the result's request (which has answered): it carries neither the
// request's cancellation nor its Idempotency-Key claim, whose stored answer is the
// result's.
func (s *Summariser) summarise(accountID string, v policy.Version, artifactID, memoryID string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout())
	defer cancel()
	art, err := s.Graph.Artifact(ctx, accountID, artifactID)
	if err != nil {
		s.log().Warn("summariser: reading the artifact failed", zap.String("artifactId", artifactID), zap.Error(err))
		return
	}
	sum, ok := v.SummarizerFor(art.PrivacyClass)
	if !ok {
		return // its provider may not receive the class: nothing is sent, nothing recorded
	}
	structural, err := s.Graph.Memory(ctx, accountID, memoryID)
	if err != nil || structural.PromotionPolicy != model.PromotionStructural || len(structural.SupersededBy) > 0 {
		return // a client's memory replaced it already
	}
	if structural.QuotesWhole || art.Tool == model.RecallTool {
		// A result quoted whole has nothing a summary could add but paraphrase, and a
		// recall's answer is a part of a body the model already asked for by name.
		return
	}
	prov, provOK := s.Providers.Provider(sum.Provider)
	modelName, modelOK := s.Providers.Model(sum.Provider, sum.Model)
	if !modelOK {
		modelName = sum.Model
	}
	_, runs, err := s.Calls.BeginTurn(ctx, accountID, nil, []model.NewRun{{BranchID: art.BranchID, ParticipantID: art.OwnerParticipantID,
		RuntimeKind: model.RuntimeMemoryExtraction, Provider: sum.Provider, Model: modelName}})
	if err != nil {
		s.log().Warn("summariser: starting its run failed", zap.String("artifactId", artifactID), zap.Error(err))
		return
	}
	run := runs[0]
	rec := model.ModelCallRecord{RunID: run.ID}
	if !provOK || !modelOK {
		s.end(accountID, rec, &model.ProviderError{Code: "provider_not_configured",
			Message: "the policy's summarizer names provider " + sum.Provider + " and model " + sum.Model + ", which are not configured (CTXGRAPH_PROVIDERS_FILE)"})
		return
	}

	a, recorded, err := s.Assembler.AssembleRecording(ctx, accountID, model.AssemblyRequest{
		BranchID: art.BranchID, ParticipantID: art.OwnerParticipantID, RunID: run.ID, RuntimeKind: model.RuntimeMemoryExtraction,
		Provider: sum.Provider, Model: modelName, ExactArtifactIDs: []string{art.ID}, PolicyVersion: v.ID,
	})
	if err != nil {
		s.end(accountID, rec, &model.ProviderError{Code: "assembly_failed", Message: "the context could not be assembled"})
		return
	}
	rec.AssemblyID, rec.PolicyVersion = a.ID, a.PolicyVersion
	if why, ok := rawIncluded(&a, art.ID); !ok {
		if _, rerr := recorded(); rerr != nil {
			rec.AssemblyID = ""
		}
		s.end(accountID, rec, &model.ProviderError{Code: "result_withheld",
			Message: "the assembly did not include the result's exact body (" + why + "): nothing was sent to summarise"})
		return
	}
	// The assembly serialises the graph; the instruction is not graph data, so it is
	// written around the assembly's messages: first as a system message, and last as the
	// user turn a model answers (it would otherwise answer the conversation's last one).
	messages := make([]model.ChatMessage, 0, len(a.Messages)+2)
	messages = append(messages, model.ChatMessage{Role: "system", Content: promotion.SummaryInstruction(art.Tool, art.ID)})
	messages = append(messages, a.Messages...)
	messages = append(messages, model.ChatMessage{Role: "user", Content: promotion.SummaryRequest(art.Tool, art.ID)})
	zero := 0.0
	preq := model.ProviderRequest{Model: modelName, Messages: messages, Temperature: &zero,
		// Room for a compact summary, never for the result retold whole.
		MaxOutputTokens: 2 * v.Promotion.DigestTokens}

	var call model.ProviderCall
	pctx, span := tracing.Tracer().Start(ctx, "chat "+modelName, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", sum.Provider),
		attribute.String("gen_ai.request.model", modelName), attribute.String("gen_ai.conversation.id", run.ConversationID),
		attribute.String("ctxgraph.run.id", run.ID), attribute.String("ctxgraph.runtime_kind", string(model.RuntimeMemoryExtraction)),
		attribute.String("ctxgraph.assembly.id", a.ID)))
	resp, err := prov.Generate(pctx, preq, &call)
	endProviderSpan(span, resp, err)
	if s.ProviderCalls != nil {
		var failure *model.ProviderError
		if err != nil && !errors.As(err, &failure) {
			failure = &model.ProviderError{Code: "provider_error"}
		}
		s.ProviderCalls.ObserveProviderCall(sum.Provider, modelName, call.Latency, resp.Usage, failure)
	}
	rec.RequestSHA256, rec.RequestBody, rec.Latency = call.RequestSHA256, call.RequestBody, call.Latency
	if _, rerr := recorded(); rerr != nil {
		rec.AssemblyID = ""
		s.end(accountID, rec, &model.ProviderError{Code: "assembly_failed", Message: "the assembly could not be recorded"})
		return
	}
	if err != nil {
		var pe *model.ProviderError
		if !errors.As(err, &pe) {
			pe = &model.ProviderError{Code: "provider_error", Message: "the provider call failed"}
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			pe = &model.ProviderError{Code: "timeout", Message: "the summariser did not answer within " + s.timeout().String()}
		}
		s.end(accountID, rec, pe)
		return
	}
	rec.ResponseID, rec.ResponseModel, rec.FinishReason, rec.Usage = resp.ID, resp.Model, resp.FinishReason, resp.Usage
	if strings.TrimSpace(resp.Content) == "" {
		s.end(accountID, rec, &model.ProviderError{Code: "empty_summary", Message: "the summariser answered no text"})
		return
	}

	rctx, rcancel := context.WithTimeout(context.Background(), recordTimeout)
	defer rcancel()
	if cur, err := s.Graph.Memory(rctx, accountID, structural.ID); err != nil || len(cur.SupersededBy) > 0 {
		s.end(accountID, rec, &model.ProviderError{Code: "superseded",
			Message: "the structural memory was replaced while the summariser ran: its summary is not written"})
		return
	}
	if _, err := s.Graph.DeriveMemory(rctx, accountID, promotion.Summarised(structural, art, sum.Provider, modelName, resp.Content)); err != nil {
		s.log().Warn("summariser: writing its memory failed", zap.String("runId", run.ID), zap.Error(err))
		s.end(accountID, rec, &model.ProviderError{Code: "memory_not_recorded", Message: "the summary could not be written as a memory"})
		return
	}
	rec.Status = model.RunCompleted
	if _, err := s.Calls.RecordModelCall(rctx, accountID, rec); err != nil {
		s.log().Warn("summariser: recording its run failed", zap.String("runId", run.ID), zap.Error(err))
	}
}

// end records a summariser run's failure with pe.
func (s *Summariser) end(accountID string, rec model.ModelCallRecord, pe *model.ProviderError) {
	rec.Status, rec.Error = model.RunFailed, pe
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if _, err := s.Calls.RecordModelCall(ctx, accountID, rec); err != nil {
		s.log().Warn("summariser: recording its failed run failed", zap.String("runId", rec.RunID), zap.Error(err))
	}
}

// rawIncluded reports whether the assembly includes the artifact's exact body, and
// otherwise why not.
func rawIncluded(a *model.Assembly, artifactID string) (string, bool) {
	for _, inc := range a.Included {
		if inc.Ref == artifactID && inc.As == model.AsRaw {
			return "", true
		}
	}
	why := "not decided"
	for d := range a.AllDecisions() {
		if d.Ref == artifactID {
			why = strings.ReplaceAll(d.Reason, "_", " ")
		}
	}
	return why, false
}
