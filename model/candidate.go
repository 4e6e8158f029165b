package model

import "time"

// RecordType names the type of a record an assembly judges, as its decisions, included
// items and explanations report it (DESIGN §5 `type`).
type RecordType string

// The record types an assembly judges.
const (
	TypeMessage    RecordType = "message"
	TypeToolCall   RecordType = "tool_call"
	TypeArtifact   RecordType = "artifact"
	TypeMemory     RecordType = "memory"
	TypeCheckpoint RecordType = "checkpoint"
	TypeSkills     RecordType = "skill_state"
	// A conversation and a participant are judged for their instructions alone.
	TypeConversation RecordType = "conversation"
	TypeParticipant  RecordType = "participant"
)

// Ordinal is the place of a lineage record's type among messages, tool calls, artifacts,
// memories, checkpoints and skill states (the order a lineage view lists them in), from 0;
// -1 for a type that is not a lineage record's.
func (t RecordType) Ordinal() int {
	switch t {
	case TypeMessage:
		return 0
	case TypeToolCall:
		return 1
	case TypeArtifact:
		return 2
	case TypeMemory:
		return 3
	case TypeCheckpoint:
		return 4
	case TypeSkills:
		return 5
	}
	return -1
}

// Visibility is who may see a record (DESIGN §3).
type Visibility string

// The visibilities of DESIGN §3, from the narrowest audience to the widest, and audit.
const (
	VisibilityParticipant  Visibility = "participant"
	VisibilityBranch       Visibility = "branch"
	VisibilityConversation Visibility = "conversation"
	VisibilityAudit        Visibility = "audit"
)

// ToolStatus is the status of a tool call, which its latest outcome (artifact) sets.
type ToolStatus string

// The statuses of a tool call and of a tool result (ToolResultStatuses).
const (
	ToolSucceeded ToolStatus = "succeeded"
	ToolFailed    ToolStatus = "failed"
	ToolDeferred  ToolStatus = "deferred"
	ToolPending   ToolStatus = "pending"
	ToolCancelled ToolStatus = "cancelled"
)

// Candidate is one record of the active lineage (or a conversation-visible record of another
// branch) with what the policies need to judge it: what every record has, who may see it,
// and the facts of its type in the field named after it (the other types' fields are
// zero). Raw payload bodies are never part of it; arguments are present only for unresolved
// calls and the assembly run's own calls.
type Candidate struct {
	Type      RecordType
	ID        string
	BranchID  string
	Seq       int64
	Depth     int64
	InLineage bool
	CreatedAt time.Time

	// Who may see the record and which providers may receive it: set on messages, tool
	// calls, artifacts and memories; a checkpoint or skill state belongs to its run.
	Visibility         Visibility
	OwnerParticipantID string
	OwnerRunID         string
	OwnerRunParentID   string
	OwnerRunStatus     string
	SharedWith         []string
	Promoted           bool
	PromotedTo         string
	PrivacyClass       string

	Message  MessageFacts
	Tool     ToolFacts
	Call     CallFacts
	Artifact ArtifactFacts
	Memory   MemoryFacts
	RunState RunStateFacts
}

// CandidatePointers points at each of cands, in order.
func CandidatePointers(cands []Candidate) []*Candidate {
	out := make([]*Candidate, len(cands))
	for i := range cands {
		out[i] = &cands[i]
	}
	return out
}

// MessageFacts are a message's role and text, and its speaker's name.
type MessageFacts struct {
	Role            string
	Content         string
	ParticipantName string
	// Stated are the values a user message states (extract.StatedValues, at most
	// extract.MaxStatedValues), worked out once when its record is read: its text never
	// changes, and every judgement of a lineage would otherwise scan every older turn again.
	Stated []StatedValue
}

// StatedValue is one value a message states, quoted exactly, with where it stands.
type StatedValue struct {
	Text    string // quoted exactly as in the message
	Locator string // a byte range "bytes=START-END" (END exclusive) into the message content
}

// ToolFacts are what tool calls and artifacts share: the tool, and the status and error of
// the outcome (for a call, those of its latest artifact in the lineage).
type ToolFacts struct {
	Name         string
	Status       ToolStatus
	ErrorCode    string
	ErrorMessage string
}

// CallFacts are a tool call's own: the provider's call id, its arguments (or their blob
// reference), whether its outcome may be retried, its retries and its outcomes, newest
// first.
type CallFacts struct {
	CallID       string
	Arguments    string
	ArgumentsRef string
	Retryable    bool
	RetryOf      string
	RetriedBy    []string
	ArtifactIDs  []string
}

// ArtifactFacts are an artifact's own: the call it answers and the sizes of its payloads.
type ArtifactFacts struct {
	ToolCallID  string
	ResultBytes int64
	ArgsBytes   int64
	// Redacted is set once the body is gone by retention: only its hashes and sizes stay.
	Redacted bool
}

// MemoryFacts are a memory's text, confidence, freshness, provenance and its links to the
// memories that supersede or contradict it.
type MemoryFacts struct {
	// Report is set on a promoted child report (a memory of kind promoted_report).
	Report  bool
	Summary string
	// Terms are the words of Summary that relevance compares (extract.Terms), worked out once
	// when the copy of a conversation takes the record: relevance is read against every
	// memory whenever the message answered changes. Nil when not worked out.
	Terms             []string
	SafeSummary       string
	Data              string
	Confidence        *float64
	FreshnessClass    string
	ObservedAt        time.Time
	StaleAfter        *time.Time
	RevalidateWith    []string
	SourceArtifactIDs []string
	LiveSourceIDs     []string
	// RedactedSourceIDs are the live sources whose bodies are gone by retention: nothing
	// to recall from them.
	RedactedSourceIDs []string
	// QuotesWhole is set on a memory that quotes its one source's body whole: there is
	// nothing more to recall from it.
	QuotesWhole   bool
	SupersededBy  []string
	ConflictsWith []string
}

// RunStateFacts are what checkpoints and skill states share: the run they belong to, and
// its state (a checkpoint's) or its loaded skills, profiles and tools (a skill state's).
type RunStateFacts struct {
	RunID          string
	State          string
	LoadedSkills   []string
	ActiveProfiles []string
	DirectTools    []string
}
