package model

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"strings"
	"time"
)

// The forms in which a record can be included in an assembly (DESIGN §5 `as`).
const (
	AsMessage     = "message"
	AsMemory      = "memory"
	AsSafeSummary = "safe_summary"
	AsRaw         = "raw"
	AsStaleMarker = "stale_marker"
	AsRecovery    = "recovery"
	AsReference   = "reference"
	AsConflict    = "conflict"
	AsCheckpoint  = "checkpoint"
	AsSkills      = "skills"
	// AsInstructions is the form of a conversation's or a participant's instructions,
	// sent first in the request and never trimmed (DESIGN §8).
	AsInstructions = "instructions"
)

// Omission reasons in precedence order (DESIGN §4): a record excluded for several reasons
// reports the first.
const (
	ReasonBranchIneligible = "branch_ineligible"
	ReasonAuditOnly        = "audit_only"
	ReasonNotPromoted      = "not_promoted"
	ReasonParticipant      = "participant_private"
	ReasonPrivacy          = "privacy_restricted"
	ReasonRedacted         = "redacted"
	ReasonProvenanceBroken = "provenance_broken"
	ReasonSuperseded       = "superseded"
	ReasonStale            = "stale"
	ReasonDuplicate        = "duplicate"
	ReasonWindow           = "window"
	ReasonBudget           = "budget"
)

// Rule names the rule of a policy that made a decision, as decisions, explanations and
// the graph report it: a rule id (the policy, a dot, the case), or several joined by "+"
// when later rules refined the first (a recovery item compacted for the budget). The ids
// are listed in policy and docs/assembly.md; their text is part of the contract.
type Rule string

// And is the rule r refined by a later rule.
func (r Rule) And(later Rule) Rule { return r + "+" + later }

// RuleBranchLineage is the rule of every branch_ineligible omission: the record is not in
// the assembled branch's lineage.
const RuleBranchLineage Rule = "visibility.branch_lineage"

// Policy names the policy of DESIGN §4 that made a decision (a PolicyDecision's `kind`).
type Policy string

// The policies that decide about records, as their decisions name them.
const (
	PolicyVisibility   Policy = "visibility"
	PolicyPrivacy      Policy = "privacy"
	PolicyRouting      Policy = "routing"
	PolicyProvenance   Policy = "provenance"
	PolicySupersession Policy = "supersession"
	PolicyFreshness    Policy = "freshness"
	PolicyRecovery     Policy = "recovery"
	PolicyRehydration  Policy = "rehydration"
	PolicyWindow       Policy = "window"
	PolicyConflict     Policy = "conflict"
	PolicyMemory       Policy = "memory"
	PolicyCheckpoint   Policy = "checkpoint"
	PolicySkills       Policy = "skills"
	PolicyBudget       Policy = "budget"
	PolicyInstructions Policy = "instructions"
)

// OmittedCountProperty names the ContextAssembly property that counts the assembly's
// omissions for reason: omittedWindow for window, omittedBranchIneligible for
// branch_ineligible (Neo4j properties cannot be maps).
func OmittedCountProperty(reason string) string {
	var b strings.Builder
	b.WriteString("omitted")
	for _, part := range strings.Split(reason, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// OmissionReasons lists the reasons in precedence order.
var OmissionReasons = []string{ReasonBranchIneligible, ReasonAuditOnly, ReasonNotPromoted, ReasonParticipant,
	ReasonPrivacy, ReasonRedacted, ReasonProvenanceBroken, ReasonSuperseded, ReasonStale, ReasonDuplicate, ReasonWindow, ReasonBudget}

// AssemblyRequest asks what the next model call of a participant on a branch sees.
type AssemblyRequest struct {
	BranchID         string      `json:"branchId"`
	ParticipantID    string      `json:"participantId"`
	RunID            string      `json:"runId,omitempty"`
	RuntimeKind      RuntimeKind `json:"runtimeKind"`
	Provider         string      `json:"provider"`
	Model            string      `json:"model,omitempty"`
	TokenBudget      int         `json:"tokenBudget"`
	ExactArtifactIDs []string    `json:"exactArtifactIds"`
	PolicyVersion    string      `json:"policyVersion"`
	Now              time.Time   `json:"now"`
	AsOf             time.Time   `json:"asOf"`
	Trace            bool        `json:"trace"`
	// SeenSeq is the last seq of the branch's own records that the assembly's read saw;
	// zero sees them all. A record is stamped before its write commits, so a write that
	// committed after the read can carry a time before asOf: the branch's seq, which
	// writers take in commit order, keeps it out of a replay.
	SeenSeq int64 `json:"seenSeq,omitempty"`
	// ToolRounds sends the run's answered calls as native tool rounds (DESIGN §6): set by
	// the generation path, recorded so that replay renders them the same way.
	ToolRounds bool `json:"toolRounds,omitempty"`
	// Recall says the request offers the ctxgraph_recall tool (DESIGN §7): every memory line
	// and reference then names its artifact, so that the model can recall it. Set by the
	// generation path, recorded so that replay renders the same lines.
	Recall bool `json:"recall,omitempty"`
}

// RecallTool is the name of the built-in recall tool (DESIGN §7).
const RecallTool = "ctxgraph_recall"

// SnapshotOptions say how a lineage snapshot is read, beside what the request asks.
type SnapshotOptions struct {
	// Fresh reads the graph afresh instead of any copy of the conversation the store keeps
	// and brings up to date: replay uses it, so that replaying an assembly checks that copy
	// as well as the policy.
	Fresh bool
}

// Snapshot is what one lineage traversal returns: the candidates in lineage order (ancestors
// first, each branch by seq) and what the traversal excluded structurally.
type Snapshot struct {
	ConversationID string
	Lineage        []string
	Participant    Participant
	// ParticipantNames maps every participant of the conversation to its name.
	ParticipantNames map[string]string
	Run              *Run
	// Instructions are the conversation's instructions, then the participant's, each the
	// text in force at the request's asOf; those that are empty are left out.
	Instructions []Instructions
	Candidates   []*Candidate
	// BaselineTokens is the token count of naive history replay of the lineage.
	BaselineTokens int
	// StructurallyExcluded counts records of the conversation outside the lineage.
	StructurallyExcluded int
	// ExcludedRefs lists those records' ids (read only when a trace is asked for).
	ExcludedRefs []string
	// SeenSeq is the last seq of the branch's own records that the snapshot holds.
	SeenSeq int64
	// View names the candidates when other snapshots share them (the lineage unchanged
	// since, everything in it visible): the same View holds the same candidates. Candidates
	// are read-only either way. Empty when the candidates were built for this snapshot alone.
	View string
	// ViewParent names the view that View extends, when it was built from it by adding and
	// rebuilding candidates: ViewPlaces says where each candidate was among ViewParent's
	// (-1 for one added), Rebuilt which candidates were built anew (added or changed). Every
	// other candidate is ViewParent's, so what was computed from it alone may be kept.
	ViewParent string
	ViewPlaces []int
	Rebuilt    []bool
	// KindsInLineageOrder says that the candidates of each type come in lineage order, as a
	// lineage view's do (its groups, lineage.Select), so that the latest messages are found
	// from the end instead of by sorting every message of the lineage.
	KindsInLineageOrder bool
}

// Instructions is one text of instructions an assembly sends: whose they are (a
// conversation or a participant) and the text.
type Instructions struct {
	Ref  string
	Type RecordType
	Text string
}

// IncludedItem is one record serialised into an assembly.
type IncludedItem struct {
	Ref  string     `json:"ref"`
	Type RecordType `json:"type"`
	As   string     `json:"as"`
}

// OmittedRef is one record left out, with the first reason that excluded it.
type OmittedRef struct {
	Ref    string `json:"ref"`
	Reason string `json:"reason"`
}

// ChatMessage is one provider-ready message. Within the run being generated (DESIGN §6),
// an assistant message carries the tool calls of one round and each `tool` message the
// result of one of them, named by ToolCallID.
type ChatMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	Name       string         `json:"name,omitempty"`
	ToolCalls  []ChatToolCall `json:"toolCalls,omitempty"`
	ToolCallID string         `json:"toolCallId,omitempty"`
}

// ChatToolCall is one call of a tool round as the model asked for it: ID is the
// provider's call id (a ToolCall's callId), Arguments its JSON.
type ChatToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Decision is one policy decision about one record.
type Decision struct {
	Ref     string     `json:"ref"`
	Type    RecordType `json:"type"`
	Policy  Policy     `json:"kind"`
	Outcome string     `json:"outcome"`
	As      string     `json:"as,omitempty"`
	Reason  string     `json:"reason"`
	Rule    Rule       `json:"rule"`
	// Bulk marks a decision that did not shape the request (say, a restricted raw body the
	// request had no need of): it is counted on the assembly, not stored as a
	// PolicyDecision node, and explain recomputes it.
	Bulk bool `json:"-"`
}

// Stored reports whether an assembly's record keeps the decision as a PolicyDecision node:
// DESIGN's privacy, freshness, rehydration, routing and recovery decisions, unless they
// omit for a bulk reason (window, budget, duplicate, branch) or did not shape the request.
// Structural ones (visibility, supersession, provenance, conflict and plain inclusion) are
// counted on the assembly and recomputed by explain through replay, so that the record of
// an assembly does not grow with the history behind it. (A switch, not a map: an assembly
// late in a long conversation asks it of tens of thousands of settled decisions.)
func (d *Decision) Stored() bool {
	switch d.Policy {
	case PolicyPrivacy, PolicyRouting, PolicyFreshness, PolicyRehydration, PolicyRecovery:
	default:
		return false
	}
	switch d.Reason {
	case ReasonWindow, ReasonBudget, ReasonDuplicate, ReasonBranchIneligible:
		return false
	}
	return !d.Bulk
}

// Assembly is the record of what went into one model request, as answered and stored.
type Assembly struct {
	ID             string          `json:"id"`
	ConversationID string          `json:"conversationId"`
	Request        AssemblyRequest `json:"request"`
	Messages       []ChatMessage   `json:"messages"`
	Tokens         TokenCounts     `json:"tokens"`
	// OverBudget says that the protected state and the instructions alone exceed the
	// budget: the request is larger than the budget asked for, never silently.
	OverBudget bool `json:"overBudget,omitempty"`
	// InstructionsSha256 is the sha256 (hex) of the instructions message the request
	// starts with; empty when there were no instructions.
	InstructionsSha256 string         `json:"instructionsSha256,omitempty"`
	Included           []IncludedItem `json:"included"`
	Omitted            map[string]int `json:"omitted"`
	OmittedRefs        []OmittedRef   `json:"omittedRefs,omitempty"`
	PolicyVersion      string         `json:"policyVersion"`
	AssemblerVersion   string         `json:"assemblerVersion"`
	TimingsMs          Timings        `json:"timingsMs"`
	Decisions          []Decision     `json:"-"`
	// Settled are the decisions of the records the budget never considered (omitted by a
	// policy before it), pointing into the judgement that made them: shared, read-only,
	// between assemblies of an unchanged lineage. AllDecisions yields both.
	Settled []*Decision `json:"-"`
	// SettledStored are those of Settled that the record stores (Decision.Stored), in their
	// order: few, and known to the judgement, so that recording an assembly does not load
	// every settled decision again. An assembly that sets Settled sets it too.
	SettledStored []*Decision `json:"-"`
	// Recallable says the request names an artifact the model may recall (DESIGN §7): the
	// recall tool is offered only then.
	Recallable bool              `json:"-"`
	CreatedAt  time.Time         `json:"createdAt"`
	Extra      map[string]string `json:"-"`
	// Keeping is what the store keeps of the record (DESIGN §10), decided by the policy
	// version when the assembly is recorded.
	Keeping RecordKeeping `json:"-"`
}

// Why an assembly's full record is kept whatever comes after it (RecordKeeping.Kept), or
// why it was trimmed.
const (
	KeptTraced    = "traced"
	KeptSampled   = "sampled"
	KeptFailedRun = "failed_run"
	// TrimmedBeyondLatest: the record was trimmed, beyond the latest keepPerBranch of its
	// branch and not sampled.
	TrimmedBeyondLatest = "beyond_latest"
)

// RecordKeeping is what the store keeps of an assembly's record: its counts always; the
// full record (JSON, INCLUDED and OMITTED edges, decisions) while it is among the latest
// KeepPerBranch assemblies of its branch, and after that only when Kept names why (traced,
// sampled) or its run failed.
type RecordKeeping struct {
	Kept          string
	KeepPerBranch int
}

// EncodeJSON encodes v without HTML escaping, so that text keeps `&`, `<` and `>` as
// written: how the API sends JSON, an assembly's record keeps it (its prompt as sent), and
// package client sends it.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// AllDecisions yields every decision of the assembly: Decisions, then Settled.
func (a *Assembly) AllDecisions() iter.Seq[Decision] {
	return func(yield func(Decision) bool) {
		for _, d := range a.Decisions {
			if !yield(d) {
				return
			}
		}
		for _, d := range a.Settled {
			if !yield(*d) {
				return
			}
		}
	}
}

// TokenCounts compares the assembled prompt with naive history replay.
type TokenCounts struct {
	Assembled int `json:"assembled"`
	Baseline  int `json:"baseline"`
	Budget    int `json:"budget"`
	// Protected is, when the assembly is over its budget, the tokens of what no budget may
	// cut (the instructions and the unresolved tool state, compacted as far as it goes):
	// everything the request then holds.
	Protected int `json:"protected,omitempty"`
	// Sections splits Assembled by what the tokens are in the request; records made before
	// it was counted have none (the zero value, which a real assembly never has: its reply
	// is always primed).
	Sections TokenSections `json:"sections,omitzero"`
}

// TokenSections splits an assembled request's tokens: the lead instructions, the context
// block (every other system message: memories, references, markers, checkpoints), the
// conversation's messages, the tool rounds (the calls a model asked for and their
// results), and the tokens every reply is primed with. They add up to the assembled count.
type TokenSections struct {
	Instructions int `json:"instructions"`
	Context      int `json:"context"`
	Messages     int `json:"messages"`
	ToolRounds   int `json:"toolRounds"`
	Reply        int `json:"reply"`
}

// Total is the tokens of every section.
func (s TokenSections) Total() int {
	return s.Instructions + s.Context + s.Messages + s.ToolRounds + s.Reply
}

// Timings splits an assembly's time between its stages, in milliseconds.
type Timings struct {
	Graph     float64 `json:"graph"`
	Policy    float64 `json:"policy"`
	Serialize float64 `json:"serialize"`
	Record    float64 `json:"record"`
}

// PathStep is one hop of a provenance path: memory → artifact → tool call → run → participant.
type PathStep struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	// Locators are a memory's provenance locators: where in its source artifacts
	// (artifactId#locator: a JSON Pointer, or a line or byte range) each value it quotes
	// stands.
	Locators []string `json:"locators,omitempty"`
}

// Explanation answers why one record was included or omitted.
type Explanation struct {
	AssemblyID     string     `json:"assemblyId"`
	Ref            string     `json:"ref"`
	Type           RecordType `json:"type"`
	Outcome        string     `json:"outcome"`
	As             string     `json:"as,omitempty"`
	Reason         string     `json:"reason"`
	Rule           Rule       `json:"rule"`
	PolicyVersion  string     `json:"policyVersion"`
	ProvenancePath []PathStep `json:"provenancePath"`
}

// ReplayReport compares a re-run of an assembly with its record.
type ReplayReport struct {
	AssemblyID    string   `json:"assemblyId"`
	PolicyVersion string   `json:"policyVersion"`
	Identical     bool     `json:"identical"`
	Differences   []string `json:"differences"`
}

// TokenCounter counts tokens with a real tokenizer.
type TokenCounter interface {
	// Count returns the number of tokens of text.
	Count(text string) int
}

// AssemblyGraph reads lineage snapshots and records assemblies. Methods return KindNotFound
// for ids outside the account, KindInvalid for request fields that contradict the graph,
// KindUnavailable when the database cannot be reached.
type AssemblyGraph interface {
	// LineageSnapshot runs the one lineage traversal for an assembly request, read as opts
	// say.
	LineageSnapshot(ctx context.Context, accountID string, req AssemblyRequest, opts SnapshotOptions) (Snapshot, error)
	// RawPayloads reads the exact payloads of artifacts that a policy selected.
	RawPayloads(ctx context.Context, accountID string, artifactIDs []string) (map[string]ArtifactRaw, error)
	// RecordAssembly writes the assembly, with record as its JSON (EncodeJSON), and its
	// policy decisions in one transaction.
	RecordAssembly(ctx context.Context, accountID string, a Assembly, record []byte) error
	// Assembly reads a recorded assembly.
	Assembly(ctx context.Context, accountID, id string) (Assembly, error)
	// ProvenancePath walks from a record to the participant that produced it.
	ProvenancePath(ctx context.Context, accountID, ref string) ([]PathStep, error)
}

// ChatName turns a participant's name into a provider-safe message name (letters, digits,
// underscore and hyphen, at most 64 characters).
func ChatName(name string) string {
	out := make([]rune, 0, len(name))
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			out = append(out, r)
		case r == ' ' || r == '.':
			out = append(out, '_')
		}
		if len(out) == 64 {
			break
		}
	}
	return string(out)
}

// BaselineToolCallText is how naive history replay shows a tool call.
func BaselineToolCallText(tool, arguments string) string { return tool + " " + arguments }

// BaselineToolResultText is how naive history replay shows a tool result: its JSON, or its
// error.
func BaselineToolResultText(result string, e *ToolError) string {
	if e != nil && result == "" {
		return "error " + e.Code + ": " + e.Message
	}
	return result
}

// ContextAssembler builds, explains and replays assemblies. Methods return KindInvalid for
// bad requests (an unknown policy version names policyVersion), KindNotFound for unknown
// ids, KindUnavailable when the graph cannot be reached.
type ContextAssembler interface {
	// Assemble builds and records the context of one model call. record is the assembly's
	// JSON as its record keeps it (EncodeJSON, encoded before the record's own write was
	// timed), which a response can reuse instead of encoding the assembly again.
	Assemble(ctx context.Context, accountID string, req AssemblyRequest) (a Assembly, record []byte, err error)
	// Explain says why a record was included or omitted, with its provenance path.
	Explain(ctx context.Context, accountID, assemblyID, ref string) (Explanation, error)
	// Replay re-runs an assembly under its recorded policy version, now and asOf.
	Replay(ctx context.Context, accountID, assemblyID string) (ReplayReport, error)
	// Diff computes an assembly's snapshot (its request, now and asOf) under another policy
	// version and compares it with the same snapshot under its recorded version, record by
	// record. It returns KindInvalid naming policyVersion for a version the account does not
	// know, KindNotFound for an assembly of another account, KindGone for a trimmed record.
	Diff(ctx context.Context, accountID, assemblyID, policyVersion string) (AssemblyDiff, error)
}

// ModelCall is one model call of a run as the inspector lists it: its assembly, and what the
// store keeps of the request it sent.
type ModelCall struct {
	AssemblyID    string      `json:"assemblyId"`
	CreatedAt     time.Time   `json:"createdAt"`
	PolicyVersion string      `json:"policyVersion"`
	Tokens        TokenCounts `json:"tokens"`
	// RequestSha256 is the sha256 (hex) of the exact request body sent to the provider;
	// empty when the call sent none (it failed before).
	RequestSha256 string `json:"requestSha256,omitempty"`
	// RequestKept says that the body itself is kept (GET /v1/assemblies/{id}/request): it
	// goes with the full record when that is trimmed (DESIGN §10).
	RequestKept bool `json:"requestKept"`
	// RecordState is what the store keeps of the assembly's record: full, kept or trimmed.
	RecordState string `json:"recordState"`
}

// RunModelCalls lists a run's model calls, oldest first.
type RunModelCalls struct {
	RunID      string      `json:"runId"`
	ModelCalls []ModelCall `json:"modelCalls"`
}

// SentRequest is the exact request body one model call sent to its provider, and the
// sha256 recorded when it was sent.
type SentRequest struct {
	AssemblyID    string
	RequestSha256 string
	Body          []byte
}

// ModelCallReader reads what the generation path recorded of its model calls. Methods
// return KindNotFound for ids outside the account, KindGone for a request whose record was
// trimmed, KindUnavailable when the database cannot be reached.
type ModelCallReader interface {
	// RunModelCalls lists the model calls of a run (the assemblies FOR_RUN it).
	RunModelCalls(ctx context.Context, accountID, runID string) (RunModelCalls, error)
	// SentRequest reads the exact request body an assembly's model call sent; KindNotFound
	// naming the assembly when it sent none.
	SentRequest(ctx context.Context, accountID, assemblyID string) (SentRequest, error)
}

// How a record fares under another policy version than the recorded one (an AssemblyDiff).
const (
	// ChangeNone: included in the same form by the same rule under both, or omitted by both
	// for the same reason.
	ChangeNone = "unchanged"
	// ChangeForm: included under both in another form or by another rule, or omitted by
	// both for different reasons.
	ChangeForm = "changed"
	// ChangeOnlyRecorded: included under the recorded version only.
	ChangeOnlyRecorded = "only_recorded"
	// ChangeOnlyOther: included under the other version only.
	ChangeOnlyOther = "only_other"
)

// RecordChanges lists the changes of a record in the order a diff counts them.
var RecordChanges = []string{ChangeNone, ChangeForm, ChangeOnlyRecorded, ChangeOnlyOther}

// RecordOutcome is what one policy version decided about one record: included in a form,
// or omitted for a reason, by a rule.
type RecordOutcome struct {
	Outcome string `json:"outcome"`
	As      string `json:"as,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Rule    Rule   `json:"rule,omitempty"`
}

// RecordChange is one record of a diff: what each version decided about it.
type RecordChange struct {
	Ref      string        `json:"ref"`
	Type     RecordType    `json:"type"`
	Change   string        `json:"change"`
	Recorded RecordOutcome `json:"recorded"`
	Other    RecordOutcome `json:"other"`
}

// DiffSide is one side of a diff: the version, and the request it sends.
type DiffSide struct {
	PolicyVersion string         `json:"policyVersion"`
	Tokens        TokenCounts    `json:"tokens"`
	Omitted       map[string]int `json:"omitted"`
	Messages      []ChatMessage  `json:"messages"`
}

// AssemblyDiff compares one assembly's snapshot under its recorded policy version and under
// another (POST /v1/assemblies/{id}/diff): record by record, with what each sends.
type AssemblyDiff struct {
	AssemblyID string    `json:"assemblyId"`
	Now        time.Time `json:"now"`
	AsOf       time.Time `json:"asOf"`
	// Identical says that both versions send the same request: every record unchanged, the
	// same messages and the same token count.
	Identical bool           `json:"identical"`
	Changes   map[string]int `json:"changes"`
	Recorded  DiffSide       `json:"recorded"`
	Other     DiffSide       `json:"other"`
	// Records lists every record of the lineage that a policy judged, the recorded
	// request's first, in order, then the other's, then those neither sent.
	Records []RecordChange `json:"records"`
}
