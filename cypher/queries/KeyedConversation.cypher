// name: KeyedConversation
// Finds the conversation a drop-in client's stable key names (DESIGN §9), or creates it
// with its root branch `main` as CreateConversation does. The MERGE runs under the
// uniqueness constraint on (accountId, clientKey), so two first uses at once find one
// conversation. A deleted conversation gave up its key when it was marked. Nothing is found
// or created for an erased account (AccountErasure): no row.
OPTIONAL MATCH (erased:AccountErasure {accountId: $accountId})
WITH erased WHERE erased IS NULL
MERGE (c:Conversation {accountId: $accountId, clientKey: $key})
  ON CREATE SET c.id = $id, c.title = $title, c.rootBranchId = $branchId, c.resetRev = 0,
                c.instructions = $instructions,
                c.instructionsTexts = CASE WHEN $instructions = '' THEN null ELSE [$instructions] END,
                c.instructionsAts = CASE WHEN $instructions = '' THEN null ELSE [$recordedAt] END,
                c.createdAt = $createdAt, c.recordedAt = $recordedAt
WITH c, c.id = $id AS created
CALL (c, created) {
  WITH c WHERE created
  CREATE (b:Branch {id: $branchId, accountId: $accountId, conversationId: c.id, name: 'main', seq: 0, rev: 0,
                    createdAt: $createdAt, recordedAt: $recordedAt})
  CREATE (c)-[:HAS_BRANCH]->(b)
}
RETURN c.id AS id
