package dropin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

// fakeGraph is the execution graph and the chain store in memory: what a call wrote, in
// order, and the heads and points it reads.
type fakeGraph struct {
	model.ExecutionGraph
	heads  []model.ChainHead
	points []model.ChainPoint
	calls  map[string][]model.ToolCall
	wrote  []string
	record model.ChainRecord
}

func (f *fakeGraph) write(format string, args ...any) {
	f.wrote = append(f.wrote, fmt.Sprintf(format, args...))
}

func (f *fakeGraph) KeyedConversation(_ context.Context, _, key string, _ model.NewConversation) (model.Conversation, error) {
	return model.Conversation{ID: "cnv_1"}, nil
}
func (f *fakeGraph) ChainHeads(context.Context, string, string, string) ([]model.ChainHead, error) {
	return f.heads, nil
}
func (f *fakeGraph) LongestChainPoint(_ context.Context, _, _ string, hashes []string) (model.ChainPoint, bool, error) {
	best, found := model.ChainPoint{}, false
	for _, p := range f.points {
		if slices.Contains(hashes, p.SHA256) && (!found || p.Length > best.Length) {
			best, found = p, true
		}
	}
	return best, found, nil
}
func (f *fakeGraph) RootBranch(_ context.Context, _, _, name string) (model.Branch, error) {
	f.write("root branch %s", name)
	return model.Branch{ID: "br_root"}, nil
}
func (f *fakeGraph) RecordChain(_ context.Context, _ string, in model.ChainRecord) error {
	f.record = in
	return nil
}
func (f *fakeGraph) BranchConversation(context.Context, string, string) (string, error) {
	return "cnv_1", nil
}
func (f *fakeGraph) RunToolCalls(_ context.Context, _, runID string) ([]model.ToolCall, error) {
	return f.calls[runID], nil
}
func (f *fakeGraph) Conversation(context.Context, string, string) (model.Conversation, error) {
	return model.Conversation{ID: "cnv_1"}, nil
}
func (f *fakeGraph) AddParticipant(_ context.Context, _ string, in model.NewParticipant) (model.Participant, error) {
	return model.Participant{ID: "pt_1", Kind: in.Kind, Name: in.Name, Provider: in.Provider, Model: in.Model}, nil
}
func (f *fakeGraph) ForkBranch(_ context.Context, _ string, in model.NewBranch) (model.Branch, error) {
	f.write("fork %s after %s", in.ParentBranchID, in.ForkAfterMessageID)
	return model.Branch{ID: "br_fork"}, nil
}
func (f *fakeGraph) AppendMessage(_ context.Context, _ string, in model.NewMessage) (model.Message, error) {
	f.write("%s message %q on %s", in.Role, in.Content, in.BranchID)
	return model.Message{ID: "msg_" + in.Content}, nil
}
func (f *fakeGraph) StartRun(_ context.Context, _ string, in model.NewRun) (model.Run, error) {
	f.write("run on %s", in.BranchID)
	return model.Run{ID: "run_client"}, nil
}
func (f *fakeGraph) RequestToolCall(_ context.Context, _ string, in model.NewToolCall) (model.ToolCall, error) {
	f.write("call %s %s", in.CallID, in.Tool)
	return model.ToolCall{ID: "tc_" + in.CallID, RunID: in.RunID, CallID: in.CallID}, nil
}
func (f *fakeGraph) RecordToolResult(_ context.Context, _ string, in model.ToolResult) (model.ToolResultRecorded, error) {
	f.write("result of %s: %s", in.ToolCallID, in.Result)
	return model.ToolResultRecorded{}, nil
}
func (f *fakeGraph) FinishRun(_ context.Context, _ string, in model.RunEnd) (model.Run, error) {
	f.write("end %s %s", in.RunID, in.Status)
	return model.Run{}, nil
}

// fakeGenerator answers every turn with a text and records what it was asked.
type fakeGenerator struct {
	model.Generator
	asked []string
}

func (g *fakeGenerator) Generate(_ context.Context, _ string, req model.GenerationRequest) (model.Generation, error) {
	user := "none"
	if req.UserMessage != nil {
		user = req.UserMessage.Content
	}
	g.asked = append(g.asked, fmt.Sprintf("turn on %s answering %s", req.BranchID, user))
	return model.Generation{UserMessageID: "msg_" + user, Runs: []model.RunResult{{RunID: "run_new", Status: model.RunCompleted,
		Message: &model.GeneratedMessage{ID: "msg_answer", Content: "ok"}}}}, nil
}

func (g *fakeGenerator) Continue(_ context.Context, _ string, req model.ContinueRequest) (model.Generation, error) {
	g.asked = append(g.asked, "continue "+req.RunID)
	return model.Generation{Runs: []model.RunResult{{RunID: req.RunID, Status: model.RunCompleted,
		Message: &model.GeneratedMessage{ID: "msg_answer", Content: "ok"}}}}, nil
}

var (
	ask     = model.ClientMessage{Role: "user", Text: "find acme"}
	asked   = model.ClientMessage{Role: "assistant", ToolCalls: []model.ClientToolCall{{ID: "call_1", Name: "search", Arguments: json.RawMessage(`{"q":"acme"}`)}}}
	result  = model.ClientMessage{Role: "tool", Results: []model.ClientToolResult{{CallID: "call_1", Content: `{"id":"ord_7"}`}}}
	found   = model.ClientMessage{Role: "assistant", Text: "Found ord_7."}
	follow  = model.ClientMessage{Role: "user", Text: "its total?"}
	another = model.ClientMessage{Role: "user", Text: "its status?"}
)

// headAfter is the head of branch after list, its answer left as the list's last message.
func headAfter(branch string, list []model.ClientMessage, runID string, awaiting bool) model.ChainHead {
	return model.ChainHead{BranchID: branch, SHA256: Chain(list)[len(list)], Length: len(list), MessageID: "msg_last", RunID: runID, Awaiting: awaiting}
}

func TestRunRecordsTheTailWhereTheListContinues(t *testing.T) {
	tests := []struct {
		name   string
		graph  fakeGraph
		list   []model.ClientMessage
		wrote  []string
		asked  []string
		branch string
	}{
		{
			name:   "a new thread on an empty branch: the whole list, the last question for the turn",
			graph:  fakeGraph{heads: []model.ChainHead{{BranchID: "br_main", Empty: true}}},
			list:   []model.ClientMessage{ask, found, follow},
			wrote:  []string{`user message "find acme" on br_main`, `assistant message "Found ord_7." on br_main`},
			asked:  []string{"turn on br_main answering its total?"},
			branch: "br_main",
		},
		{
			name: "a tool result for the run the head awaits: recorded on its call, the run continued",
			graph: fakeGraph{heads: []model.ChainHead{headAfter("br_main", []model.ClientMessage{ask, asked}, "run_1", true)},
				calls: map[string][]model.ToolCall{"run_1": {{ID: "tc_1", RunID: "run_1", CallID: "call_1"}}}},
			list:   []model.ClientMessage{ask, asked, result},
			wrote:  []string{`result of tc_1: {"id":"ord_7"}`},
			asked:  []string{"continue run_1"},
			branch: "br_main",
		},
		{
			name: "a retried result already recorded: not written again",
			graph: fakeGraph{heads: []model.ChainHead{headAfter("br_main", []model.ClientMessage{ask, asked}, "run_1", true)},
				calls: map[string][]model.ToolCall{"run_1": {{ID: "tc_1", RunID: "run_1", CallID: "call_1", ArtifactIDs: []string{"art_1"}}}}},
			list:   []model.ClientMessage{ask, asked, result},
			asked:  []string{"continue run_1"},
			branch: "br_main",
		},
		{
			name: "a question after the results: the awaiting run ends, a turn answers",
			graph: fakeGraph{heads: []model.ChainHead{headAfter("br_main", []model.ClientMessage{ask, asked}, "run_1", true)},
				calls: map[string][]model.ToolCall{"run_1": {{ID: "tc_1", RunID: "run_1", CallID: "call_1"}}}},
			list:   []model.ClientMessage{ask, asked, result, follow},
			wrote:  []string{`result of tc_1: {"id":"ord_7"}`, "end run_1 completed"},
			asked:  []string{"turn on br_main answering its total?"},
			branch: "br_main",
		},
		{
			name: "the longest head the list extends wins",
			graph: fakeGraph{heads: []model.ChainHead{headAfter("br_main", []model.ClientMessage{ask}, "", false),
				headAfter("br_edit", []model.ClientMessage{ask, asked, result, found}, "run_2", false)}},
			list:   []model.ClientMessage{ask, asked, result, found, follow},
			asked:  []string{"turn on br_edit answering its total?"},
			branch: "br_edit",
		},
		{
			name: "an edited question: a fork after the last common point, passing over one that awaits tools",
			graph: fakeGraph{heads: []model.ChainHead{headAfter("br_main", []model.ClientMessage{ask, asked, result, found, follow, found}, "", false)},
				points: []model.ChainPoint{
					{SHA256: Chain([]model.ClientMessage{ask})[1], Length: 1, BranchID: "br_main", MessageID: "msg_find acme", Request: true},
					{SHA256: Chain([]model.ClientMessage{ask, asked})[2], Length: 2, BranchID: "br_main", MessageID: "msg_find acme", RunID: "run_1", Awaiting: true},
				}},
			list: []model.ClientMessage{ask, asked, model.ClientMessage{Role: "tool", Results: []model.ClientToolResult{{CallID: "call_1", Content: "{}"}}}, another},
			wrote: []string{"fork br_main after msg_find acme", "run on br_fork", "call call_1 search", "result of tc_call_1: {}",
				"end run_client completed"},
			asked:  []string{"turn on br_fork answering its status?"},
			branch: "br_fork",
		},
		{
			name:   "nothing in common with the conversation: a branch of its own",
			graph:  fakeGraph{heads: []model.ChainHead{headAfter("br_main", []model.ClientMessage{ask, found}, "", false)}},
			list:   []model.ClientMessage{another},
			wrote:  []string{"root branch client-1"},
			asked:  []string{"turn on br_root answering its status?"},
			branch: "br_root",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gen := &fakeGenerator{}
			s := &Service{Graph: &tt.graph, Chains: &tt.graph, Generator: gen, Providers: []model.ProviderInfo{{Name: "openai", Models: []string{"gpt"}}}}
			call, err := s.Prepare(t.Context(), "acct", Request{Model: "openai/gpt", Messages: tt.list})
			if err != nil {
				t.Fatal(err)
			}
			ans, err := call.Run(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tt.graph.wrote, tt.wrote) {
				t.Errorf("wrote:\n  %s\nwant:\n  %s", strings.Join(tt.graph.wrote, "\n  "), strings.Join(tt.wrote, "\n  "))
			}
			if !slices.Equal(gen.asked, tt.asked) {
				t.Errorf("asked %q, want %q", gen.asked, tt.asked)
			}
			if ans.BranchID != tt.branch {
				t.Errorf("answered on %s, want %s", ans.BranchID, tt.branch)
			}
			// The head moves to the list with its answer, as the client will send it.
			want := Next(Chain(tt.list)[len(tt.list)], AnswerMessage(ans.Run))
			if h := tt.graph.record.Head; h.SHA256 != want || h.Length != len(tt.list)+1 || h.BranchID != tt.branch {
				t.Errorf("head %+v, want the list and its answer on %s", h, tt.branch)
			}
		})
	}
}

func TestPrepareRefusesAListBeforeWritingAnything(t *testing.T) {
	tests := []struct {
		name  string
		list  []model.ClientMessage
		model string
		field string
	}{
		{"a result of no call", []model.ClientMessage{ask, result}, "openai/gpt", "messages[1].tool_call_id"},
		{"a result twice", []model.ClientMessage{ask, asked, result, result}, "openai/gpt", "messages[3].tool_call_id"},
		{"two calls of one id", []model.ClientMessage{ask, asked, asked}, "openai/gpt", "messages[2].tool_calls[0].id"},
		{"an unknown model", []model.ClientMessage{ask}, "openai/other", "model"},
		{"no messages", nil, "openai/gpt", "messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &fakeGraph{}
			s := &Service{Graph: g, Chains: g, Generator: &fakeGenerator{}, Providers: []model.ProviderInfo{{Name: "openai", Models: []string{"gpt"}}}}
			_, err := s.Prepare(t.Context(), "acct", Request{Model: tt.model, Messages: tt.list})
			me, ok := err.(*model.Error)
			if !ok || me.Field != tt.field {
				t.Errorf("got %v, want an error naming %s", err, tt.field)
			}
			if len(g.wrote) > 0 {
				t.Errorf("wrote %q, want nothing", g.wrote)
			}
		})
	}
}
