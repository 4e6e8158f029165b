// name: CreateConversation
// Creates a conversation and its root branch `main`. Its instructions, when it has any, are
// also its first version of them (instructionsTexts, instructionsAts: each text with when
// it was recorded), which assemblies read as of their asOf. Nothing is created for an
// erased account (AccountErasure): no row.
OPTIONAL MATCH (erased:AccountErasure {accountId: $accountId})
WITH erased WHERE erased IS NULL
CREATE (c:Conversation {id: $id, accountId: $accountId, title: $title, rootBranchId: $branchId, resetRev: 0,
                        instructions: $instructions,
                        instructionsTexts: CASE WHEN $instructions = '' THEN null ELSE [$instructions] END,
                        instructionsAts: CASE WHEN $instructions = '' THEN null ELSE [$recordedAt] END,
                        createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (b:Branch {id: $branchId, accountId: $accountId, conversationId: $id, name: 'main', seq: 0, rev: 0,
                  createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (c)-[:HAS_BRANCH]->(b)
RETURN c, b
