package assembly

import (
	"fmt"
	"strings"
	"time"

	"github.com/ctxgraph/ctxgraph/extract"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// header opens the context block: what the lines are and the clock they were judged by.
func header(now time.Time) string {
	return "State at " + stamp(now) + ":"
}

// stamp renders a time to the minute, the precision a marker needs.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04Z") }

// contextLine renders one included non-message record as one line of the context block;
// a memory or reference whose artifact can be recalled names it.
func contextLine(vd policy.Verdict, provider string, raw map[string]model.ArtifactRaw, names map[string]string) string {
	line := recordLine(vd, provider, raw, names)
	if vd.RecallID != "" && vd.Decision.As != model.AsReference {
		line += " [" + vd.RecallID + "]"
	}
	return line
}

// recordLine is a record's line without the artifact it names for recall.
func recordLine(vd policy.Verdict, provider string, raw map[string]model.ArtifactRaw, names map[string]string) string {
	c := vd.Candidate
	if vd.CarriesAnswer {
		return "" // shown in its call's recovery line
	}
	if c.Type == model.TypeMessage {
		return statedLine(c, vd.Stated)
	}
	switch vd.Decision.As {
	case model.AsSkills:
		return fmt.Sprintf("Skills: %s; profiles: %s; tools: %s", list(c.RunState.LoadedSkills), list(c.RunState.ActiveProfiles), list(c.RunState.DirectTools))
	case model.AsCheckpoint:
		return fmt.Sprintf("Resume from checkpoint (%s): %s", stamp(c.CreatedAt), c.RunState.State)
	case model.AsRecovery:
		return recoveryLine(vd, provider, raw, names)
	case model.AsRaw:
		r := raw[c.ID]
		body := string(r.Result)
		if r.Error != nil {
			body = fmt.Sprintf("error %s: %s", r.Error.Code, r.Error.Message)
		}
		return fmt.Sprintf("Exact result of %s %s: %s", c.Tool.Name, string(r.Arguments), body)
	case model.AsReference:
		how := "request it as exact evidence"
		if vd.RecallID != "" {
			how = "recall it with " + model.RecallTool
		}
		return fmt.Sprintf("Result of %s kept as artifact %s (%d bytes, not shown; %s).", c.Tool.Name, c.ID, c.Artifact.ResultBytes+c.Artifact.ArgsBytes, how)
	case model.AsSafeSummary:
		line := fmt.Sprintf("[restricted for %s: summary only%s] %s", provider, revalidate(c.Memory.RevalidateWith, "; open with "), c.Memory.SafeSummary)
		if vd.StaleSince != nil {
			line = fmt.Sprintf("[stale since %s] ", stamp(*vd.StaleSince)) + line
		}
		return line
	case model.AsStaleMarker:
		text := c.Memory.Summary
		if vd.Broken {
			return fmt.Sprintf("[unverified: its source record was deleted%s] %s", revalidate(c.Memory.RevalidateWith, "; revalidate with "), text)
		}
		return fmt.Sprintf("[stale since %s%s] %s", stamp(*vd.StaleSince), revalidate(c.Memory.RevalidateWith, "; revalidate with "), text)
	case model.AsConflict:
		return "[conflict, unresolved] " + c.Memory.Summary
	}
	if c.Memory.Report {
		return "Subagent report: " + c.Memory.Summary
	}
	return c.Memory.Summary
}

func recoveryLine(vd policy.Verdict, provider string, raw map[string]model.ArtifactRaw, names map[string]string) string {
	c := vd.Candidate
	if vd.Compact {
		// The budget cannot hold every open call in full: name it so it can be asked for.
		line := fmt.Sprintf("Open call %s (%s, call %s", c.Tool.Name, c.Tool.Status, c.ID)
		if c.Tool.ErrorCode != "" {
			line += ", error " + c.Tool.ErrorCode
		}
		if vd.Answer != nil {
			line += ", answered so far in artifact " + vd.Answer.ArtifactID
		}
		return line + "; details withheld for the budget)"
	}
	args := c.Call.Arguments
	switch {
	case vd.ArgsWithheld:
		args = fmt.Sprintf("(withheld: privacy class %s)", c.PrivacyClass)
	case args == "" && c.Call.ArgumentsRef != "":
		args = "(stored as a blob, not shown)"
	case args == "":
		args = "{}"
	}
	who := ""
	if c.OwnerRunParentID != "" && c.OwnerRunStatus != "" && c.OwnerRunStatus != model.RunStatusRunning {
		who = fmt.Sprintf("Subagent %s (run %s): ", names[c.OwnerParticipantID], strings.ReplaceAll(c.OwnerRunStatus, "_", " "))
	}
	switch c.Tool.Status {
	case model.ToolFailed:
		retry := "not retryable"
		if c.Call.Retryable {
			retry = "retryable"
		}
		return fmt.Sprintf("%sFailed call %s %s (%s): %s: %s", who, c.Tool.Name, args, retry, c.Tool.ErrorCode, c.Tool.ErrorMessage)
	case model.ToolDeferred:
		if vd.Answer == nil {
			return fmt.Sprintf("%sOpen call %s %s (deferred, awaiting the user)", who, c.Tool.Name, args)
		}
	}
	if vd.Answer != nil {
		return fmt.Sprintf("%sOpen call %s %s (%s: %s)", who, c.Tool.Name, args, c.Tool.Status, answerSoFar(*vd.Answer, provider, raw))
	}
	return fmt.Sprintf("%sOpen call %s %s (pending, no result yet)", who, c.Tool.Name, args)
}

// answerSoFar renders what an unresolved call's tool answered so far: its body, or where it
// is kept and why it is not shown.
func answerSoFar(a policy.Answer, provider string, raw map[string]model.ArtifactRaw) string {
	if a.As == model.AsRaw {
		return string(raw[a.ArtifactID].Result)
	}
	why := "over the byte budget; request it as exact evidence"
	if a.Restricted {
		why = "restricted for " + provider
	}
	return fmt.Sprintf("artifact %s, %d bytes, not shown: %s", a.ArtifactID, a.Bytes, why)
}

func revalidate(tools []string, prefix string) string {
	if len(tools) == 0 {
		return ""
	}
	return prefix + strings.Join(tools, ", ")
}

func list(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

// statedLine quotes the values an older user message stated, where it left the window.
func statedLine(c *model.Candidate, stated []extract.Value) string {
	values := make([]string, len(stated))
	for i, v := range stated {
		values[i] = v.Text
	}
	who := c.Message.Role
	if c.Message.ParticipantName != "" {
		who = c.Message.ParticipantName
	}
	return fmt.Sprintf("Earlier the %s stated: %s", who, strings.Join(values, "; "))
}

// chatMessage renders a window message: role, content and the speaker's name. The name
// tells another participant's answers from the model's own, which go unnamed when self is
// set (unnamedSpeaker): a model shown its own answers under a name (as a prefix, on
// Anthropic) begins to write it.
func chatMessage(c *model.Candidate, self string) model.ChatMessage {
	m := model.ChatMessage{Role: c.Message.Role, Content: c.Message.Content}
	if c.Message.Role == "assistant" && c.Message.ParticipantName != "" && (self == "" || c.OwnerParticipantID != self) {
		m.Name = model.ChatName(c.Message.ParticipantName)
	}
	return m
}

// aggregateLine is the one line that stands for the recovery items aggregated for the
// budget: how many open calls of each tool, status and error code, oldest group first. The
// calls stay readable one by one through GET /v1/tool-calls/{id} and explain.
func aggregateLine(verdicts []policy.Verdict) string {
	type group struct {
		key string
		n   int
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, vd := range verdicts {
		c := vd.Candidate
		key := c.Tool.Name + " " + string(c.Tool.Status)
		if c.Tool.ErrorCode != "" {
			key += " (" + c.Tool.ErrorCode + ")"
		}
		g, ok := byKey[key]
		if !ok {
			g = &group{key: key}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.n++
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = fmt.Sprintf("%s ×%d", g.key, g.n)
	}
	return fmt.Sprintf("%d older open calls, details withheld for the budget: %s", len(verdicts), strings.Join(parts, "; "))
}

// lineTokens is what a line of the context block costs: its text with the newline that
// ends it. The tokenizer splits the block at each line's end (a newline is never joined to
// the text after it), so a block costs its head's tokens and its lines' tokens.
func lineTokens(tk *Tokenizer, line string) int { return tk.Count(line + "\n") }
