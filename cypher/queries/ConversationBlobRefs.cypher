// name: ConversationBlobRefs
// The blob references held by a conversation's artifacts and tool calls, read before the
// conversation is deleted so that unshared blobs can be removed after the commit.
MATCH (c:Conversation {id: $id, accountId: $accountId})
CALL (c) {
  MATCH (a:ToolArtifact {conversationId: c.id})
  RETURN [r IN [a.argsRef, a.resultRef] WHERE r IS NOT NULL] AS refs
  UNION ALL
  MATCH (t:ToolCall {conversationId: c.id})
  WHERE t.argumentsRef IS NOT NULL
  RETURN [t.argumentsRef] AS refs
}
UNWIND refs AS ref
RETURN collect(DISTINCT ref) AS refs
