// name: RootBranch
// Starts a branch of a conversation that inherits no message, for a drop-in list that
// shares nothing with the conversation's; a branch of that name that is already a root
// (a retry's) is returned instead. The conversation is write-locked before its deletion
// mark is checked, as AddParticipant does.
MATCH (c:Conversation {id: $conversationId, accountId: $accountId})
SET c._lock = true REMOVE c._lock
WITH c WHERE c.deletedAt IS NULL
OPTIONAL MATCH (c)-[:HAS_BRANCH]->(existing:Branch {name: $name})
WHERE NOT (existing)-[:FORKED_FROM]->()
CALL (c, existing) {
  WITH c WHERE existing IS NULL
  CREATE (b:Branch {id: $id, accountId: $accountId, conversationId: c.id, name: $name, seq: 0, rev: 0,
                    createdAt: $createdAt, recordedAt: $recordedAt})
  CREATE (c)-[:HAS_BRANCH]->(b)
  RETURN b AS created
}
RETURN coalesce(existing, created) AS b
