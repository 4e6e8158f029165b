package cypher

import (
	"github.com/ctxgraph/ctxgraph/lineage"
	"github.com/ctxgraph/ctxgraph/model"
)

// The assembler's copy of a conversation (lineage.Conversation). Every write increments the
// revision (rev) of the branch it writes on and stamps the nodes it creates or changes with
// the new value (migration 0004), so a copy that holds branch B at revision R is brought up
// to date by ConversationRecords reading B's records stamped after R: one index seek per
// label and changed branch, whatever the length of the history. A deletion increments
// Conversation.resetRev, and a copy read before that is read again in full.

// DefaultRecordCacheBytes is the heap the assembler's copies of conversations may hold in
// all before the least recently used is dropped (lineage.Cache).
const DefaultRecordCacheBytes = 768 << 20

// newRecord keeps what the snapshot needs of a record's properties as ConversationRecords
// projected them (lineage.Record), with its candidate's base (baseCandidate).
func newRecord(kind model.RecordType, p props) *lineage.Record {
	return &lineage.Record{Kind: kind, ID: p.str("id"), ElementID: p.str("eid"), BranchID: p.str("branchId"), Seq: p.i64("seq"), Rev: p.i64("rev"),
		RecordedAt: p.time("recordedAt"), PromotedAt: p.timePtr("promotedAt"), PromotedTo: p.str("promotedTo"),
		Baseline: int(p.i64("baselineTokens")), Base: baseCandidate(kind, p), Retryable: p.boolean("retryable"),
		ArgumentsSha256: p.str("argumentsSha256"), Supersedes: p.strs("supersedes"), ConflictsWith: p.strs("conflictsWith")}
}

// RecordCacheStats reports how the assembler has read conversations so far: full reads of
// a whole conversation, delta reads of the changes since a cached copy, and the snapshots
// whose candidates were a lineage view built before; and the bytes its copies hold.
func (s *Store) RecordCacheStats() lineage.CacheStats { return s.records.Stats() }

// CopyBytes is the heap the assembler's copy of a conversation holds, with its views, as the
// cache charges it (0 when the copy is not held).
func (s *Store) CopyBytes(accountID, conversationID string) int64 {
	if c := s.records.LookupConversation(accountID, conversationID); c != nil {
		return c.Bytes()
	}
	return 0
}
