// name: LatestLineageMessage
// The latest message of a lineage: the default parent of a new message. Each branch's is
// read from the (branchId, seq) index in descending order and cut at the first: the order on
// both of the index's properties is what lets the planner take the index's own order instead
// of sorting every message of the branch, so the read stays a few rows at any length of
// history (TestStepStatementsDoNotGrowWithHistory).
UNWIND $lineage AS l
CALL (l) {
  MATCH (m:Message)
  WHERE m.branchId = l.branchId AND m.seq <= l.cutoff
  RETURN m ORDER BY m.branchId DESC, m.seq DESC LIMIT 1
}
WITH l, m WHERE m.accountId = $accountId
RETURN m.id AS id
ORDER BY l.depth ASC
LIMIT 1
