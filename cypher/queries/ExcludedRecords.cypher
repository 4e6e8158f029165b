// name: ExcludedRecords
// For a traced assembly: the ids of the conversation's messages, tool calls, artifacts and
// memories that lie outside the lineage (sibling branches, or after a fork point).
CALL () {
  MATCH (n:Message {conversationId: $conversationId}) RETURN n
  UNION ALL MATCH (n:ToolCall {conversationId: $conversationId}) RETURN n
  UNION ALL MATCH (n:ToolArtifact {conversationId: $conversationId}) RETURN n
  UNION ALL MATCH (n:ToolMemory {conversationId: $conversationId}) RETURN n
}
WITH n
WHERE n.accountId = $accountId AND n.recordedAt <= $asOf
  AND NOT any(l IN $lineage WHERE l.branchId = n.branchId AND n.seq <= l.cutoff)
RETURN collect(n.id) AS ids
