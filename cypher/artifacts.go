package cypher

import (
	"context"

	"github.com/ctxgraph/ctxgraph/model"
)

// Artifact reads an artifact's metadata.
func (s *Store) Artifact(ctx context.Context, accountID, id string) (model.Artifact, error) {
	rec, err := readTx(ctx, s, func(t *tx) (located, error) {
		return t.require(accountID, "ToolArtifact", "", id)
	})
	if err != nil {
		return model.Artifact{}, err
	}
	return artifactOf(rec.Props), nil
}

// ArtifactRaw reads an artifact's exact payloads, verified against their hashes.
func (s *Store) ArtifactRaw(ctx context.Context, accountID, id string) (model.ArtifactRaw, error) {
	rec, err := readTx(ctx, s, func(t *tx) (located, error) {
		return t.require(accountID, "ToolArtifact", "", id)
	})
	if err != nil {
		return model.ArtifactRaw{}, err
	}
	a := artifactOf(rec.Props)
	raw := model.ArtifactRaw{ArtifactID: id, Error: a.Error, RedactedAt: a.RedactedAt}
	if raw.Arguments, err = s.restore(ctx, rec.Props, "args", "argsRef", "argsSha256"); err != nil {
		return model.ArtifactRaw{}, err
	}
	if a.RedactedAt != nil {
		// The body went by retention; its hash stays to say what it was.
		return raw, nil
	}
	if raw.Result, err = s.restore(ctx, rec.Props, "result", "resultRef", "resultSha256"); err != nil {
		return model.ArtifactRaw{}, err
	}
	if len(raw.Result) == 0 {
		raw.Result = nil
	}
	return raw, nil
}

// deleteArtifact removes an artifact and answers the blob references it held.
var deleteArtifact = newQuery[idStampParams, struct {
	Refs           []string `col:"refs"`
	BrokenMemories int64    `col:"brokenMemories"`
}]("DeleteArtifact")

// DeleteArtifact removes an artifact and its raw payloads; derived memories remain, marked
// provenance-broken.
func (s *Store) DeleteArtifact(ctx context.Context, accountID, id string) error {
	refs, err := writeTx(ctx, s, func(t *tx) ([]string, error) {
		row, found, err := deleteArtifact.one(t, idStampParams{ID: id, AccountID: accountID, RecordedAt: s.Now()})
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, model.NotFound("artifact", id)
		}
		return row.Refs, t.answer(nil, "", "")
	})
	if err != nil {
		return err
	}
	s.removeBlobs(ctx, refs)
	return nil
}

func artifactOf(p props) model.Artifact {
	a := model.Artifact{
		ID: p.str("id"), ConversationID: p.str("conversationId"), BranchID: p.str("branchId"),
		ToolCallID: p.str("toolCallId"), Seq: p.i64("seq"), Tool: p.str("tool"), Status: p.str("status"),
		ArgsSha256: p.str("argsSha256"), ArgsBytes: p.i64("argsBytes"), ArgsRef: p.str("argsRef"),
		ResultSha256: p.str("resultSha256"), ResultBytes: p.i64("resultBytes"), ResultRef: p.str("resultRef"),
		PrivacyClass: p.str("privacyClass"), Visibility: p.str("visibility"),
		SharedWithParticipants: p.strs("sharedWithParticipants"), OwnerParticipantID: p.str("ownerParticipantId"),
		OwnerRunID: p.str("ownerRunId"), RuntimeKind: model.RuntimeKind(p.str("runtimeKind")), ToolVersion: p.str("toolVersion"),
		ActiveSkills: p.strs("activeSkills"), Promoted: p.boolean("promoted"), Stamp: stampOf(p),
	}
	if code, msg := p.str("errorCode"), p.str("errorMessage"); code != "" || msg != "" {
		a.Error = &model.ToolError{Code: code, Message: msg}
	}
	if class := p.str("retentionClass"); class != "" {
		a.Retention = &model.Retention{Class: class, After: p.str("retentionAfter")}
		a.RetentionSource, a.RetainUntil = p.str("retentionSource"), p.timePtr("retainUntil")
	}
	a.RedactedAt = p.timePtr("redactedAt")
	return a
}
