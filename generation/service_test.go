package generation

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// fakeGraph is the execution and generation graphs in memory: the run and tool calls it
// reads, and what the service wrote, in order, as lines a test compares. The assembler and
// the provider write their lines here too, so that a test reads a turn as one story.
type fakeGraph struct {
	model.ExecutionGraph
	model.GenerationGraph
	// run is what Run and ClaimRunStep answer; calls what RunToolCalls answers.
	run   model.Run
	calls []model.ToolCall
	// refuse, when set, is what ClaimRunStep answers, writing nothing; continuing is what
	// it was last asked.
	refuse     error
	continuing bool

	mu      sync.Mutex
	wrote   []string
	records []model.ModelCallRecord
}

func (f *fakeGraph) write(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wrote = append(f.wrote, fmt.Sprintf(format, args...))
}

func (f *fakeGraph) BranchParticipants(ctx context.Context, accountID, branchID string, _ []string) (model.Conversation, error) {
	return f.Conversation(ctx, accountID, "cnv_1")
}

func (f *fakeGraph) Conversation(context.Context, string, string) (model.Conversation, error) {
	return model.Conversation{ID: "cnv_1", Participants: []model.Participant{
		{ID: "pt_1", Provider: "fake", Model: "m1"}, {ID: "pt_2", Provider: "fake", Model: "m2"}}}, nil
}

func (f *fakeGraph) BeginTurn(_ context.Context, _ string, msg *model.NewMessage, runs []model.NewRun) (model.Message, []model.Run, error) {
	started := make([]model.Run, len(runs))
	for i, r := range runs {
		f.write("begin run of %s as %s offering %v", r.ParticipantID, r.RuntimeKind, toolNames(r.Tools))
		started[i] = model.Run{ID: fmt.Sprintf("run_%d", i+1), ConversationID: "cnv_1", BranchID: r.BranchID,
			ParticipantID: r.ParticipantID, RuntimeKind: r.RuntimeKind, Status: model.RunStatusRunning}
	}
	if msg == nil {
		return model.Message{}, started, nil
	}
	return model.Message{ID: "msg_user", Content: msg.Content}, started, nil
}

func (f *fakeGraph) Run(context.Context, string, string) (model.Run, error) { return f.run, nil }

func (f *fakeGraph) ClaimRunStep(_ context.Context, _, runID, _ string, _ model.RunLease, continuing bool) (model.Run, error) {
	f.continuing = continuing
	if f.refuse != nil {
		return model.Run{}, f.refuse
	}
	f.write("claim %s", runID)
	return f.run, nil
}

func (f *fakeGraph) ReleaseRunStep(_ context.Context, _, runID, _ string) error {
	f.write("release %s", runID)
	return nil
}

func (f *fakeGraph) RunToolCalls(context.Context, string, string) ([]model.ToolCall, error) {
	return f.calls, nil
}

func (f *fakeGraph) RequestToolCall(_ context.Context, _ string, in model.NewToolCall) (model.ToolCall, error) {
	f.write("request %s on %s", in.Tool, in.RunID)
	return model.ToolCall{ID: "tc_" + in.CallID, RunID: in.RunID, CallID: in.CallID, Tool: in.Tool, Arguments: in.Arguments}, nil
}

func (f *fakeGraph) RecordToolResult(_ context.Context, _ string, in model.ToolResult) (model.ToolResultRecorded, error) {
	f.write("result of %s: %s %s", in.ToolCallID, in.Status, in.Result)
	return model.ToolResultRecorded{}, nil
}

func (f *fakeGraph) Artifact(_ context.Context, _, id string) (model.Artifact, error) {
	return model.Artifact{ID: id}, nil
}

func (f *fakeGraph) ArtifactRaw(_ context.Context, _, id string) (model.ArtifactRaw, error) {
	return model.ArtifactRaw{ArtifactID: id, Result: json.RawMessage(`{"price":7}`)}, nil
}

func (f *fakeGraph) RecordModelCall(_ context.Context, _ string, in model.ModelCallRecord) (model.Run, error) {
	f.mu.Lock()
	f.records = append(f.records, in)
	f.mu.Unlock()
	code := ""
	if in.Error != nil {
		code = in.Error.Code
	}
	f.write("record %s status %q error %q keep lease %v", in.RunID, in.Status, code, in.KeepLease)
	return model.Run{}, nil
}

func (f *fakeGraph) RecordRequestedCalls(_ context.Context, _ string, rec model.ModelCallRecord, calls []model.NewToolCall) ([]model.ToolCall, error) {
	f.mu.Lock()
	f.records = append(f.records, rec)
	f.mu.Unlock()
	out := make([]model.ToolCall, len(calls))
	tools := make([]string, len(calls))
	for i, in := range calls {
		out[i] = model.ToolCall{ID: "tc_" + in.CallID, RunID: in.RunID, CallID: in.CallID, Tool: in.Tool, Arguments: in.Arguments}
		tools[i] = in.Tool
	}
	f.write("record %s requesting %v", rec.RunID, tools)
	return out, nil
}

func (f *fakeGraph) FinishTurn(_ context.Context, _ string, msg model.NewMessage, rec model.ModelCallRecord) (model.Message, error) {
	f.mu.Lock()
	f.records = append(f.records, rec)
	f.mu.Unlock()
	f.write("finish %s %s: %s %q replying to %v", rec.RunID, rec.Status, msg.Role, msg.Content, msg.ParentMessageIDs)
	return model.Message{ID: "msg_answer", Content: msg.Content}, nil
}

// fakeAssembler assembles an empty context, recallable when asked, and previews every
// artifact as included.
type fakeAssembler struct {
	model.RecordingAssembler
	graph      *fakeGraph
	recallable bool
}

func (a *fakeAssembler) AssembleRecording(_ context.Context, _ string, req model.AssemblyRequest) (model.Assembly, func() (model.Timings, error), error) {
	a.graph.write("assemble %s as %s, recall %v", req.RunID, req.RuntimeKind, req.Recall)
	asm := model.Assembly{ID: "asm_" + req.RunID, PolicyVersion: req.PolicyVersion, Recallable: a.recallable}
	return asm, func() (model.Timings, error) { return model.Timings{}, nil }, nil
}

func (a *fakeAssembler) Preview(_ context.Context, _ string, req model.AssemblyRequest) (model.Assembly, error) {
	var decisions []model.Decision
	for _, id := range req.ExactArtifactIDs {
		decisions = append(decisions, model.Decision{Ref: id, Outcome: "included"})
	}
	return model.Assembly{Decisions: decisions}, nil
}

// answerFunc is what the fake provider answers a call.
type answerFunc func(ctx context.Context, req model.ProviderRequest) (model.ProviderResponse, error)

// fakeProvider is provider "fake": every call writes what it was offered, then answer
// answers it. Past maxProviderCalls it fails every call, so that a service that never stops
// calling fails its test instead of hanging it.
type fakeProvider struct {
	model.Provider
	graph  *fakeGraph
	answer answerFunc
	calls  atomic.Int64
}

// maxProviderCalls is more calls than any test's turn makes.
const maxProviderCalls = 20

func (p *fakeProvider) Name() string { return "fake" }

func (p *fakeProvider) Generate(ctx context.Context, req model.ProviderRequest, call *model.ProviderCall) (model.ProviderResponse, error) {
	if p.calls.Add(1) > maxProviderCalls {
		return model.ProviderResponse{}, &model.ProviderError{Code: "too_many_calls", Message: "the test's turn called its model without end"}
	}
	p.graph.write("call %s offering %v choice %q", req.Model, toolNames(req.Tools), req.ToolChoice)
	call.RequestSHA256 = "sha_" + req.Model
	return p.answer(ctx, req)
}

// fakeProviders configures provider "fake" alone, allowing any model.
type fakeProviders struct{ provider *fakeProvider }

func (f fakeProviders) Provider(name string) (model.Provider, bool) {
	return f.provider, name == "fake"
}
func (f fakeProviders) Default() string                      { return "fake" }
func (f fakeProviders) Model(_, asked string) (string, bool) { return cmp.Or(asked, "m1"), true }

// fakePolicies resolves every version as version.
type fakePolicies struct {
	policy.Resolver
	version policy.Version
}

func (f fakePolicies) Resolve(context.Context, string, string) (policy.Version, error) {
	return f.version, nil
}

func toolNames(tools []model.ToolSpec) []string {
	names := []string{}
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return names
}

// newService is a Service over fakes: the provider answers with answer, the policy is
// version, and every assembly is recallable when recallable.
func newService(version policy.Version, recallable bool, answer answerFunc) (*Service, *fakeGraph) {
	g := &fakeGraph{}
	return &Service{Graph: g, Calls: g, Assembler: &fakeAssembler{graph: g, recallable: recallable},
		Providers: fakeProviders{&fakeProvider{graph: g, answer: answer}}, Policies: fakePolicies{version: version}}, g
}

func text(s string) answerFunc {
	return func(context.Context, model.ProviderRequest) (model.ProviderResponse, error) {
		return model.ProviderResponse{ID: "resp_1", Content: s, FinishReason: "stop", Usage: model.Usage{InputTokens: 3, OutputTokens: 2}}, nil
	}
}

var (
	sheet   = model.ToolSpec{Name: "sheet_read"}
	quote   = model.ToolSpec{Name: "quote_get"}
	hi      = &model.NewUserMessage{Content: "hi"}
	noTools = []string{}
)

func TestGenerateRecordsWhatTheProviderAnswered(t *testing.T) {
	overloaded := &model.ProviderError{Status: 503, Code: "overloaded", Message: "try later"}
	tests := []struct {
		name   string
		answer answerFunc
		// leaves says the client goes away while the provider answers.
		leaves        bool
		wantStatus    string
		wantMessage   *model.GeneratedMessage
		wantToolCalls []string
		wantError     *model.ProviderError
		wantWrote     []string
	}{
		{
			name:        "a turn that completes: the answer replies to the user message",
			answer:      text("hello"),
			wantStatus:  model.RunCompleted,
			wantMessage: &model.GeneratedMessage{ID: "msg_answer", Content: "hello"},
			wantWrote: []string{
				"begin run of pt_1 as chat offering [sheet_read quote_get]",
				"assemble run_1 as chat, recall false",
				`call m1 offering [sheet_read quote_get] choice ""`,
				`finish run_1 completed: assistant "hello" replying to [msg_user]`,
			},
		},
		{
			name: "a model asking for tools: the calls written with the call's record, the run left awaiting them",
			answer: func(context.Context, model.ProviderRequest) (model.ProviderResponse, error) {
				return model.ProviderResponse{FinishReason: "tool_calls", ToolCalls: []model.ChatToolCall{
					{ID: "call_a", Name: "sheet_read", Arguments: `{"a":1}`}, {ID: "call_b", Name: "quote_get", Arguments: `{}`}}}, nil
			},
			wantStatus:    model.RunAwaitingTools,
			wantToolCalls: []string{"tc_call_a sheet_read", "tc_call_b quote_get"},
			wantWrote: []string{
				"begin run of pt_1 as chat offering [sheet_read quote_get]",
				"assemble run_1 as chat, recall false",
				`call m1 offering [sheet_read quote_get] choice ""`,
				"record run_1 requesting [sheet_read quote_get]",
			},
		},
		{
			name: "a provider failure: the run fails with the provider's error",
			answer: func(context.Context, model.ProviderRequest) (model.ProviderResponse, error) {
				return model.ProviderResponse{}, overloaded
			},
			wantStatus: model.RunFailed,
			wantError:  overloaded,
			wantWrote: []string{
				"begin run of pt_1 as chat offering [sheet_read quote_get]",
				"assemble run_1 as chat, recall false",
				`call m1 offering [sheet_read quote_get] choice ""`,
				`record run_1 status "failed" error "overloaded" keep lease false`,
			},
		},
		{
			name: "a client that went away: the run fails as cancelled, recorded all the same",
			answer: func(context.Context, model.ProviderRequest) (model.ProviderResponse, error) {
				return model.ProviderResponse{}, overloaded
			},
			leaves:     true,
			wantStatus: model.RunFailed,
			wantError: &model.ProviderError{Code: "cancelled",
				Message: "the turn was cancelled before the provider answered: its client disconnected or the server shut down"},
			wantWrote: []string{
				"begin run of pt_1 as chat offering [sheet_read quote_get]",
				"assemble run_1 as chat, recall false",
				`call m1 offering [sheet_read quote_get] choice ""`,
				`record run_1 status "failed" error "cancelled" keep lease false`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			answer := tt.answer
			if tt.leaves {
				answer = func(ctx context.Context, req model.ProviderRequest) (model.ProviderResponse, error) {
					cancel()
					return tt.answer(ctx, req)
				}
			}
			s, g := newService(policy.Version{ID: "pv_1"}, false, answer)
			gen, err := s.Generate(ctx, "acc_1", model.GenerationRequest{BranchID: "br_main", ParticipantIDs: []string{"pt_1"},
				UserMessage: hi, Options: model.CallOptions{Tools: []model.ToolSpec{sheet, quote}}})
			var pe *model.ProviderError
			switch {
			case tt.wantError == nil && err != nil:
				t.Fatalf("got error %v, want none", err)
			case tt.wantError != nil && !errors.As(err, &pe):
				t.Fatalf("got error %v, want a *model.ProviderError: every run failed", err)
			}
			if gen.UserMessageID != "msg_user" || len(gen.Runs) != 1 {
				t.Fatalf("got user message %q and %d runs, want msg_user and 1", gen.UserMessageID, len(gen.Runs))
			}
			res := gen.Runs[0]
			if res.Status != tt.wantStatus {
				t.Errorf("got status %q, want %q", res.Status, tt.wantStatus)
			}
			if !reflect.DeepEqual(res.Message, tt.wantMessage) {
				t.Errorf("got message %+v, want %+v", res.Message, tt.wantMessage)
			}
			var calls []string
			for _, c := range res.ToolCalls {
				calls = append(calls, c.ID+" "+c.Tool)
			}
			if !slices.Equal(calls, tt.wantToolCalls) {
				t.Errorf("got tool calls %v, want %v", calls, tt.wantToolCalls)
			}
			if !reflect.DeepEqual(res.Error, tt.wantError) {
				t.Errorf("got run error %+v, want %+v", res.Error, tt.wantError)
			}
			if !slices.Equal(g.wrote, tt.wantWrote) {
				t.Errorf("got writes\n%q\nwant\n%q", g.wrote, tt.wantWrote)
			}
			if rec := g.records[len(g.records)-1]; rec.AssemblyID != "asm_run_1" || rec.RequestSHA256 != "sha_m1" {
				t.Errorf("got the call recorded on assembly %q with request %q, want asm_run_1 and sha_m1", rec.AssemblyID, rec.RequestSHA256)
			}
		})
	}
}

func TestGenerateFailsOnlyWhenEveryRunFailed(t *testing.T) {
	fails := func(models ...string) answerFunc {
		return func(_ context.Context, req model.ProviderRequest) (model.ProviderResponse, error) {
			if slices.Contains(models, req.Model) {
				return model.ProviderResponse{}, &model.ProviderError{Code: "overloaded"}
			}
			return model.ProviderResponse{Content: "ok"}, nil
		}
	}
	tests := []struct {
		name       string
		answer     answerFunc
		wantStatus []string
	}{
		{"one of two fails", fails("m1"), []string{model.RunFailed, model.RunCompleted}},
		{"both fail", fails("m1", "m2"), []string{model.RunFailed, model.RunFailed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, g := newService(policy.Version{ID: "pv_1"}, false, tt.answer)
			gen, err := s.Generate(context.Background(), "acc_1", model.GenerationRequest{BranchID: "br_main",
				ParticipantIDs: []string{"pt_1", "pt_2"}, UserMessage: hi})
			var statuses []string
			for _, r := range gen.Runs {
				statuses = append(statuses, r.Status)
			}
			if !slices.Equal(statuses, tt.wantStatus) {
				t.Errorf("got statuses %v, want %v", statuses, tt.wantStatus)
			}
			var pe *model.ProviderError
			if everyFailed := !slices.Contains(tt.wantStatus, model.RunCompleted); errors.As(err, &pe) != everyFailed {
				t.Errorf("got error %v, want a *model.ProviderError only when every run failed", err)
			}
			if !slices.Contains(g.wrote, "begin run of pt_2 as multi_model offering []") {
				t.Errorf("got writes %q, want pt_2's run begun as multi_model", g.wrote)
			}
		})
	}
}

// recallsWhileOffered asks for a recall whenever the recall tool is offered, and answers
// "done" once it is not.
func recallsWhileOffered(_ context.Context, req model.ProviderRequest) (model.ProviderResponse, error) {
	usage := model.Usage{InputTokens: 10, OutputTokens: 1}
	if slices.ContainsFunc(req.Tools, func(t model.ToolSpec) bool { return t.Name == model.RecallTool }) {
		return model.ProviderResponse{Usage: usage, ToolCalls: []model.ChatToolCall{
			{ID: "call_r", Name: model.RecallTool, Arguments: `{"artifactId":"art_1"}`}}}, nil
	}
	return model.ProviderResponse{Content: "done", Usage: usage}, nil
}

func TestGenerateAnswersRecallsThenCallsTheModelAgain(t *testing.T) {
	recalled := []string{
		"assemble run_1 as chat, recall true",
		fmt.Sprintf(`call m1 offering [%s] choice ""`, model.RecallTool),
		"request ctxgraph_recall on run_1",
		`result of tc_call_r: succeeded {"price":7}`,
		`record run_1 status "" error "" keep lease true`,
	}
	tests := []struct {
		name       string
		maxRounds  int
		toolChoice string
		wantWrote  []string
		// wantCalls is how many times the model is called.
		wantCalls int
	}{
		{
			name:      "one round allowed: recalled once, then the model answers without the tool",
			maxRounds: 1,
			wantCalls: 2,
			wantWrote: slices.Concat(recalled, []string{
				"assemble run_1 as chat, recall true",
				`call m1 offering [] choice ""`,
				`finish run_1 completed: assistant "done" replying to [msg_user]`,
			}),
		},
		{
			name:      "three rounds allowed: recalled three times in a row, then withdrawn",
			maxRounds: 3,
			wantCalls: 4,
			wantWrote: slices.Concat(recalled, recalled, recalled, []string{
				"assemble run_1 as chat, recall true",
				`call m1 offering [] choice ""`,
				`finish run_1 completed: assistant "done" replying to [msg_user]`,
			}),
		},
		{
			name:       "tool choice none: recall never offered",
			maxRounds:  3,
			toolChoice: model.ToolChoiceNone,
			wantCalls:  1,
			wantWrote: []string{
				"assemble run_1 as chat, recall false",
				`call m1 offering [] choice "none"`,
				`finish run_1 completed: assistant "done" replying to [msg_user]`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			version := policy.Version{ID: "pv_1", RehydrationBytes: 1 << 10, Recall: &policy.Recall{MaxRounds: tt.maxRounds}}
			s, g := newService(version, true, recallsWhileOffered)
			gen, err := s.Generate(context.Background(), "acc_1", model.GenerationRequest{BranchID: "br_main", ParticipantIDs: []string{"pt_1"},
				UserMessage: hi, Options: model.CallOptions{ToolChoice: tt.toolChoice}})
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			wantWrote := slices.Concat([]string{"begin run of pt_1 as chat offering []"}, tt.wantWrote)
			if !slices.Equal(g.wrote, wantWrote) {
				t.Errorf("got writes\n%q\nwant\n%q", g.wrote, wantWrote)
			}
			res := gen.Runs[0]
			if want := (model.Usage{InputTokens: 10 * tt.wantCalls, OutputTokens: tt.wantCalls}); res.Status != model.RunCompleted || res.Usage != want {
				t.Errorf("got status %q and usage %+v, want completed and %+v (every call's)", res.Status, res.Usage, want)
			}
		})
	}
}

func TestGenerateWritesRecallsAndTheClientsCallsAsOneRound(t *testing.T) {
	// The model asks for a recall and a client's tool in one answer: the recall's result is
	// written before the call's record releases the run, and both calls before any result.
	recallAndSheet := func(_ context.Context, req model.ProviderRequest) (model.ProviderResponse, error) {
		return model.ProviderResponse{ToolCalls: []model.ChatToolCall{
			{ID: "call_r", Name: model.RecallTool, Arguments: `{"artifactId":"art_1"}`}, {ID: "call_s", Name: "sheet_read", Arguments: `{}`}}}, nil
	}
	version := policy.Version{ID: "pv_1", RehydrationBytes: 1 << 10, Recall: &policy.Recall{MaxRounds: 1}}
	s, g := newService(version, true, recallAndSheet)
	gen, err := s.Generate(context.Background(), "acc_1", model.GenerationRequest{BranchID: "br_main", ParticipantIDs: []string{"pt_1"},
		UserMessage: hi, Options: model.CallOptions{Tools: []model.ToolSpec{sheet}}})
	if err != nil {
		t.Fatalf("got error %v, want none", err)
	}
	want := []string{
		"begin run of pt_1 as chat offering [sheet_read]",
		"assemble run_1 as chat, recall true",
		fmt.Sprintf(`call m1 offering [sheet_read %s] choice ""`, model.RecallTool),
		"request ctxgraph_recall on run_1",
		"request sheet_read on run_1",
		`result of tc_call_r: succeeded {"price":7}`,
		`record run_1 status "" error "" keep lease false`,
	}
	if !slices.Equal(g.wrote, want) {
		t.Errorf("got writes\n%q\nwant\n%q", g.wrote, want)
	}
	res := gen.Runs[0]
	if res.Status != model.RunAwaitingTools || len(res.ToolCalls) != 1 || res.ToolCalls[0].ID != "tc_call_s" {
		t.Errorf("got status %q and calls %+v, want awaiting_tools and the client's call tc_call_s alone", res.Status, res.ToolCalls)
	}
}

// running is a run of pt_1 that answered msg_user with a call to sheet_read.
var running = model.Run{ID: "run_1", ConversationID: "cnv_1", BranchID: "br_main", ParticipantID: "pt_1", RuntimeKind: model.RuntimeChat,
	Status: model.RunStatusRunning, Model: "m1", TriggerMessageID: "msg_user", ModelCalls: 1, PolicyVersion: "pv_1",
	Tools: []model.ToolSpec{sheet}}

// A continue's claim is a continue's (the store refuses it while a call waits for its
// result, writing nothing), and its refusal is the continue's answer: the model is never
// called and nothing is released.
func TestContinueClaimsAsAContinue(t *testing.T) {
	s, g := newService(policy.Version{ID: "pv_1"}, false, text("done"))
	g.run = running
	g.refuse = &model.Error{Kind: model.KindConflict, Field: "toolCalls", Message: "run run_1 still waits for the result of tool call tc_2"}
	_, err := s.Continue(context.Background(), "acc_1", model.ContinueRequest{RunID: "run_1"})
	if !g.continuing {
		t.Errorf("the continue claimed its run as no continue: the store would not check its calls")
	}
	if !errors.Is(err, g.refuse) {
		t.Fatalf("got error %v, want the claim's refusal %v", err, g.refuse)
	}
	if len(g.wrote) != 0 {
		t.Errorf("got writes %q, want none: the model never called", g.wrote)
	}
}

func TestContinueOffersTheRunsToolsUnlessNamed(t *testing.T) {
	tests := []struct {
		name      string
		options   model.CallOptions
		wantTools []string
		wantOffer *model.ToolOffer
	}{
		{"tools absent: the run's", model.CallOptions{}, []string{"sheet_read"}, nil},
		{"tools named: those, kept for later calls", model.CallOptions{Tools: []model.ToolSpec{quote}, ToolsNamed: true},
			[]string{"quote_get"}, &model.ToolOffer{Tools: []model.ToolSpec{quote}}},
		{"an empty list: none, kept for later calls", model.CallOptions{Tools: []model.ToolSpec{}, ToolsNamed: true},
			noTools, &model.ToolOffer{Tools: []model.ToolSpec{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, g := newService(policy.Version{ID: "pv_1"}, false, text("done"))
			g.run = running
			g.calls = []model.ToolCall{{ID: "tc_1", Tool: "sheet_read", ArtifactIDs: []string{"art_1"}}}
			gen, err := s.Continue(context.Background(), "acc_1", model.ContinueRequest{RunID: "run_1", Options: tt.options})
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			want := []string{
				"claim run_1",
				"assemble run_1 as chat, recall false",
				fmt.Sprintf("call m1 offering %v choice %q", tt.wantTools, ""),
				`finish run_1 completed: assistant "done" replying to [msg_user]`,
			}
			if !slices.Equal(g.wrote, want) {
				t.Errorf("got writes\n%q\nwant\n%q", g.wrote, want)
			}
			if got := g.records[0].Offer; !reflect.DeepEqual(got, tt.wantOffer) {
				t.Errorf("got the run keeping %+v, want %+v", got, tt.wantOffer)
			}
			if gen.Runs[0].Status != model.RunCompleted {
				t.Errorf("got status %q, want completed", gen.Runs[0].Status)
			}
		})
	}
}
