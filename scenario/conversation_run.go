package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/model"
)

// ConversationRunner plays conversations turn by turn through POST /v1/generations, as a
// REST client that runs the model's tool calls itself and posts their results without
// memories, and checks what each turn's model calls carried.
type ConversationRunner struct {
	// Client sends the requests; its key names the account.
	Client *client.Client
	// Model is the scripted model the server's provider entry points at.
	Model *ScriptedModel
	// Provider is the provider name of participants whose file names none; empty means
	// openai, the name the default policy lets receive internal and user_private results.
	Provider string
	// ModelName is the model of participants whose file names none; empty means scripted-1.
	ModelName string
}

// ConversationResult is the outcome of one conversation.
type ConversationResult struct {
	Conversation   string
	ConversationID string
	// Needed and Found count the needs of every turn and those the model call carried.
	Needed, Found int
	// Assembled and Baseline add up the tokens of every turn's first model call as ctxgraph
	// counted them (tokens.assembled, and tokens.baseline: history replay).
	Assembled, Baseline int
	Turns               []TurnResult
	// Calls are every request the scripted model received, labelled by turn.
	Calls []ModelCall
	// Failures are the conversation's own failures; TurnResult has each turn's.
	Failures []string
}

// TurnResult is the outcome of one turn.
type TurnResult struct {
	Key, Branch string
	RunID       string
	// AssemblyID is the assembly the generation's answer named: the turn's first model
	// call's, unless its first step recalls.
	AssemblyID          string
	Assembled, Baseline int
	Needs               []NeedResult
	Failures            []string
}

// NeedResult is what became of one need.
type NeedResult struct {
	Need
	// Value is the value looked for: the need's, or the artifact id it names.
	Value string
	Found bool
	// Form is how the value reached the model call: the `as` of the included record that
	// carries it (raw, memory, message, ...), recall for a value the call after a recall
	// carried, or request when no included record could be named.
	Form string
	// Ref is the included record that carries the value, when one was found.
	Ref string
}

// Recall is the share of needs found; 1 when there are none.
func (r ConversationResult) Recall() float64 {
	if r.Needed == 0 {
		return 1
	}
	return float64(r.Found) / float64(r.Needed)
}

// AllFailures lists the conversation's failures and every turn's, each naming its turn.
func (r ConversationResult) AllFailures() []string {
	out := append([]string(nil), r.Failures...)
	for _, t := range r.Turns {
		for _, f := range t.Failures {
			out = append(out, "turn "+t.Key+": "+f)
		}
	}
	return out
}

// Run plays a conversation and checks every turn; the error says why it could not start.
func (r ConversationRunner) Run(ctx context.Context, conv Conversation) (ConversationResult, error) {
	p := &conversationPlay{runner: r, ctx: ctx, conv: conv, c: r.Client,
		participants: map[string]string{}, branches: map[string]string{}, artifacts: map[string]string{},
		answers: map[string]string{}, memories: map[string]model.Memory{}}
	p.res.Conversation = conv.Name
	if err := p.start(); err != nil {
		return p.res, err
	}
	for _, t := range conv.Turns {
		tr := p.turn(t)
		p.res.Turns = append(p.res.Turns, tr)
		p.res.Assembled += tr.Assembled
		p.res.Baseline += tr.Baseline
		for _, n := range tr.Needs {
			p.res.Needed++
			if n.Found {
				p.res.Found++
			}
		}
		if err := p.forkReady(); err != nil {
			p.res.Failures = append(p.res.Failures, err.Error())
			break
		}
	}
	p.res.Failures = append(p.res.Failures, r.Model.Unexpected()...)
	p.res.Calls = r.Model.Calls()
	return p.res, nil
}

// conversationPlay is one run of a conversation: the ids the server gave its keys.
type conversationPlay struct {
	runner       ConversationRunner
	ctx          context.Context
	c            *client.Client
	conv         Conversation
	res          ConversationResult
	participants map[string]string
	branches     map[string]string
	// artifacts maps a call key to the artifact of its result.
	artifacts map[string]string
	// answers maps a turn key to its final assistant message.
	answers  map[string]string
	memories map[string]model.Memory
}

func (p *conversationPlay) start() error {
	conv, err := p.c.CreateConversation(p.ctx, client.Conversation{Title: p.conv.Name})
	if err != nil {
		return fmt.Errorf("creating the conversation: %w", err)
	}
	p.res.ConversationID = conv.ID
	p.branches[RootBranch] = conv.BranchID
	for _, pt := range p.conv.Participants {
		kind, prov, mod := pt.Kind, pt.Provider, pt.Model
		if kind == "" {
			kind = "model"
		}
		if prov == "" {
			prov = p.runner.Provider
		}
		if prov == "" {
			prov = "openai"
		}
		if mod == "" {
			mod = p.runner.ModelName
		}
		if mod == "" {
			mod = "scripted-1"
		}
		out, err := p.c.AddParticipant(p.ctx, conv.ID, client.Participant{Kind: kind, Name: pt.Name, Provider: prov, Model: mod})
		if err != nil {
			return fmt.Errorf("participant %s: %w", pt.Key, err)
		}
		p.participants[pt.Key] = out.ID
	}
	return nil
}

// forkReady forks every branch whose parent exists and whose turn has its final answer.
func (p *conversationPlay) forkReady() error {
	for _, b := range p.conv.Branches {
		_, done := p.branches[b.Key]
		parent, ok := p.branches[b.Parent]
		msg, answered := p.answers[b.ForkAfterTurn]
		if done || !ok || !answered {
			continue
		}
		out, err := p.c.ForkBranch(p.ctx, p.res.ConversationID, client.Fork{ParentBranchID: parent, ForkAfterMessageID: msg, Name: b.Key})
		if err != nil {
			return fmt.Errorf("forking %s after turn %s: %w", b.Key, b.ForkAfterTurn, err)
		}
		p.branches[b.Key] = out.ID
	}
	return nil
}

// turn plays one turn: the generation, then each round of the client's tool results and a
// continuation, and checks the model calls the turn made.
func (p *conversationPlay) turn(t Turn) TurnResult {
	tr := TurnResult{Key: t.Key, Branch: t.Branch}
	fail := func(format string, args ...any) { tr.Failures = append(tr.Failures, fmt.Sprintf(format, args...)) }
	branch, ok := p.branches[t.Branch]
	if !ok {
		fail("branch %s was never forked", t.Branch)
		return tr
	}
	answers, calls, err := p.script(t)
	if err != nil {
		fail("%v", err)
		return tr
	}
	p.runner.Model.Script(t.Key, answers)
	budget := t.TokenBudget
	if budget == 0 {
		budget = p.conv.TokenBudget
	}
	gen, err := p.c.Generate(p.ctx, client.GenerationRequest{BranchID: branch, ParticipantIDs: []string{p.participants[t.Participant]},
		UserMessage: &client.UserMessage{Content: t.User}, TokenBudget: budget, Tools: p.conv.Tools})
	if err == nil && len(gen.Runs) != 1 {
		err = fmt.Errorf("the generation answered %d runs, want 1", len(gen.Runs))
	}
	if err != nil {
		fail("generating: %v", err)
		p.checkCalls(t, &tr, nil)
		return tr
	}
	run := gen.Runs[0]
	tr.RunID, tr.AssemblyID = run.RunID, run.AssemblyID
	tr.Assembled, tr.Baseline = run.Tokens.Assembled, run.Tokens.Baseline
	for round := 0; run.Status == model.RunAwaitingTools && round <= len(t.Steps); round++ {
		for _, tc := range run.ToolCalls {
			if err := p.answerCall(t, tc, calls[tc.CallID]); err != nil {
				fail("%v", err)
			}
		}
		next, err := p.c.Continue(p.ctx, run.RunID, client.ContinueRequest{TokenBudget: budget, Tools: p.conv.Tools})
		if err == nil && len(next.Runs) != 1 {
			err = fmt.Errorf("the continuation answered %d runs, want 1", len(next.Runs))
		}
		if err != nil {
			fail("continuing: %v", err)
			break
		}
		run = next.Runs[0]
	}
	switch {
	case run.Status == model.RunCompleted && run.Message != nil:
		p.answers[t.Key] = run.Message.ID
	case run.Status == model.RunFailed && run.Error != nil:
		fail("the run failed: %s: %s", run.Error.Code, run.Error.Message)
	default:
		fail("the run ended %s, want completed", run.Status)
	}
	if left := p.runner.Model.Left(); left > 0 {
		fail("%d scripted answers were never asked for", left)
	}
	p.checkCalls(t, &tr, gen.Runs)
	return tr
}

// script turns a turn's steps into the scripted model's answers, giving each call the
// provider id call_<turn>_<n>, and maps those ids to the steps' calls.
func (p *conversationPlay) script(t Turn) ([]ScriptedAnswer, map[string]StepCall, error) {
	calls := map[string]StepCall{}
	var answers []ScriptedAnswer
	n := 0
	for _, s := range t.Steps {
		a := ScriptedAnswer{Text: s.Text}
		for _, c := range s.ToolCalls {
			n++
			id := fmt.Sprintf("call_%s_%d", t.Key, n)
			args, err := p.arguments(c)
			if err != nil {
				return nil, nil, fmt.Errorf("call %s: %w", c.Key, err)
			}
			a.ToolCalls = append(a.ToolCalls, ScriptedToolCall{ID: id, Name: c.Tool, Arguments: args})
			calls[id] = c
		}
		answers = append(answers, a)
	}
	return answers, calls, nil
}

// arguments are a call's arguments as the model sends them: a recall's artifactOf becomes
// the artifactId of that call's result.
func (p *conversationPlay) arguments(c StepCall) (string, error) {
	if len(c.Arguments) == 0 {
		return "{}", nil
	}
	if c.Tool != RecallTool {
		return string(c.Arguments), nil
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(c.Arguments, &args); err != nil {
		return "", err
	}
	var of string
	_ = json.Unmarshal(args["artifactOf"], &of)
	art, ok := p.artifacts[of]
	if !ok {
		return "", fmt.Errorf("call %s has no artifact to recall", of)
	}
	delete(args, "artifactOf")
	args["artifactId"], _ = json.Marshal(art)
	out, err := client.Marshal(args)
	return string(out), err
}

// answerCall posts the client's result of one call the run handed back, without
// memories. A recall handed back is a failure of the server, answered so that the turn
// goes on: as a completed call saying the client has no such tool, not a failed one,
// whose recovery state (its arguments, the artifact id) every later turn would carry.
func (p *conversationPlay) answerCall(t Turn, tc model.RequestedToolCall, c StepCall) error {
	if c.Key == "" || tc.Tool == RecallTool {
		_, err := p.c.RecordToolResult(p.ctx, tc.ID, client.ToolResult{Status: "succeeded",
			Result: []byte(`{"error": "the client has no tool of this name"}`)})
		if err != nil {
			return fmt.Errorf("posting the failure of %s: %w", tc.Tool, err)
		}
		if tc.Tool == RecallTool {
			return fmt.Errorf("the server handed the model's %s call %s back to the client instead of answering it", RecallTool, tc.CallID)
		}
		return fmt.Errorf("the run handed back call %s (%s), which the script never made", tc.CallID, tc.Tool)
	}
	out := t.Results[c.Key]
	body, err := out.Body()
	if err != nil {
		return err
	}
	req := client.ToolResult{Status: out.Status, Result: body, PrivacyClass: out.PrivacyClass, Visibility: out.Visibility}
	if req.Status == "" {
		req.Status = "succeeded"
	}
	if out.Error != nil {
		req.Error = &client.ToolError{}
		if err := decodeStrict(out.Error, req.Error); err != nil {
			return fmt.Errorf("result of %s: error: %w", c.Key, err)
		}
	}
	for _, k := range out.SharedWith {
		req.SharedWithParticipants = append(req.SharedWithParticipants, p.participants[k])
	}
	rec, err := p.c.RecordToolResult(p.ctx, tc.ID, req)
	if err != nil {
		return fmt.Errorf("posting the result of %s: %w", c.Key, err)
	}
	p.artifacts[c.Key] = rec.ArtifactID
	return nil
}

// checkCalls checks the needs and mustNotContain of a turn against the model calls it
// made, and names the form that carried each need found at the first call. runs is the
// generation's answer, nil when it failed.
func (p *conversationPlay) checkCalls(t Turn, tr *TurnResult, runs []model.RunResult) {
	byStep := map[int]ModelCall{}
	var turnCalls []ModelCall
	for _, c := range p.runner.Model.Calls() {
		if c.Label == t.Key {
			turnCalls = append(turnCalls, c)
			if c.Step >= 0 {
				byStep[c.Step] = c
			}
		}
	}
	recallStep := -1
	for i, s := range t.Steps {
		if s.recall() {
			recallStep = i
			break
		}
	}
	var asm *client.Assembly
	for _, n := range t.Needs {
		nr := NeedResult{Need: n, Value: n.Value}
		if n.ArtifactOf != "" {
			nr.Value = p.artifacts[n.ArtifactOf]
		}
		step := 0
		if n.At == AtRecall {
			step = recallStep + 1
		}
		call, made := byStep[step]
		switch {
		case nr.Value == "":
			tr.Failures = append(tr.Failures, fmt.Sprintf("need from %s: call %s has no artifact", n.From, n.ArtifactOf))
		case !made:
			tr.Failures = append(tr.Failures, fmt.Sprintf("need %q: model call %d of the turn was never made", nr.Value, step+1))
		case !carries(call.Body, nr.Value):
			tr.Failures = append(tr.Failures, fmt.Sprintf("need %q (from %s) is not in model call %d", nr.Value, sourceOf(n), step+1))
		case n.At == AtRecall:
			nr.Found, nr.Form = true, "recall"
		default:
			nr.Found = true
			if asm == nil && len(runs) == 1 && runs[0].AssemblyID != "" {
				got, err := p.c.GetAssembly(p.ctx, runs[0].AssemblyID)
				if err != nil {
					tr.Failures = append(tr.Failures, fmt.Sprintf("reading the assembly: %v", err))
				}
				asm = &got
			}
			nr.Form = "request"
			// The answer names the assembly of the generation's last model call: the first
			// call's only when its messages hold what the provider got.
			if asm != nil && carriesMessages(asm.Messages, nr.Value) {
				nr.Form, nr.Ref = p.attribute(*asm, t.Branch, nr.Value, &tr.Failures)
			}
		}
		tr.Needs = append(tr.Needs, nr)
	}
	for _, v := range t.MustNotContain {
		for _, c := range turnCalls {
			if carries(c.Body, v) {
				tr.Failures = append(tr.Failures, fmt.Sprintf("%q, which this participant or branch must not see, is in model call %d", v, c.Step+1))
				break
			}
		}
	}
}

// sourceOf names where a need's value came from.
func sourceOf(n Need) string {
	if n.ArtifactOf != "" {
		return "the artifact of " + n.ArtifactOf
	}
	return n.From
}

// attribute finds the included record of asm that carries value and returns its form and
// id; for a memory it also checks that explain says included and that the memory names
// its provenance locators. A value no record can be shown to carry is in form request.
func (p *conversationPlay) attribute(asm client.Assembly, branch, value string, failures *[]string) (form, ref string) {
	var history *model.History
	for _, inc := range asm.Included {
		var text string
		switch inc.Type {
		case model.TypeMemory:
			m, ok := p.memories[inc.Ref]
			if !ok {
				var err error
				if m, err = p.c.GetMemory(p.ctx, inc.Ref); err != nil {
					*failures = append(*failures, fmt.Sprintf("reading memory %s: %v", inc.Ref, err))
					continue
				}
				p.memories[inc.Ref] = m
			}
			text = m.Summary + string(m.Data)
			if inc.As == "safe_summary" {
				text = m.SafeSummary
			}
			if !strings.Contains(text, value) {
				continue
			}
			if ex, err := p.c.Explain(p.ctx, asm.ID, inc.Ref); err != nil || ex.Outcome != "included" {
				*failures = append(*failures, fmt.Sprintf("explain of memory %s, which carries %q: %v %+v, want included", inc.Ref, value, err, ex))
			}
			if len(m.ProvenanceLocators) == 0 {
				*failures = append(*failures, fmt.Sprintf("memory %s carries %q but names no provenance locators", inc.Ref, value))
			}
			return inc.As, inc.Ref
		case model.TypeArtifact:
			var raw client.Response
			if err := p.c.Do(p.ctx, http.MethodGet, "/v1/artifacts/"+url.PathEscape(inc.Ref)+"/raw", nil, &raw); err != nil {
				continue
			}
			text = string(raw.Body)
		case model.TypeMessage:
			if history == nil {
				h, err := p.c.History(p.ctx, p.branches[branch])
				if err != nil {
					continue
				}
				history = &h
			}
			for _, it := range history.Items {
				if it.ID == inc.Ref {
					text = it.Content
				}
			}
		case model.TypeToolCall:
			tc, err := p.c.GetToolCall(p.ctx, inc.Ref)
			if err != nil {
				continue
			}
			text = string(tc.Arguments)
		}
		if strings.Contains(text, value) {
			return inc.As, inc.Ref
		}
	}
	return "request", ""
}

// carriesMessages says whether an assembly's messages carry value.
func carriesMessages(msgs []model.ChatMessage, value string) bool {
	for _, m := range msgs {
		text := m.Content + m.Name
		for _, tc := range m.ToolCalls {
			text += tc.Arguments
		}
		if strings.Contains(text, value) {
			return true
		}
	}
	return false
}

// carries says whether a chat-completions request body carries value in its messages: in
// the text of a content, a name or a tool call's arguments, or in the messages' JSON.
func carries(body []byte, value string) bool {
	var req struct {
		Messages json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return false
	}
	if strings.Contains(string(req.Messages), value) {
		return true
	}
	var msgs []struct {
		Content   json.RawMessage `json:"content"`
		Name      string          `json:"name"`
		ToolCalls []struct {
			Function struct {
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	if json.Unmarshal(req.Messages, &msgs) != nil {
		return false
	}
	for _, m := range msgs {
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			// Content parts: each part's text.
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, part := range parts {
				text += part.Text + "\n"
			}
		}
		for _, tc := range m.ToolCalls {
			text += tc.Function.Arguments
		}
		if holds(text+m.Name, value) {
			return true
		}
	}
	return false
}

// holds says whether text holds value as written, or as a JSON string inside it writes
// it (a tool result's JSON, say, escapes quotes and backslashes).
func holds(text, value string) bool {
	if strings.Contains(text, value) {
		return true
	}
	quoted, err := model.EncodeJSON(value)
	if err != nil {
		return false
	}
	return strings.Contains(text, strings.Trim(strings.TrimSpace(string(quoted)), `"`))
}
