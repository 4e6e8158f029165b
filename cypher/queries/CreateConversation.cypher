// name: CreateConversation
// Creates a conversation and its root branch `main`.
CREATE (c:Conversation {id: $id, accountId: $accountId, title: $title, rootBranchId: $branchId, resetRev: 0,
                        createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (b:Branch {id: $branchId, accountId: $accountId, conversationId: $id, name: 'main', seq: 0, rev: 0,
                  createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (c)-[:HAS_BRANCH]->(b)
RETURN c, b
