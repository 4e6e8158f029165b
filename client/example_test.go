package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/ctxgraph/ctxgraph/client"
)

// An agent runtime records a turn with a tool call, then asks what the next model call sees.
func Example() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", "dev-key")

	conv, err := c.CreateConversation(ctx, client.Conversation{Title: "Q3 revenue check"})
	if err != nil {
		log.Fatal(err)
	}
	gpt, _ := c.AddParticipant(ctx, conv.ID, client.Participant{Kind: "model", Name: "gpt", Provider: "openai", Model: "gpt-4.1"})
	question, _ := c.AppendMessage(ctx, conv.BranchID, client.Message{Role: "user", Content: "What was Q3 revenue for EU?"})
	run, _ := c.StartRun(ctx, conv.BranchID, client.Run{ParticipantID: gpt.ID, RuntimeKind: "chat", TriggerMessageID: question.ID})
	call, _ := c.RequestToolCall(ctx, run.ID, client.ToolCall{Tool: "read_csv", Arguments: json.RawMessage(`{"path":"finance/q3.csv"}`)})
	confidence := 0.9
	if _, err := c.RecordToolResult(ctx, call.ID, client.ToolResult{
		Status: "succeeded", Result: json.RawMessage(`{"rows":[["EU","3.46M"]]}`),
		Memories: []client.Memory{{Summary: "EU Q3 revenue: 3.46M", Confidence: &confidence, FreshnessClass: "bounded"}},
	}); err != nil {
		log.Fatal(err)
	}

	a, err := c.Assemble(ctx, client.AssemblyRequest{BranchID: conv.BranchID, ParticipantID: gpt.ID, RunID: run.ID, TokenBudget: 4000})
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		log.Fatalf("the server refused the assembly: %d %s (field %q)", apiErr.Status, apiErr.Message, apiErr.Field)
	}
	fmt.Printf("%d tokens instead of %d\n", a.Tokens.Assembled, a.Tokens.Baseline)
}
