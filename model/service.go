package model

import (
	"context"
	"encoding/json"
	"time"
)

// NewConversation creates a conversation with its root branch `main`.
type NewConversation struct {
	Title        string
	Instructions string
	At           *time.Time
}

// NewParticipant adds a participant to a conversation.
type NewParticipant struct {
	ConversationID string
	Kind           string
	Name           string
	Provider       string
	Model          string
	Instructions   string
	At             *time.Time
}

// NewBranch forks a branch after a message of its parent's lineage.
type NewBranch struct {
	ConversationID     string
	ParentBranchID     string
	ForkAfterMessageID string
	Name               string
	At                 *time.Time
}

// NewMessage appends a message to a branch. Without ParentMessageIDs it replies to the
// latest message of the branch's lineage.
type NewMessage struct {
	BranchID         string
	Role             string
	Content          string
	ParticipantID    string
	RunID            string
	ParentMessageIDs []string
	Visibility       string
	At               *time.Time
	// Speaker, when the caller knows it, is the name of the message's participant: the
	// generation path's answer is then written without reading it.
	Speaker string
}

// NewRun starts a model run on a branch.
type NewRun struct {
	BranchID         string
	ParticipantID    string
	RuntimeKind      RuntimeKind
	TriggerMessageID string
	ParentRunID      string
	Provider         string
	Model            string
	// Tools and ToolChoice are what the generation path offers the run's model calls.
	Tools      []ToolSpec
	ToolChoice string
	At         *time.Time
	// Lease, when set, is the lease of the server that serves the run's first model call.
	Lease RunLease
}

// RunEnd finishes a running run.
type RunEnd struct {
	RunID  string
	Status string
	At     *time.Time
}

// NewToolCall records a call a model requested.
type NewToolCall struct {
	RunID     string
	Tool      string
	Arguments json.RawMessage
	CallID    string
	RetryOf   string
	// Freshness is the tool's declaration, when the request that offered it made one;
	// Retention likewise.
	Freshness *ToolFreshness
	Retention *Retention
	At        *time.Time
}

// ToolResult records a tool call's outcome; the raw arguments and result are captured whole
// in a new artifact before anything derived from them is made.
type ToolResult struct {
	ToolCallID             string
	Status                 string
	Result                 json.RawMessage
	Error                  *ToolError
	Retryable              bool
	PrivacyClass           string
	Visibility             string
	SharedWithParticipants []string
	ToolVersion            string
	Memories               []NewMemory
	// Retention is how long the body is kept; nil takes the tool's declaration, else the
	// policy's rule for the tool, else keep.
	Retention *Retention
	At        *time.Time
}

// ToolResultRecorded answers a recorded tool result.
type ToolResultRecorded struct {
	ArtifactID string   `json:"artifactId"`
	MemoryIDs  []string `json:"memoryIds"`
}

// NewMemory derives a memory from one or more artifacts. Owner, branch and visibility come
// from the sources; privacy is the most restrictive of theirs unless named.
type NewMemory struct {
	DerivedFrom []string
	Locators    map[string]string
	// QuotedLocators locate, in the first source, each value the memory quotes (a JSON
	// Pointer, or a line or byte range): a derived memory names one per value.
	QuotedLocators []string
	// QuotesWhole says the memory quotes its first source's body whole.
	QuotesWhole            bool
	Summary                string
	Data                   json.RawMessage
	SafeSummary            string
	Confidence             *float64
	ConfidenceSource       string
	Rationale              string
	Limitations            string
	FreshnessClass         string
	ObservedAt             *time.Time
	StaleAfter             *time.Time
	RevalidateWith         []string
	Supersedes             []string
	ConflictsWith          []string
	PrivacyClass           string
	Visibility             string
	SharedWithParticipants []string
	PromotionPolicy        string
	At                     *time.Time
}

// NewSkillState records the skills visible to a run.
type NewSkillState struct {
	RunID          string
	LoadedSkills   []string
	ActiveProfiles []string
	DirectTools    []string
	At             *time.Time
}

// NewCheckpoint records resumable state of a run.
type NewCheckpoint struct {
	RunID      string
	State      json.RawMessage
	AssemblyID string
	At         *time.Time
}

// NewPromotion promotes a child run's tool calls (with their artifacts) and memories to its
// parent run, with a report for the parent.
type NewPromotion struct {
	RunID       string
	ToolCallIDs []string
	MemoryIDs   []string
	ArtifactIDs []string
	Report      string
	// ReportPrivacyClass is the report's class when the promotion names one; otherwise it
	// is the strictest among the promoted artifacts, else the default. ReportSafeSummary is
	// what a provider that may not receive that class sees of the report.
	ReportPrivacyClass string
	ReportSafeSummary  string
	At                 *time.Time
}

// ExecutionGraph writes and reads the execution graph of one account. Every method is
// scoped to accountID: ids of other accounts answer KindNotFound exactly like ids that do
// not exist. Unless noted, methods return KindInvalid for input that contradicts the graph
// (naming the field), KindNotFound for unknown ids, KindUnavailable when the database cannot
// be reached and KindInternal otherwise. Each write is one transaction.
type ExecutionGraph interface {
	// CreateConversation creates a conversation and its root branch `main`.
	CreateConversation(ctx context.Context, accountID string, in NewConversation) (Conversation, error)
	// Conversation reads a conversation with its branches and participants.
	Conversation(ctx context.Context, accountID, id string) (Conversation, error)
	// Conversations lists a page of an account's conversations, newest first, as q asks; a
	// bad cursor is KindInvalid.
	Conversations(ctx context.Context, accountID string, q ConversationQuery) (ConversationPage, error)
	// DeleteConversation deletes a conversation and everything under it, blobs included.
	DeleteConversation(ctx context.Context, accountID, id string) error
	// AddParticipant adds a participant to a conversation.
	AddParticipant(ctx context.Context, accountID string, in NewParticipant) (Participant, error)
	// Participant reads a participant.
	Participant(ctx context.Context, accountID, id string) (Participant, error)
	// SetParticipantInstructions replaces a participant's instructions; the text they
	// replace stays readable by assemblies whose asOf is before the change (replay).
	SetParticipantInstructions(ctx context.Context, accountID, id, instructions string) (Participant, error)
	// SetConversationInstructions replaces a conversation's instructions, keeping the text
	// they replace as SetParticipantInstructions does.
	SetConversationInstructions(ctx context.Context, accountID, id, instructions string) (Conversation, error)
	// ForkBranch forks a branch after a message of the parent's lineage.
	ForkBranch(ctx context.Context, accountID string, in NewBranch) (Branch, error)
	// AppendMessage appends a message to a branch.
	AppendMessage(ctx context.Context, accountID string, in NewMessage) (Message, error)
	// History reads the user-facing transcript of a branch's lineage.
	History(ctx context.Context, accountID, branchID string) (History, error)
	// StartRun starts a run on a branch.
	StartRun(ctx context.Context, accountID string, in NewRun) (Run, error)
	// Run reads a run.
	Run(ctx context.Context, accountID, id string) (Run, error)
	// FinishRun ends a running run; KindConflict when it has already ended.
	FinishRun(ctx context.Context, accountID string, in RunEnd) (Run, error)
	// RequestToolCall records a tool call requested by a run.
	RequestToolCall(ctx context.Context, accountID string, in NewToolCall) (ToolCall, error)
	// ToolCall reads a tool call.
	ToolCall(ctx context.Context, accountID, id string) (ToolCall, error)
	// RecordToolResult captures a tool call's outcome as an artifact, with optional memories
	// (without them, the memory its Promoter derives);
	// KindConflict when the call already has a final outcome.
	RecordToolResult(ctx context.Context, accountID string, in ToolResult) (ToolResultRecorded, error)
	// DeriveMemory derives a memory from artifacts.
	DeriveMemory(ctx context.Context, accountID string, in NewMemory) (Memory, error)
	// Memory reads a memory with its provenance and supersession links.
	Memory(ctx context.Context, accountID, id string) (Memory, error)
	// Artifact reads an artifact's metadata.
	Artifact(ctx context.Context, accountID, id string) (Artifact, error)
	// ArtifactRaw reads an artifact's exact payloads, verified against their hashes
	// (KindInternal when a payload does not match its hash).
	ArtifactRaw(ctx context.Context, accountID, id string) (ArtifactRaw, error)
	// DeleteArtifact removes an artifact and its raw payloads; derived memories remain with
	// broken provenance.
	DeleteArtifact(ctx context.Context, accountID, id string) error
	// EraseArtifact erases an artifact and everything derived only from it, or with dryRun
	// answers what would go (DESIGN §10, Erasure); KindNotFound for an unknown id.
	EraseArtifact(ctx context.Context, accountID, id string, dryRun bool) (Erasure, error)
	// RecordSkills records the skill state of a run.
	RecordSkills(ctx context.Context, accountID string, in NewSkillState) (SkillState, error)
	// RecordCheckpoint records a checkpoint of a run.
	RecordCheckpoint(ctx context.Context, accountID string, in NewCheckpoint) (Checkpoint, error)
	// Promote promotes a child run's work to its parent run; KindInvalid when the run has no
	// parent.
	Promote(ctx context.Context, accountID string, in NewPromotion) (Promotion, error)
}

// IdempotentResponse is the first response given to a write that carried an
// Idempotency-Key, kept so that a retry gets it again.
type IdempotentResponse struct {
	RequestHash string
	Status      int
	Body        []byte
}

// IdempotencyClaim is a keyed request's hold on its Idempotency-Key while it runs. It
// travels in the request's context to the store, which stores the response in the same
// transaction as the write it answers, so that the write and its stored response commit
// or fail together.
type IdempotencyClaim struct {
	AccountID, Key, Claim string
	// Hold is how long the claim holds against a retry while its request runs.
	Hold time.Duration
	// Status is the HTTP status the write's result answers with; the handler sets it.
	Status int
	// Answered is set by the store once a transaction that stored the response committed.
	Answered bool
	// Turn is what an earlier request with the key recorded of its turn before it was
	// interrupted (its server died): a retry completes that turn instead of writing it again.
	Turn *KeyedTurn
}

// KeyedTurn is the turn a generation request began under its Idempotency-Key: its user
// message (empty when none) and its runs, in participant order.
type KeyedTurn struct {
	UserMessageID string
	RunIDs        []string
}

// claimKey is where a context carries an Idempotency-Key claim: the claim a write answers,
// or (turn) the claim a turn is kept under.
type claimKey struct{ turn bool }

func claimIn(ctx context.Context, k claimKey) *IdempotencyClaim {
	c, _ := ctx.Value(k).(*IdempotencyClaim)
	return c
}

// WithIdempotencyClaim returns ctx carrying claim.
func WithIdempotencyClaim(ctx context.Context, claim *IdempotencyClaim) context.Context {
	return context.WithValue(ctx, claimKey{}, claim)
}

// IdempotencyClaimOf returns the claim ctx carries, or nil.
func IdempotencyClaimOf(ctx context.Context) *IdempotencyClaim { return claimIn(ctx, claimKey{}) }

// WithTurnKey returns ctx carrying the Idempotency-Key claim of a generation request, under
// which BeginTurn keeps the turn it begins. It is apart from WithIdempotencyClaim: the
// writes of a turn do not answer the request, its end does.
func WithTurnKey(ctx context.Context, claim *IdempotencyClaim) context.Context {
	return context.WithValue(ctx, claimKey{turn: true}, claim)
}

// TurnKeyOf returns the claim WithTurnKey put in ctx, or nil.
func TurnKeyOf(ctx context.Context) *IdempotencyClaim { return claimIn(ctx, claimKey{turn: true}) }

// IdempotencyStore keeps the first response of each keyed write.
type IdempotencyStore interface {
	// ClaimIdempotencyKey reserves key for a request and returns its claim; or it returns
	// the stored response when the key was completed. KindConflict when a request with the
	// key is still in flight or the key was used for another request; KindNotFound when
	// what the first request created has since been deleted. A claim is held for hold: a
	// retry takes over a claim still pending after that long (its request died), so hold
	// must outlast the longest run of the request.
	ClaimIdempotencyKey(ctx context.Context, accountID, key, requestHash string, hold time.Duration) (*IdempotencyClaim, IdempotentResponse, error)
	// CompleteIdempotencyKey stores the response of a claimed request whose write did not
	// store it (a request that writes nothing). KindConflict when the claim was taken over.
	CompleteIdempotencyKey(ctx context.Context, claim *IdempotencyClaim, resp IdempotentResponse) error
	// ReleaseIdempotencyKey frees a key whose request failed, so that a retry runs again;
	// while Neo4j does not answer, it keeps trying in the background.
	ReleaseIdempotencyKey(ctx context.Context, claim *IdempotencyClaim)
}

// BlobStore keeps large raw payloads outside the graph, named by their sha256. Payloads
// are shared by content across accounts, so a payload may be removed only when no record
// references it and no write that is about to reference it holds a claim on it.
type BlobStore interface {
	// Put stores data and returns its reference ("sha256:<hex>") with a claim on it that
	// lasts until release is called: the writer calls release once the graph write that
	// references the payload has committed or failed. Storing the same bytes twice writes
	// them once. Kinds: unavailable.
	Put(ctx context.Context, data []byte) (ref string, release func(), err error)
	// Get reads the payload of ref and verifies its hash (KindInternal on mismatch,
	// KindNotFound when missing).
	Get(ctx context.Context, ref string) ([]byte, error)
	// Remove deletes those of refs that no claim holds and that unreferenced reports
	// unreferenced. A Put of one of them that claims it after the claims were checked
	// still ends with the payload stored: the directory store locks the payloads against
	// Put from the check to the removal, the object store lets the Put cancel the removal.
	// Kinds: those of unreferenced, unavailable.
	Remove(ctx context.Context, refs []string, unreferenced func(ctx context.Context, refs []string) ([]string, error)) error
	// Refs lists the references of every stored payload, and removes what a crashed writer
	// left behind (temporary files and claims older than the store's stale age). Kinds:
	// unavailable.
	Refs(ctx context.Context) ([]string, error)
}

// Pinger reports whether the database answers.
type Pinger interface {
	// Ping returns KindUnavailable when the database does not answer.
	Ping(ctx context.Context) error
}

// Promoter decides the memory the runtime derives from a tool result recorded without
// client memories (DESIGN §7), under the account's policy. ok is false when it derives none
// (the policy derives nothing, or the outcome is not a final success: failed, pending and
// deferred calls stay recovery state). observedAt is when the result was recorded (its event
// time). The memory's sources, owner and visibility are the artifact's, filled in by the
// store.
type Promoter interface {
	PromoteResult(ctx context.Context, accountID string, call ToolCall, result ToolResult, observedAt time.Time) (memory NewMemory, ok bool)
	// RetentionFor is the account's default policy version's retention for the results of
	// tool (DESIGN §10); nil keeps them.
	RetentionFor(ctx context.Context, accountID, tool string) *Retention
}

// StoredPolicy is one policy version as the graph keeps it (DESIGN §8): its id
// (`name@hash`), its name, the full definition as JSON (what the id hashes), where it came
// from (PolicyOriginEmbedded: stored the first time an assembly recorded under it or it was
// made an account's default; PolicyOriginAccount: created by POST /v1/policies) and when it
// was first stored.
type StoredPolicy struct {
	ID         string
	Name       string
	Definition string
	Origin     string
	CreatedAt  time.Time
}

// Origins of a stored policy version.
const (
	PolicyOriginEmbedded = "embedded"
	PolicyOriginAccount  = "account"
)

// PolicyStore keeps each account's policy versions, immutable and content-addressed, and
// its default version (DESIGN §8).
type PolicyStore interface {
	// SavePolicy stores p for the account unless a version of its id is stored already
	// (a version is immutable: the stored one is kept). It returns the stored version and
	// whether this call created it. Kinds: unavailable, internal.
	SavePolicy(ctx context.Context, accountID string, p StoredPolicy) (stored StoredPolicy, created bool, err error)
	// StoredPolicy reads the account's version of that id. Kinds: not_found, unavailable.
	StoredPolicy(ctx context.Context, accountID, id string) (StoredPolicy, error)
	// AccountPolicies lists the versions the account created (origin account), the oldest
	// first. Kinds: unavailable.
	AccountPolicies(ctx context.Context, accountID string) ([]StoredPolicy, error)
	// SetDefaultPolicy makes the stored version id the account's default. Kinds:
	// not_found (no such stored version), unavailable.
	SetDefaultPolicy(ctx context.Context, accountID, id string) error
	// DefaultPolicy returns the id of the account's default version, "" when it set none.
	// Kinds: unavailable.
	DefaultPolicy(ctx context.Context, accountID string) (string, error)
}

// ProviderInfo describes one configured provider as GET /v1/providers and the start-up log
// show it: never its key.
type ProviderInfo struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Host is the host of its base URL; empty for the built-in echo provider.
	Host   string   `json:"baseURLHost"`
	Models []string `json:"models"`
}
