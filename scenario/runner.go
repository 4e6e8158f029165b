package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/model"
)

// Runner plays scenarios through ctxgraph's REST API with Client.
type Runner struct {
	// Client sends the requests: in-process through its Handler (an api.Server in tests) or
	// over HTTP. Its key names the account the scenario is written to.
	Client *client.Client
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
	// Request is the assembly request as sent, the scenario's keys mapped to ids.
	Request client.AssemblyRequest
	// Baseline and Assembled are the response's tokens.baseline and tokens.assembled, and
	// Messages its messages.
	Baseline  int
	Assembled int
	Messages  []model.ChatMessage
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

// Run plays the scenario's writes, then requests and checks each assembly. The error is
// the first write that failed (Result.PlaybackError says the same); an assembly that fails
// or misses expectations is reported in its AssemblyResult, not as an error.
func (r Runner) Run(ctx context.Context, sc Scenario) (Result, error) {
	res := Result{Scenario: sc.Name, Reference: sc.Reference}
	p := &playback{runner: r, c: r.Client, ctx: ctx, sc: sc, ids: newKeyIndex()}
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

// playback is one run of a scenario's writes.
type playback struct {
	runner       Runner
	c            *client.Client
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
	conv, err := p.c.CreateConversation(p.ctx, client.Conversation{Title: p.sc.Name, At: at})
	if err != nil {
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
		out, err := p.c.AddParticipant(p.ctx, conv.ID, client.Participant{Kind: pt.Kind, Name: pt.Name, Provider: pt.Provider, Model: pt.Model})
		if err != nil {
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
			out, err := p.c.ForkBranch(p.ctx, p.conversation,
				client.Fork{ParentBranchID: p.ids.branches[b.Parent], ForkAfterMessageID: msg, Name: b.Key, At: p.atOf[b.ForkAfter]})
			if err != nil {
				return fmt.Errorf("forking branch %s after %s: %w", b.Key, b.ForkAfter, err)
			}
			p.ids.branches[b.Key] = out.ID
			p.forked[b.Key] = true
			progress = true
		}
	}
	return nil
}

// event plays one event.
func (p *playback) event(e Event) error {
	ids := p.ids
	switch e.Type {
	case EventMessage:
		branch, err := ids.branch(e.Branch)
		if err != nil {
			return err
		}
		req := client.Message{Role: e.Role, Content: e.Content, At: e.At}
		if req.ParticipantID, err = ids.optional(ids.participants, "participant", e.Participant); err != nil {
			return err
		}
		if req.RunID, err = ids.optional(ids.runs, "run", e.Run); err != nil {
			return err
		}
		if req.ParentMessageIDs, err = ids.all(ids.messages, "message", e.Parents); err != nil {
			return err
		}
		out, err := p.c.AppendMessage(p.ctx, branch, req)
		if err != nil {
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
		req := client.Run{RuntimeKind: e.RuntimeKind, At: e.At}
		if req.ParticipantID, err = ids.one(ids.participants, "participant", e.Participant); err != nil {
			return err
		}
		if req.TriggerMessageID, err = ids.optional(ids.messages, "message", e.Trigger); err != nil {
			return err
		}
		if req.ParentRunID, err = ids.optional(ids.runs, "run", e.ParentRun); err != nil {
			return err
		}
		out, err := p.c.StartRun(p.ctx, branch, req)
		if err != nil {
			return err
		}
		ids.runs[e.Key] = out.ID
		return nil

	case EventRunStatus:
		run, err := ids.one(ids.runs, "run", e.Run)
		if err != nil {
			return err
		}
		return p.c.FinishRun(p.ctx, run, client.RunEnd{Status: e.Status, At: e.At})

	case EventToolCall:
		run, err := ids.one(ids.runs, "run", e.Run)
		if err != nil {
			return err
		}
		req := client.ToolCall{Tool: e.Tool, Arguments: e.Arguments, CallID: e.Key, At: e.At}
		if req.RetryOf, err = ids.optional(ids.calls, "tool call", e.RetryOf); err != nil {
			return err
		}
		out, err := p.c.RequestToolCall(p.ctx, run, req)
		if err != nil {
			return err
		}
		ids.calls[e.Key] = out.ID
		return nil

	case EventToolResult:
		call, err := ids.one(ids.calls, "tool call", e.Call)
		if err != nil {
			return err
		}
		req := client.ToolResult{Status: e.Status, Result: e.Result, Retryable: e.Retryable,
			PrivacyClass: e.PrivacyClass, Visibility: e.Visibility, ToolVersion: e.ToolVersion, At: e.At}
		if e.Error != nil {
			req.Error = &client.ToolError{}
			if err := decodeStrict(e.Error, req.Error); err != nil {
				return fmt.Errorf("error: %w", err)
			}
		}
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
		out, err := p.c.RecordToolResult(p.ctx, call, req)
		if err != nil {
			return err
		}
		// Without client memories, the server may derive one (DESIGN §7).
		derived := len(e.Memories) == 0 && len(out.MemoryIDs) == 1
		if out.ArtifactID == "" || (len(out.MemoryIDs) != len(e.Memories) && !derived) {
			return fmt.Errorf("POST /v1/tool-calls/%s/result: got artifactId %q and %d memoryIds, want an artifact and %d memories",
				call, out.ArtifactID, len(out.MemoryIDs), len(e.Memories))
		}
		ids.artifacts[e.Call] = append(ids.artifacts[e.Call], out.ArtifactID)
		for i, m := range e.Memories {
			ids.memories[m.Key] = out.MemoryIDs[i]
			ids.memorySources[m.Key] = unique(append([]string{e.Call}, m.DerivedFrom...))
		}
		if derived {
			// A derived memory has no key of the file's: it is named after its call, and a
			// call's key matches it as "a memory derived from it".
			key := derivedKey(e.Call, len(ids.artifacts[e.Call]))
			ids.memories[key] = out.MemoryIDs[0]
			ids.memorySources[key] = []string{e.Call}
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
		out, err := p.c.DeriveMemory(p.ctx, body)
		if err != nil {
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
		_, err = p.c.RecordSkills(p.ctx, run,
			client.Skills{LoadedSkills: e.LoadedSkills, ActiveProfiles: e.ActiveProfiles, DirectTools: e.DirectTools, At: e.At})
		return err

	case EventCheckpoint:
		run, err := ids.one(ids.runs, "run", e.Run)
		if err != nil {
			return err
		}
		out, err := p.c.Checkpoint(p.ctx, run, client.Checkpoint{State: e.State, At: e.At})
		if err != nil {
			return err
		}
		ids.checkpoints[e.Key] = out.ID
		return nil

	case EventPromote:
		run, err := ids.one(ids.runs, "run", e.Run)
		if err != nil {
			return err
		}
		req := client.Promotion{Report: e.Report, At: e.At}
		if req.ToolCallIDs, err = ids.all(ids.calls, "tool call", e.Calls); err != nil {
			return err
		}
		if req.MemoryIDs, err = ids.all(ids.memories, "memory", e.MemoryKeys); err != nil {
			return err
		}
		out, err := p.c.Promote(p.ctx, run, req)
		if err != nil {
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
			if err := p.c.DeleteArtifact(p.ctx, a); err != nil {
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
	req := client.AssemblyRequest{RuntimeKind: a.RuntimeKind, Provider: a.Provider, Model: a.Model, TokenBudget: a.TokenBudget,
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
	// The answer is decoded into the checks' own view of it, which keeps the messages as
	// the server wrote them.
	res.Request = req
	var resp AssemblyResponse
	if err := p.c.Do(p.ctx, http.MethodPost, "/v1/assemblies", req, &resp); err != nil {
		return fail(err)
	}
	res.Ran = true
	res.AssemblyID = resp.ID
	res.Baseline, res.Assembled = resp.Tokens.Baseline, resp.Tokens.Assembled
	if err := json.Unmarshal(resp.Messages, &res.Messages); err != nil {
		return fail(fmt.Errorf("the assembly's messages: %w", err))
	}
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
		ex, err := p.c.Explain(p.ctx, resp.ID, ref)
		if err != nil {
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

// memoryBody is the request body of a memory: its fields as written, with keys mapped to
// ids. derivedFrom names tool calls by key and becomes their artifact ids; ownCall, the
// call of the tool result the memory comes with, is left out because the server adds its
// artifact. A field the request does not have is an error, as the server would answer.
func (k *keyIndex) memoryBody(m Memory, ownCall string) (client.Memory, error) {
	var body client.Memory
	fields, err := client.Marshal(m.Fields)
	if err != nil {
		return body, err
	}
	if err := decodeStrict(fields, &body); err != nil {
		return body, err
	}
	for _, c := range m.DerivedFrom {
		if c == ownCall {
			continue
		}
		art, err := k.latestArtifact(c)
		if err != nil {
			return body, fmt.Errorf("derivedFrom: %w", err)
		}
		body.DerivedFrom = append(body.DerivedFrom, art)
	}
	if body.Supersedes, err = k.all(k.memories, "memory", m.Supersedes); err != nil {
		return body, fmt.Errorf("supersedes: %w", err)
	}
	if body.ConflictsWith, err = k.all(k.memories, "memory", m.ConflictsWith); err != nil {
		return body, fmt.Errorf("conflictsWith: %w", err)
	}
	if body.SharedWithParticipants, err = k.all(k.participants, "participant", m.SharedWith); err != nil {
		return body, fmt.Errorf("sharedWith: %w", err)
	}
	return body, nil
}

// decodeStrict decodes raw, a scenario's JSON, into a request body, refusing fields the
// body does not have.
// derivedKey names the memory the server derived from the n-th result of a call.
func derivedKey(call string, n int) string { return fmt.Sprintf("%s#derived%d", call, n) }

func decodeStrict(raw []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
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
