// name: RecordPolicyDecisions
// The stored decisions of an assembly (privacy, routing, freshness, rehydration and
// recovery): one PolicyDecision per distinct decision and record type, CONSTRAINS the
// assembly and ABOUT every record it was made for (also listed in its refs, for readers of
// the node alone), grouped by the records' type so that each is found by one unique-index
// seek. (Window, budget, branch and other bulk omissions are counted on the assembly.)
MATCH (a:ContextAssembly {id: $assemblyId, accountId: $accountId})
CALL (a) {
  UNWIND $decisions.message AS dec
  CREATE (d:PolicyDecision {id: dec.id, accountId: $accountId, conversationId: a.conversationId, kind: dec.kind,
                            outcome: dec.outcome, as: dec.as, reason: dec.reason, rule: dec.rule,
                            policyVersion: $policyVersion, refs: dec.refs, createdAt: a.createdAt})
  CREATE (d)-[:CONSTRAINS]->(a)
  WITH d, dec
  UNWIND dec.refs AS ref
  MATCH (n:Message {id: ref, accountId: $accountId})
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.memory AS dec
  CREATE (d:PolicyDecision {id: dec.id, accountId: $accountId, conversationId: a.conversationId, kind: dec.kind,
                            outcome: dec.outcome, as: dec.as, reason: dec.reason, rule: dec.rule,
                            policyVersion: $policyVersion, refs: dec.refs, createdAt: a.createdAt})
  CREATE (d)-[:CONSTRAINS]->(a)
  WITH d, dec
  UNWIND dec.refs AS ref
  MATCH (n:ToolMemory {id: ref, accountId: $accountId})
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.artifact AS dec
  CREATE (d:PolicyDecision {id: dec.id, accountId: $accountId, conversationId: a.conversationId, kind: dec.kind,
                            outcome: dec.outcome, as: dec.as, reason: dec.reason, rule: dec.rule,
                            policyVersion: $policyVersion, refs: dec.refs, createdAt: a.createdAt})
  CREATE (d)-[:CONSTRAINS]->(a)
  WITH d, dec
  UNWIND dec.refs AS ref
  MATCH (n:ToolArtifact {id: ref, accountId: $accountId})
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.tool_call AS dec
  CREATE (d:PolicyDecision {id: dec.id, accountId: $accountId, conversationId: a.conversationId, kind: dec.kind,
                            outcome: dec.outcome, as: dec.as, reason: dec.reason, rule: dec.rule,
                            policyVersion: $policyVersion, refs: dec.refs, createdAt: a.createdAt})
  CREATE (d)-[:CONSTRAINS]->(a)
  WITH d, dec
  UNWIND dec.refs AS ref
  MATCH (n:ToolCall {id: ref, accountId: $accountId})
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.checkpoint AS dec
  CREATE (d:PolicyDecision {id: dec.id, accountId: $accountId, conversationId: a.conversationId, kind: dec.kind,
                            outcome: dec.outcome, as: dec.as, reason: dec.reason, rule: dec.rule,
                            policyVersion: $policyVersion, refs: dec.refs, createdAt: a.createdAt})
  CREATE (d)-[:CONSTRAINS]->(a)
  WITH d, dec
  UNWIND dec.refs AS ref
  MATCH (n:Checkpoint {id: ref, accountId: $accountId})
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.skill_state AS dec
  CREATE (d:PolicyDecision {id: dec.id, accountId: $accountId, conversationId: a.conversationId, kind: dec.kind,
                            outcome: dec.outcome, as: dec.as, reason: dec.reason, rule: dec.rule,
                            policyVersion: $policyVersion, refs: dec.refs, createdAt: a.createdAt})
  CREATE (d)-[:CONSTRAINS]->(a)
  WITH d, dec
  UNWIND dec.refs AS ref
  MATCH (n:SkillState {id: ref, accountId: $accountId})
  CREATE (d)-[:ABOUT]->(n)
}
RETURN a.id AS id
