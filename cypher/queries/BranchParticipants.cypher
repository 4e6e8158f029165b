// name: BranchParticipants
// The conversation a branch of the account belongs to, with its participants: what a
// generation on the branch resolves its participants against, in one read.
MATCH (b:Branch {id: $branchId, accountId: $accountId})
MATCH (c:Conversation {id: b.conversationId, accountId: $accountId})
WHERE c.deletedAt IS NULL
CALL (c) {
  OPTIONAL MATCH (c)-[:HAS_PARTICIPANT]->(pt:Participant)
  WITH pt ORDER BY pt.createdAt, pt.id
  RETURN collect(pt) AS participants
}
RETURN c.id AS conversationId, participants
