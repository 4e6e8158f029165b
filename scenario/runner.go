package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/ctxgraph/ctxgraph/model"
)

// Runner plays scenarios through ctxgraph's REST API: in-process through Handler when it is
// set, otherwise over HTTP to BaseURL with Client.
type Runner struct {
	// Handler serves the requests in-process (an api.Server in tests).
	Handler http.Handler
	// Client sends the requests to BaseURL when Handler is nil; nil means http.DefaultClient.
	Client *http.Client
	// BaseURL is the server's address, for example http://127.0.0.1:8080.
	BaseURL string
	// Key is the bearer API key sent with every request.
	Key string
	// Explain, when set, asks explain about every record each assembly included or
	// omitted, and counts as a failure every answer that disagrees with the assembly's
	// trace (outcome, form, reason) or names no rule.
	Explain bool
}

// Result is the outcome of one scenario.
type Result struct {
	// Scenario is the scenario's name.
	Scenario string
	// Reference is the scenario's reference figures, when it has them.
	Reference *Reference
	// ConversationID is the conversation the playback created, for inspection.
	ConversationID string
	// IDs maps the keys of the records the playback created (participants, branches,
	// messages, runs, tool calls, memories, checkpoints, promoted reports) to server ids.
	IDs map[string]string
	// Artifacts maps each tool call key to the ids of its artifacts, oldest first.
	Artifacts map[string][]string
	// PlaybackError is why the writes stopped, when they did; assemblies are then not run.
	PlaybackError string
	Assemblies    []AssemblyResult
}

// AssemblyResult is the outcome of one assembly of a scenario.
type AssemblyResult struct {
	Key string
	// Ran says the server answered the assembly request with an assembly.
	Ran bool
	// AssemblyID is the id of the server's assembly record.
	AssemblyID string
	// Baseline and Assembled are the response's tokens.baseline and tokens.assembled.
	Baseline  int
	Assembled int
	// Failures lists every expectation the assembly missed; empty means it passed.
	Failures []string
}

// Cut is 1 − assembled / baseline; ok is false without a baseline.
func (a AssemblyResult) Cut() (cut float64, ok bool) {
	if !a.Ran || a.Baseline <= 0 {
		return 0, false
	}
	return 1 - float64(a.Assembled)/float64(a.Baseline), true
}

// Passed says the assembly ran and met every expectation.
func (a AssemblyResult) Passed() bool { return a.Ran && len(a.Failures) == 0 }

// Passed says the playback succeeded and every assembly passed.
func (r Result) Passed() bool {
	if r.PlaybackError != "" {
		return false
	}
	for _, a := range r.Assemblies {
		if !a.Passed() {
			return false
		}
	}
	return true
}

// RequestError is a request the server did not answer with a 2xx status.
type RequestError struct {
	Method, Path string
	// Request is the body sent.
	Request []byte
	Status  int
	// Response is the body received.
	Response []byte
}

// Error names the request, the status and both bodies.
func (e *RequestError) Error() string {
	return fmt.Sprintf("%s %s answered %d: %s (request body: %s)", e.Method, e.Path, e.Status,
		bytes.TrimSpace(e.Response), clip(e.Request, 2000))
}

func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(bytes.TrimSpace(b))
	}
	return string(b[:n]) + "…"
}

// Run plays the scenario's writes, then requests and checks each assembly. The error is
// the first write that failed (Result.PlaybackError says the same); an assembly that fails
// or misses expectations is reported in its AssemblyResult, not as an error.
func (r Runner) Run(ctx context.Context, sc Scenario) (Result, error) {
	res := Result{Scenario: sc.Name, Reference: sc.Reference}
	p := &playback{runner: r, ctx: ctx, sc: sc, ids: newKeyIndex()}
	err := p.play()
	res.ConversationID = p.conversation
	res.IDs, res.Artifacts = p.ids.flat(), p.ids.artifacts
	if err != nil {
		res.PlaybackError = err.Error()
		for _, a := range sc.Assemblies {
			res.Assemblies = append(res.Assemblies, AssemblyResult{Key: a.Key,
				Failures: []string{"not run: the playback failed"}})
		}
		return res, err
	}
	for _, a := range sc.Assemblies {
		res.Assemblies = append(res.Assemblies, p.assemble(a))
	}
	return res, nil
}

// send makes one request with a JSON body (none when body is nil) and returns the status,
// the response body and the request body it sent.
func (r Runner) send(ctx context.Context, method, path string, body any) (int, []byte, []byte, error) {
	var payload []byte
	if body != nil {
		var err error
		// No HTML escaping, so `&`, `<` and `>` reach the server as written; raw JSON values
		// are compacted but otherwise kept (key order, number literals).
		if payload, err = model.EncodeJSON(body); err != nil {
			return 0, nil, nil, fmt.Errorf("%s %s: encoding the body: %w", method, path, err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(r.BaseURL, "/")+path, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, payload, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.Key != "" {
		req.Header.Set("Authorization", "Bearer "+r.Key)
	}
	if r.Handler != nil {
		rec := httptest.NewRecorder()
		r.Handler.ServeHTTP(rec, req)
		return rec.Code, rec.Body.Bytes(), payload, nil
	}
	client := r.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, payload, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, payload, fmt.Errorf("%s %s: reading the response: %w", method, path, err)
	}
	return resp.StatusCode, out, payload, nil
}

// write sends a request (a write, or the read of an explain), requires a 2xx answer and
// decodes the answer into out (when not nil).
func (r Runner) write(ctx context.Context, method, path string, body, out any) error {
	status, resp, payload, err := r.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return &RequestError{Method: method, Path: path, Request: payload, Status: status, Response: resp}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp, out); err != nil {
		return fmt.Errorf("%s %s: answered %d with a body that is not the expected JSON (%v): %s", method, path, status, err, clip(resp, 2000))
	}
	return nil
}

// idResponse is the part of a create response the runner needs.
type idResponse struct {
	ID       string `json:"id"`
	BranchID string `json:"branchId"`
}

// playback is one run of a scenario's writes.
type playback struct {
	runner       Runner
	ctx          context.Context
	sc           Scenario
	ids          *keyIndex
	conversation string
	// forked records the branches that exist on the server.
	forked map[string]bool
	// atOf is the event time of each message key, used as the time of a fork after it.
	atOf map[string]string
}

func (p *playback) play() error {
	at := ""
	if len(p.sc.Events) > 0 {
		at = p.sc.Events[0].At
	}
	var conv idResponse
	if err := p.runner.write(p.ctx, http.MethodPost, "/v1/conversations",
		struct {
			Title string `json:"title"`
			At    string `json:"at,omitempty"`
		}{p.sc.Name, at}, &conv); err != nil {
		return fmt.Errorf("creating the conversation: %w", err)
	}
	if conv.ID == "" || conv.BranchID == "" {
		return fmt.Errorf("creating the conversation: the answer has no id or branchId")
	}
	p.conversation = conv.ID
	p.ids.branches[RootBranch] = conv.BranchID
	p.forked = map[string]bool{RootBranch: true}
	p.atOf = map[string]string{}

	for _, pt := range p.sc.Participants {
		var out idResponse
		if err := p.runner.write(p.ctx, http.MethodPost, "/v1/conversations/"+conv.ID+"/participants",
			participantRequest{Kind: pt.Kind, Name: pt.Name, Provider: pt.Provider, Model: pt.Model}, &out); err != nil {
			return fmt.Errorf("participant %s: %w", pt.Key, err)
		}
		p.ids.participants[pt.Key] = out.ID
	}
	for i, e := range p.sc.Events {
		if err := p.event(e); err != nil {
			key := e.Key
			if key == "" {
				key = e.Call + e.Run
			}
			return fmt.Errorf("event %d (%s %s): %w", i+1, e.Type, key, err)
		}
	}
	for _, b := range p.sc.Branches {
		if !p.forked[b.Key] {
			return fmt.Errorf("branch %s was never forked: message %s of branch %s was not created", b.Key, b.ForkAfter, b.Parent)
		}
	}
	return nil
}

// forkReady forks every branch whose parent exists and whose fork message was created;
// forking one branch can make another ready.
func (p *playback) forkReady() error {
	for progress := true; progress; {
		progress = false
		for _, b := range p.sc.Branches {
			if p.forked[b.Key] || !p.forked[b.Parent] {
				continue
			}
			msg, ok := p.ids.messages[b.ForkAfter]
			if !ok {
				continue
			}
			var out idResponse
			if err := p.runner.write(p.ctx, http.MethodPost, "/v1/conversations/"+p.conversation+"/branches",
				forkRequest{ParentBranchID: p.ids.branches[b.Parent], ForkAfterMessageID: msg, Name: b.Key, At: p.atOf[b.ForkAfter]},
				&out); err != nil {
				return fmt.Errorf("forking branch %s after %s: %w", b.Key, b.ForkAfter, err)
			}
			p.ids.branches[b.Key] = out.ID
			p.forked[b.Key] = true
			progress = true
		}
	}
	return nil
}

// The request bodies, with the contract's field names (DESIGN §5).
type (
	participantRequest struct {
		Kind     string `json:"kind"`
		Name     string `json:"name"`
		Provider string `json:"provider,omitempty"`
		Model    string `json:"model,omitempty"`
	}
	forkRequest struct {
		ParentBranchID     string `json:"parentBranchId"`
		ForkAfterMessageID string `json:"forkAfterMessageId"`
		Name               string `json:"name"`
		At                 string `json:"at,omitempty"`
	}
	messageRequest struct {
		Role             string   `json:"role"`
		Content          string   `json:"content"`
		ParticipantID    string   `json:"participantId,omitempty"`
		RunID            string   `json:"runId,omitempty"`
		ParentMessageIDs []string `json:"parentMessageIds,omitempty"`
		At               string   `json:"at,omitempty"`
	}
	runRequest struct {
		ParticipantID    string `json:"participantId"`
		RuntimeKind      string `json:"runtimeKind"`
		TriggerMessageID string `json:"triggerMessageId,omitempty"`
		ParentRunID      string `json:"parentRunId,omitempty"`
		At               string `json:"at,omitempty"`
	}
	runStatusRequest struct {
		Status string `json:"status"`
		At     string `json:"at,omitempty"`
	}
	toolCallRequest struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		CallID    string          `json:"callId"`
		RetryOf   string          `json:"retryOf,omitempty"`
		At        string          `json:"at,omitempty"`
	}
	toolResultRequest struct {
		Status                 string           `json:"status"`
		Result                 json.RawMessage  `json:"result,omitempty"`
		Error                  json.RawMessage  `json:"error,omitempty"`
		Retryable              *bool            `json:"retryable,omitempty"`
		PrivacyClass           string           `json:"privacyClass,omitempty"`
		Visibility             string           `json:"visibility,omitempty"`
		SharedWithParticipants []string         `json:"sharedWithParticipants,omitempty"`
		ToolVersion            string           `json:"toolVersion,omitempty"`
		At                     string           `json:"at,omitempty"`
		Memories               []map[string]any `json:"memories,omitempty"`
	}
	toolResultResponse struct {
		ArtifactID string   `json:"artifactId"`
		MemoryIDs  []string `json:"memoryIds"`
	}
	skillsRequest struct {
		LoadedSkills   []string `json:"loadedSkills,omitempty"`
		ActiveProfiles []string `json:"activeProfiles,omitempty"`
		DirectTools    []string `json:"directTools,omitempty"`
		At             string   `json:"at,omitempty"`
	}
	checkpointRequest struct {
		State json.RawMessage `json:"state"`
		At    string          `json:"at,omitempty"`
	}
	promoteRequest struct {
		ToolCallIDs []string `json:"toolCallIds,omitempty"`
		MemoryIDs   []string `json:"memoryIds,omitempty"`
		Report      string   `json:"report,omitempty"`
		At          string   `json:"at,omitempty"`
	}
	promoteResponse struct {
		ReportID string `json:"reportId"`
	}
	assemblyRequest struct {
		BranchID         string   `json:"branchId"`
		ParticipantID    string   `json:"participantId,omitempty"`
		RunID            string   `json:"runId,omitempty"`
		RuntimeKind      string   `json:"runtimeKind,omitempty"`
		Provider         string   `json:"provider,omitempty"`
		Model            string   `json:"model,omitempty"`
		TokenBudget      int      `json:"tokenBudget,omitempty"`
		ExactArtifactIDs []string `json:"exactArtifactIds,omitempty"`
		Now              string   `json:"now,omitempty"`
		Trace            bool     `json:"trace"`
	}
)

// event plays one event.
func (p *playback) event(e Event) error {
	ids := p.ids
	switch e.Type {
	case EventMessage:
		branch, err := ids.branch(e.Branch)
		if err != nil {
			return err
		}
		req := messageRequest{Role: e.Role, Content: e.Content, At: e.At}
		if req.ParticipantID, err = ids.optional(ids.participants, "participant", e.Participant); err != nil {
			return err
		}
		if req.RunID, err = ids.optional(ids.runs, "run", e.Run); err != nil {
			return err
		}
		if req.ParentMessageIDs, err = ids.all(ids.messages, "message", e.Parents); err != nil {
			return err
		}
		var out idResponse
		if err := p.runner.write(p.ctx, http.MethodPost, "/v1/branches/"+branch+"/messages", req, &out); err != nil {
			return err
		}
		ids.messages[e.Key] = out.ID
		p.atOf[e.Key] = e.At
		return p.forkReady()

	case EventRun:
		branch, err := ids.branch(e.Branch)
		if err != nil {
			return err
		}
		req := runRequest{RuntimeKind: e.RuntimeKind, At: e.At}
		if req.ParticipantID, err = ids.one(ids.participants, "participant", e.Participant); err != nil {
			return err
		}
		if req.TriggerMessageID, err = ids.optional(ids.messages, "message", e.Trigger); err != nil {
			return err
		}
		if req.ParentRunID, err = ids.optional(ids.runs, "run", e.ParentRun); err != nil {
			return err
		}
		var out idResponse
		if err := p.runner.write(p.ctx, http.MethodPost, "/v1/branches/"+branch+"/runs", req, &out); err != nil {
			return err
		}
		ids.runs[e.Key] = out.ID
		return nil

	case EventRunStatus:
		run, err := ids.one(ids.runs, "run", e.Run)
		if err != nil {
			return err
		}
		return p.runner.write(p.ctx, http.MethodPatch, "/v1/runs/"+run, runStatusRequest{Status: e.Status, At: e.At}, nil)

	case EventToolCall:
		run, err := ids.one(ids.runs, "run", e.Run)
		if err != nil {
			return err
		}
		req := toolCallRequest{Tool: e.Tool, Arguments: e.Arguments, CallID: e.Key, At: e.At}
		if req.RetryOf, err = ids.optional(ids.calls, "tool call", e.RetryOf); err != nil {
			return err
		}
		var out idResponse
		if err := p.runner.write(p.ctx, http.MethodPost, "/v1/runs/"+run+"/tool-calls", req, &out); err != nil {
			return err
		}
		ids.calls[e.Key] = out.ID
		return nil

	case EventToolResult:
		call, err := ids.one(ids.calls, "tool call", e.Call)
		if err != nil {
			return err
		}
		req := toolResultRequest{Status: e.Status, Result: e.Result, Error: e.Error, Retryable: e.Retryable,
			PrivacyClass: e.PrivacyClass, Visibility: e.Visibility, ToolVersion: e.ToolVersion, At: e.At}
		if req.SharedWithParticipants, err = ids.all(ids.participants, "participant", e.SharedWith); err != nil {
			return err
		}
		for i, m := range e.Memories {
			body, err := ids.memoryBody(m, e.Call)
			if err != nil {
				return fmt.Errorf("memories[%d] (%s): %w", i, m.Key, err)
			}
			req.Memories = append(req.Memories, body)
		}
		var out toolResultResponse
		if err := p.runner.write(p.ctx, http.MethodPost, "/v1/tool-calls/"+call+"/result", req, &out); err != nil {
			return err
		}
		if out.ArtifactID == "" || len(out.MemoryIDs) != len(e.Memories) {
			return fmt.Errorf("POST /v1/tool-calls/%s/result: got artifactId %q and %d memoryIds, want an artifact and %d memories",
				call, out.ArtifactID, len(out.MemoryIDs), len(e.Memories))
		}
		ids.artifacts[e.Call] = append(ids.artifacts[e.Call], out.ArtifactID)
		for i, m := range e.Memories {
			ids.memories[m.Key] = out.MemoryIDs[i]
			ids.memorySources[m.Key] = unique(append([]string{e.Call}, m.DerivedFrom...))
		}
		return nil

	case EventMemory:
		if e.Memory == nil {
			return fmt.Errorf("the memory event carries no memory")
		}
		m := *e.Memory
		body, err := ids.memoryBody(m, "")
		if err != nil {
			return err
		}
		var out idResponse
		if err := p.runner.write(p.ctx, http.MethodPost, "/v1/memories", body, &out); err != nil {
			return err
		}
		ids.memories[m.Key] = out.ID
		ids.memorySources[m.Key] = unique(m.DerivedFrom)
		return nil

	case EventSkills:
		run, err := ids.one(ids.runs, "run", e.Run)
		if err != nil {
			return err
		}
		return p.runner.write(p.ctx, http.MethodPost, "/v1/runs/"+run+"/skills",
			skillsRequest{LoadedSkills: e.LoadedSkills, ActiveProfiles: e.ActiveProfiles, DirectTools: e.DirectTools, At: e.At}, nil)

	case EventCheckpoint:
		run, err := ids.one(ids.runs, "run", e.Run)
		if err != nil {
			return err
		}
		var out idResponse
		if err := p.runner.write(p.ctx, http.MethodPost, "/v1/runs/"+run+"/checkpoints", checkpointRequest{State: e.State, At: e.At}, &out); err != nil {
			return err
		}
		ids.checkpoints[e.Key] = out.ID
		return nil

	case EventPromote:
		run, err := ids.one(ids.runs, "run", e.Run)
		if err != nil {
			return err
		}
		req := promoteRequest{Report: e.Report, At: e.At}
		if req.ToolCallIDs, err = ids.all(ids.calls, "tool call", e.Calls); err != nil {
			return err
		}
		if req.MemoryIDs, err = ids.all(ids.memories, "memory", e.MemoryKeys); err != nil {
			return err
		}
		var out promoteResponse
		if err := p.runner.write(p.ctx, http.MethodPost, "/v1/runs/"+run+"/promote", req, &out); err != nil {
			return err
		}
		ids.reports[e.Key] = out.ReportID
		return nil

	case EventDeleteArtifact:
		arts := ids.artifacts[e.Call]
		if len(arts) == 0 {
			return fmt.Errorf("tool call %q has no artifact to delete", e.Call)
		}
		for _, a := range arts {
			if err := p.runner.write(p.ctx, http.MethodDelete, "/v1/artifacts/"+a, nil, nil); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown event type %q", e.Type)
}

// assemble requests one assembly and checks it.
func (p *playback) assemble(a Assembly) AssemblyResult {
	res := AssemblyResult{Key: a.Key}
	fail := func(err error) AssemblyResult {
		res.Failures = append(res.Failures, err.Error())
		return res
	}
	ids := p.ids
	req := assemblyRequest{RuntimeKind: a.RuntimeKind, Provider: a.Provider, Model: a.Model, TokenBudget: a.TokenBudget,
		Now: a.Now, Trace: true}
	var err error
	if req.BranchID, err = ids.branch(a.Branch); err != nil {
		return fail(err)
	}
	if req.ParticipantID, err = ids.optional(ids.participants, "participant", a.Participant); err != nil {
		return fail(err)
	}
	if req.RunID, err = ids.optional(ids.runs, "run", a.Run); err != nil {
		return fail(err)
	}
	for _, c := range a.ExactCalls {
		art, err := ids.latestArtifact(c)
		if err != nil {
			return fail(fmt.Errorf("exactCalls: %w", err))
		}
		req.ExactArtifactIDs = append(req.ExactArtifactIDs, art)
	}
	status, body, payload, err := p.runner.send(p.ctx, http.MethodPost, "/v1/assemblies", req)
	if err != nil {
		return fail(err)
	}
	if status < 200 || status > 299 {
		return fail(&RequestError{Method: http.MethodPost, Path: "/v1/assemblies", Request: payload, Status: status, Response: body})
	}
	var resp AssemblyResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return fail(fmt.Errorf("POST /v1/assemblies answered %d with a body that is not an assembly (%v): %s", status, err, clip(body, 2000)))
	}
	res.Ran = true
	res.AssemblyID = resp.ID
	res.Baseline, res.Assembled = resp.Tokens.Baseline, resp.Tokens.Assembled
	res.Failures = checkAssembly(a.Expect, resp, ids)
	if p.runner.Explain {
		res.Failures = append(res.Failures, p.checkExplain(resp)...)
	}
	return res
}

// checkExplain asks explain about every record of resp's trace and returns each answer
// that tells another story: explain, omittedRefs and included agree, record by record.
func (p *playback) checkExplain(resp AssemblyResponse) []string {
	type story struct{ outcome, as, reason string }
	wants := map[string]story{}
	var refs []string
	for _, inc := range resp.Included {
		wants[inc.Ref] = story{"included", inc.As, ""}
		refs = append(refs, inc.Ref)
	}
	for _, o := range resp.OmittedRefs {
		wants[o.Ref] = story{"omitted", "", o.Reason}
		refs = append(refs, o.Ref)
	}
	var failures []string
	for _, ref := range refs {
		path := "/v1/assemblies/" + resp.ID + "/explain?ref=" + url.QueryEscape(ref)
		var ex struct{ Outcome, As, Reason, Rule string }
		if err := p.runner.write(p.ctx, http.MethodGet, path, nil, &ex); err != nil {
			failures = append(failures, fmt.Sprintf("explain %s: %v", ref, err))
			continue
		}
		w := wants[ref]
		got := story{ex.Outcome, ex.As, ex.Reason}
		if got.outcome == "included" {
			got.reason = "" // an inclusion's reason is prose; the trace has none to compare
		}
		if got != w || ex.Rule == "" {
			failures = append(failures, fmt.Sprintf("explain %s: %s/%s/%s under rule %q, but the trace says %s/%s/%s",
				ref, ex.Outcome, ex.As, ex.Reason, ex.Rule, w.outcome, w.as, w.reason))
		}
	}
	return failures
}

// keyIndex maps a scenario's keys to the ids the server returned, and remembers which tool
// calls each memory was derived from.
type keyIndex struct {
	participants, branches, messages, runs, calls, memories, checkpoints, reports map[string]string
	// artifacts maps a tool call key to its artifacts' ids, oldest first.
	artifacts map[string][]string
	// memorySources maps a memory key to the tool call keys it was derived from.
	memorySources map[string][]string
}

func newKeyIndex() *keyIndex {
	return &keyIndex{
		participants: map[string]string{}, branches: map[string]string{}, messages: map[string]string{},
		runs: map[string]string{}, calls: map[string]string{}, memories: map[string]string{},
		checkpoints: map[string]string{}, reports: map[string]string{},
		artifacts: map[string][]string{}, memorySources: map[string][]string{},
	}
}

// flat merges the key maps; keys are unique within a scenario except that a participant
// or branch may share a key with a record, in which case the record wins.
func (k *keyIndex) flat() map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{k.participants, k.branches, k.messages, k.runs, k.calls, k.memories, k.checkpoints, k.reports} {
		for key, id := range m {
			out[key] = id
		}
	}
	return out
}

func (k *keyIndex) one(m map[string]string, what, key string) (string, error) {
	if key == "" {
		return "", fmt.Errorf("no %s named", what)
	}
	id, ok := m[key]
	if !ok {
		return "", fmt.Errorf("unknown %s key %q (not created before this point)", what, key)
	}
	return id, nil
}

func (k *keyIndex) optional(m map[string]string, what, key string) (string, error) {
	if key == "" {
		return "", nil
	}
	return k.one(m, what, key)
}

func (k *keyIndex) all(m map[string]string, what string, keys []string) ([]string, error) {
	var out []string
	for _, key := range keys {
		id, err := k.one(m, what, key)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

func (k *keyIndex) branch(key string) (string, error) {
	id, ok := k.branches[key]
	if !ok {
		return "", fmt.Errorf("branch %q does not exist (yet): unknown key, or its forkAfter message was not created", key)
	}
	return id, nil
}

// latestArtifact is the artifact of a tool call's latest outcome.
func (k *keyIndex) latestArtifact(call string) (string, error) {
	arts := k.artifacts[call]
	if len(arts) == 0 {
		if _, ok := k.calls[call]; !ok {
			return "", fmt.Errorf("unknown tool call key %q", call)
		}
		return "", fmt.Errorf("tool call %q has no result, so no artifact", call)
	}
	return arts[len(arts)-1], nil
}

// memoryBody is the request body of a memory: its raw fields with keys mapped to ids.
// derivedFrom names tool calls by key and becomes their artifact ids; ownCall, the call of
// the tool result the memory comes with, is left out because the server adds its artifact.
func (k *keyIndex) memoryBody(m Memory, ownCall string) (map[string]any, error) {
	body := map[string]any{}
	for name, raw := range m.Fields {
		body[name] = raw
	}
	var derived []string
	for _, c := range m.DerivedFrom {
		if c == ownCall {
			continue
		}
		art, err := k.latestArtifact(c)
		if err != nil {
			return nil, fmt.Errorf("derivedFrom: %w", err)
		}
		derived = append(derived, art)
	}
	if len(derived) > 0 {
		body["derivedFrom"] = derived
	}
	for name, keys := range map[string][]string{"supersedes": m.Supersedes, "conflictsWith": m.ConflictsWith} {
		mapped, err := k.all(k.memories, "memory", keys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(mapped) > 0 {
			body[name] = mapped
		}
	}
	shared, err := k.all(k.participants, "participant", m.SharedWith)
	if err != nil {
		return nil, fmt.Errorf("sharedWith: %w", err)
	}
	if len(shared) > 0 {
		body["sharedWithParticipants"] = shared
	}
	return body, nil
}

func unique(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
