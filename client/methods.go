package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/ctxgraph/ctxgraph/model"
)

// The endpoints, one method each; every one is a call of Do.

// CreateConversation creates a conversation; the answer names its root branch main.
func (c *Client) CreateConversation(ctx context.Context, req Conversation) (Created, error) {
	return create[Created](ctx, c, "/v1/conversations", req)
}

// DeleteConversation deletes a conversation with everything under it.
func (c *Client) DeleteConversation(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, "/v1/conversations/"+url.PathEscape(id), nil, nil)
}

// AddParticipant adds a participant to a conversation.
func (c *Client) AddParticipant(ctx context.Context, conversationID string, req Participant) (Created, error) {
	return create[Created](ctx, c, "/v1/conversations/"+url.PathEscape(conversationID)+"/participants", req)
}

// SetConversationInstructions replaces a conversation's instructions.
func (c *Client) SetConversationInstructions(ctx context.Context, conversationID, instructions string) (model.Conversation, error) {
	var out model.Conversation
	err := c.Do(ctx, http.MethodPatch, "/v1/conversations/"+url.PathEscape(conversationID), Instructions{Instructions: instructions}, &out)
	return out, err
}

// GetParticipant reads a participant, with its instructions.
func (c *Client) GetParticipant(ctx context.Context, id string) (model.Participant, error) {
	return read[model.Participant](ctx, c, "/v1/participants/"+url.PathEscape(id))
}

// SetParticipantInstructions replaces a participant's instructions.
func (c *Client) SetParticipantInstructions(ctx context.Context, participantID, instructions string) (model.Participant, error) {
	var out model.Participant
	err := c.Do(ctx, http.MethodPatch, "/v1/participants/"+url.PathEscape(participantID), Instructions{Instructions: instructions}, &out)
	return out, err
}

// ForkBranch forks a branch of a conversation.
func (c *Client) ForkBranch(ctx context.Context, conversationID string, req Fork) (Created, error) {
	return create[Created](ctx, c, "/v1/conversations/"+url.PathEscape(conversationID)+"/branches", req)
}

// AppendMessage appends a message to a branch.
func (c *Client) AppendMessage(ctx context.Context, branchID string, req Message) (Created, error) {
	return create[Created](ctx, c, "/v1/branches/"+url.PathEscape(branchID)+"/messages", req)
}

// StartRun starts a run on a branch.
func (c *Client) StartRun(ctx context.Context, branchID string, req Run) (Created, error) {
	return create[Created](ctx, c, "/v1/branches/"+url.PathEscape(branchID)+"/runs", req)
}

// FinishRun ends a run.
func (c *Client) FinishRun(ctx context.Context, runID string, req RunEnd) error {
	return c.Do(ctx, http.MethodPatch, "/v1/runs/"+url.PathEscape(runID), req, nil)
}

// RequestToolCall records a call a run's model asked for.
func (c *Client) RequestToolCall(ctx context.Context, runID string, req ToolCall) (Created, error) {
	return create[Created](ctx, c, "/v1/runs/"+url.PathEscape(runID)+"/tool-calls", req)
}

// RecordToolResult records a call's outcome, its artifact and the memories derived from it.
func (c *Client) RecordToolResult(ctx context.Context, toolCallID string, req ToolResult) (RecordedResult, error) {
	return create[RecordedResult](ctx, c, "/v1/tool-calls/"+url.PathEscape(toolCallID)+"/result", req)
}

// DeriveMemory derives a memory from artifacts.
func (c *Client) DeriveMemory(ctx context.Context, req Memory) (Created, error) {
	return create[Created](ctx, c, "/v1/memories", req)
}

// DeleteArtifact removes an artifact and its raw payload; memories derived from it stay,
// their provenance broken.
func (c *Client) DeleteArtifact(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, "/v1/artifacts/"+url.PathEscape(id), nil, nil)
}

// EraseArtifact erases an artifact and everything derived only from it (DESIGN §10); with
// dryRun it writes nothing and answers what would go.
func (c *Client) EraseArtifact(ctx context.Context, id string, dryRun bool) (model.Erasure, error) {
	var out model.Erasure
	err := c.Do(ctx, http.MethodPost, "/v1/artifacts/"+url.PathEscape(id)+"/erase", map[string]bool{"dryRun": dryRun}, &out)
	return out, err
}

// EraseAccount erases everything of the key's account (DESIGN §10); its key answers 410 from
// then on.
func (c *Client) EraseAccount(ctx context.Context) (model.AccountErasure, error) {
	var out model.AccountErasure
	err := c.Do(ctx, http.MethodDelete, "/v1/account", nil, &out)
	return out, err
}

// RecordSkills records the skill state of a run.
func (c *Client) RecordSkills(ctx context.Context, runID string, req Skills) (Created, error) {
	return create[Created](ctx, c, "/v1/runs/"+url.PathEscape(runID)+"/skills", req)
}

// Checkpoint records a run's resumable state.
func (c *Client) Checkpoint(ctx context.Context, runID string, req Checkpoint) (Created, error) {
	return create[Created](ctx, c, "/v1/runs/"+url.PathEscape(runID)+"/checkpoints", req)
}

// Promote promotes a child run's records and report to its parent.
func (c *Client) Promote(ctx context.Context, runID string, req Promotion) (Promoted, error) {
	return create[Promoted](ctx, c, "/v1/runs/"+url.PathEscape(runID)+"/promote", req)
}

// Assemble assembles the context of the next model call.
func (c *Client) Assemble(ctx context.Context, req AssemblyRequest) (Assembly, error) {
	return create[Assembly](ctx, c, "/v1/assemblies", req)
}

// GetAssembly reads a recorded assembly.
func (c *Client) GetAssembly(ctx context.Context, id string) (Assembly, error) {
	return read[Assembly](ctx, c, "/v1/assemblies/"+url.PathEscape(id))
}

// Explain says why an assembly included or omitted the record ref.
func (c *Client) Explain(ctx context.Context, assemblyID, ref string) (Explanation, error) {
	return read[Explanation](ctx, c, "/v1/assemblies/"+url.PathEscape(assemblyID)+"/explain?ref="+url.QueryEscape(ref))
}

// Replay re-runs an assembly under its recorded policy version and snapshot.
func (c *Client) Replay(ctx context.Context, assemblyID string) (ReplayReport, error) {
	return create[ReplayReport](ctx, c, "/v1/assemblies/"+url.PathEscape(assemblyID)+"/replay", nil)
}

// Generate runs a turn. When every run failed the server answers 502 with the same body:
// Generate then returns the *Error (its Response holds the runs).
func (c *Client) Generate(ctx context.Context, req GenerationRequest) (Generation, error) {
	return create[Generation](ctx, c, "/v1/generations", req)
}

// GenerateStream runs a turn as a stream, calling on with each event as it arrives, up to
// done (DESIGN §6 "Streaming"). An error on returns ends the stream, which cancels the
// turn's runs.
func (c *Client) GenerateStream(ctx context.Context, req GenerationRequest, on Events) error {
	req.Stream = true
	return c.Do(ctx, http.MethodPost, "/v1/generations", req, on)
}

// Continue calls a run's model again with the results of the calls it requested.
func (c *Client) Continue(ctx context.Context, runID string, req ContinueRequest) (Generation, error) {
	return create[Generation](ctx, c, "/v1/runs/"+url.PathEscape(runID)+"/continue", req)
}

// Resume calls a parent run again, as parent_resume, once every child has ended.
func (c *Client) Resume(ctx context.Context, runID string, req ContinueRequest) (Generation, error) {
	return create[Generation](ctx, c, "/v1/runs/"+url.PathEscape(runID)+"/resume", req)
}

// Discuss runs discussion rounds: each speaker in turn under the moderator's directive.
func (c *Client) Discuss(ctx context.Context, req DiscussionRequest) (Generation, error) {
	return create[Generation](ctx, c, "/v1/discussions", req)
}

// StartSubagents starts one subagent run per child of a running run.
func (c *Client) StartSubagents(ctx context.Context, runID string, req SubagentsRequest) (Generation, error) {
	return create[Generation](ctx, c, "/v1/runs/"+url.PathEscape(runID)+"/subagents", req)
}

// CreateSchedule schedules turns of a conversation at the ticks of a cron expression.
func (c *Client) CreateSchedule(ctx context.Context, conversationID string, req ScheduleRequest) (model.Schedule, error) {
	return create[model.Schedule](ctx, c, "/v1/conversations/"+url.PathEscape(conversationID)+"/schedules", req)
}

// Schedules lists a conversation's schedules with their next and last runs.
func (c *Client) Schedules(ctx context.Context, conversationID string) ([]model.Schedule, error) {
	var out struct {
		Schedules []model.Schedule `json:"schedules"`
	}
	err := c.Do(ctx, http.MethodGet, "/v1/conversations/"+url.PathEscape(conversationID)+"/schedules", nil, &out)
	return out.Schedules, err
}

// DeleteSchedule deletes a schedule.
func (c *Client) DeleteSchedule(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, "/v1/schedules/"+url.PathEscape(id), nil, nil)
}

// The reads of the graph's records, access-checked by the server.

// GetConversation reads a conversation with its branches and participants.
func (c *Client) GetConversation(ctx context.Context, id string) (model.Conversation, error) {
	return read[model.Conversation](ctx, c, "/v1/conversations/"+url.PathEscape(id))
}

// History reads the user-facing transcript of a branch's lineage.
func (c *Client) History(ctx context.Context, branchID string) (model.History, error) {
	return read[model.History](ctx, c, "/v1/branches/"+url.PathEscape(branchID)+"/history")
}

// GetRun reads a run.
func (c *Client) GetRun(ctx context.Context, id string) (model.Run, error) {
	return read[model.Run](ctx, c, "/v1/runs/"+url.PathEscape(id))
}

// GetToolCall reads a tool call.
func (c *Client) GetToolCall(ctx context.Context, id string) (model.ToolCall, error) {
	return read[model.ToolCall](ctx, c, "/v1/tool-calls/"+url.PathEscape(id))
}

// GetMemory reads a memory.
func (c *Client) GetMemory(ctx context.Context, id string) (model.Memory, error) {
	return read[model.Memory](ctx, c, "/v1/memories/"+url.PathEscape(id))
}

// GetArtifact reads an artifact, without its raw payload.
func (c *Client) GetArtifact(ctx context.Context, id string) (model.Artifact, error) {
	return read[model.Artifact](ctx, c, "/v1/artifacts/"+url.PathEscape(id))
}

// Policies lists the policy versions the account sees, its default marked.
func (c *Client) Policies(ctx context.Context) (Policies, error) {
	return read[Policies](ctx, c, "/v1/policies")
}

// CreatePolicy creates a policy version of the account; creating the same content again
// answers the stored version.
func (c *Client) CreatePolicy(ctx context.Context, req PolicyRequest) (Policy, error) {
	return create[Policy](ctx, c, "/v1/policies", req)
}

// SetDefaultPolicy makes a version (by name or id) the account's default.
func (c *Client) SetDefaultPolicy(ctx context.Context, nameOrID string) (Policy, error) {
	var out Policy
	err := c.Do(ctx, http.MethodPut, "/v1/policies/default", DefaultPolicy{PolicyVersion: nameOrID}, &out)
	return out, err
}

// Providers lists the configured providers and what each receives in full.
func (c *Client) Providers(ctx context.Context) (Providers, error) {
	return read[Providers](ctx, c, "/v1/providers")
}

// read GETs path and decodes the answer as T.
func read[T any](ctx context.Context, c *Client, path string) (T, error) {
	var out T
	err := c.Do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// create POSTs body to path and decodes the answer as T.
func create[T any](ctx context.Context, c *Client, path string, body any) (T, error) {
	var out T
	err := c.Do(ctx, http.MethodPost, path, body, &out)
	return out, err
}
