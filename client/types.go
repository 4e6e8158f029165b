package client

import (
	"encoding/json"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// The request bodies of DESIGN §5 and §6, with the contract's field names. Times are RFC
// 3339 strings, sent as written; `at` is a write's event time (the server stamps when it
// learned of it). Optional fields are left out of the JSON when empty, so the server's
// defaults apply.

// Conversation creates a conversation (POST /v1/conversations).
type Conversation struct {
	Title string `json:"title"`
	// Instructions are sent first by every assembly of the conversation (DESIGN §8).
	Instructions string `json:"instructions,omitempty"`
	At           string `json:"at,omitempty"`
}

// Participant adds a model configuration, persona or subagent to a conversation.
type Participant struct {
	// Kind is one of model.ParticipantKinds.
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Instructions are the participant's system prompt or persona, sent first (after the
	// conversation's) by every assembly for it (DESIGN §8).
	Instructions string `json:"instructions,omitempty"`
	At           string `json:"at,omitempty"`
}

// Instructions replaces the instructions of a conversation or a participant (PATCH); an
// empty text removes them.
type Instructions struct {
	Instructions string `json:"instructions"`
}

// Fork creates a branch after a message of its parent branch.
type Fork struct {
	ParentBranchID     string `json:"parentBranchId"`
	ForkAfterMessageID string `json:"forkAfterMessageId"`
	Name               string `json:"name"`
	At                 string `json:"at,omitempty"`
}

// Message appends a message to a branch.
type Message struct {
	// Role is one of model.MessageRoles.
	Role             string   `json:"role"`
	Content          string   `json:"content"`
	ParticipantID    string   `json:"participantId,omitempty"`
	RunID            string   `json:"runId,omitempty"`
	ParentMessageIDs []string `json:"parentMessageIds,omitempty"`
	// Visibility is one of model.Visibilities; empty means branch.
	Visibility string `json:"visibility,omitempty"`
	At         string `json:"at,omitempty"`
}

// Run starts a model run on a branch.
type Run struct {
	ParticipantID string `json:"participantId"`
	// RuntimeKind is one of model.RuntimeKinds.
	RuntimeKind      string `json:"runtimeKind"`
	TriggerMessageID string `json:"triggerMessageId,omitempty"`
	ParentRunID      string `json:"parentRunId,omitempty"`
	Provider         string `json:"provider,omitempty"`
	Model            string `json:"model,omitempty"`
	At               string `json:"at,omitempty"`
}

// RunEnd ends a run (PATCH /v1/runs/{id}).
type RunEnd struct {
	// Status is one of model.RunEndStatuses.
	Status string `json:"status"`
	At     string `json:"at,omitempty"`
}

// ToolCall records a call the model asked for.
type ToolCall struct {
	Tool string `json:"tool"`
	// Arguments are sent as written.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	CallID    string          `json:"callId"`
	// RetryOf is the failed call this one retries.
	RetryOf string `json:"retryOf,omitempty"`
	At      string `json:"at,omitempty"`
}

// ToolError is a failed call's error.
type ToolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ToolResult records a call's outcome, and optionally memories derived from its artifact.
type ToolResult struct {
	// Status is one of model.ToolResultStatuses.
	Status string `json:"status"`
	// Result is the raw result (any JSON), sent as written.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *ToolError      `json:"error,omitempty"`
	// Retryable is left out when nil (not retryable).
	Retryable              *bool    `json:"retryable,omitempty"`
	PrivacyClass           string   `json:"privacyClass,omitempty"`
	Visibility             string   `json:"visibility,omitempty"`
	SharedWithParticipants []string `json:"sharedWithParticipants,omitempty"`
	ToolVersion            string   `json:"toolVersion,omitempty"`
	Memories               []Memory `json:"memories,omitempty"`
	// Retention is how long the body is kept (DESIGN §10).
	Retention *model.Retention `json:"retention,omitempty"`
	At        string           `json:"at,omitempty"`
}

// Memory derives a memory from artifacts: POST /v1/memories, or one of a ToolResult's
// Memories (derived from its artifact besides DerivedFrom).
type Memory struct {
	DerivedFrom      []string          `json:"derivedFrom,omitempty"`
	Locators         map[string]string `json:"locators,omitempty"`
	Summary          string            `json:"summary"`
	Data             json.RawMessage   `json:"data,omitempty"`
	SafeSummary      string            `json:"safeSummary,omitempty"`
	Confidence       *float64          `json:"confidence,omitempty"`
	ConfidenceSource string            `json:"confidenceSource,omitempty"`
	Rationale        string            `json:"rationale,omitempty"`
	Limitations      string            `json:"limitations,omitempty"`
	// FreshnessClass is one of model.FreshnessClasses; empty means bounded.
	FreshnessClass         string   `json:"freshnessClass,omitempty"`
	ObservedAt             string   `json:"observedAt,omitempty"`
	StaleAfter             string   `json:"staleAfter,omitempty"`
	RevalidateWith         []string `json:"revalidateWith,omitempty"`
	Supersedes             []string `json:"supersedes,omitempty"`
	ConflictsWith          []string `json:"conflictsWith,omitempty"`
	PrivacyClass           string   `json:"privacyClass,omitempty"`
	Visibility             string   `json:"visibility,omitempty"`
	SharedWithParticipants []string `json:"sharedWithParticipants,omitempty"`
	At                     string   `json:"at,omitempty"`
}

// Skills records the skills, profiles and direct tools visible to a run.
type Skills struct {
	LoadedSkills   []string `json:"loadedSkills,omitempty"`
	ActiveProfiles []string `json:"activeProfiles,omitempty"`
	DirectTools    []string `json:"directTools,omitempty"`
	At             string   `json:"at,omitempty"`
}

// Checkpoint records a run's resumable state.
type Checkpoint struct {
	State      json.RawMessage `json:"state"`
	AssemblyID string          `json:"assemblyId,omitempty"`
	At         string          `json:"at,omitempty"`
}

// Promotion promotes a child run's calls, artifacts, memories and report to its parent.
type Promotion struct {
	ToolCallIDs []string `json:"toolCallIds,omitempty"`
	ArtifactIDs []string `json:"artifactIds,omitempty"`
	MemoryIDs   []string `json:"memoryIds,omitempty"`
	Report      string   `json:"report,omitempty"`
	// PrivacyClass and SafeSummary are the report's.
	PrivacyClass string `json:"privacyClass,omitempty"`
	SafeSummary  string `json:"safeSummary,omitempty"`
	At           string `json:"at,omitempty"`
}

// AssemblyRequest asks what the next model call of a participant on a branch sees.
type AssemblyRequest struct {
	BranchID      string `json:"branchId"`
	ParticipantID string `json:"participantId"`
	RunID         string `json:"runId,omitempty"`
	RuntimeKind   string `json:"runtimeKind,omitempty"`
	Provider      string `json:"provider,omitempty"`
	Model         string `json:"model,omitempty"`
	// TokenBudget is 0 for the policy version's default.
	TokenBudget      int      `json:"tokenBudget,omitempty"`
	ExactArtifactIDs []string `json:"exactArtifactIds,omitempty"`
	PolicyVersion    string   `json:"policyVersion,omitempty"`
	Now              string   `json:"now,omitempty"`
	AsOf             string   `json:"asOf,omitempty"`
	// Trace also lists every omitted record (Assembly.OmittedRefs).
	Trace bool `json:"trace,omitempty"`
}

// UserMessage is the user's message of a turn.
type UserMessage struct {
	Content string `json:"content"`
	At      string `json:"at,omitempty"`
}

// GenerationRequest is a turn (POST /v1/generations): assemble, call each participant's
// provider, record what came back.
type GenerationRequest struct {
	BranchID       string       `json:"branchId"`
	ParticipantIDs []string     `json:"participantIds"`
	UserMessage    *UserMessage `json:"userMessage,omitempty"`
	// ParentMessageIDs make the turn a branch submission.
	ParentMessageIDs []string `json:"parentMessageIds,omitempty"`
	// RuntimeKind is one of model.TurnRuntimeKinds; empty lets the server choose.
	RuntimeKind      string           `json:"runtimeKind,omitempty"`
	PolicyVersion    string           `json:"policyVersion,omitempty"`
	TokenBudget      int              `json:"tokenBudget,omitempty"`
	ExactArtifactIDs []string         `json:"exactArtifactIds,omitempty"`
	Tools            []model.ToolSpec `json:"tools,omitempty"`
	// ToolChoice is one of model.ToolChoices or an offered tool's name.
	ToolChoice      string   `json:"toolChoice,omitempty"`
	MaxOutputTokens int      `json:"maxOutputTokens,omitempty"`
	Temperature     *float64 `json:"temperature,omitempty"`
	// Stream asks for text/event-stream: GenerateStream sets it, Generate does not read
	// streams.
	Stream bool `json:"stream,omitempty"`
}

// ContinueRequest continues a run once every call it requested has a result
// (POST /v1/runs/{id}/continue), or resumes a parent run (POST /v1/runs/{id}/resume).
type ContinueRequest struct {
	TokenBudget int `json:"tokenBudget,omitempty"`
	// Tools nil reuses the tools the run is offered; a non-nil empty list offers none;
	// others replace the run's for its later calls too. ToolChoice empty likewise reuses
	// the run's, unless Tools are named.
	Tools           []model.ToolSpec `json:"tools,omitzero"`
	ToolChoice      string           `json:"toolChoice,omitempty"`
	MaxOutputTokens int              `json:"maxOutputTokens,omitempty"`
	Temperature     *float64         `json:"temperature,omitempty"`
	Stream          bool             `json:"stream,omitempty"`
}

// DiscussionRequest runs discussion rounds (POST /v1/discussions).
type DiscussionRequest struct {
	BranchID string `json:"branchId"`
	// ParticipantIDs is the speaking order.
	ParticipantIDs []string `json:"participantIds"`
	// Directive is the moderator's instruction, a system message on the branch.
	Directive string `json:"directive"`
	// Topic, when set, is the user message the first speaker answers.
	Topic           *UserMessage `json:"topic,omitempty"`
	Rounds          int          `json:"rounds,omitempty"`
	PolicyVersion   string       `json:"policyVersion,omitempty"`
	TokenBudget     int          `json:"tokenBudget,omitempty"`
	MaxOutputTokens int          `json:"maxOutputTokens,omitempty"`
	Temperature     *float64     `json:"temperature,omitempty"`
	Stream          bool         `json:"stream,omitempty"`
}

// Subagent is one child of a fan-out: its participant, its task and its tools.
type Subagent struct {
	ParticipantID string           `json:"participantId"`
	Task          string           `json:"task"`
	Tools         []model.ToolSpec `json:"tools,omitempty"`
}

// SubagentsRequest starts subagent runs of a running run (POST /v1/runs/{id}/subagents).
type SubagentsRequest struct {
	Children        []Subagent `json:"children"`
	PolicyVersion   string     `json:"policyVersion,omitempty"`
	TokenBudget     int        `json:"tokenBudget,omitempty"`
	MaxOutputTokens int        `json:"maxOutputTokens,omitempty"`
	Temperature     *float64   `json:"temperature,omitempty"`
	Stream          bool       `json:"stream,omitempty"`
}

// ScheduleRequest schedules turns (POST /v1/conversations/{id}/schedules).
type ScheduleRequest struct {
	// Cron has five fields, or six with seconds.
	Cron string `json:"cron"`
	// Timezone is an IANA zone; empty means UTC.
	Timezone string `json:"timezone,omitempty"`
	// BranchID is empty for the conversation's root branch.
	BranchID       string           `json:"branchId,omitempty"`
	ParticipantIDs []string         `json:"participantIds"`
	Prompt         string           `json:"prompt"`
	PolicyVersion  string           `json:"policyVersion,omitempty"`
	TokenBudget    int              `json:"tokenBudget,omitempty"`
	Tools          []model.ToolSpec `json:"tools,omitempty"`
	// Enabled is nil for enabled.
	Enabled *bool  `json:"enabled,omitempty"`
	At      string `json:"at,omitempty"`
}

// The response bodies.

// Created answers a create: the new record's id, and for a conversation its root branch.
type Created struct {
	ID       string `json:"id"`
	BranchID string `json:"branchId,omitempty"`
}

// RecordedResult answers a tool result: its artifact and the memories derived from it.
type RecordedResult struct {
	ArtifactID string   `json:"artifactId"`
	MemoryIDs  []string `json:"memoryIds"`
}

// Promoted answers a promotion with the report it made.
type Promoted struct {
	ReportID string `json:"reportId"`
}

// Assembly is an assembly as the API answers it (DESIGN §5).
type Assembly struct {
	ID             string                `json:"id"`
	ConversationID string                `json:"conversationId"`
	Request        model.AssemblyRequest `json:"request"`
	Messages       []model.ChatMessage   `json:"messages"`
	Tokens         model.TokenCounts     `json:"tokens"`
	// OverBudget says that the protected state and the instructions alone exceed the budget.
	OverBudget bool `json:"overBudget"`
	// InstructionsSha256 is the sha256 of the instructions the request starts with.
	InstructionsSha256 string               `json:"instructionsSha256"`
	Included           []model.IncludedItem `json:"included"`
	Omitted            map[string]int       `json:"omitted"`
	OmittedRefs        []model.OmittedRef   `json:"omittedRefs"`
	PolicyVersion      string               `json:"policyVersion"`
	AssemblerVersion   string               `json:"assemblerVersion"`
	TimingsMs          model.Timings        `json:"timingsMs"`
	CreatedAt          time.Time            `json:"createdAt"`
}

// Explanation says why an assembly included or omitted one record.
type Explanation = model.Explanation

// ReplayReport compares a replay of an assembly with its record.
type ReplayReport = model.ReplayReport

// Generation answers a turn: one run per participant.
type Generation = model.Generation

// PolicyRequest creates a policy version (POST /v1/policies): its name, the version it is
// based on (the account's default when empty) and the settings it changes; a setting left
// empty keeps the base's value. Promotion and Recall are sent as written (`null` turns
// them off).
type PolicyRequest struct {
	Name                   string              `json:"name"`
	BasedOn                string              `json:"basedOn,omitempty"`
	Description            *string             `json:"description,omitempty"`
	ProviderClasses        map[string][]string `json:"providerClasses,omitempty"`
	ZeroRetentionProviders []string            `json:"zeroRetentionProviders,omitempty"`
	NeverSent              []string            `json:"neverSent,omitempty"`
	TTL                    map[string]string   `json:"ttl,omitempty"`
	StaleHandling          *string             `json:"staleHandling,omitempty"`
	WindowMessages         *int                `json:"windowMessages,omitempty"`
	RehydrationBytes       *int64              `json:"rehydrationBytes,omitempty"`
	ConflictHandling       *string             `json:"conflictHandling,omitempty"`
	DefaultTokenBudget     *int                `json:"defaultTokenBudget,omitempty"`
	BudgetPriorities       []string            `json:"budgetPriorities,omitempty"`
	Promotion              json.RawMessage     `json:"promotion,omitempty"`
	Recall                 json.RawMessage     `json:"recall,omitempty"`
	Records                json.RawMessage     `json:"records,omitempty"`
	Retention              json.RawMessage     `json:"retention,omitempty"`
}

// DefaultPolicy sets the account's default version (PUT /v1/policies/default).
type DefaultPolicy struct {
	PolicyVersion string `json:"policyVersion"`
}

// Policy is a policy version as GET /v1/policies lists it.
type Policy = policy.Listed

// Policies lists the versions the account sees.
type Policies struct {
	Policies []Policy `json:"policies"`
}

// Providers lists the configured providers (GET /v1/providers) with what each receives
// under the account's default version.
type Providers struct {
	PolicyVersion string     `json:"policyVersion"`
	Providers     []Provider `json:"providers"`
}

// Provider is one configured provider.
type Provider struct {
	model.ProviderInfo
	Receives      []string `json:"receives"`
	ZeroRetention bool     `json:"zeroRetention"`
}
