package api

import (
	"encoding/json"
)

// The request bodies of the write endpoints. Field names are the REST contract of DESIGN §5;
// `at` is the event time of every write (RFC 3339), the server stamps recordedAt.

type createConversationRequest struct {
	Title        string `json:"title" validate:"max=500"`
	Instructions string `json:"instructions" validate:"maxbytes=65536"`
	At           string `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

type addParticipantRequest struct {
	Kind         string `json:"kind" validate:"required,participantkind"`
	Name         string `json:"name" validate:"required,max=200"`
	Provider     string `json:"provider" validate:"max=100"`
	Model        string `json:"model" validate:"max=200"`
	Instructions string `json:"instructions" validate:"maxbytes=65536"`
	At           string `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

// instructionsRequest changes the instructions of a conversation or a participant (PATCH),
// and nothing else; an empty text removes them. The bound is model.MaxInstructionsBytes.
type instructionsRequest struct {
	Instructions *string `json:"instructions" validate:"required,maxbytes=65536"`
}

type forkBranchRequest struct {
	ParentBranchID     string `json:"parentBranchId" validate:"required,max=100"`
	ForkAfterMessageID string `json:"forkAfterMessageId" validate:"required,max=100"`
	Name               string `json:"name" validate:"max=200"`
	At                 string `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

type appendMessageRequest struct {
	Role             string   `json:"role" validate:"required,messagerole"`
	Content          string   `json:"content" validate:"required_unless=Role assistant,maxbytes=1048576"`
	ParticipantID    string   `json:"participantId" validate:"max=100"`
	RunID            string   `json:"runId" validate:"max=100"`
	ParentMessageIDs []string `json:"parentMessageIds" validate:"omitempty,max=100,dive,required,max=100"`
	Visibility       string   `json:"visibility" validate:"omitempty,visibility"`
	At               string   `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

type startRunRequest struct {
	ParticipantID    string `json:"participantId" validate:"required,max=100"`
	RuntimeKind      string `json:"runtimeKind" validate:"required,runtimekind"`
	TriggerMessageID string `json:"triggerMessageId" validate:"max=100"`
	ParentRunID      string `json:"parentRunId" validate:"max=100"`
	Provider         string `json:"provider" validate:"max=100"`
	Model            string `json:"model" validate:"max=200"`
	At               string `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

type finishRunRequest struct {
	Status string `json:"status" validate:"required,runendstatus"`
	At     string `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

type toolCallRequest struct {
	Tool      string          `json:"tool" validate:"required,max=200"`
	Arguments json.RawMessage `json:"arguments" validate:"maxbytes=1048576"`
	CallID    string          `json:"callId" validate:"max=200"`
	RetryOf   string          `json:"retryOf" validate:"max=100"`
	At        string          `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

type toolErrorBody struct {
	Code    string `json:"code" validate:"max=200"`
	Message string `json:"message" validate:"max=20000"`
}

type toolResultRequest struct {
	Status                 string          `json:"status" validate:"required,toolresultstatus"`
	Result                 json.RawMessage `json:"result"`
	Error                  *toolErrorBody  `json:"error" validate:"required_if=Status failed"`
	Retryable              bool            `json:"retryable"`
	PrivacyClass           string          `json:"privacyClass" validate:"omitempty,privacyclass"`
	Visibility             string          `json:"visibility" validate:"omitempty,visibility"`
	SharedWithParticipants []string        `json:"sharedWithParticipants" validate:"omitempty,max=100,dive,required,max=100"`
	ToolVersion            string          `json:"toolVersion" validate:"max=100"`
	Memories               []memoryRequest `json:"memories" validate:"omitempty,max=100,dive"`
	Retention              *retentionBody  `json:"retention"`
	At                     string          `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

type memoryRequest struct {
	DerivedFrom            []string          `json:"derivedFrom" validate:"omitempty,max=100,dive,required,max=100"`
	Locators               map[string]string `json:"locators" validate:"omitempty,max=100,dive,max=500"`
	Summary                string            `json:"summary" validate:"required,max=20000"`
	Data                   json.RawMessage   `json:"data"`
	SafeSummary            string            `json:"safeSummary" validate:"max=20000"`
	Confidence             *float64          `json:"confidence" validate:"omitempty,gte=0,lte=1"`
	ConfidenceSource       string            `json:"confidenceSource" validate:"max=200"`
	Rationale              string            `json:"rationale" validate:"max=20000"`
	Limitations            string            `json:"limitations" validate:"max=20000"`
	FreshnessClass         string            `json:"freshnessClass" validate:"omitempty,freshnessclass"`
	ObservedAt             string            `json:"observedAt" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
	StaleAfter             string            `json:"staleAfter" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
	RevalidateWith         []string          `json:"revalidateWith" validate:"omitempty,max=50,dive,required,max=200"`
	Supersedes             []string          `json:"supersedes" validate:"omitempty,max=100,dive,required,max=100"`
	ConflictsWith          []string          `json:"conflictsWith" validate:"omitempty,max=100,dive,required,max=100"`
	PrivacyClass           string            `json:"privacyClass" validate:"omitempty,privacyclass"`
	Visibility             string            `json:"visibility" validate:"omitempty,visibility"`
	SharedWithParticipants []string          `json:"sharedWithParticipants" validate:"omitempty,max=100,dive,required,max=100"`
	At                     string            `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

type skillsRequest struct {
	LoadedSkills   []string `json:"loadedSkills" validate:"omitempty,max=200,dive,required,max=200"`
	ActiveProfiles []string `json:"activeProfiles" validate:"omitempty,max=200,dive,required,max=200"`
	DirectTools    []string `json:"directTools" validate:"omitempty,max=500,dive,required,max=200"`
	At             string   `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

type checkpointRequest struct {
	State      json.RawMessage `json:"state" validate:"required"`
	AssemblyID string          `json:"assemblyId" validate:"max=100"`
	At         string          `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

type promoteRequest struct {
	ToolCallIDs []string `json:"toolCallIds" validate:"omitempty,max=500,dive,required,max=100"`
	ArtifactIDs []string `json:"artifactIds" validate:"omitempty,max=500,dive,required,max=100"`
	MemoryIDs   []string `json:"memoryIds" validate:"omitempty,max=500,dive,required,max=100"`
	Report      string   `json:"report" validate:"max=50000"`
	// PrivacyClass and SafeSummary are the report's (DESIGN §4 promotion).
	PrivacyClass string `json:"privacyClass" validate:"omitempty,privacyclass"`
	SafeSummary  string `json:"safeSummary" validate:"max=20000"`
	At           string `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

type assemblyRequest struct {
	BranchID      string `json:"branchId" validate:"required,max=100"`
	ParticipantID string `json:"participantId" validate:"required,max=100"`
	RunID         string `json:"runId" validate:"max=100"`
	RuntimeKind   string `json:"runtimeKind" validate:"omitempty,runtimekind"`
	Provider      string `json:"provider" validate:"max=100"`
	Model         string `json:"model" validate:"max=200"`
	// TokenBudget is nil when absent (the policy version's default applies); 0 is rejected.
	TokenBudget      *int     `json:"tokenBudget" validate:"omitempty,gte=1,lte=2000000"`
	ExactArtifactIDs []string `json:"exactArtifactIds" validate:"omitempty,max=100,dive,required,max=100"`
	PolicyVersion    string   `json:"policyVersion" validate:"max=200"`
	Now              string   `json:"now" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
	AsOf             string   `json:"asOf" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
	Trace            bool     `json:"trace"`
}

// diffRequest names the policy version an assembly's snapshot is computed under for
// POST /v1/assemblies/{id}/diff.
type diffRequest struct {
	PolicyVersion string `json:"policyVersion" validate:"required,max=200"`
}
