package model

import (
	"context"
	"encoding/json"
	"time"
)

// TurnHold is the longest a model call of a turn is taken to run, with its provider's
// retries: a run's step claim, and the Idempotency-Key of a generation, hold that long
// against a second caller before they count as abandoned.
const TurnHold = 15 * time.Minute

// DefaultRunLease is how long a run's lease holds unless renewed (CTXGRAPH_RUN_LEASE): the
// server serving a run's model call renews it every third of that, so a run whose lease
// lapsed has lost its server, and any server ends it as interrupted.
const DefaultRunLease = 15 * time.Second

// Interrupted is the error code of a run whose lease lapsed: its server died mid-call. Such
// a run can continue (its model is called again) and a retried generation with the same
// Idempotency-Key completes it.
const Interrupted = "interrupted"

// DatabaseUnavailable is the error code of a run whose model call its server could not
// record because Neo4j was unavailable: the server ends it so once Neo4j is back, or
// corrects the Interrupted of a sweep that came first (a server that died first leaves it
// Interrupted). Like an interrupted run, it can continue and a retried generation with the
// same Idempotency-Key completes it.
const DatabaseUnavailable = "database_unavailable"

// UnrecordedCall is a model call of a run that its server could not record because Neo4j
// was unavailable, and the run as the call left it: once Neo4j is back the run is ended as
// DatabaseUnavailable unless another call has taken it up meanwhile.
type UnrecordedCall struct {
	AccountID, RunID string
	// Claim is the call's step claim: empty for a turn's first call, which takes none.
	Claim string
	// ModelCalls and Interruptions are the run's counts when the call began: any later
	// call that is recorded, or that reopens the run, counts one more.
	ModelCalls, Interruptions int64
}

// RunLease is what a server writes on a run whose model call it serves: who holds the run
// and for how long without renewal. The zero RunLease sets none (the run is not served by
// a process that renews leases: a run the client drives, a summariser's run).
type RunLease struct {
	Holder string
	For    time.Duration
}

// LeaseGraph keeps the leases of the runs and generation keys a server holds (DESIGN §6).
type LeaseGraph interface {
	// RenewLeases extends by lease the leases holder holds on runIDs (runs still running)
	// and the holds of keys (generation requests' Idempotency-Key claims still pending).
	RenewLeases(ctx context.Context, lease RunLease, runIDs []string, keys []*IdempotencyClaim) error
	// EndLapsedRuns ends as failed, interrupted, up to limit running runs whose lease
	// lapsed, releasing their step claims, and returns their ids. A run is ended once
	// however many servers sweep at once.
	EndLapsedRuns(ctx context.Context, limit int) ([]string, error)
	// EndUnrecordedRun ends call's run as failed, DatabaseUnavailable, releasing its step
	// claim and lease, if it is still as the call left it (running, with the call's claim
	// or none) or a sweep ended it Interrupted first, and no call has been recorded or
	// reopened it since. It says whether it ended the run.
	EndUnrecordedRun(ctx context.Context, call UnrecordedCall) (bool, error)
}

// LeaseHolder holds leases for the requests of one server process: it renews what it
// holds until released.
type LeaseHolder interface {
	// Lease is what this process writes on a run it serves.
	Lease() RunLease
	// HoldRun renews the lease on run runID until release is called.
	HoldRun(runID string) (release func())
	// HoldKey renews claim's hold on its Idempotency-Key until release is called.
	HoldKey(claim *IdempotencyClaim) (release func())
	// EndUnrecorded has call's run ended once Neo4j is back (LeaseGraph.EndUnrecordedRun),
	// trying until it is; a process that dies first leaves the run to lapse, interrupted.
	EndUnrecorded(call UnrecordedCall)
}

// Run statuses a generation answers with (DESIGN §6). A run awaiting tools is running in
// the graph: it has requested calls without results.
const (
	RunCompleted     = "completed"
	RunAwaitingTools = "awaiting_tools"
	RunFailed        = "failed"
)

// TurnRuntimeKinds lists the runtime kinds POST /v1/generations accepts; the other kinds
// have endpoints of their own (discussions, subagents, resume) or are the scheduler's.
var TurnRuntimeKinds = []string{string(RuntimeChat), string(RuntimeMultiModel), string(RuntimeBranchSubmission)}

// ToolChoiceNone offers the model no tool: not even recall.
const ToolChoiceNone = "none"

// ToolChoices lists the tool choices a generation accepts besides a tool's name.
var ToolChoices = []string{"auto", "none", "required"}

// ToolChoiceFits says whether choice may go with tools: no choice, one of ToolChoices or
// the name of one of tools.
func ToolChoiceFits(tools []ToolSpec, choice string) bool {
	if choice == "" || Contains(ToolChoices, choice) {
		return true
	}
	for _, t := range tools {
		if t.Name == choice {
			return true
		}
	}
	return false
}

// ToolOffer is what a run's model calls are offered: the client's tools (never ctxgraph's
// recall, which policy offers per call) and the tool choice. A run keeps the offer it
// started with, and the latest one a continue or a resume named (DESIGN §8).
type ToolOffer struct {
	Tools      []ToolSpec
	ToolChoice string
}

// ToolSpec is a tool offered to the model: its name, what it does and its parameters as
// JSON Schema.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	// FreshnessClass, StaleAfter (a duration from when a result is observed) and
	// RevalidateWith declare how long the tool's results stay current: the memories derived
	// from them take them (DESIGN §7). They are not sent to the provider.
	FreshnessClass string   `json:"freshnessClass,omitempty"`
	StaleAfter     string   `json:"staleAfter,omitempty"`
	RevalidateWith []string `json:"revalidateWith,omitempty"`
	// Retention declares how long the tool's results' bodies are kept (DESIGN §10), where
	// a result names none. Not sent to the provider.
	Retention *Retention `json:"retention,omitempty"`
}

// DeclaredFreshness is what the offered tool of that name declared of its results'
// freshness: nil when none of tools has the name or it declares nothing.
func DeclaredFreshness(tools []ToolSpec, name string) *ToolFreshness {
	for _, t := range tools {
		if t.Name == name {
			return t.Freshness()
		}
	}
	return nil
}

// Freshness is the tool's declaration of its results' freshness, nil when it makes none.
func (t ToolSpec) Freshness() *ToolFreshness {
	if t.FreshnessClass == "" && t.StaleAfter == "" && len(t.RevalidateWith) == 0 {
		return nil
	}
	return &ToolFreshness{Class: t.FreshnessClass, StaleAfter: t.StaleAfter, RevalidateWith: t.RevalidateWith}
}

// ProviderRequest is one model call in ctxgraph's own form, before a provider's wire
// format: the assembly's messages, the tools offered and the sampling settings.
type ProviderRequest struct {
	Model           string
	Messages        []ChatMessage
	Tools           []ToolSpec
	ToolChoice      string
	MaxOutputTokens int
	Temperature     *float64
	// OnDelta, when set, asks for a streamed call: it receives the text as it comes.
	OnDelta func(text string)
}

// Usage is what a provider reported a call cost.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

// ProviderResponse is a model call's answer: its text or the tools it asks for.
type ProviderResponse struct {
	// ID is the provider's id of the response; Model the model that answered.
	ID           string
	Model        string
	Content      string
	ToolCalls    []ChatToolCall
	FinishReason string
	Usage        Usage
}

// ProviderCall is what ctxgraph knows of one model call however it ended: the exact request
// body sent and its sha256 (hex; both empty when no request left), and how long it took.
type ProviderCall struct {
	RequestSHA256 string
	RequestBody   []byte
	Latency       time.Duration
}

// ProviderError is a provider's failure as kept on the run: its HTTP status (0 when no
// response came back), a code and the provider's message, never a key.
type ProviderError struct {
	Status  int    `json:"providerStatus,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *ProviderError) Error() string { return e.Code + ": " + e.Message }

// Provider calls one configured model provider.
type Provider interface {
	// Name is what participants and assemblies call the provider.
	Name() string
	// Kind is its wire protocol: openai, anthropic or echo.
	Kind() string
	// Generate makes one model call. Errors are *ProviderError; call is filled in either way.
	Generate(ctx context.Context, req ProviderRequest, call *ProviderCall) (ProviderResponse, error)
}

// Providers finds the provider a participant names.
type Providers interface {
	// Provider returns the named provider, or false when none is configured by that name.
	Provider(name string) (Provider, bool)
	// Default is the provider of participants that name none.
	Default() string
	// Model resolves the model a participant asks of a provider: its own, else the
	// provider's first allowed; false when the provider does not allow it or none is named.
	Model(provider, asked string) (string, bool)
}

// GenerationRequest submits a turn (DESIGN §6 POST /v1/generations).
type GenerationRequest struct {
	BranchID         string
	ParticipantIDs   []string
	UserMessage      *NewUserMessage
	ParentMessageIDs []string
	RuntimeKind      RuntimeKind
	PolicyVersion    string
	TokenBudget      int
	ExactArtifactIDs []string
	Options          CallOptions
}

// NewUserMessage is a turn's user message.
type NewUserMessage struct {
	Content string
	At      *time.Time
}

// CallOptions shape every model call of a turn or a continuation.
type CallOptions struct {
	Tools []ToolSpec
	// ToolsNamed says the request named its tools, an empty list included (which offers
	// none). A continue or a resume that names none, or no ToolChoice, reuses the run's.
	ToolsNamed      bool
	ToolChoice      string
	MaxOutputTokens int
	Temperature     *float64
	// OnEvent, when set, streams the turn: it receives each event as it happens.
	OnEvent func(GenerationEvent)
}

// ContinueRequest continues a run once its calls have results (POST /v1/runs/{id}/continue).
type ContinueRequest struct {
	RunID       string
	TokenBudget int
	Options     CallOptions
}

// GenerationEvent is one server-sent event of a streamed turn (DESIGN §6 "Streaming").
type GenerationEvent struct {
	Name string
	Data any
}

// Streaming event names.
const (
	EventRunStarted       = "run.started"
	EventMessageDelta     = "message.delta"
	EventToolCall         = "tool_call"
	EventRunCompleted     = "run.completed"
	EventRunAwaitingTools = "run.awaiting_tools"
	EventRunFailed        = "run.failed"
	EventDone             = "done"
)

// Generation answers a turn or a continuation.
type Generation struct {
	// DirectiveMessageID is a discussion's directive, the system message it wrote.
	DirectiveMessageID string      `json:"directiveMessageId,omitempty"`
	UserMessageID      string      `json:"userMessageId,omitempty"`
	Runs               []RunResult `json:"runs"`
}

// SubagentRequest is POST /v1/runs/{id}/subagents: child runs of a running parent run.
type SubagentRequest struct {
	RunID         string
	Children      []SubagentChild
	TokenBudget   int
	PolicyVersion string
	Options       CallOptions
}

// SubagentChild is one child: its participant, its task (private to it) and the tools it
// is offered.
type SubagentChild struct {
	ParticipantID string
	Task          string
	Tools         []ToolSpec
}

// ResumeRequest is POST /v1/runs/{id}/resume: the parent called again, as parent_resume,
// once its children have ended.
type ResumeRequest struct {
	RunID       string
	TokenBudget int
	Options     CallOptions
}

// DiscussionRequest is POST /v1/discussions: speakers in turn for a number of rounds under
// a moderator's directive (DESIGN §6 "Modes").
type DiscussionRequest struct {
	BranchID string
	// ParticipantIDs is the speaking order.
	ParticipantIDs []string
	// Directive is the moderator's instruction, written as a system message on the branch.
	Directive string
	// Topic, when set, is written as the user message the first speaker answers.
	Topic         *NewUserMessage
	Rounds        int
	PolicyVersion string
	TokenBudget   int
	Options       CallOptions
}

// RunResult is one participant's run as a turn left it.
type RunResult struct {
	RunID         string              `json:"runId"`
	ParticipantID string              `json:"participantId"`
	AssemblyID    string              `json:"assemblyId"`
	Provider      string              `json:"provider"`
	Model         string              `json:"model"`
	Status        string              `json:"status"`
	Message       *GeneratedMessage   `json:"message,omitempty"`
	ToolCalls     []RequestedToolCall `json:"toolCalls,omitempty"`
	Error         *ProviderError      `json:"error,omitempty"`
	FinishReason  string              `json:"finishReason,omitempty"`
	Usage         Usage               `json:"usage"`
	Tokens        GenerationTokens    `json:"tokens"`
}

// GeneratedMessage is the assistant message a completed run recorded.
type GeneratedMessage struct {
	ID      string `json:"id"`
	Content string `json:"content"`
}

// RequestedToolCall is a call the model asked for, recorded as a pending ToolCall.
type RequestedToolCall struct {
	ID        string          `json:"id"`
	CallID    string          `json:"callId"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// AnsweredBy is "ctxgraph" on a call ctxgraph answered itself (a recall): the client
	// neither runs it nor posts its result.
	AnsweredBy string `json:"answeredBy,omitempty"`
}

// AnsweredByCtxgraph marks a call ctxgraph answered itself.
const AnsweredByCtxgraph = "ctxgraph"

// GenerationTokens is ctxgraph's own count of a run's last request against history replay.
type GenerationTokens struct {
	Assembled int `json:"assembled"`
	Baseline  int `json:"baseline"`
}

// ModelCallRecord is what the generation path records of one model call: on its assembly
// the sha256 of the request body, and on the run what the provider answered.
type ModelCallRecord struct {
	RunID         string
	AssemblyID    string
	PolicyVersion string
	RequestSHA256 string
	// RequestBody is the exact body sent, kept with the assembly's full record so that a
	// reader can check it against RequestSHA256 (the inspector does).
	RequestBody   []byte
	ResponseID    string
	ResponseModel string
	FinishReason  string
	Usage         Usage
	Latency       time.Duration
	// Status ends the run (completed or failed) or, empty, leaves it running awaiting tools.
	Status string
	Error  *ProviderError
	At     time.Time
	// Offer, when set, replaces the tools and tool choice recorded on the run: the request
	// named others, which the run's later calls reuse.
	Offer *ToolOffer
	// KeepLease keeps the run's lease: another model call of the same step follows (the
	// model asked for nothing but recalls).
	KeepLease bool
}

// GenerationGraph is what the generation path reads and writes beyond ExecutionGraph.
type GenerationGraph interface {
	// BranchParticipants returns the conversation of a branch with its ID and participants
	// only, each with its id, kind, name, provider and model (KindNotFound otherwise): all of
	// them, or only those of participantIDs when the assembler's copy of the conversation
	// knows the branch and every one of them, which is then read from it, not the graph. A
	// participant of participantIDs missing from the answer is not the conversation's.
	BranchParticipants(ctx context.Context, accountID, branchID string, participantIDs []string) (Conversation, error)
	// ChildRuns lists the runs CHILD_OF a run (its subagents), oldest first.
	ChildRuns(ctx context.Context, accountID, runID string) ([]Run, error)
	// RunToolCalls lists the calls a run requested, oldest first, with their outcomes.
	RunToolCalls(ctx context.Context, accountID, runID string) ([]ToolCall, error)
	// RecordModelCall records one model call on its assembly and run and releases the
	// run's step claim; KindConflict when the run has already ended.
	RecordModelCall(ctx context.Context, accountID string, in ModelCallRecord) (Run, error)
	// RecordRequestedCalls records a model call that asked for tool calls together with
	// the calls, in one write: each call as RequestToolCall records it, in order, then the
	// call as RecordModelCall records it, without an end (the run awaits its client's
	// tools: its step claim and lease are released). It writes nothing when any call is
	// refused: KindNotFound when the run is unknown, KindConflict when it has ended or a
	// callId is taken, KindInvalid for a call of another run or one that names a retryOf.
	RecordRequestedCalls(ctx context.Context, accountID string, rec ModelCallRecord, calls []NewToolCall) ([]ToolCall, error)
	// ClaimRunStep claims a running run for one model call, so that two continuations
	// never call its model at once, writes lease on it and returns the run as claimed (read
	// under the claim). A run interrupted (its server died) is reopened: running again, its
	// error and end removed. A claim whose lease lapsed is taken over. KindNotFound when the
	// account has no such run; KindConflict when the run has otherwise ended or another call
	// holds it (with RetryAfter the seconds until that call's lease lapses). With
	// continuing (a continue's claim), also KindConflict when the generation path did not
	// start the run, or, naming toolCalls, when a call it requested has no result; nothing
	// is written then.
	ClaimRunStep(ctx context.Context, accountID, runID, claim string, lease RunLease, continuing bool) (Run, error)
	// ReleaseRunStep releases a claim that no model call followed.
	ReleaseRunStep(ctx context.Context, accountID, runID, claim string) error
	// BeginTurn writes a turn's user message (when msg is set; each run is then
	// TRIGGERED_BY it) and its runs in one transaction. When ctx carries a generation's
	// Idempotency-Key claim (WithTurnKey), the message's and the runs' ids are kept under
	// the key in the same transaction, so that a retry finds the turn (KeyedTurn); once a
	// retry has taken the key over, nothing is written (KindConflict naming Idempotency-Key).
	BeginTurn(ctx context.Context, accountID string, msg *NewMessage, runs []NewRun) (Message, []Run, error)
	// FinishTurn writes a completed call's assistant message and RecordModelCall in one
	// transaction.
	FinishTurn(ctx context.Context, accountID string, msg NewMessage, rec ModelCallRecord) (Message, error)
	// AssemblyTokens reads the token totals a recorded assembly counted (KindNotFound
	// otherwise): a retried turn answers them for a run whose answer was not stored.
	AssemblyTokens(ctx context.Context, accountID, assemblyID string) (GenerationTokens, error)
}

// RecordingAssembler builds a model call's context and records it in the background, so
// that the call can start before the record commits (it must commit before the answer).
type RecordingAssembler interface {
	// AssembleRecording returns the assembly and recorded, which waits for the record and
	// returns the assembly's timings with the record's time.
	AssembleRecording(ctx context.Context, accountID string, req AssemblyRequest) (a Assembly, recorded func() (Timings, error), err error)
	// Preview computes an assembly without recording it: what the policies decide now.
	Preview(ctx context.Context, accountID string, req AssemblyRequest) (Assembly, error)
}

// Generator runs turns: it assembles, calls providers and records what came back.
type Generator interface {
	// Generate runs a turn. KindInvalid names the field of a bad request; KindNotFound an
	// unknown id. A turn whose every run failed answers its result with a *ProviderError.
	Generate(ctx context.Context, accountID string, req GenerationRequest) (Generation, error)
	// Continue calls the model again for a run whose calls all have results: KindConflict
	// names a call still without one, or says the run has ended.
	Continue(ctx context.Context, accountID string, req ContinueRequest) (Generation, error)
	// Discuss runs a discussion: each speaker in turn, round after round, as a run of
	// kind discussion that answers the message before it. Its runs are answered in
	// speaking order; when every run failed, with a *ProviderError.
	Discuss(ctx context.Context, accountID string, req DiscussionRequest) (Generation, error)
	// Subagents starts a running run's children, each a subagent run of its own called
	// concurrently; a child that completes promotes its answer as its report, one that
	// fails a compact failure report. KindConflict when the parent has ended.
	Subagents(ctx context.Context, accountID string, req SubagentRequest) (Generation, error)
	// Resume calls a parent run again as parent_resume once every child has ended:
	// KindConflict names the children still running.
	Resume(ctx context.Context, accountID string, req ResumeRequest) (Generation, error)
}
