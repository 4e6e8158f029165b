// name: DeleteConversationBatch
// Deletes up to $limit more nodes recorded under a conversation that is marked deleted,
// with their relationships, and finally the conversation itself; returns how many nodes it
// deleted (0: nothing was left) and the blob references they held, to be removed after the
// commit unless another record shares them. Branches and participants were deleted when
// the conversation was marked; any that a write racing the mark left are deleted here too. Batches keep each transaction within Neo4j's transaction
// memory limit however long the conversation was. Assemblies go first, then their
// decisions: they hold most of the relationships (INCLUDED; CONSTRAINS, of which a decision
// shared by thousands of assemblies has thousands), and a decision, memory or message that
// thousands of assemblies named is cheap to delete once they are gone.
MATCH (c:Conversation {id: $id, accountId: $accountId})
WHERE c.deletedAt IS NOT NULL
CALL (c) {
  CALL (c) {
    MATCH (n:ContextAssembly {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:PolicyDecision {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:Message {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:ModelRun {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:ToolCall {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:ToolArtifact {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:ToolMemory {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:SkillState {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:Checkpoint {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:ScheduleTick {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:Schedule {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:ChainPoint {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:Branch {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:Participant {conversationId: c.id}) RETURN n
  }
  WITH n LIMIT $limit
  WITH n, [r IN [n.argsRef, n.resultRef, n.argumentsRef] WHERE r IS NOT NULL] AS held
  DETACH DELETE n
  RETURN count(*) AS deleted, reduce(all = [], refs IN collect(held) | all + refs) AS refs
}
CALL (c, deleted) {
  WITH c WHERE deleted = 0
  DETACH DELETE c
}
RETURN deleted, refs
