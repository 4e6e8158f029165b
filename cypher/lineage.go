package cypher

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/dbtype"

	"github.com/ctxgraph/ctxgraph/lineage"
	"github.com/ctxgraph/ctxgraph/model"
)

// The statements that read lineages and find records.
var (
	branchLineageQuery = newQuery[branchParams, branchLineageRow]("BranchLineage")
	locateRecords      = newQuery[locateParams, locateRow]("LocateRecords")
)

type branchLineageRow struct {
	ConversationID string `col:"conversationId"`
	BranchID       string `col:"branchId"`
	Depth          int64  `col:"depth"`
	// Cutoff is null for the branch itself.
	Cutoff any `col:"cutoff"`
}

type locateParams struct {
	AccountID string   `param:"accountId"`
	IDs       []string `param:"ids"`
}

type locateRow struct {
	ID    string      `col:"id"`
	Label string      `col:"label"`
	N     dbtype.Node `col:"n"`
}

// lineageParams renders a lineage as a Cypher parameter: a list of {branchId, depth, cutoff}.
func lineageParams(l lineage.Lineage) []map[string]any {
	out := make([]map[string]any, len(l.Branches))
	for i, b := range l.Branches {
		out[i] = map[string]any{"branchId": b.BranchID, "depth": b.Depth, "cutoff": b.Cutoff}
	}
	return out
}

// branchLineage reads the lineage of a branch; KindNotFound when the branch is not the
// account's.
func (t *tx) branchLineage(accountID, branchID string) (lineage.Lineage, error) {
	rows, err := branchLineageQuery.all(t, branchParams{AccountID: accountID, BranchID: branchID})
	if err != nil {
		return lineage.Lineage{}, err
	}
	if len(rows) == 0 {
		return lineage.Lineage{}, model.NotFound("branch", branchID)
	}
	l := lineage.Lineage{ConversationID: rows[0].ConversationID}
	for _, r := range rows {
		b := lineage.Branch{BranchID: r.BranchID, Depth: r.Depth, Cutoff: lineage.OpenEnded}
		if c, ok := r.Cutoff.(int64); ok {
			b.Cutoff = c
		}
		l.Branches = append(l.Branches, b)
	}
	return l, nil
}

// located is where a record lives, as LocateRecords reports it.
type located struct {
	ID, ElementID string
	Label         string
	Props         props
}

func (l located) conversationID() string { return l.Props.str("conversationId") }
func (l located) branchID() string       { return l.Props.str("branchId") }
func (l located) seq() int64             { return l.Props.i64("seq") }

// locate finds the given ids in the account, keyed by id; ids not found are absent.
func (t *tx) locate(accountID string, ids ...string) (map[string]located, error) {
	return locateWith(accountID, ids, func(p locateParams) ([]locateRow, error) { return locateRecords.all(t, p) })
}

// locate is tx.locate as an auto-commit read of its own.
func (s *Store) locate(ctx context.Context, accountID string, ids ...string) (map[string]located, error) {
	return locateWith(accountID, ids, func(p locateParams) ([]locateRow, error) {
		return locateRecords.autoAll(ctx, s, neo4j.AccessModeRead, p)
	})
}

// locateWith finds ids by running LocateRecords with run, when any is named.
func locateWith(accountID string, ids []string, run func(locateParams) ([]locateRow, error)) (map[string]located, error) {
	out := map[string]located{}
	var want []string
	for _, id := range ids {
		if id != "" {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return out, nil
	}
	rows, err := run(locateParams{AccountID: accountID, IDs: want})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.ID] = located{ID: r.ID, Label: r.Label, Props: r.N.Props, ElementID: r.N.ElementId}
	}
	return out, nil
}

// require finds one id of the given label; a miss (or a record of another label) is
// KindNotFound naming the field it came from.
func (t *tx) require(accountID, label, field, id string) (located, error) {
	found, err := t.locate(accountID, id)
	if err != nil {
		return located{}, err
	}
	return required(found, label, field, id)
}

// required is id among what locate found, as require answers.
func required(found map[string]located, label, field, id string) (located, error) {
	rec, ok := found[id]
	if !ok || rec.Label != label {
		e := model.NotFound(labelNoun(label), id)
		e.Field = field
		return located{}, e
	}
	return rec, nil
}

// labelNoun names a label in error messages.
func labelNoun(label string) string {
	switch label {
	case "ModelRun":
		return "run"
	case "ToolCall":
		return "tool call"
	case "ToolArtifact":
		return "artifact"
	case "ToolMemory":
		return "memory"
	case "Message":
		return "message"
	case "Participant":
		return "participant"
	case "Branch":
		return "branch"
	}
	return "record"
}
