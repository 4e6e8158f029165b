// name: AccountRecords
// How many nodes of an account there are, by label: those under its conversations (by
// their conversationId) and the account's own (idempotency keys, policy versions, its
// default). For the answer of an account's erasure, counted before it.
CALL () {
  MATCH (c:Conversation {accountId: $accountId})
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
    UNION ALL WITH c RETURN c AS n
  }
  RETURN n
  UNION ALL MATCH (n:IdempotencyKey {accountId: $accountId}) RETURN n
  UNION ALL MATCH (n:PolicyVersion {accountId: $accountId}) RETURN n
  UNION ALL MATCH (n:PolicyDefault {accountId: $accountId}) RETURN n
}
WITH n WHERE n.accountId = $accountId
RETURN labels(n)[0] AS label, count(*) AS nodes
ORDER BY label
