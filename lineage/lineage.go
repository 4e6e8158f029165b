// Package lineage selects what an assembly's branch sees of its conversation: the branch
// and its ancestors up to each fork point, and, from a copy of the conversation's records
// that the store keeps up to date, the candidates of that lineage as of a snapshot time.
// It is pure Go over the model's types: the store reads the graph and feeds it records.
package lineage

// OpenEnded stands for "no cutoff": the active branch sees all of its own records.
const OpenEnded = int64(1) << 62

// Branch is one branch of a lineage with the seq up to which it is inherited.
type Branch struct {
	BranchID string
	Depth    int64
	Cutoff   int64
}

// Lineage is a branch and its ancestors, nearest first.
type Lineage struct {
	ConversationID string
	Branches       []Branch
}

// Contains reports whether a record at seq on branchID is part of the lineage.
func (l Lineage) Contains(branchID string, seq int64) bool {
	cutoff, ok := l.Cutoff(branchID)
	return ok && seq <= cutoff
}

// Cutoff is the seq up to which the lineage inherits a branch; false when the branch is not
// part of it.
func (l Lineage) Cutoff(branchID string) (int64, bool) {
	for _, b := range l.Branches {
		if b.BranchID == branchID {
			return b.Cutoff, true
		}
	}
	return 0, false
}

// IDs lists the lineage's branch ids, nearest first.
func (l Lineage) IDs() []string {
	out := make([]string, len(l.Branches))
	for i, b := range l.Branches {
		out[i] = b.BranchID
	}
	return out
}

// Fork is one branch of a conversation as the store lists them: the branch it was forked
// from (empty for the root) and the seq of that branch it was forked after.
type Fork struct {
	ID, ParentID string
	AfterSeq     int64
}

// Of derives a branch's lineage from the conversation's branches: the branch sees all of its
// own records, each ancestor up to the fork point of the branch forked from it.
func Of(conversationID, branchID string, branches []Fork) Lineage {
	parent := make(map[string]Fork, len(branches))
	for _, b := range branches {
		parent[b.ID] = b
	}
	l := Lineage{ConversationID: conversationID}
	id, cutoff := branchID, OpenEnded
	for depth := int64(0); id != ""; depth++ {
		b, ok := parent[id]
		if !ok || depth > int64(len(branches)) {
			break
		}
		l.Branches = append(l.Branches, Branch{BranchID: id, Depth: depth, Cutoff: cutoff})
		id, cutoff = b.ParentID, b.AfterSeq
	}
	return l
}
