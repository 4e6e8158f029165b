package cypher

import (
	"context"
	"fmt"

	"github.com/ctxgraph/ctxgraph/model"
)

// RecordSkills records the skill state of a run.
func (s *Store) RecordSkills(ctx context.Context, accountID string, in model.NewSkillState) (model.SkillState, error) {
	createdAt, recordedAt := s.stamps(in.At)
	return writeTx(ctx, s, func(t *tx) (model.SkillState, error) {
		rec, err := t.one("RecordSkills", map[string]any{
			"id": newID("sk"), "accountId": accountID, "runId": in.RunID, "loadedSkills": orEmpty(in.LoadedSkills),
			"activeProfiles": orEmpty(in.ActiveProfiles), "directTools": orEmpty(in.DirectTools),
			"createdAt": createdAt, "recordedAt": recordedAt,
		})
		if err != nil {
			return model.SkillState{}, err
		}
		if rec == nil {
			return model.SkillState{}, model.NotFound("run", in.RunID)
		}
		p := nodeProps(rec, "s")
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
		rec, err := t.one("RecordCheckpoint", map[string]any{
			"id": newID("ckp"), "accountId": accountID, "runId": in.RunID, "state": jsonText(in.State),
			"assemblyId": nullable(in.AssemblyID), "createdAt": createdAt, "recordedAt": recordedAt,
		})
		if err != nil {
			return model.Checkpoint{}, err
		}
		if rec == nil {
			// The run's branch is gone: its conversation is being deleted.
			return model.Checkpoint{}, model.NotFound("run", in.RunID)
		}
		p := nodeProps(rec, "c")
		cp := model.Checkpoint{
			ID: p.str("id"), RunID: p.str("runId"), Seq: p.i64("seq"), State: p.raw("state"),
			AssemblyID: p.str("assemblyId"), Stamp: stampOf(p),
		}
		return cp, t.answer(cp, run.conversationID(), "")
	})
}

// locateAssembly returns the conversation of an assembly of the account.
func (t *tx) locateAssembly(accountID, id string) (string, error) {
	rec, err := t.one("AssemblyConversation", map[string]any{"id": id, "accountId": accountID})
	if err != nil {
		return "", err
	}
	if rec == nil {
		e := model.NotFound("assembly", id)
		e.Field = "assemblyId"
		return "", e
	}
	return strValue(rec, "conversationId"), nil
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
		privacy := ""
		stricter := func(class string) {
			if privacy == "" || model.PrivacyRank(class) > model.PrivacyRank(privacy) {
				privacy = class
			}
		}
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
			stricter(rec.Props.str("privacyClass"))
		}
		if len(in.ToolCallIDs) > 0 {
			records, err := t.run("ToolCallArtifacts", map[string]any{"runId": in.RunID, "accountId": accountID, "toolCallIds": in.ToolCallIDs})
			if err != nil {
				return model.Promotion{}, err
			}
			for _, r := range records {
				if id := strValue(r, "id"); !model.Contains(artifactIDs, id) {
					artifactIDs = append(artifactIDs, id)
				}
				stricter(strValue(r, "privacyClass"))
			}
		}
		// Memories promoted beside the report keep their own classes and safe summaries:
		// they do not restrict the report (DESIGN §4 promotion).
		for _, id := range in.MemoryIDs {
			if _, err := owned("ToolMemory", "memoryIds", id, "ownerRunId"); err != nil {
				return model.Promotion{}, err
			}
		}
		switch {
		case in.ReportPrivacyClass != "":
			privacy = in.ReportPrivacyClass
		case privacy == "":
			privacy = model.DefaultPrivacyClass
		}
		createdAt, recordedAt := s.stamps(in.At)
		parent, err := t.one("PromoteToParent", map[string]any{
			"runId": in.RunID, "accountId": accountID, "artifactIds": artifactIDs, "memoryIds": orEmpty(in.MemoryIDs),
			"recordedAt": recordedAt,
		})
		if err != nil {
			return model.Promotion{}, err
		}
		if parent == nil {
			return model.Promotion{}, model.Invalid("runId", "run %q has no parent run to promote to", in.RunID)
		}
		report := in.Report
		if report == "" {
			report = fmt.Sprintf("Promoted %d tool results and %d memories from child run %s.", len(artifactIDs), len(in.MemoryIDs), in.RunID)
		}
		p := nodeProps(parent, "parent")
		rec, err := t.one("CreateReport", map[string]any{
			"id": newID("mem"), "accountId": accountID, "parentRunId": p.str("id"), "childRunId": in.RunID,
			"summary": report, "privacyClass": privacy, "safeSummary": nullable(in.ReportSafeSummary), "artifactIds": artifactIDs,
			"createdAt": createdAt, "recordedAt": recordedAt,
		})
		if err != nil {
			return model.Promotion{}, err
		}
		if rec == nil {
			return model.Promotion{}, model.NotFound("run", in.RunID)
		}
		out := model.Promotion{
			ReportID: nodeProps(rec, "m").str("id"), ParentRunID: p.str("id"), PromotedArtifacts: orEmpty(artifactIDs),
			PromotedMemories: orEmpty(in.MemoryIDs), PromotedToolCalls: orEmpty(in.ToolCallIDs),
		}
		return out, t.answer(out, child.conversationID(), "")
	})
}
