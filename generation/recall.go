package generation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxgraph/ctxgraph/model"
)

// recallSpec is the built-in recall tool as the model is offered it (DESIGN §7).
var recallSpec = model.ToolSpec{
	Name: model.RecallTool,
	Description: "Read the exact body of an earlier tool result that the context names by its artifact id " +
		"(art_…), whole or in part: pointer is a JSON Pointer into a JSON body (e.g. /rows/173/price), " +
		"lines a [first, last] range of a text body's lines, counted from 1.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"artifactId":{"type":"string"},` +
		`"pointer":{"type":"string"},"lines":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2}},` +
		`"required":["artifactId"]}`),
}

// recallArguments are a recall's arguments as the model sends them.
type recallArguments struct {
	ArtifactID string  `json:"artifactId"`
	Pointer    *string `json:"pointer"`
	Lines      []int   `json:"lines"`
}

// answerRecall answers a recall within the generation: the exact body of the artifact, or
// the part named, when the participant may see it on this run's lineage, the provider may
// receive its class and the part fits the rehydration byte budget; otherwise why not. The
// answer is the call's result, recorded as an artifact of the run with the source's
// privacy class and visibility; the next assembly includes it under
// rehydration.model_requested; a refusal is its failed outcome, included under
// rehydration.recall_refused. offered is false when the model called the tool after it was
// withdrawn: that call is refused.
func (s *Service) answerRecall(ctx context.Context, accountID string, run model.Run, pc participantCall, mc modelCall, offered bool, call model.ToolCall) error {
	body, privacy, visibility, why := s.recallBody(ctx, accountID, run, pc, mc, offered, call.Arguments)
	result := model.ToolResult{ToolCallID: call.ID, Status: string(model.ToolSucceeded), Result: body, PrivacyClass: privacy, Visibility: visibility}
	if why != "" {
		// A refusal is the call's failed outcome, holding no body (public): the model reads
		// why, and the next assembly includes it under rehydration.recall_refused.
		result = model.ToolResult{ToolCallID: call.ID, Status: string(model.ToolFailed), PrivacyClass: "public",
			Error: &model.ToolError{Code: RecallRefused, Message: why}}
	}
	_, err := s.Graph.RecordToolResult(ctx, accountID, result)
	return err
}

// RecallRefused is the error code of a recall ctxgraph refused.
const RecallRefused = "recall_refused"

// refusal is a recall's answer when it is refused: why, and no body.
func refusal(format string, args ...any) (json.RawMessage, string, string, string) {
	return nil, "", "", fmt.Sprintf(format, args...)
}

// recallBody is what a recall answers, with the privacy class and visibility its artifact
// takes, or why it is refused.
func (s *Service) recallBody(ctx context.Context, accountID string, run model.Run, pc participantCall, mc modelCall, offered bool, raw json.RawMessage) (body json.RawMessage, privacy, visibility, refused string) {
	if !offered {
		return refusal("%s is withdrawn for this call after %d recalls in a row: answer with what you have", model.RecallTool, mc.policy.Recall.MaxRounds)
	}
	var args recallArguments
	if err := json.Unmarshal(raw, &args); err != nil || args.ArtifactID == "" {
		return refusal("arguments must be an object with artifactId, and pointer or lines")
	}
	if args.Pointer != nil && args.Lines != nil {
		return refusal("name a pointer or lines, not both")
	}
	// The policies decide as they would if the request named the artifact as exact
	// evidence: the run's lineage, the participant's visibility, audit-only records and
	// the provider's privacy classes.
	a, err := s.Assembler.Preview(ctx, accountID, model.AssemblyRequest{
		BranchID: run.BranchID, ParticipantID: pc.participant.ID, RunID: run.ID, RuntimeKind: run.RuntimeKind,
		Provider: pc.provider.Name(), Model: pc.model, TokenBudget: recallPreviewBudget, ExactArtifactIDs: []string{args.ArtifactID},
		PolicyVersion: mc.policy.ID, ToolRounds: true,
	})
	if err != nil {
		return refusal("no artifact %s that this participant may read", args.ArtifactID)
	}
	decided := false
	for d := range a.AllDecisions() {
		if d.Ref != args.ArtifactID {
			continue
		}
		if d.Outcome != "included" {
			return refusal("artifact %s is %s for this call", args.ArtifactID, strings.ReplaceAll(d.Reason, "_", " "))
		}
		decided = true
	}
	if !decided {
		return refusal("no artifact %s that this participant may read on this branch", args.ArtifactID)
	}
	art, err := s.Graph.Artifact(ctx, accountID, args.ArtifactID)
	if err != nil {
		return refusal("no artifact %s that this participant may read", args.ArtifactID)
	}
	stored, err := s.Graph.ArtifactRaw(ctx, accountID, args.ArtifactID)
	if err != nil {
		return refusal("the body of artifact %s could not be read", args.ArtifactID)
	}
	part, err := partOf(stored.Result, args)
	if err != nil {
		return refusal("%s", err.Error())
	}
	if limit := mc.policy.RehydrationBytes; int64(len(part)) > limit {
		return refusal("that part is %d bytes, over the rehydration budget of %d: ask for a smaller part with pointer or lines", len(part), limit)
	}
	return part, art.PrivacyClass, art.Visibility, ""
}

// recallPreviewBudget is the token budget of the preview that decides a recall: large
// enough that the budget never trims the artifact it asks about.
const recallPreviewBudget = 2_000_000

// partOf is the part of a body a recall names: the whole body, the JSON value at a pointer,
// or a range of lines (as a JSON string, so that the answer is JSON either way).
func partOf(body []byte, args recallArguments) (json.RawMessage, error) {
	switch {
	case args.Pointer != nil && *args.Pointer != "":
		if !json.Valid(body) {
			return nil, fmt.Errorf("the body is not JSON: ask for lines instead of a pointer")
		}
		return resolvePointer(body, *args.Pointer)
	case args.Lines != nil:
		if len(args.Lines) != 2 || args.Lines[0] < 1 || args.Lines[1] < args.Lines[0] {
			return nil, fmt.Errorf("lines is [first, last], counted from 1")
		}
		text := string(body)
		var s string
		if json.Unmarshal(body, &s) == nil {
			text = s // a JSON string body is read as its text
		}
		lines := strings.Split(text, "\n")
		if args.Lines[0] > len(lines) {
			return nil, fmt.Errorf("the body has %d lines", len(lines))
		}
		return json.Marshal(strings.Join(lines[args.Lines[0]-1:min(args.Lines[1], len(lines))], "\n"))
	}
	if !json.Valid(body) {
		return json.Marshal(string(body))
	}
	return body, nil
}

// resolvePointer returns the value at a JSON Pointer (RFC 6901) in a JSON document, as the
// document spells it: each level is decoded only into its members' raw bytes.
func resolvePointer(doc json.RawMessage, pointer string) (json.RawMessage, error) {
	if !strings.HasPrefix(pointer, "/") {
		return nil, fmt.Errorf("pointer %q must start with /", pointer)
	}
	cur := doc
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch first := bytes.TrimLeft(cur, " \t\r\n"); {
		case len(first) > 0 && first[0] == '{':
			var node map[string]json.RawMessage
			if err := json.Unmarshal(cur, &node); err != nil {
				return nil, fmt.Errorf("pointer %q: %v", pointer, err)
			}
			v, ok := node[tok]
			if !ok {
				return nil, fmt.Errorf("pointer %q: no key %q", pointer, tok)
			}
			cur = v
		case len(first) > 0 && first[0] == '[':
			var node []json.RawMessage
			if err := json.Unmarshal(cur, &node); err != nil {
				return nil, fmt.Errorf("pointer %q: %v", pointer, err)
			}
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(node) {
				return nil, fmt.Errorf("pointer %q: no index %q in an array of %d", pointer, tok, len(node))
			}
			cur = node[i]
		default:
			return nil, fmt.Errorf("pointer %q: %q is past a scalar", pointer, tok)
		}
	}
	return cur, nil
}
