package cypher

import (
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/dbtype"

	"github.com/ctxgraph/ctxgraph/lineage"
	"github.com/ctxgraph/ctxgraph/model"
)

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
	records, err := t.run("BranchLineage", map[string]any{"accountId": accountID, "branchId": branchID})
	if err != nil {
		return lineage.Lineage{}, err
	}
	if len(records) == 0 {
		return lineage.Lineage{}, model.NotFound("branch", branchID)
	}
	l := lineage.Lineage{ConversationID: strValue(records[0], "conversationId")}
	for _, r := range records {
		b := lineage.Branch{BranchID: strValue(r, "branchId"), Cutoff: lineage.OpenEnded}
		b.Depth, _ = value(r, "depth").(int64)
		if c, ok := value(r, "cutoff").(int64); ok {
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
	records, err := t.run("LocateRecords", map[string]any{"accountId": accountID, "ids": want})
	if err != nil {
		return nil, err
	}
	for _, r := range records {
		id := strValue(r, "id")
		loc := located{ID: id, Label: strValue(r, "label"), Props: nodeProps(r, "n")}
		if n, ok := value(r, "n").(dbtype.Node); ok {
			loc.ElementID = n.ElementId
		}
		out[id] = loc
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
