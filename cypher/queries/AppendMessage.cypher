// name: AppendMessage
// Appends a message at the branch's next seq, with REPLIES_TO edges to its parents and
// GENERATED_BY to the run that produced it.
MATCH (b:Branch {id: $branchId, accountId: $accountId})
SET b.seq = b.seq + 1, b.rev = b.rev + 1
WITH b, b.seq AS seq, b.rev AS rev
CREATE (m:Message {id: $id, accountId: $accountId, conversationId: b.conversationId, branchId: b.id, seq: seq,
                   role: $role, content: $content, participantId: $participantId, runId: $runId,
                   parentMessageIds: $parentMessageIds, visibility: $visibility, baselineTokens: $baselineTokens,
                   rev: rev, createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (b)-[:HAS_MESSAGE]->(m)
WITH m
CALL (m) {
  UNWIND $parentMessageIds AS parentId
  MATCH (p:Message {id: parentId, accountId: $accountId})
  CREATE (m)-[:REPLIES_TO]->(p)
}
CALL (m) {
  MATCH (r:ModelRun {id: $runId, accountId: $accountId})
  CREATE (m)-[:GENERATED_BY]->(r)
}
RETURN m
