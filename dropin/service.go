package dropin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ctxgraph/ctxgraph/model"
)

// Chains is what the service reads and writes beyond the execution graph: the hash chain,
// a branch's conversation and the tool calls of a run.
type Chains interface {
	model.DropInGraph
	BranchConversation(ctx context.Context, accountID, branchID string) (string, error)
	RunToolCalls(ctx context.Context, accountID, runID string) ([]model.ToolCall, error)
}

// Service serves the drop-in endpoints' calls.
type Service struct {
	// Graph records the tail of a list (its results go through the same path as the API's).
	Graph     model.ExecutionGraph
	Chains    Chains
	Generator model.Generator
	// Providers are the configured providers, whose names and models a request's model
	// names.
	Providers []model.ProviderInfo
}

// Request is one call of a vendor-protocol client, translated.
type Request struct {
	// Model is the request's model: `provider/model`, or a model a configured provider lists.
	Model string
	// Instructions is the client's system message, nil when it sent none.
	Instructions *string
	// Messages is the client's list without its system message; Positions, when set, is
	// each message's index in the list the client sent, for errors that name one.
	Messages  []model.ClientMessage
	Positions []int
	Options   model.CallOptions
	// BranchID, ConversationID and ParticipantID are the X-Ctxgraph-* headers, when sent.
	BranchID, ConversationID, ParticipantID string
	// ThreadKey is the request's stable key (OpenAI `user` or `metadata.ctxgraph_thread`,
	// Anthropic `metadata.user_id`), when it has one.
	ThreadKey string
	// After, when set, is the point of an earlier answer the list continues (the Responses
	// protocol's previous_response_id, with ConversationID): Messages come after it.
	After *model.ChainPoint
	// Answer is an answer as the protocol's client appends it to its list; nil for one
	// assistant message (AnswerMessage).
	Answer func(model.RunResult) []model.ClientMessage
}

// Answer is what a call answers, in ctxgraph's terms: the vendor's answer is rendered from it.
type Answer struct {
	ConversationID string          `json:"conversationId"`
	BranchID       string          `json:"branchId"`
	Run            model.RunResult `json:"run"`
	// Point is where the answer leaves the list: what a later request continues.
	Point model.ChainPoint `json:"point"`
}

// Call is a request whose conversation, participant and chain are resolved, ready to run.
type Call struct {
	s           *Service
	accountID   string
	req         Request
	chain       []string
	conv        model.Conversation
	participant model.Participant
	// offset is the length of the list before Messages: the point of After, else 0; chain[k]
	// is the hash of the list's first offset+k messages.
	offset int
	// branchID is the branch the list continues, once Run has matched it.
	branchID string
}

// Prepare resolves a request's model, conversation and participant (creating the
// conversation of a stable key and the participant of a model on first use) and hashes its
// list. KindInvalid names a bad field; KindNotFound an unknown model, branch or conversation.
func (s *Service) Prepare(ctx context.Context, accountID string, req Request) (*Call, error) {
	if len(req.Messages) == 0 {
		return nil, model.Invalid("messages", "messages must hold at least one message besides the system message")
	}
	if err := paired(req); err != nil {
		return nil, err
	}
	if req.After != nil && req.ConversationID == "" {
		return nil, model.Invalid("previous_response_id", "a previous response names its conversation")
	}
	providerName, modelName, err := s.resolveModel(req.Model)
	if err != nil {
		return nil, err
	}
	c := &Call{s: s, accountID: accountID, req: req, chain: Chain(req.Messages)}
	if req.After != nil {
		c.chain, c.offset = ChainFrom(req.After.SHA256, req.Messages), req.After.Length
	}
	if c.conv, err = s.conversation(ctx, accountID, req); err != nil {
		return nil, err
	}
	if c.participant, err = s.participant(ctx, accountID, c.conv, req, providerName, modelName); err != nil {
		return nil, err
	}
	return c, nil
}

// paired checks that every tool result of the list answers a call an earlier assistant
// message of the list made, once: a list that is not well formed is refused before
// anything is written.
func paired(req Request) error {
	made, answered := map[string]bool{}, map[string]bool{}
	for i, m := range req.Messages {
		pos := i
		if i < len(req.Positions) {
			pos = req.Positions[i]
		}
		for _, r := range m.Results {
			switch {
			case !made[r.CallID] && req.After == nil:
				return model.Invalid(fmt.Sprintf("messages[%d].tool_call_id", pos), "tool result for %q answers no tool call an earlier assistant message made", r.CallID)
			case answered[r.CallID]:
				return model.Invalid(fmt.Sprintf("messages[%d].tool_call_id", pos), "tool call %q is answered twice", r.CallID)
			}
			answered[r.CallID] = true
		}
		for j, tc := range m.ToolCalls {
			if tc.ID == "" || made[tc.ID] {
				return model.Invalid(fmt.Sprintf("messages[%d].tool_calls[%d].id", pos, j), "each tool call needs an id of its own: its result is paired by it")
			}
			made[tc.ID] = true
		}
	}
	return nil
}

// Key is the call's natural idempotency key: its conversation and the hash of its whole
// list. A request that repeats one already answered has the same key, and gets that answer.
func (c *Call) Key() string {
	return "dropin/" + c.conv.ID + "/" + c.chain[len(c.chain)-1]
}

// BranchID is the branch the call's list continues, once Run has found it (its streamed
// events come after).
func (c *Call) BranchID() string { return c.branchID }

// ConversationID is the call's conversation.
func (c *Call) ConversationID() string { return c.conv.ID }

// resolveModel finds the provider and model a request's model names.
func (s *Service) resolveModel(name string) (providerName, modelName string, err error) {
	if name == "" {
		return "", "", model.Invalid("model", "model is required: `provider/model`, or a model a configured provider lists (GET /v1/openai/models)")
	}
	if p, m, ok := strings.Cut(name, "/"); ok {
		for _, info := range s.Providers {
			if info.Name == p && (len(info.Models) == 0 || slices.Contains(info.Models, m)) {
				return p, m, nil
			}
		}
	}
	for _, info := range s.Providers {
		if slices.Contains(info.Models, name) {
			return info.Name, name, nil
		}
	}
	return "", "", &model.Error{Kind: model.KindNotFound, Field: "model",
		Message: fmt.Sprintf("model %q is not a configured provider's: name it `provider/model` or as a configured provider lists it (GET /v1/openai/models)", name)}
}

// conversation finds the request's conversation: by its branch or conversation header, else
// by its stable key, made on first use.
func (s *Service) conversation(ctx context.Context, accountID string, req Request) (model.Conversation, error) {
	id := req.ConversationID
	if req.BranchID != "" {
		convID, err := s.Chains.BranchConversation(ctx, accountID, req.BranchID)
		if err != nil {
			return model.Conversation{}, err
		}
		if id != "" && id != convID {
			return model.Conversation{}, model.Invalid("X-Ctxgraph-Branch", "branch %q is not a branch of conversation %q", req.BranchID, id)
		}
		id = convID
	}
	if id != "" {
		return s.Graph.Conversation(ctx, accountID, id)
	}
	key, title := req.ThreadKey, ""
	first := ""
	for _, m := range req.Messages {
		if m.Role == "user" && m.Text != "" {
			first = m.Text
			break
		}
	}
	title = firstLine(first, 80)
	if key == "" {
		// Lacking a key, a thread is known by how it began: its system and first user message.
		system := ""
		if req.Instructions != nil {
			system = *req.Instructions
		}
		key = "first:" + hashOf([]byte(system+"\x00"+first))
	} else {
		key = "thread:" + key
	}
	in := model.NewConversation{Title: title}
	if req.Instructions != nil {
		in.Instructions = *req.Instructions
	}
	return s.Chains.KeyedConversation(ctx, accountID, key, in)
}

// participant finds the request's participant: the header's, else the conversation's
// participant of that provider and model, named by the model, added on first use.
func (s *Service) participant(ctx context.Context, accountID string, conv model.Conversation, req Request, providerName, modelName string) (model.Participant, error) {
	for _, p := range conv.Participants {
		if req.ParticipantID != "" && p.ID == req.ParticipantID {
			return p, nil
		}
		if req.ParticipantID == "" && p.Kind == "model" && p.Provider == providerName && p.Model == modelName && p.Name == modelName {
			return p, nil
		}
	}
	if req.ParticipantID != "" {
		return model.Participant{}, model.Invalid("X-Ctxgraph-Participant", "participant %q is not a participant of conversation %s", req.ParticipantID, conv.ID)
	}
	return s.Graph.AddParticipant(ctx, accountID, model.NewParticipant{ConversationID: conv.ID, Kind: "model",
		Name: modelName, Provider: providerName, Model: modelName})
}

// Run reconciles the call's list with its conversation and runs the generation path: the
// list is matched against the branch heads (one hash each), else against the points of
// the conversation, where a changed or dropped message forks the branch; the new tail is
// recorded; then the model is called as a turn, or as a continue of the run whose tool
// calls the tail answered. The call's points are recorded with its answer; when ctx
// carries the request's Idempotency-Key claim, the answer is stored under it in the same
// transaction. A call whose every run failed at its provider returns the answer with the
// *model.ProviderError, and leaves its branch at its list, so that a retry answers it.
func (c *Call) Run(ctx context.Context, onEvent func(model.GenerationEvent)) (Answer, error) {
	c.req.Options.OnEvent = onEvent
	s, req := c.s, c.req
	// The writes of the tail and the turn do not answer the request; the chain's record does.
	answerCtx := ctx
	ctx = model.WithIdempotencyClaim(ctx, nil)
	if req.Instructions != nil && *req.Instructions != c.conv.Instructions {
		if _, err := s.Graph.SetConversationInstructions(ctx, c.accountID, c.conv.ID, *req.Instructions); err != nil {
			return Answer{}, err
		}
	}
	head, err := c.match(ctx)
	if err != nil {
		return Answer{}, err
	}
	c.branchID = head.BranchID
	n := len(req.Messages)
	from := head.Length - c.offset
	t := tail{c: c, branchID: head.BranchID, last: head.MessageID, from: from}
	if head.Awaiting {
		t.pending = head.RunID
	}
	if err := t.check(ctx, req.Messages[from:]); err != nil {
		return Answer{}, err
	}
	if err := t.record(ctx, req.Messages[from:]); err != nil {
		return Answer{}, err
	}
	gen, err := t.generate(ctx)
	ans := Answer{ConversationID: c.conv.ID, BranchID: head.BranchID}
	if len(gen.Runs) > 0 {
		ans.Run = gen.Runs[0]
	}
	if gen.UserMessageID != "" {
		t.last = gen.UserMessageID
	}
	request := model.ChainPoint{SHA256: c.chain[n], Length: c.offset + n, BranchID: head.BranchID, MessageID: t.last, RunID: ans.Run.RunID, Request: true}
	var pe *model.ProviderError
	if errors.As(err, &pe) {
		// The list is recorded; its answer is not: the branch stands at the list, and a
		// retry of it (the key is released) calls the model again without recording it twice.
		if rerr := s.Chains.RecordChain(context.WithoutCancel(ctx), c.accountID, model.ChainRecord{ConversationID: c.conv.ID, Points: []model.ChainPoint{request},
			Head: headAt(request)}); rerr != nil {
			return ans, rerr
		}
		return ans, err
	}
	if err != nil {
		return ans, err
	}
	answer := model.ChainPoint{SHA256: c.chain[n], Length: c.offset + n, BranchID: head.BranchID, MessageID: t.last,
		RunID: ans.Run.RunID, Awaiting: ans.Run.Status == model.RunAwaitingTools}
	for _, item := range c.answerItems(ans.Run) {
		answer.SHA256 = Next(answer.SHA256, item)
		answer.Length++
	}
	if ans.Run.Message != nil {
		answer.MessageID = ans.Run.Message.ID
	}
	ans.Point = answer
	if claim := model.IdempotencyClaimOf(answerCtx); claim != nil {
		claim.Status = 200
	}
	if err := s.Chains.RecordChain(answerCtx, c.accountID, model.ChainRecord{ConversationID: c.conv.ID,
		Points: []model.ChainPoint{request, answer}, Head: headAt(answer), Answer: ans}); err != nil {
		return ans, err
	}
	return ans, nil
}

// answerItems is an answer as the call's client appends it.
func (c *Call) answerItems(r model.RunResult) []model.ClientMessage {
	if c.req.Answer != nil {
		return c.req.Answer(r)
	}
	return []model.ClientMessage{AnswerMessage(r)}
}

func headAt(p model.ChainPoint) model.ChainHead {
	return model.ChainHead{BranchID: p.BranchID, SHA256: p.SHA256, Length: p.Length, MessageID: p.MessageID, RunID: p.RunID, Awaiting: p.Awaiting}
}

// AnswerMessage is a run's answer as the client appends it to its list: its text, or the
// tool calls it asked the client for.
func AnswerMessage(r model.RunResult) model.ClientMessage {
	m := model.ClientMessage{Role: "assistant"}
	if r.Message != nil {
		m.Text = r.Message.Content
	}
	for _, tc := range r.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, model.ClientToolCall{ID: tc.CallID, Name: tc.Tool, Arguments: tc.Arguments})
	}
	return m
}

// match finds where the call's list continues a branch: the longest head the list extends
// (one hash compared per branch); else the longest point of the conversation the list
// extends, where a new branch forks (after the point's latest message, or from nothing);
// else a new branch that inherits nothing. A point whose answer awaits tools is passed
// over for the list before it, so that the fork records the assistant's calls with their
// results.
func (c *Call) match(ctx context.Context) (model.ChainHead, error) {
	s, n := c.s, len(c.req.Messages)
	heads, err := s.Chains.ChainHeads(ctx, c.accountID, c.conv.ID, c.req.BranchID)
	if err != nil {
		return model.ChainHead{}, err
	}
	best := -1
	for i, h := range heads {
		k := h.Length - c.offset
		fits := h.SHA256 != "" && k >= 0 && k <= n && c.chain[k] == h.SHA256
		if h.SHA256 == "" {
			// A branch no list was reconciled with takes a whole list when it is empty or
			// is the one the request names.
			fits = c.offset == 0 && (h.Empty || h.BranchID == c.req.BranchID)
		}
		if fits && (best < 0 || h.Length > heads[best].Length) {
			best = i
		}
	}
	if best >= 0 {
		return heads[best], nil
	}
	hashes := c.chain[1 : n+1]
	if c.offset > 0 {
		hashes = c.chain // the previous response's own point too
	}
	for {
		p, found, err := s.Chains.LongestChainPoint(ctx, c.accountID, c.conv.ID, hashes)
		if err != nil {
			return model.ChainHead{}, err
		}
		if k := p.Length - c.offset; found && p.Awaiting && k > 1 {
			hashes = c.chain[1:k]
			continue
		}
		if c.offset > 0 && !found {
			return model.ChainHead{}, model.Invalid("previous_response_id", "the previous response is not one of this conversation's")
		}
		name := fmt.Sprintf("client-%d", n)
		if !found || p.MessageID == "" {
			b, err := s.Chains.RootBranch(ctx, c.accountID, c.conv.ID, name)
			if err != nil {
				return model.ChainHead{}, err
			}
			return model.ChainHead{BranchID: b.ID, Empty: true}, nil
		}
		b, err := s.Graph.ForkBranch(ctx, c.accountID, model.NewBranch{ConversationID: c.conv.ID, ParentBranchID: p.BranchID,
			ForkAfterMessageID: p.MessageID, Name: name})
		if err != nil {
			return model.ChainHead{}, err
		}
		p.BranchID, p.Awaiting, p.RunID = b.ID, false, ""
		if p.Length < c.offset {
			return model.ChainHead{}, model.Invalid("previous_response_id", "the previous response is not one of this conversation's")
		}
		return headAt(p), nil
	}
}

// tail records the new messages of a list on a branch.
type tail struct {
	c        *Call
	branchID string
	// last is the branch's latest message; from is the index of the tail's first message.
	last string
	from int
	// pending is the run whose tool calls the tail may answer: the one the branch's last
	// answer left awaiting tools; answered says the tail answered at least one of them.
	pending  string
	answered bool
	// external is the run of tool calls the client's list made that no run here asked
	// for (history from before ctxgraph, or after a fork), open until a later message.
	external string
	calls    map[string]model.ToolCall
	// user is the tail's final user message, which the turn answers.
	user *model.ClientMessage
}

// record writes the tail: user and assistant messages; results paired by their call id to
// the pending run's calls or to calls the list made itself (each through the tool result
// path, so each gets its derived memory); a result already recorded (a retry) is not
// written again. The final user message is left for the turn.
func (t *tail) record(ctx context.Context, msgs []model.ClientMessage) error {
	g := t.c.s.Graph
	for i, m := range msgs {
		pos := t.c.position(t.from + i)
		if len(m.Results) > 0 {
			if err := t.results(ctx, pos, m.Results); err != nil {
				return err
			}
		}
		switch {
		case m.Role == "assistant":
			if err := t.closeExternal(ctx); err != nil {
				return err
			}
			if err := t.assistant(ctx, m); err != nil {
				return err
			}
		case m.Role == "user" && m.Text != "" && i == len(msgs)-1:
			t.user = &msgs[i]
		case m.Role == "user" && m.Text != "":
			msg, err := g.AppendMessage(ctx, t.c.accountID, model.NewMessage{BranchID: t.branchID, Role: "user", Content: m.Text})
			if err != nil {
				return err
			}
			t.last = msg.ID
		}
	}
	return t.closeExternal(ctx)
}

// assistant records an assistant message the client's list holds and no run here answered:
// its text as a message of the participant, its tool calls as calls of a run of its own.
func (t *tail) assistant(ctx context.Context, m model.ClientMessage) error {
	g, acc, p := t.c.s.Graph, t.c.accountID, t.c.participant
	runID := ""
	if len(m.ToolCalls) > 0 {
		run, err := g.StartRun(ctx, acc, model.NewRun{BranchID: t.branchID, ParticipantID: p.ID, RuntimeKind: model.RuntimeChat,
			TriggerMessageID: t.last, Provider: p.Provider, Model: p.Model})
		if err != nil {
			return err
		}
		runID, t.external = run.ID, run.ID
		for _, tc := range m.ToolCalls {
			args := json.RawMessage(CanonicalJSON(tc.Arguments))
			if !json.Valid(args) {
				args, _ = json.Marshal(string(tc.Arguments))
			}
			call, err := g.RequestToolCall(ctx, acc, model.NewToolCall{RunID: run.ID, Tool: tc.Name, Arguments: args, CallID: tc.ID,
				Freshness: model.DeclaredFreshness(t.c.req.Options.Tools, tc.Name), Retention: model.DeclaredRetention(t.c.req.Options.Tools, tc.Name)})
			if err != nil {
				return err
			}
			t.calls[tc.ID] = call
		}
	}
	if m.Text == "" {
		return nil
	}
	msg, err := g.AppendMessage(ctx, acc, model.NewMessage{BranchID: t.branchID, Role: "assistant", Content: m.Text,
		ParticipantID: p.ID, RunID: runID})
	if err != nil {
		return err
	}
	t.last = msg.ID
	return nil
}

// closeExternal ends the run of the client's own tool calls once its results are in.
func (t *tail) closeExternal(ctx context.Context) error {
	if t.external == "" {
		return nil
	}
	_, err := t.c.s.Graph.FinishRun(ctx, t.c.accountID, model.RunEnd{RunID: t.external, Status: model.RunCompleted})
	t.external = ""
	return err
}

// check refuses a tail that cannot be recorded before anything is written: an item sent by
// reference (its content is not in the list), or a result that answers neither a call of
// the run the branch awaits nor one the tail itself makes. It reads the awaiting run's calls.
func (t *tail) check(ctx context.Context, msgs []model.ClientMessage) error {
	t.calls = map[string]model.ToolCall{}
	if t.pending != "" {
		calls, err := t.c.s.Chains.RunToolCalls(ctx, t.c.accountID, t.pending)
		if err != nil {
			return err
		}
		for _, call := range calls {
			t.calls[call.CallID] = call
		}
	}
	made := map[string]bool{}
	for i, m := range msgs {
		pos := t.c.position(t.from + i)
		if m.Reference {
			return model.Invalid(fmt.Sprintf("input[%d]", pos), "item %q is sent by reference where the list parts from what ctxgraph recorded: send the item itself", m.ItemID)
		}
		for _, r := range m.Results {
			if _, ok := t.calls[r.CallID]; !ok && !made[r.CallID] {
				return model.Invalid(fmt.Sprintf("messages[%d].tool_call_id", pos), "tool result for %q answers no tool call of the list", r.CallID)
			}
		}
		for _, tc := range m.ToolCalls {
			made[tc.ID] = true
		}
	}
	return nil
}

// results records tool results by their call ids (check has found each call).
func (t *tail) results(ctx context.Context, pos int, results []model.ClientToolResult) error {
	g, acc := t.c.s.Graph, t.c.accountID
	for _, r := range results {
		call, ok := t.calls[r.CallID]
		if !ok {
			return model.Invalid(fmt.Sprintf("messages[%d].tool_call_id", pos), "tool result for %q answers no tool call of the list", r.CallID)
		}
		if call.RunID == t.pending {
			t.answered = true
		}
		if len(call.ArtifactIDs) > 0 {
			continue // recorded by an earlier try of this request
		}
		in := model.ToolResult{ToolCallID: call.ID, Status: string(model.ToolSucceeded), Result: resultJSON(r.Content)}
		if r.IsError {
			in.Status, in.Result = string(model.ToolFailed), nil
			in.Error = &model.ToolError{Code: "tool_error", Message: r.Content}
		}
		if _, err := g.RecordToolResult(ctx, acc, in); err != nil {
			return err
		}
	}
	return nil
}

// resultJSON is a result's content as the raw result: JSON as it is, other text as a string.
func resultJSON(content string) json.RawMessage {
	if json.Valid([]byte(content)) && strings.TrimSpace(content) != "" {
		return json.RawMessage(content)
	}
	out, _ := json.Marshal(content)
	return out
}

// generate calls the model: a continue of the pending run when the tail answered its calls
// and asked nothing more, else a turn (answering the tail's final user message, when it
// ends with one), the pending run then ended.
func (t *tail) generate(ctx context.Context) (model.Generation, error) {
	s, acc, opts := t.c.s, t.c.accountID, t.c.req.Options
	opts.ToolsNamed = true
	if t.pending != "" && t.answered && t.user == nil {
		return s.Generator.Continue(ctx, acc, model.ContinueRequest{RunID: t.pending, Options: opts})
	}
	if t.pending != "" {
		if _, err := s.Graph.FinishRun(ctx, acc, model.RunEnd{RunID: t.pending, Status: model.RunCompleted}); err != nil && model.KindOf(err) != model.KindConflict {
			return model.Generation{}, err
		}
	}
	in := model.GenerationRequest{BranchID: t.branchID, ParticipantIDs: []string{t.c.participant.ID}, Options: opts}
	if t.user != nil {
		in.UserMessage = &model.NewUserMessage{Content: t.user.Text}
	} else {
		// The turn writes no message, so a retry has nothing to write twice; it answers
		// the list afresh rather than as a turn the key began (which may have failed).
		ctx = model.WithTurnKey(ctx, nil)
	}
	return s.Generator.Generate(ctx, acc, in)
}

// position is the index in the client's list of the call's i-th message.
func (c *Call) position(i int) int {
	if i < len(c.req.Positions) {
		return c.req.Positions[i]
	}
	return i
}

// firstLine is the first line of s, cut to at most n characters.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
