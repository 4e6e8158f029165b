// Package model holds ctxgraph's domain: the execution graph's records, the inputs that
// create them, the service interfaces the stores implement and the error type. It imports
// no web framework, logger, validator or database driver.
package model

import (
	"encoding/json"
	"time"
)

// Enumerations of DESIGN §2 and §3. Their values are part of the REST contract.
var (
	ParticipantKinds   = []string{"model", "persona", "subagent"}
	MessageRoles       = []string{"user", "assistant", "system"}
	RuntimeKinds       = []string{string(RuntimeChat), string(RuntimeMultiModel), string(RuntimeDiscussion), string(RuntimeSubagent), string(RuntimeParentResume), string(RuntimeScheduled), string(RuntimeBranchSubmission), string(RuntimeMemoryExtraction)}
	RunEndStatuses     = []string{"completed", "failed", "timed_out"}
	ToolResultStatuses = []string{string(ToolSucceeded), string(ToolFailed), string(ToolDeferred), string(ToolPending), string(ToolCancelled)}
	Visibilities       = []string{string(VisibilityParticipant), string(VisibilityBranch), string(VisibilityConversation), string(VisibilityAudit)}
	FreshnessClasses   = []string{"volatile", "session", "bounded", "durable", "permanent"}
	// PrivacyClasses lists the classes in order of restriction, least first. A class outside
	// this list is accepted and treated as the most restrictive of all (fail closed).
	PrivacyClasses = []string{"public", "internal", "user_private", "oauth_derived", "google_derived", "secret"}
)

// Defaults applied when a write leaves the field out.
const (
	DefaultArtifactVisibility = string(VisibilityParticipant)
	DefaultMessageVisibility  = string(VisibilityBranch)
	DefaultPrivacyClass       = "user_private"
	DefaultFreshnessClass     = "bounded"
	RunStatusRunning          = "running"
	MemoryKindTool            = "tool"
	MemoryKindReport          = "promoted_report"
)

// PromotionStructural is the promotionPolicy of a memory the runtime derived with the
// structural extractor (DESIGN §7). A memory a client or a summariser writes from the same
// artifacts supersedes it.
const PromotionStructural = "promotion.structural"

// PromotionSummarizer is the promotionPolicy of a memory the optional model summariser
// wrote (DESIGN §7): it supersedes the structural memory of the same artifact and keeps its
// provenance.
const PromotionSummarizer = "promotion.summarizer"

// RuntimeKind is what a run is for (DESIGN §3): how it was started, which decides some of
// what its assemblies include. It is a string on the wire and in the graph.
type RuntimeKind string

// The runtime kinds of DESIGN §3.
const (
	// RuntimeChat is a turn of one participant.
	RuntimeChat RuntimeKind = "chat"
	// RuntimeMultiModel is a turn of several participants answering the same message.
	RuntimeMultiModel RuntimeKind = "multi_model"
	// RuntimeDiscussion is a speaker's run in a discussion: its directive is kept.
	RuntimeDiscussion RuntimeKind = "discussion"
	// RuntimeSubagent is a child run: its answer is private to it and promoted as a report.
	RuntimeSubagent RuntimeKind = "subagent"
	// RuntimeParentResume is a parent's call once its children have ended.
	RuntimeParentResume RuntimeKind = "parent_resume"
	// RuntimeScheduled is a run a schedule started.
	RuntimeScheduled RuntimeKind = "scheduled"
	// RuntimeBranchSubmission is a turn whose user message replies to chosen messages.
	RuntimeBranchSubmission RuntimeKind = "branch_submission"
	// RuntimeMemoryExtraction is a summariser's run (DESIGN §7): a model call that
	// summarises one tool result into a memory.
	RuntimeMemoryExtraction RuntimeKind = "memory_extraction"
)

// PrivacyRank orders privacy classes by restriction; unknown classes rank above every known
// one, so that combining them keeps the unknown (and therefore restricted) class.
func PrivacyRank(class string) int {
	for i, c := range PrivacyClasses {
		if c == class {
			return i
		}
	}
	return len(PrivacyClasses)
}

// VisibilityRank orders visibilities from the widest to the narrowest audience.
func VisibilityRank(v string) int {
	switch v {
	case "conversation":
		return 0
	case "branch":
		return 1
	case "participant":
		return 2
	default:
		return 3
	}
}

// Contains reports whether values holds v.
func Contains(values []string, v string) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

// Stamp is the bi-temporal pair every record carries: when it happened (event time, given by
// the client as `at`) and when ctxgraph learned of it.
type Stamp struct {
	CreatedAt  time.Time `json:"createdAt"`
	RecordedAt time.Time `json:"recordedAt"`
}

// Conversation is a chat owned by an account, with its branches and participants.
type Conversation struct {
	ID           string        `json:"id"`
	Title        string        `json:"title"`
	BranchID     string        `json:"branchId"`
	Branches     []Branch      `json:"branches"`
	Participants []Participant `json:"participants"`
	// Instructions are what every assembly of the conversation sends first, before the
	// participant's own (DESIGN §8); empty when it has none.
	Instructions string `json:"instructions"`
	Stamp
}

// ConversationQuery asks for one page of an account's conversations.
type ConversationQuery struct {
	// Cursor is the NextCursor of the page before; empty for the first.
	Cursor string
	Limit  int
	// Title, when set, keeps the conversations whose title contains it, ignoring case.
	Title string
}

// ConversationSummary is a conversation as GET /v1/conversations lists it.
type ConversationSummary struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	BranchID string `json:"branchId"`
	Stamp
}

// ConversationPage is one page of an account's conversations, newest first; NextCursor,
// when set, asks for the page after it.
type ConversationPage struct {
	Conversations []ConversationSummary `json:"conversations"`
	NextCursor    *string               `json:"nextCursor"`
}

// Branch is an ordered path through a conversation; a fork inherits its parent's records up
// to and including the message it was forked after.
type Branch struct {
	ID                 string `json:"id"`
	ConversationID     string `json:"conversationId"`
	Name               string `json:"name"`
	ParentBranchID     string `json:"parentBranchId,omitempty"`
	ForkAfterMessageID string `json:"forkAfterMessageId,omitempty"`
	ForkAfterSeq       int64  `json:"forkAfterSeq,omitempty"`
	Stamp
}

// Participant is a model configuration, persona or subagent taking part in a conversation.
type Participant struct {
	ID             string `json:"id"`
	ConversationID string `json:"conversationId"`
	Kind           string `json:"kind"`
	Name           string `json:"name"`
	Provider       string `json:"provider"`
	Model          string `json:"model"`
	// Instructions are the participant's system prompt or persona, sent first in every
	// assembly for it (DESIGN §8); empty when it has none.
	Instructions string `json:"instructions"`
	Stamp
}

// MaxInstructionsBytes bounds the instructions of a conversation or a participant.
const MaxInstructionsBytes = 64 << 10

// Message is one turn of user-facing history.
type Message struct {
	ID               string   `json:"id"`
	ConversationID   string   `json:"conversationId"`
	BranchID         string   `json:"branchId"`
	Seq              int64    `json:"seq"`
	Role             string   `json:"role"`
	Content          string   `json:"content"`
	ParticipantID    string   `json:"participantId,omitempty"`
	RunID            string   `json:"runId,omitempty"`
	ParentMessageIDs []string `json:"parentMessageIds"`
	Visibility       string   `json:"visibility"`
	Stamp
}

// Run is one generation attempt of a participant (a ModelRun node).
type Run struct {
	ID               string      `json:"id"`
	ConversationID   string      `json:"conversationId"`
	BranchID         string      `json:"branchId"`
	Seq              int64       `json:"seq"`
	ParticipantID    string      `json:"participantId"`
	RuntimeKind      RuntimeKind `json:"runtimeKind"`
	Status           string      `json:"status"`
	Provider         string      `json:"provider"`
	Model            string      `json:"model"`
	TriggerMessageID string      `json:"triggerMessageId,omitempty"`
	ParentRunID      string      `json:"parentRunId,omitempty"`
	StartedAt        time.Time   `json:"startedAt"`
	EndedAt          *time.Time  `json:"endedAt,omitempty"`
	RecordedAt       time.Time   `json:"recordedAt"`
	// What the provider answered the run's last model call, on the generation path.
	ResponseID    string         `json:"responseId,omitempty"`
	ResponseModel string         `json:"responseModel,omitempty"`
	FinishReason  string         `json:"finishReason,omitempty"`
	Usage         *Usage         `json:"usage,omitempty"`
	LatencyMs     float64        `json:"latencyMs,omitempty"`
	ModelCalls    int64          `json:"modelCalls,omitempty"`
	LastAssembly  string         `json:"lastAssemblyId,omitempty"`
	PolicyVersion string         `json:"policyVersion,omitempty"`
	Error         *ProviderError `json:"error,omitempty"`
	// Tools and ToolChoice are what the generation path offers the run's model calls: those
	// it started with, or the latest a continue or a resume named (DESIGN §8).
	Tools      []ToolSpec `json:"tools,omitempty"`
	ToolChoice string     `json:"toolChoice,omitempty"`
	// Interruptions counts the times the run was ended mid-call by what befell its server
	// (it died, or Neo4j was unavailable) and a later call reopened it (DESIGN
	// §6); internal, not answered.
	Interruptions int64 `json:"-"`
}

// Resumable says whether the run ended mid-call by what befell its server, not by its
// model or provider: the server died (interrupted) or could not record the call while Neo4j
// was unavailable. Its model may be called again.
func (r Run) Resumable() bool {
	return r.Status == RunFailed && r.Error != nil && (r.Error.Code == Interrupted || r.Error.Code == DatabaseUnavailable)
}

// ToolError is a failed tool execution's error, kept exactly as reported.
type ToolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ToolCall is a function call a model asked for, with its current status.
type ToolCall struct {
	ID             string          `json:"id"`
	ConversationID string          `json:"conversationId"`
	BranchID       string          `json:"branchId"`
	RunID          string          `json:"runId"`
	Seq            int64           `json:"seq"`
	CallID         string          `json:"callId"`
	Tool           string          `json:"tool"`
	Arguments      json.RawMessage `json:"arguments"`
	Status         string          `json:"status"`
	Retryable      bool            `json:"retryable"`
	RetryOf        string          `json:"retryOf,omitempty"`
	Error          *ToolError      `json:"error,omitempty"`
	ArtifactIDs    []string        `json:"artifactIds,omitempty"`
	// Freshness is what the tool's declaration on the generation request said of its
	// results' freshness (DESIGN §7); nil when it said nothing.
	Freshness *ToolFreshness `json:"freshness,omitempty"`
	// Retention is what the tool's declaration said of how long its results' bodies are
	// kept (DESIGN §10).
	Retention *Retention `json:"retention,omitempty"`
	Stamp
}

// ToolFreshness is a tool's declaration of how long its results stay current: the class of
// the memories derived from them, how long after they were observed they go stale, and the
// tools that revalidate them.
type ToolFreshness struct {
	Class          string   `json:"freshnessClass,omitempty"`
	StaleAfter     string   `json:"staleAfter,omitempty"`
	RevalidateWith []string `json:"revalidateWith,omitempty"`
}

// Artifact is the raw, durable record of one tool execution (a ToolArtifact node), without
// its payloads: those are read through ArtifactRaw.
type Artifact struct {
	ID                     string      `json:"id"`
	ConversationID         string      `json:"conversationId"`
	BranchID               string      `json:"branchId"`
	ToolCallID             string      `json:"toolCallId"`
	Seq                    int64       `json:"seq"`
	Tool                   string      `json:"tool"`
	Status                 string      `json:"status"`
	Error                  *ToolError  `json:"error,omitempty"`
	ArgsSha256             string      `json:"argsSha256"`
	ArgsBytes              int64       `json:"argsBytes"`
	ArgsRef                string      `json:"argsRef,omitempty"`
	ResultSha256           string      `json:"resultSha256"`
	ResultBytes            int64       `json:"resultBytes"`
	ResultRef              string      `json:"resultRef,omitempty"`
	PrivacyClass           string      `json:"privacyClass"`
	Visibility             string      `json:"visibility"`
	SharedWithParticipants []string    `json:"sharedWithParticipants"`
	OwnerParticipantID     string      `json:"ownerParticipantId"`
	OwnerRunID             string      `json:"ownerRunId"`
	RuntimeKind            RuntimeKind `json:"runtimeKind"`
	ToolVersion            string      `json:"toolVersion,omitempty"`
	ActiveSkills           []string    `json:"activeSkills"`
	Promoted               bool        `json:"promoted"`
	// Retention is how long its body is kept, where it came from (RetentionSource:
	// result, tool or policy) and when the body goes (RetainUntil); RedactedAt when it went.
	// Absent: kept.
	Retention       *Retention `json:"retention,omitempty"`
	RetentionSource string     `json:"retentionSource,omitempty"`
	RetainUntil     *time.Time `json:"retainUntil,omitempty"`
	RedactedAt      *time.Time `json:"redactedAt,omitempty"`
	Stamp
}

// ArtifactRaw is an artifact's exact captured payloads, verified against their hashes.
type ArtifactRaw struct {
	ArtifactID string          `json:"artifactId"`
	Arguments  json.RawMessage `json:"arguments"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *ToolError      `json:"error,omitempty"`
	// RedactedAt is when the result's body went by retention (DESIGN §10): the result is
	// absent from then on; the arguments stay.
	RedactedAt *time.Time `json:"redactedAt,omitempty"`
}

// Memory is a compact, model-facing record derived from artifacts (a ToolMemory node). A
// promoted child report is a memory of kind promoted_report.
type Memory struct {
	ID               string          `json:"id"`
	ConversationID   string          `json:"conversationId"`
	BranchID         string          `json:"branchId"`
	Seq              int64           `json:"seq"`
	Kind             string          `json:"kind"`
	Summary          string          `json:"summary"`
	Data             json.RawMessage `json:"data,omitempty"`
	SafeSummary      string          `json:"safeSummary,omitempty"`
	Confidence       *float64        `json:"confidence,omitempty"`
	ConfidenceSource string          `json:"confidenceSource,omitempty"`
	Rationale        string          `json:"rationale,omitempty"`
	Limitations      string          `json:"limitations,omitempty"`
	// QuotesWhole says the memory quotes its source's body whole (a derived memory of a
	// small result): nothing more of it can be recalled.
	QuotesWhole            bool       `json:"quotesWhole,omitempty"`
	PrivacyClass           string     `json:"privacyClass"`
	FreshnessClass         string     `json:"freshnessClass"`
	ObservedAt             time.Time  `json:"observedAt"`
	StaleAfter             *time.Time `json:"staleAfter,omitempty"`
	RevalidateWith         []string   `json:"revalidateWith"`
	ProvenanceLocators     []string   `json:"provenanceLocators"`
	ResolutionStatus       string     `json:"resolutionStatus"`
	RepairAttempts         int64      `json:"repairAttempts"`
	PromotionPolicy        string     `json:"promotionPolicy,omitempty"`
	Visibility             string     `json:"visibility"`
	SharedWithParticipants []string   `json:"sharedWithParticipants"`
	OwnerParticipantID     string     `json:"ownerParticipantId"`
	OwnerRunID             string     `json:"ownerRunId"`
	DerivedFrom            []string   `json:"derivedFrom"`
	ProvenanceBroken       bool       `json:"provenanceBroken"`
	Supersedes             []string   `json:"supersedes"`
	SupersededBy           []string   `json:"supersededBy"`
	ConflictsWith          []string   `json:"conflictsWith"`
	Promoted               bool       `json:"promoted"`
	PromotedToRunID        string     `json:"promotedToRunId,omitempty"`
	Stamp
}

// SkillState is the skills, profiles and direct tools visible to a run.
type SkillState struct {
	ID             string   `json:"id"`
	RunID          string   `json:"runId"`
	Seq            int64    `json:"seq"`
	LoadedSkills   []string `json:"loadedSkills"`
	ActiveProfiles []string `json:"activeProfiles"`
	DirectTools    []string `json:"directTools"`
	Stamp
}

// Checkpoint is resumable runtime state recorded between action boundaries.
type Checkpoint struct {
	ID         string          `json:"id"`
	RunID      string          `json:"runId"`
	Seq        int64           `json:"seq"`
	State      json.RawMessage `json:"state"`
	AssemblyID string          `json:"assemblyId,omitempty"`
	Stamp
}

// Promotion is the result of promoting a child run's work to its parent.
type Promotion struct {
	ReportID          string   `json:"reportId"`
	ParentRunID       string   `json:"parentRunId"`
	PromotedArtifacts []string `json:"promotedArtifactIds"`
	PromotedMemories  []string `json:"promotedMemoryIds"`
	PromotedToolCalls []string `json:"promotedToolCallIds"`
}

// HistoryItem is one entry of the user-facing transcript: a message, or a compact card for a
// tool call (tool, status and error code only, never its arguments or result).
type HistoryItem struct {
	Type            string    `json:"type"`
	ID              string    `json:"id"`
	BranchID        string    `json:"branchId"`
	Seq             int64     `json:"seq"`
	Role            string    `json:"role,omitempty"`
	Content         string    `json:"content,omitempty"`
	ParticipantID   string    `json:"participantId,omitempty"`
	ParticipantName string    `json:"participantName,omitempty"`
	RunID           string    `json:"runId,omitempty"`
	Tool            string    `json:"tool,omitempty"`
	Status          string    `json:"status,omitempty"`
	ErrorCode       string    `json:"errorCode,omitempty"`
	CreatedAt       time.Time `json:"createdAt"`
}

// History is the transcript of a branch's lineage, oldest first.
type History struct {
	BranchID string        `json:"branchId"`
	Lineage  []string      `json:"lineage"`
	Items    []HistoryItem `json:"items"`
}
