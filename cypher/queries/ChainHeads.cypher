// name: ChainHeads
// The heads of a conversation's branches (of $branchId alone when it is set): where each
// branch's drop-in client list stands (DESIGN §9). A branch no list was reconciled with has
// no head; `empty` says it holds no message and inherits none, so a whole list may start on it.
MATCH (c:Conversation {id: $conversationId, accountId: $accountId})-[:HAS_BRANCH]->(b:Branch)
WHERE c.deletedAt IS NULL AND ($branchId = '' OR b.id = $branchId)
RETURN b.id AS branchId, coalesce(b.chainSha256, '') AS sha256, coalesce(b.chainLength, 0) AS length,
       coalesce(b.chainMessageId, '') AS messageId, coalesce(b.chainRunId, '') AS runId,
       coalesce(b.chainAwaiting, false) AS awaiting, b.seq = 0 AND NOT (b)-[:FORKED_FROM]->() AS empty
ORDER BY b.createdAt
