// Package scenario loads the acceptance and benchmark scenarios of ../shared/scenarios
// (FORMAT.md there), plays them through ctxgraph's REST API, checks every expectation of
// their assemblies and renders the results as a table.
package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Scenario is one scenario file: a fixed conversation written as the stream of writes a
// client makes, followed by the assemblies to request and what each must show.
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Reference is the reference design's published result; only some scenarios have one.
	Reference    *Reference    `json:"reference"`
	Participants []Participant `json:"participants"`
	Branches     []Branch      `json:"branches"`
	Events       []Event       `json:"events"`
	Assemblies   []Assembly    `json:"assemblies"`
}

// Reference is the token count the reference design reported for a scenario.
type Reference struct {
	ReplayTokens    int `json:"replayTokens"`
	AssembledTokens int `json:"assembledTokens"`
}

// Participant is a model configuration or persona taking part in the conversation.
type Participant struct {
	Key      string `json:"key"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// Branch is a branch of the conversation: `main` is the root, any other forks from Parent
// after the message whose key is ForkAfter.
type Branch struct {
	Key       string `json:"key"`
	Parent    string `json:"parent"`
	ForkAfter string `json:"forkAfter"`
}

// RootBranch is the key of the conversation's root branch.
const RootBranch = "main"

// The event types of FORMAT.md.
const (
	EventMessage        = "message"
	EventRun            = "run"
	EventRunStatus      = "run_status"
	EventToolCall       = "tool_call"
	EventToolResult     = "tool_result"
	EventMemory         = "memory"
	EventSkills         = "skills"
	EventCheckpoint     = "checkpoint"
	EventPromote        = "promote"
	EventDeleteArtifact = "delete_artifact"
)

// Event is one write of the scenario. Which fields are set depends on Type; keys name
// records of the same file and are mapped to server ids during playback.
type Event struct {
	Type string `json:"type"`
	// Key names the record the event creates (message, run, tool call, memory, checkpoint,
	// promoted report).
	Key string `json:"key"`
	// At is the event time (RFC 3339), sent with the write when present.
	At string `json:"at"`

	// message and run
	Branch      string   `json:"branch"`
	Role        string   `json:"role"`
	Content     string   `json:"content"`
	Participant string   `json:"participant"`
	Run         string   `json:"run"`
	Parents     []string `json:"parents"`
	RuntimeKind string   `json:"runtimeKind"`
	Trigger     string   `json:"trigger"`
	ParentRun   string   `json:"parentRun"`

	// run_status and tool_result
	Status string `json:"status"`

	// tool_call
	Tool string `json:"tool"`
	// Arguments are sent exactly as written; nil when the file has none.
	Arguments json.RawMessage `json:"arguments"`
	RetryOf   string          `json:"retryOf"`

	// tool_result and delete_artifact
	Call string `json:"call"`
	// Result is sent exactly as written (any JSON, a string included); nil when absent.
	Result json.RawMessage `json:"result"`
	// Error is the tool error object {code, message}, sent as written; nil when absent.
	Error        json.RawMessage `json:"error"`
	Retryable    *bool           `json:"retryable"`
	PrivacyClass string          `json:"privacyClass"`
	Visibility   string          `json:"visibility"`
	SharedWith   []string        `json:"sharedWith"`
	ToolVersion  string          `json:"toolVersion"`
	// Memories are the memories a tool_result derives from its new artifact.
	Memories []Memory `json:"-"`

	// Memory is the memory a memory event derives.
	Memory *Memory `json:"-"`

	// skills
	LoadedSkills   []string `json:"loadedSkills"`
	ActiveProfiles []string `json:"activeProfiles"`
	DirectTools    []string `json:"directTools"`

	// checkpoint
	State json.RawMessage `json:"state"`

	// promote
	Calls []string `json:"calls"`
	// MemoryKeys are the memories a promote event promotes (its `memories` field).
	MemoryKeys []string `json:"-"`
	Report     string   `json:"report"`
}

// UnmarshalJSON decodes an event; `memories` means memory objects in a tool_result and
// memory keys in a promote, and a memory event is itself a memory.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event
	var v struct {
		*plain
		Memories json.RawMessage `json:"memories"`
	}
	v.plain = (*plain)(e)
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	// A memory event's own fields are the memory's, sent as written; any other event's
	// keys are all known, so a misspelt one is an error.
	dec := json.NewDecoder(bytes.NewReader(b))
	if head.Type != EventMemory {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&v); err != nil {
		return err
	}
	switch e.Type {
	case EventToolResult:
		if len(v.Memories) > 0 {
			if err := json.Unmarshal(v.Memories, &e.Memories); err != nil {
				return fmt.Errorf("memories: %w", err)
			}
		}
	case EventPromote:
		if len(v.Memories) > 0 {
			if err := json.Unmarshal(v.Memories, &e.MemoryKeys); err != nil {
				return fmt.Errorf("memories: %w", err)
			}
		}
	case EventMemory:
		var m Memory
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		delete(m.Fields, "type")
		e.Memory = &m
	}
	return nil
}

// Memory is a memory as a scenario writes it. The fields that name other records by key
// are decoded; every other field is kept as written and sent unchanged.
type Memory struct {
	Key string
	// DerivedFrom are tool call keys.
	DerivedFrom []string
	// Supersedes and ConflictsWith are memory keys.
	Supersedes    []string
	ConflictsWith []string
	// SharedWith are participant keys.
	SharedWith []string
	// Fields are the other memory fields (summary, safeSummary, data, confidence,
	// confidenceSource, freshnessClass, observedAt, staleAfter, revalidateWith, privacyClass,
	// visibility, at, ...) exactly as written.
	Fields map[string]json.RawMessage
}

// UnmarshalJSON decodes a memory object, keeping the fields it does not map as raw JSON.
func (m *Memory) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	for name, dst := range map[string]any{
		"key": &m.Key, "derivedFrom": &m.DerivedFrom, "supersedes": &m.Supersedes,
		"conflictsWith": &m.ConflictsWith, "sharedWith": &m.SharedWith,
	} {
		raw, ok := fields[name]
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		delete(fields, name)
	}
	m.Fields = fields
	return nil
}

// Assembly is one assembly to request after playback, with what it must show.
type Assembly struct {
	Key string `json:"key"`
	// Now is the clock the assembly runs at (freshness is judged by it).
	Now         string `json:"now"`
	Branch      string `json:"branch"`
	Participant string `json:"participant"`
	RuntimeKind string `json:"runtimeKind"`
	// Run is the run the assembly is for, when there is one.
	Run         string `json:"run"`
	Provider    string `json:"provider"`
	Model       string `json:"model"`
	TokenBudget int    `json:"tokenBudget"`
	// ExactCalls are tool call keys whose raw artifacts the request names as exact evidence.
	ExactCalls []string `json:"exactCalls"`
	Expect     Expect   `json:"expect"`
}

// Expect is what an assembly must show; every key names a record of the scenario.
type Expect struct {
	// Included keys must appear among the included records in any form.
	Included []string `json:"included"`
	// IncludedAs maps keys to the form (`as`) they must be included in.
	IncludedAs map[string]string `json:"includedAs"`
	// Omitted maps keys to the omission reason the server must report.
	Omitted map[string]string `json:"omitted"`
	// Contains and NotContains are exact strings that must / must not occur in the
	// returned messages.
	Contains    []string `json:"contains"`
	NotContains []string `json:"notContains"`
	// MaxAssembledTokens bounds tokens.assembled when set.
	MaxAssembledTokens *int `json:"maxAssembledTokens"`
	// MinReduction bounds 1 − assembled / baseline from below when set.
	MinReduction *float64 `json:"minReduction"`
	// OverBudget, when set, is whether the answer must say that the protected state and
	// the instructions alone exceed the budget (an extension of the shared format, for
	// scenario/testdata).
	OverBudget *bool `json:"overBudget"`
}

// Load reads and checks one scenario file.
func Load(path string) (Scenario, error) {
	return loadFile(path, Parse)
}

// loadFile reads path and parses it with parse; an error names the file.
func loadFile[T any](path string, parse func([]byte) (T, error)) (T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var zero T
		return zero, err
	}
	doc, err := parse(data)
	if err != nil {
		return doc, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// decodeDocument decodes data, one JSON document, into dst. A misspelt key (an
// expectation above all) is an error, not a check that silently never runs.
func decodeDocument(data []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// Parse decodes and checks a scenario document.
func Parse(data []byte) (Scenario, error) {
	var sc Scenario
	if err := decodeDocument(data, &sc); err != nil {
		return Scenario{}, err
	}
	if len(sc.Branches) == 0 {
		sc.Branches = []Branch{{Key: RootBranch}}
	}
	if err := sc.check(); err != nil {
		return Scenario{}, err
	}
	return sc, nil
}

// check reports the first structural mistake: an unknown event type, a missing required
// field or a key used twice. References between keys are resolved during playback.
func (sc Scenario) check() error {
	if sc.Name == "" {
		return errors.New("name is missing")
	}
	if _, err := participantKeys(sc.Participants); err != nil {
		return err
	}
	branches := map[string]bool{}
	for i, b := range sc.Branches {
		if b.Key == "" || branches[b.Key] {
			return fmt.Errorf("branches[%d]: key %q is missing or used twice", i, b.Key)
		}
		branches[b.Key] = true
		if b.Key != RootBranch && (b.Parent == "" || b.ForkAfter == "") {
			return fmt.Errorf("branches[%d] (%s): a branch other than %s needs parent and forkAfter", i, b.Key, RootBranch)
		}
	}
	if !branches[RootBranch] {
		return fmt.Errorf("branches: the root branch %q is missing", RootBranch)
	}
	keys := map[string]bool{}
	claim := func(key string) error {
		if key == "" {
			return errors.New("key is missing")
		}
		if keys[key] {
			return fmt.Errorf("key %q is used twice", key)
		}
		keys[key] = true
		return nil
	}
	for i, e := range sc.Events {
		if err := e.check(claim); err != nil {
			return fmt.Errorf("events[%d] (%s %s): %w", i, e.Type, e.Key, err)
		}
	}
	assemblies := map[string]bool{}
	for i, a := range sc.Assemblies {
		if a.Key == "" || assemblies[a.Key] {
			return fmt.Errorf("assemblies[%d]: key %q is missing or used twice", i, a.Key)
		}
		assemblies[a.Key] = true
		if a.Branch == "" {
			return fmt.Errorf("assemblies[%d] (%s): branch is missing", i, a.Key)
		}
	}
	return nil
}

// check reports a missing required field; claim registers the keys the event creates.
func (e Event) check(claim func(string) error) error {
	var missing []string
	need := func(name, value string) {
		if value == "" {
			missing = append(missing, name)
		}
	}
	switch e.Type {
	case EventMessage:
		need("branch", e.Branch)
		need("role", e.Role)
	case EventRun:
		need("branch", e.Branch)
		need("participant", e.Participant)
		need("runtimeKind", e.RuntimeKind)
	case EventRunStatus:
		need("run", e.Run)
		need("status", e.Status)
	case EventToolCall:
		need("run", e.Run)
		need("tool", e.Tool)
	case EventToolResult:
		need("call", e.Call)
		need("status", e.Status)
	case EventMemory:
		if len(e.Memory.DerivedFrom) == 0 {
			missing = append(missing, "derivedFrom")
		}
	case EventSkills, EventCheckpoint, EventPromote:
		need("run", e.Run)
	case EventDeleteArtifact:
		need("call", e.Call)
	default:
		return fmt.Errorf("unknown event type %q", e.Type)
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %v", missing)
	}
	switch e.Type {
	case EventMessage, EventRun, EventToolCall, EventCheckpoint, EventPromote:
		return claim(e.Key)
	case EventMemory:
		return claim(e.Memory.Key)
	case EventToolResult:
		for i, m := range e.Memories {
			if err := claim(m.Key); err != nil {
				return fmt.Errorf("memories[%d]: %w", i, err)
			}
		}
	}
	return nil
}

// participantKeys is the set of the participants' keys; a key missing or used twice is an
// error.
func participantKeys(ps []Participant) (map[string]bool, error) {
	keys := map[string]bool{}
	for i, p := range ps {
		if p.Key == "" || keys[p.Key] {
			return nil, fmt.Errorf("participants[%d]: key %q is missing or used twice", i, p.Key)
		}
		keys[p.Key] = true
	}
	return keys, nil
}
