package cypher

import (
	"context"
	"fmt"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/promotion"
)

// memoryFieldPrefix names the i-th memory of a tool result in error fields.
func memoryFieldPrefix(i int) string { return fmt.Sprintf("memories[%d].", i) }

// The statements of memories.
var (
	deriveMemoryQuery = newQuery[deriveMemoryParams, memoryRow]("DeriveMemory")
	readMemory        = newQuery[idParams, readMemoryRow]("ReadMemory")
)

type deriveMemoryParams struct {
	ID                     string           `param:"id"`
	AccountID              string           `param:"accountId"`
	BranchID               string           `param:"branchId"`
	Kind                   string           `param:"kind"`
	Summary                string           `param:"summary"`
	Data                   string           `param:"data,null"`
	SafeSummary            string           `param:"safeSummary,null"`
	Confidence             *float64         `param:"confidence"`
	ConfidenceSource       string           `param:"confidenceSource,null"`
	Rationale              string           `param:"rationale,null"`
	Limitations            string           `param:"limitations,null"`
	PrivacyClass           string           `param:"privacyClass"`
	FreshnessClass         string           `param:"freshnessClass"`
	ObservedAt             time.Time        `param:"observedAt"`
	StaleAfter             *time.Time       `param:"staleAfter"`
	RevalidateWith         []string         `param:"revalidateWith"`
	ProvenanceLocators     []string         `param:"provenanceLocators"`
	SourceArtifactIDs      []string         `param:"sourceArtifactIds"`
	PromotionPolicy        string           `param:"promotionPolicy,null"`
	QuotesWhole            bool             `param:"quotesWhole"`
	Visibility             string           `param:"visibility"`
	SharedWithParticipants []string         `param:"sharedWithParticipants"`
	OwnerParticipantID     string           `param:"ownerParticipantId"`
	OwnerRunID             string           `param:"ownerRunId"`
	PromotedFromRunID      string           `param:"promotedFromRunId,null"`
	Sources                []map[string]any `param:"sources"`
	Supersedes             []string         `param:"supersedes"`
	SupersedeDerived       []string         `param:"supersedeDerived"`
	ConflictsWith          []string         `param:"conflictsWith"`
	CreatedAt              time.Time        `param:"createdAt"`
	RecordedAt             time.Time        `param:"recordedAt"`
}

type memoryRow struct {
	M props `col:"m"`
}

type readMemoryRow struct {
	M             props    `col:"m"`
	LiveSources   []string `col:"liveSources"`
	Supersedes    []string `col:"supersedes"`
	SupersededBy  []string `col:"supersededBy"`
	ConflictsWith []string `col:"conflictsWith"`
}

// DeriveMemory derives a memory from artifacts.
func (s *Store) DeriveMemory(ctx context.Context, accountID string, in model.NewMemory) (model.Memory, error) {
	return writeTx(ctx, s, func(t *tx) (model.Memory, error) {
		created, err := s.deriveMemory(t, accountID, in, "")
		if err != nil {
			return model.Memory{}, err
		}
		m, err := t.memory(accountID, created.ID)
		if err != nil {
			return model.Memory{}, err
		}
		return m, t.answerRecord(m, m.ConversationID, "", m.ID)
	})
}

// deriveMemory creates a memory inside t. Its branch is the branch of the source whose
// lineage holds every other source; what else it takes from the sources (owner, run,
// privacy, visibility, sharing, observedAt) promotion.Inherit decides.
func (s *Store) deriveMemory(t *tx, accountID string, in model.NewMemory, field string) (model.Memory, error) {
	if len(in.DerivedFrom) == 0 {
		return model.Memory{}, model.Invalid(field+"derivedFrom", "a memory needs at least one source artifact")
	}
	ids := append(append(append([]string{}, in.DerivedFrom...), in.Supersedes...), in.ConflictsWith...)
	refs, err := t.locate(accountID, append(ids, in.SharedWithParticipants...)...)
	if err != nil {
		return model.Memory{}, err
	}
	first, ok := refs[in.DerivedFrom[0]]
	if !ok || first.Label != "ToolArtifact" {
		e := model.NotFound("artifact", in.DerivedFrom[0])
		e.Field = field + "derivedFrom"
		return model.Memory{}, e
	}
	conversationID := first.conversationID()
	var sources []located
	for _, id := range in.DerivedFrom {
		src, err := sameConversation(refs, conversationID, "ToolArtifact", field+"derivedFrom", id)
		if err != nil {
			return model.Memory{}, err
		}
		sources = append(sources, src)
	}
	for _, id := range in.Supersedes {
		if _, err := sameConversation(refs, conversationID, "ToolMemory", field+"supersedes", id); err != nil {
			return model.Memory{}, err
		}
	}
	for _, id := range in.ConflictsWith {
		if _, err := sameConversation(refs, conversationID, "ToolMemory", field+"conflictsWith", id); err != nil {
			return model.Memory{}, err
		}
	}
	for _, id := range in.SharedWithParticipants {
		if _, err := sameConversation(refs, conversationID, "Participant", field+"sharedWithParticipants", id); err != nil {
			return model.Memory{}, err
		}
	}
	home, err := t.commonLineage(accountID, sources, field+"derivedFrom")
	if err != nil {
		return model.Memory{}, err
	}

	facts := make([]promotion.Source, len(sources))
	for i, src := range sources {
		facts[i] = promotion.Source{
			ID: src.ID, Seq: src.seq(), CreatedAt: src.Props.time("createdAt"),
			PrivacyClass: src.Props.str("privacyClass"), Visibility: src.Props.str("visibility"),
			SharedWithParticipants: src.Props.strs("sharedWithParticipants"),
			OwnerParticipantID:     src.Props.str("ownerParticipantId"), OwnerRunID: src.Props.str("ownerRunId"),
		}
	}
	inherited := promotion.Inherit(in, facts)
	sourceParams := make([]map[string]any, 0, len(in.DerivedFrom))
	locators := []string{}
	for i, id := range in.DerivedFrom {
		loc := in.Locators[id]
		quoted := []string{}
		if i == 0 {
			quoted = orEmpty(in.QuotedLocators)
		}
		if loc == "" && len(quoted) > 0 {
			loc = quoted[0]
		}
		sourceParams = append(sourceParams, map[string]any{"id": id, "locator": nullable(loc), "locators": quoted})
		if loc != "" && len(quoted) == 0 {
			locators = append(locators, id+"#"+loc)
		}
		for _, q := range quoted {
			locators = append(locators, id+"#"+q)
		}
	}
	createdAt, recordedAt := t.store.stamps(in.At)
	id := newID("mem")
	row, found, err := deriveMemoryQuery.one(t, deriveMemoryParams{
		ID: id, AccountID: accountID, BranchID: home, Kind: inherited.Kind, Summary: in.Summary,
		Data: string(in.Data), SafeSummary: in.SafeSummary, Confidence: in.Confidence,
		ConfidenceSource: in.ConfidenceSource, Rationale: in.Rationale,
		Limitations: in.Limitations, PrivacyClass: inherited.PrivacyClass, FreshnessClass: inherited.FreshnessClass,
		ObservedAt: inherited.ObservedAt, StaleAfter: in.StaleAfter, RevalidateWith: orEmpty(in.RevalidateWith),
		ProvenanceLocators: locators, SourceArtifactIDs: in.DerivedFrom, PromotionPolicy: in.PromotionPolicy, QuotesWhole: in.QuotesWhole,
		Visibility: inherited.Visibility, SharedWithParticipants: inherited.SharedWithParticipants,
		OwnerParticipantID: inherited.OwnerParticipantID, OwnerRunID: inherited.OwnerRunID,
		Sources: sourceParams, Supersedes: orEmpty(in.Supersedes), SupersedeDerived: supersedeDerived(in),
		ConflictsWith: orEmpty(in.ConflictsWith), CreatedAt: createdAt, RecordedAt: recordedAt,
	})
	if err != nil {
		return model.Memory{}, err
	}
	if !found {
		return model.Memory{}, model.NotFound("branch", home)
	}
	return memoryOf(row.M), nil
}

// supersedeDerived names the promotionPolicies of the derived memories a new memory
// replaces: a memory a client writes from artifacts replaces what the runtime derived from
// them alone, the structural memory and the summariser's; the summariser's replaces the
// structural one; a structural memory replaces nothing.
func supersedeDerived(in model.NewMemory) []string {
	switch in.PromotionPolicy {
	case model.PromotionStructural:
		return []string{}
	case model.PromotionSummarizer:
		return []string{model.PromotionStructural}
	}
	return []string{model.PromotionStructural, model.PromotionSummarizer}
}

// commonLineage returns the branch, among the sources' branches, whose lineage holds every
// source; KindInvalid when the sources lie on diverging branches.
func (t *tx) commonLineage(accountID string, sources []located, field string) (string, error) {
	tried := map[string]bool{}
	for _, candidate := range sources {
		b := candidate.branchID()
		if tried[b] {
			continue
		}
		tried[b] = true
		lin, err := t.branchLineage(accountID, b)
		if err != nil {
			return "", err
		}
		all := true
		for _, src := range sources {
			all = all && lin.Contains(src.branchID(), src.seq())
		}
		if all {
			return b, nil
		}
	}
	return "", model.Invalid(field, "the source artifacts lie on diverging branches")
}

// Memory reads a memory with its provenance and supersession links.
func (s *Store) Memory(ctx context.Context, accountID, id string) (model.Memory, error) {
	return readTx(ctx, s, func(t *tx) (model.Memory, error) { return t.memory(accountID, id) })
}

// memory reads a memory with its provenance and supersession links inside t.
func (t *tx) memory(accountID, id string) (model.Memory, error) {
	row, found, err := readMemory.one(t, idParams{ID: id, AccountID: accountID})
	if err != nil {
		return model.Memory{}, err
	}
	if !found {
		return model.Memory{}, model.NotFound("memory", id)
	}
	m := memoryOf(row.M)
	m.ProvenanceBroken = m.ProvenanceBroken || len(row.LiveSources) < len(m.DerivedFrom)
	m.Supersedes, m.SupersededBy, m.ConflictsWith = row.Supersedes, row.SupersededBy, row.ConflictsWith
	return m, nil
}

func memoryOf(p props) model.Memory {
	return model.Memory{
		ID: p.str("id"), ConversationID: p.str("conversationId"), BranchID: p.str("branchId"), Seq: p.i64("seq"),
		Kind: p.str("kind"), Summary: p.str("summary"), Data: p.raw("data"), SafeSummary: p.str("safeSummary"),
		Confidence: p.float("confidence"), ConfidenceSource: p.str("confidenceSource"), Rationale: p.str("rationale"),
		Limitations: p.str("limitations"), PrivacyClass: p.str("privacyClass"), FreshnessClass: p.str("freshnessClass"),
		ObservedAt: p.time("observedAt"), StaleAfter: p.timePtr("staleAfter"), RevalidateWith: p.strs("revalidateWith"),
		ProvenanceLocators: p.strs("provenanceLocators"), ResolutionStatus: p.str("resolutionStatus"),
		RepairAttempts: p.i64("repairAttempts"), PromotionPolicy: p.str("promotionPolicy"), QuotesWhole: p.boolean("quotesWhole"), Visibility: p.str("visibility"),
		SharedWithParticipants: p.strs("sharedWithParticipants"), OwnerParticipantID: p.str("ownerParticipantId"),
		OwnerRunID: p.str("ownerRunId"), DerivedFrom: p.strs("sourceArtifactIds"), ProvenanceBroken: p.boolean("provenanceBroken"),
		Supersedes: []string{}, SupersededBy: []string{}, ConflictsWith: []string{}, Promoted: p.boolean("promoted"),
		PromotedToRunID: p.str("promotedToRunId"), Stamp: stampOf(p),
	}
}
