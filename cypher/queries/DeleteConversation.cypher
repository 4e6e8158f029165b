// name: DeleteConversation
// Deletes a conversation and every node recorded under it, with their relationships.
MATCH (c:Conversation {id: $id, accountId: $accountId})
CALL (c) {
  MATCH (n:Branch {conversationId: c.id}) RETURN n
  UNION ALL MATCH (n:Participant {conversationId: c.id}) RETURN n
  UNION ALL MATCH (n:Message {conversationId: c.id}) RETURN n
  UNION ALL MATCH (n:ModelRun {conversationId: c.id}) RETURN n
  UNION ALL MATCH (n:ToolCall {conversationId: c.id}) RETURN n
  UNION ALL MATCH (n:ToolArtifact {conversationId: c.id}) RETURN n
  UNION ALL MATCH (n:ToolMemory {conversationId: c.id}) RETURN n
  UNION ALL MATCH (n:SkillState {conversationId: c.id}) RETURN n
  UNION ALL MATCH (n:Checkpoint {conversationId: c.id}) RETURN n
  UNION ALL MATCH (n:ContextAssembly {conversationId: c.id}) RETURN n
  UNION ALL MATCH (n:PolicyDecision {conversationId: c.id}) RETURN n
}
WITH c, collect(n) AS nodes
FOREACH (n IN nodes | DETACH DELETE n)
DETACH DELETE c
RETURN size(nodes) + 1 AS deleted
