package integration

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/model"
)

// TestClientDrivesAConversation writes a conversation with every typed method of package
// client against the real server over HTTP, reads it back, assembles, explains, replays
// and generates with the echo provider, streamed and not: the client's bodies are what
// the handlers take, and its answers decode.
func TestClientDrivesAConversation(t *testing.T) {
	h := newProviderHarness(t)
	srv := httptest.NewServer(h.srv)
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, h.key)
	ctx := t.Context()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	conv, err := c.CreateConversation(ctx, client.Conversation{Title: "client & <friends>", At: "2026-11-01T09:00:00Z"})
	must("CreateConversation", err)
	gpt, err := c.AddParticipant(ctx, conv.ID, client.Participant{Kind: "model", Name: "gpt", Provider: "echo", Model: "echo-1"})
	must("AddParticipant", err)
	question, err := c.AppendMessage(ctx, conv.BranchID, client.Message{Role: "user", Content: "What was Q3 revenue for EU?", At: "2026-11-01T09:00:01Z"})
	must("AppendMessage", err)
	run, err := c.StartRun(ctx, conv.BranchID, client.Run{ParticipantID: gpt.ID, RuntimeKind: "chat", TriggerMessageID: question.ID})
	must("StartRun", err)
	_, err = c.RecordSkills(ctx, run.ID, client.Skills{LoadedSkills: []string{"xlsx"}, DirectTools: []string{"read_csv"}})
	must("RecordSkills", err)
	failed, err := c.RequestToolCall(ctx, run.ID, client.ToolCall{Tool: "read_csv", Arguments: json.RawMessage(`{"path":"q3.csv"}`), CallID: "call_1"})
	must("RequestToolCall", err)
	retryable := true
	_, err = c.RecordToolResult(ctx, failed.ID, client.ToolResult{Status: "failed", Error: &client.ToolError{Code: "timeout", Message: "slow"}, Retryable: &retryable})
	must("RecordToolResult (failed)", err)
	call, err := c.RequestToolCall(ctx, run.ID, client.ToolCall{Tool: "read_csv", Arguments: json.RawMessage(`{"path":"q3.csv"}`), CallID: "call_2", RetryOf: failed.ID})
	must("RequestToolCall (retry)", err)
	confidence := 0.9
	result, err := c.RecordToolResult(ctx, call.ID, client.ToolResult{
		Status: "succeeded", Result: json.RawMessage(`{"rows":[["EU","3.46M"]]}`), PrivacyClass: "public", Visibility: "branch", ToolVersion: "csv/1",
		Memories: []client.Memory{{Summary: "EU Q3 revenue: 3.46M", Confidence: &confidence, FreshnessClass: "durable", RevalidateWith: []string{"read_csv"}}},
	})
	must("RecordToolResult", err)
	if result.ArtifactID == "" || len(result.MemoryIDs) != 1 {
		t.Fatalf("RecordToolResult: got %+v, want an artifact and one memory", result)
	}
	newer, err := c.DeriveMemory(ctx, client.Memory{DerivedFrom: []string{result.ArtifactID}, Summary: "EU Q3 revenue: 3.47M (restated)",
		Supersedes: result.MemoryIDs, FreshnessClass: "bounded", ObservedAt: "2026-11-01T09:01:00Z"})
	must("DeriveMemory", err)
	_, err = c.Checkpoint(ctx, run.ID, client.Checkpoint{State: json.RawMessage(`{"step":2}`)})
	must("Checkpoint", err)
	answer, err := c.AppendMessage(ctx, conv.BranchID, client.Message{Role: "assistant", Content: "3.47M", ParticipantID: gpt.ID, RunID: run.ID,
		ParentMessageIDs: []string{question.ID}})
	must("AppendMessage (answer)", err)
	must("FinishRun", c.FinishRun(ctx, run.ID, client.RunEnd{Status: "completed"}))
	fork, err := c.ForkBranch(ctx, conv.ID, client.Fork{ParentBranchID: conv.BranchID, ForkAfterMessageID: answer.ID, Name: "what-if"})
	must("ForkBranch", err)

	got, err := c.GetConversation(ctx, conv.ID)
	must("GetConversation", err)
	if got.Title != "client & <friends>" {
		t.Errorf("GetConversation: got title %q, want it as written", got.Title)
	}
	history, err := c.History(ctx, fork.ID)
	must("History", err)
	if b, _ := json.Marshal(history); !strings.Contains(string(b), "3.47M") {
		t.Errorf("History of the fork: got %s, want the answer it inherits", b)
	}
	mem, err := c.GetMemory(ctx, newer.ID)
	must("GetMemory", err)
	art, err := c.GetArtifact(ctx, result.ArtifactID)
	must("GetArtifact", err)
	tc, err := c.GetToolCall(ctx, call.ID)
	must("GetToolCall", err)
	r, err := c.GetRun(ctx, run.ID)
	must("GetRun", err)
	if mem.FreshnessClass != "bounded" || art.ID != result.ArtifactID || tc.ID != call.ID || r.Status != "completed" {
		t.Errorf("reads: got memory %s, artifact %s, call %s, run %s; want what was written", mem.FreshnessClass, art.ID, tc.ID, r.Status)
	}

	a, err := c.Assemble(ctx, client.AssemblyRequest{BranchID: conv.BranchID, ParticipantID: gpt.ID, Provider: "openai", TokenBudget: 4000, Trace: true})
	must("Assemble", err)
	if a.ID == "" || len(a.Messages) == 0 || a.Tokens.Assembled == 0 || a.Tokens.Baseline == 0 {
		t.Fatalf("Assemble: got %+v, want an assembly with messages and tokens", a)
	}
	ex, err := c.Explain(ctx, a.ID, result.MemoryIDs[0])
	must("Explain", err)
	if ex.Outcome != "omitted" || ex.Reason != "superseded" {
		t.Errorf("Explain of the superseded memory: got %s/%s, want omitted/superseded", ex.Outcome, ex.Reason)
	}
	rep, err := c.Replay(ctx, a.ID)
	must("Replay", err)
	if !rep.Identical {
		t.Errorf("Replay: got differences %v, want identical", rep.Differences)
	}
	read, err := c.GetAssembly(ctx, a.ID)
	must("GetAssembly", err)
	if read.Tokens != a.Tokens || len(read.Included) != len(a.Included) {
		t.Errorf("GetAssembly: got tokens %+v and %d included, want %+v and %d", read.Tokens, len(read.Included), a.Tokens, len(a.Included))
	}

	gen, err := c.Generate(ctx, client.GenerationRequest{BranchID: fork.ID, ParticipantIDs: []string{gpt.ID},
		UserMessage: &client.UserMessage{Content: "And for NA?"}})
	must("Generate", err)
	if len(gen.Runs) != 1 || gen.Runs[0].Status != model.RunCompleted || gen.Runs[0].Message == nil {
		t.Fatalf("Generate: got %+v, want one completed run with its message", gen)
	}
	var events []string
	err = c.GenerateStream(ctx, client.GenerationRequest{BranchID: fork.ID, ParticipantIDs: []string{gpt.ID},
		UserMessage: &client.UserMessage{Content: "And for APAC?"}}, func(e client.Event) error {
		events = append(events, e.Name)
		return nil
	})
	must("GenerateStream", err)
	if len(events) < 3 || events[0] != model.EventRunStarted || events[len(events)-1] != model.EventDone {
		t.Errorf("GenerateStream: got events %v, want run.started first and done last", events)
	}

	_, err = c.AppendMessage(ctx, conv.BranchID, client.Message{Role: "robot", Content: "x"})
	var refused *client.Error
	if !errors.As(err, &refused) || refused.Status != http.StatusBadRequest || refused.Code != "invalid" || refused.Field != "role" ||
		refused.Message != "role must be one of: user, assistant, system" {
		t.Errorf("a bad role: got %v, want a 400 naming role with model's roles", err)
	}
	_, err = c.WithKey(h.otherKey).GetConversation(ctx, conv.ID)
	if !errors.As(err, &refused) || refused.Status != http.StatusNotFound || refused.Code != "not_found" {
		t.Errorf("another account's read: got %v, want a 404", err)
	}
	must("DeleteArtifact", c.DeleteArtifact(ctx, result.ArtifactID))
	must("DeleteConversation", c.DeleteConversation(ctx, conv.ID))
	if _, err := c.GetConversation(ctx, conv.ID); !errors.As(err, &refused) || refused.Status != http.StatusNotFound {
		t.Errorf("after DeleteConversation: got %v, want a 404", err)
	}
}
