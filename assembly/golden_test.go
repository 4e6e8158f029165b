package assembly

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/extract"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

var update = flag.Bool("update", false, "rewrite testdata/assemblies.golden from the current assembler")

// goldenAssemblies is how many generated lineages the golden file covers: enough that every
// step of the budget (tier omissions, revived duplicates, lone conflict sides, compacted and
// aggregated recovery, the final trim) runs on dozens of them.
const goldenAssemblies = 1000

// TestAssembliesMatchTheGolden computes assemblies of generated lineages (messages, calls
// with their outcomes, memories with sources and conflicts, run state, of two participants
// and several privacy classes, under budgets from tiny to ample) and compares each with
// the digest of the messages, included records, token counts, omissions and decisions the
// assembler produced when the golden file was written: a change of any rendered text,
// decision, rule or count fails it. Run with -update only for an intended change.
func TestAssembliesMatchTheGolden(t *testing.T) {
	v, err := policy.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{Now: func() time.Time { return time.Now() }}
	got := make([]string, goldenAssemblies)
	outputs := make([][]byte, goldenAssemblies)
	for seed := range goldenAssemblies {
		g, req := generatedLineage(uint64(seed + 1))
		s.Graph = g
		a, err := s.compute(context.Background(), "acct", req, model.SnapshotOptions{}, v)
		if err != nil {
			t.Fatalf("seed %d: %v", seed+1, err)
		}
		// The sections add up to the assembled count; the golden file predates them.
		tokens := a.Tokens
		if sec := tokens.Sections; sec.Instructions+sec.Context+sec.Messages+sec.ToolRounds+sec.Reply != tokens.Assembled || sec.Reply == 0 {
			t.Fatalf("seed %d: sections %+v do not add up to the %d tokens assembled", seed+1, sec, tokens.Assembled)
		}
		tokens.Sections = model.TokenSections{}
		out, err := json.Marshal(struct {
			Messages    []model.ChatMessage
			Included    []model.IncludedItem
			Tokens      model.TokenCounts
			Omitted     map[string]int
			OverBudget  bool
			Decisions   []model.Decision
			Settled     []*model.Decision
			OmittedRefs []model.OmittedRef
		}{a.Messages, a.Included, tokens, a.Omitted, a.OverBudget, a.Decisions, a.Settled, a.OmittedRefs})
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(out)
		got[seed], outputs[seed] = fmt.Sprintf("%d %s", seed+1, hex.EncodeToString(sum[:12])), out
	}
	const path = "testdata/assemblies.golden"
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		want = append(want, sc.Text())
	}
	if len(want) != len(got) {
		t.Fatalf("got %d assemblies, the golden file holds %d", len(got), len(want))
	}
	failed := 0
	for i := range got {
		if got[i] != want[i] && failed < 3 {
			t.Errorf("seed %d: got digest %q, want %q; the assembly now reads:\n%s", i+1, got[i], want[i], outputs[i])
		}
		if got[i] != want[i] {
			failed++
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d assemblies differ from the golden file", failed, len(got))
	}
}

// snapshotGraph serves one generated snapshot and its raw bodies to the assembler.
type snapshotGraph struct {
	snap model.Snapshot
	raw  map[string]model.ArtifactRaw
}

func (g *snapshotGraph) LineageSnapshot(context.Context, string, model.AssemblyRequest, model.SnapshotOptions) (model.Snapshot, error) {
	return g.snap, nil
}

func (g *snapshotGraph) RawPayloads(_ context.Context, _ string, ids []string) (map[string]model.ArtifactRaw, error) {
	out := map[string]model.ArtifactRaw{}
	for _, id := range ids {
		out[id] = g.raw[id]
	}
	return out, nil
}

func (g *snapshotGraph) RecordAssembly(context.Context, string, model.Assembly, []byte) error {
	return nil
}

func (g *snapshotGraph) Assembly(context.Context, string, string) (model.Assembly, error) {
	return model.Assembly{}, model.NotFound("assembly", "")
}

func (g *snapshotGraph) ProvenancePath(context.Context, string, string) ([]model.PathStep, error) {
	return nil, nil
}

var words = strings.Fields("revenue supplier hotel booking paris berlin quarter rates rose fell invoice contract email draft " +
	"report csv rows table query result customer order shipping delay refund price cheaper faster the and for with")

func text(r *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[r.IntN(len(words))]
	}
	return strings.Join(ws, " ")
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// generatedLineage builds, from a seed, the snapshot of a lineage of up to two branches and
// an assembly request against it.
func generatedLineage(seed uint64) (*snapshotGraph, model.AssemblyRequest) {
	r := rand.New(rand.NewPCG(seed, 77))
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	names := map[string]string{"pt_me": "me", "pt_other": "Other One"}
	g := &snapshotGraph{raw: map[string]model.ArtifactRaw{}}
	var cands []model.Candidate
	seqs := map[int64]int64{}
	next := func(depth int64) int64 { seqs[depth]++; return seqs[depth] }
	n := 0
	newID := func(prefix string) string { n++; return fmt.Sprintf("%s_%03d_%d", prefix, r.IntN(1000), n) }
	const run = "run_1"

	messages := 2 + r.IntN(14)
	for i := range messages {
		depth := int64(0)
		if i < messages/3 && r.IntN(2) == 0 {
			depth = 1
		}
		role := []string{"user", "assistant"}[i%2]
		if r.IntN(10) == 0 {
			role = "system"
		}
		c := model.Candidate{Type: model.TypeMessage, ID: newID("msg"), Depth: depth, Visibility: model.VisibilityBranch,
			Message: model.MessageFacts{Role: role, Content: text(r, 3+r.IntN(60))}}
		if role == "assistant" {
			c.OwnerParticipantID = pick(r, "pt_me", "pt_other")
		}
		if role == "user" { // as the store reads a user message's record
			c.Message.Stated = extract.StatedValues(c.Message.Content, extract.MaxStatedValues)
		}
		if r.IntN(8) == 0 {
			c.Visibility, c.OwnerParticipantID = model.VisibilityParticipant, "pt_other"
		}
		c.Message.ParticipantName = names[c.OwnerParticipantID]
		cands = append(cands, c)
	}

	var artifacts []string
	for i := range r.IntN(7) {
		status := pick(r, model.ToolPending, model.ToolDeferred, model.ToolFailed, model.ToolSucceeded, model.ToolSucceeded)
		owner, ownerRun := pick(r, "pt_me", "pt_me", "pt_other"), pick(r, run, "run_old")
		call := model.Candidate{Type: model.TypeToolCall, ID: newID("tc"), Visibility: model.VisibilityParticipant,
			OwnerParticipantID: owner, OwnerRunID: ownerRun, OwnerRunStatus: "running",
			Tool: model.ToolFacts{Name: pick(r, "search", "read_csv", "send_email"), Status: status},
			Call: model.CallFacts{Arguments: fmt.Sprintf(`{"q":%q}`, text(r, 1+r.IntN(12))), CallID: pick(r, "", fmt.Sprintf("call_x%d", i))}}
		if status == model.ToolFailed {
			call.Tool.ErrorCode, call.Tool.ErrorMessage, call.Call.Retryable = fmt.Sprintf("E%d", r.IntN(3)), text(r, 4), r.IntN(2) == 0
		}
		if status == model.ToolPending && r.IntN(2) == 0 {
			call.Seq = next(0)
			cands = append(cands, call)
			continue
		}
		a := model.Candidate{Type: model.TypeArtifact, ID: newID("art"), Visibility: model.VisibilityParticipant,
			OwnerParticipantID: owner, OwnerRunID: ownerRun, OwnerRunStatus: "completed",
			PrivacyClass: pick(r, "public", "internal", "internal", "secret"),
			Tool:         model.ToolFacts{Name: call.Tool.Name, Status: status},
			Artifact:     model.ArtifactFacts{ToolCallID: call.ID, ResultBytes: int64(r.IntN(3000)), ArgsBytes: 20}}
		if status == model.ToolPending || status == model.ToolDeferred {
			a.Artifact.ResultBytes = int64(1 + r.IntN(200))
		}
		call.Call.ArtifactIDs, call.PrivacyClass = []string{a.ID}, a.PrivacyClass
		g.raw[a.ID] = model.ArtifactRaw{ArtifactID: a.ID, Arguments: json.RawMessage(call.Call.Arguments),
			Result: json.RawMessage(fmt.Sprintf(`{"text":%q}`, text(r, 5+r.IntN(80))))}
		artifacts = append(artifacts, a.ID)
		call.Seq, a.Seq = next(0), next(0)
		cands = append(cands, call, a)
	}

	var memories []int
	for range r.IntN(14) {
		m := model.Candidate{Type: model.TypeMemory, ID: newID("mem"), Depth: int64(r.IntN(2)), InLineage: true,
			OwnerParticipantID: pick(r, "pt_me", "pt_me", "pt_other"), OwnerRunID: "run_old", OwnerRunStatus: "completed",
			Visibility:   pick(r, model.VisibilityParticipant, model.VisibilityBranch, model.VisibilityConversation),
			PrivacyClass: pick(r, "public", "internal", "internal", "secret"),
			Memory: model.MemoryFacts{Summary: text(r, 3+r.IntN(30)), FreshnessClass: pick(r, "durable", "bounded", "volatile"),
				ObservedAt: now.Add(-time.Duration(r.IntN(200)) * time.Hour)}}
		if r.IntN(3) == 0 {
			m.Memory.SafeSummary = text(r, 4)
		}
		if r.IntN(2) == 0 {
			c := pick(r, 0.3, 0.5, 0.9)
			m.Memory.Confidence = &c
		}
		if len(artifacts) > 0 && r.IntN(2) == 0 {
			src := []string{pick(r, artifacts...)}
			m.Memory.SourceArtifactIDs, m.Memory.LiveSourceIDs = src, src
		}
		if r.IntN(6) == 0 {
			// A conversation-visible memory of another branch.
			m.Depth, m.InLineage, m.Visibility = -1, false, model.VisibilityConversation
		}
		m.Memory.Report = r.IntN(8) == 0
		memories = append(memories, len(cands))
		cands = append(cands, m)
	}
	for _, k := range memories {
		if o := memories[r.IntN(len(memories))]; r.IntN(5) == 0 && o != k {
			cands[k].Memory.ConflictsWith = []string{cands[o].ID}
			cands[o].Memory.ConflictsWith = append(cands[o].Memory.ConflictsWith, cands[k].ID)
		}
	}
	if r.IntN(2) == 0 {
		cands = append(cands, model.Candidate{Type: model.TypeCheckpoint, ID: newID("cp"),
			RunState: model.RunStateFacts{RunID: run, State: fmt.Sprintf(`{"step":%d}`, r.IntN(9))}})
	}
	if r.IntN(2) == 0 {
		cands = append(cands, model.Candidate{Type: model.TypeSkills, ID: newID("sk"),
			RunState: model.RunStateFacts{RunID: run, LoadedSkills: []string{"csv", "mail"}}})
	}
	for i := range cands {
		c := &cands[i]
		c.BranchID = "br"
		if c.Type != model.TypeMemory {
			c.InLineage = true
		}
		switch {
		case c.Seq != 0:
		case c.Depth == -1:
			c.Seq = 1000 + int64(i)
		default:
			c.Seq = next(c.Depth)
		}
	}
	// The snapshot's order: records by type, each in lineage order.
	var ordered []model.Candidate
	for _, typ := range []model.RecordType{model.TypeMessage, model.TypeToolCall, model.TypeArtifact, model.TypeMemory, model.TypeCheckpoint, model.TypeSkills} {
		for _, c := range cands {
			if c.Type == typ {
				ordered = append(ordered, c)
			}
		}
	}
	g.snap = model.Snapshot{ConversationID: "cnv_1", Candidates: model.CandidatePointers(ordered), ParticipantNames: names, BaselineTokens: 1234,
		Participant:          model.Participant{ID: "pt_me", Provider: pick(r, "openai", "anthropic"), Model: "gpt-4.1"},
		StructurallyExcluded: r.IntN(3), ExcludedRefs: []string{"msg_elsewhere"}}
	req := model.AssemblyRequest{BranchID: "br", ParticipantID: "pt_me", TokenBudget: 30 + r.IntN(2500), Now: now, AsOf: now,
		Trace: r.IntN(2) == 0}
	if r.IntN(3) > 0 {
		req.RunID, req.RuntimeKind, req.ToolRounds = run, pick(r, model.RuntimeChat, model.RuntimeDiscussion, model.RuntimeSubagent), r.IntN(2) == 0
	}
	if len(artifacts) > 0 && r.IntN(2) == 0 {
		req.ExactArtifactIDs = []string{pick(r, artifacts...)}
	}
	return g, req
}
