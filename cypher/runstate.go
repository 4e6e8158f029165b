package cypher

import (
	"context"
	"fmt"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/promotion"
)

// The statements of runs' state and promotion.
var (
	recordSkills = newQuery[recordSkillsParams, struct {
		S props `col:"s"`
	}]("RecordSkills")
	recordCheckpoint = newQuery[recordCheckpointParams, struct {
		C props `col:"c"`
	}]("RecordCheckpoint")
	assemblyConversation = newQuery[idParams, conversationIDRow]("AssemblyConversation")
	toolCallArtifacts    = newQuery[toolCallArtifactsParams, struct {
		ID           string `col:"id"`
		PrivacyClass string `col:"privacyClass"`
	}]("ToolCallArtifacts")
	promoteToParent = newQuery[promoteParams, struct {
		Parent props `col:"parent"`
	}]("PromoteToParent")
	createReport = newQuery[createReportParams, memoryRow]("CreateReport")
)

type recordSkillsParams struct {
	ID             string    `param:"id"`
	AccountID      string    `param:"accountId"`
	RunID          string    `param:"runId"`
	LoadedSkills   []string  `param:"loadedSkills"`
	ActiveProfiles []string  `param:"activeProfiles"`
	DirectTools    []string  `param:"directTools"`
	CreatedAt      time.Time `param:"createdAt"`
	RecordedAt     time.Time `param:"recordedAt"`
}

type recordCheckpointParams struct {
	ID         string    `param:"id"`
	AccountID  string    `param:"accountId"`
	RunID      string    `param:"runId"`
	State      string    `param:"state,null"`
	AssemblyID string    `param:"assemblyId,null"`
	CreatedAt  time.Time `param:"createdAt"`
	RecordedAt time.Time `param:"recordedAt"`
}

type toolCallArtifactsParams struct {
	RunID       string   `param:"runId"`
	AccountID   string   `param:"accountId"`
	ToolCallIDs []string `param:"toolCallIds"`
}

type promoteParams struct {
	RunID       string    `param:"runId"`
	AccountID   string    `param:"accountId"`
	ArtifactIDs []string  `param:"artifactIds"`
	MemoryIDs   []string  `param:"memoryIds"`
	RecordedAt  time.Time `param:"recordedAt"`
}

type createReportParams struct {
	ID           string    `param:"id"`
	AccountID    string    `param:"accountId"`
	ParentRunID  string    `param:"parentRunId"`
	ChildRunID   string    `param:"childRunId"`
	Summary      string    `param:"summary"`
	PrivacyClass string    `param:"privacyClass"`
	SafeSummary  string    `param:"safeSummary,null"`
	ArtifactIDs  []string  `param:"artifactIds"`
	CreatedAt    time.Time `param:"createdAt"`
	RecordedAt   time.Time `param:"recordedAt"`
}

// RecordSkills records the skill state of a run.
func (s *Store) RecordSkills(ctx context.Context, accountID string, in model.NewSkillState) (model.SkillState, error) {
	createdAt, recordedAt := s.stamps(in.At)
	return writeTx(ctx, s, func(t *tx) (model.SkillState, error) {
		row, found, err := recordSkills.one(t, recordSkillsParams{
			ID: newID("sk"), AccountID: accountID, RunID: in.RunID, LoadedSkills: orEmpty(in.LoadedSkills),
			ActiveProfiles: orEmpty(in.ActiveProfiles), DirectTools: orEmpty(in.DirectTools),
			CreatedAt: createdAt, RecordedAt: recordedAt,
		})
		if err != nil {
			return model.SkillState{}, err
		}
		if !found {
			return model.SkillState{}, model.NotFound("run", in.RunID)
		}
		p := row.S
		sk := model.SkillState{
			ID: p.str("id"), RunID: p.str("runId"), Seq: p.i64("seq"), LoadedSkills: p.strs("loadedSkills"),
			ActiveProfiles: p.strs("activeProfiles"), DirectTools: p.strs("directTools"), Stamp: stampOf(p),
		}
		return sk, t.answer(sk, p.str("conversationId"), "")
	})
}

// RecordCheckpoint records a checkpoint of a run.
func (s *Store) RecordCheckpoint(ctx context.Context, accountID string, in model.NewCheckpoint) (model.Checkpoint, error) {
	createdAt, recordedAt := s.stamps(in.At)
	return writeTx(ctx, s, func(t *tx) (model.Checkpoint, error) {
		run, err := t.require(accountID, "ModelRun", "", in.RunID)
		if err != nil {
			return model.Checkpoint{}, err
		}
		if in.AssemblyID != "" {
			found, err := t.locateAssembly(accountID, in.AssemblyID)
			if err != nil {
				return model.Checkpoint{}, err
			}
			if found != run.conversationID() {
				e := model.NotFound("assembly", in.AssemblyID)
				e.Field = "assemblyId"
				return model.Checkpoint{}, e
			}
		}
		row, found, err := recordCheckpoint.one(t, recordCheckpointParams{
			ID: newID("ckp"), AccountID: accountID, RunID: in.RunID, State: string(in.State),
			AssemblyID: in.AssemblyID, CreatedAt: createdAt, RecordedAt: recordedAt,
		})
		if err != nil {
			return model.Checkpoint{}, err
		}
		if !found {
			// The run's branch is gone: its conversation is being deleted.
			return model.Checkpoint{}, model.NotFound("run", in.RunID)
		}
		p := row.C
		cp := model.Checkpoint{
			ID: p.str("id"), RunID: p.str("runId"), Seq: p.i64("seq"), State: p.raw("state"),
			AssemblyID: p.str("assemblyId"), Stamp: stampOf(p),
		}
		return cp, t.answer(cp, run.conversationID(), "")
	})
}

// locateAssembly returns the conversation of an assembly of the account.
func (t *tx) locateAssembly(accountID, id string) (string, error) {
	row, found, err := assemblyConversation.one(t, idParams{ID: id, AccountID: accountID})
	if err != nil {
		return "", err
	}
	if !found {
		e := model.NotFound("assembly", id)
		e.Field = "assemblyId"
		return "", e
	}
	return row.ConversationID, nil
}

// Promote promotes a child run's tool calls (their artifacts) and memories to its parent
// run: they become visible to the parent's participant from the promotion on, and a report
// memory owned by the parent run records what was promoted.
func (s *Store) Promote(ctx context.Context, accountID string, in model.NewPromotion) (model.Promotion, error) {
	return writeTx(ctx, s, func(t *tx) (model.Promotion, error) {
		child, err := t.require(accountID, "ModelRun", "", in.RunID)
		if err != nil {
			return model.Promotion{}, err
		}
		parentRunID := child.Props.str("parentRunId")
		if parentRunID == "" {
			return model.Promotion{}, model.Invalid("runId", "run %q has no parent run to promote to", in.RunID)
		}
		refs, err := t.locate(accountID, append(append([]string{}, in.ToolCallIDs...), append(in.MemoryIDs, in.ArtifactIDs...)...)...)
		if err != nil {
			return model.Promotion{}, err
		}
		owned := func(label, field, id, ownerKey string) (located, error) {
			rec, err := sameConversation(refs, child.conversationID(), label, field, id)
			if err == nil && rec.Props.str(ownerKey) != in.RunID {
				err = model.Invalid(field, "%s %q does not belong to run %q", labelNoun(label), id, in.RunID)
			}
			return rec, err
		}
		// The classes of the promoted artifacts, in the order they are named, decide the
		// report's class unless the promotion names one.
		var classes []string
		for _, id := range in.ToolCallIDs {
			if _, err := owned("ToolCall", "toolCallIds", id, "runId"); err != nil {
				return model.Promotion{}, err
			}
		}
		artifactIDs := append([]string{}, in.ArtifactIDs...)
		for _, id := range in.ArtifactIDs {
			rec, err := owned("ToolArtifact", "artifactIds", id, "ownerRunId")
			if err != nil {
				return model.Promotion{}, err
			}
			classes = append(classes, rec.Props.str("privacyClass"))
		}
		if len(in.ToolCallIDs) > 0 {
			rows, err := toolCallArtifacts.all(t, toolCallArtifactsParams{RunID: in.RunID, AccountID: accountID, ToolCallIDs: in.ToolCallIDs})
			if err != nil {
				return model.Promotion{}, err
			}
			for _, r := range rows {
				if !model.Contains(artifactIDs, r.ID) {
					artifactIDs = append(artifactIDs, r.ID)
				}
				classes = append(classes, r.PrivacyClass)
			}
		}
		// Memories promoted beside the report keep their own classes and safe summaries:
		// they do not restrict the report (DESIGN §4 promotion).
		for _, id := range in.MemoryIDs {
			if _, err := owned("ToolMemory", "memoryIds", id, "ownerRunId"); err != nil {
				return model.Promotion{}, err
			}
		}
		createdAt, recordedAt := s.stamps(in.At)
		parent, found, err := promoteToParent.one(t, promoteParams{
			RunID: in.RunID, AccountID: accountID, ArtifactIDs: artifactIDs, MemoryIDs: orEmpty(in.MemoryIDs),
			RecordedAt: recordedAt,
		})
		if err != nil {
			return model.Promotion{}, err
		}
		if !found {
			return model.Promotion{}, model.Invalid("runId", "run %q has no parent run to promote to", in.RunID)
		}
		report := in.Report
		if report == "" {
			report = fmt.Sprintf("Promoted %d tool results and %d memories from child run %s.", len(artifactIDs), len(in.MemoryIDs), in.RunID)
		}
		p := parent.Parent
		rec, found, err := createReport.one(t, createReportParams{
			ID: newID("mem"), AccountID: accountID, ParentRunID: p.str("id"), ChildRunID: in.RunID,
			Summary: report, PrivacyClass: promotion.ReportPrivacyClass(in.ReportPrivacyClass, classes), SafeSummary: in.ReportSafeSummary, ArtifactIDs: artifactIDs,
			CreatedAt: createdAt, RecordedAt: recordedAt,
		})
		if err != nil {
			return model.Promotion{}, err
		}
		if !found {
			return model.Promotion{}, model.NotFound("run", in.RunID)
		}
		out := model.Promotion{
			ReportID: rec.M.str("id"), ParentRunID: p.str("id"), PromotedArtifacts: orEmpty(artifactIDs),
			PromotedMemories: orEmpty(in.MemoryIDs), PromotedToolCalls: orEmpty(in.ToolCallIDs),
		}
		return out, t.answerRecord(out, child.conversationID(), "", out.ReportID)
	})
}
