// name: ReadConversation
// A conversation with its branches (and where each forked) and its participants.
MATCH (c:Conversation {id: $id, accountId: $accountId})
WHERE c.deletedAt IS NULL
CALL (c) {
  OPTIONAL MATCH (c)-[:HAS_BRANCH]->(b:Branch)
  OPTIONAL MATCH (b)-[f:FORKED_FROM]->(p:Branch)
  WITH b, f, p ORDER BY b.createdAt, b.id
  RETURN collect(CASE WHEN b IS NULL THEN null ELSE
    {branch: b, parentBranchId: p.id, afterSeq: f.afterSeq, afterMessageId: f.afterMessageId} END) AS branches
}
CALL (c) {
  OPTIONAL MATCH (c)-[:HAS_PARTICIPANT]->(pt:Participant)
  WITH pt ORDER BY pt.createdAt, pt.id
  RETURN collect(pt) AS participants
}
RETURN c, branches, participants
