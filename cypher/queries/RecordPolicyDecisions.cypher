// name: RecordPolicyDecisions
// One PolicyDecision per privacy, freshness, rehydration, routing, recovery, visibility,
// supersession or provenance decision of an assembly, CONSTRAINS the assembly and ABOUT the
// record it judged, grouped by the record's type. (Window, budget and branch omissions are
// counted on the assembly.)
MATCH (a:ContextAssembly {id: $assemblyId, accountId: $accountId})
CALL (a) {
  UNWIND $decisions.message AS dec
  MATCH (n:Message {id: dec.ref, accountId: $accountId})
  CREATE (d:PolicyDecision {id: dec.id, accountId: $accountId, conversationId: a.conversationId, kind: dec.kind,
                            outcome: dec.outcome, as: dec.as, reason: dec.reason, rule: dec.rule,
                            policyVersion: $policyVersion, ref: dec.ref, createdAt: a.createdAt})
  CREATE (d)-[:CONSTRAINS]->(a)
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.memory AS dec
  MATCH (n:ToolMemory {id: dec.ref, accountId: $accountId})
  CREATE (d:PolicyDecision {id: dec.id, accountId: $accountId, conversationId: a.conversationId, kind: dec.kind,
                            outcome: dec.outcome, as: dec.as, reason: dec.reason, rule: dec.rule,
                            policyVersion: $policyVersion, ref: dec.ref, createdAt: a.createdAt})
  CREATE (d)-[:CONSTRAINS]->(a)
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.artifact AS dec
  MATCH (n:ToolArtifact {id: dec.ref, accountId: $accountId})
  CREATE (d:PolicyDecision {id: dec.id, accountId: $accountId, conversationId: a.conversationId, kind: dec.kind,
                            outcome: dec.outcome, as: dec.as, reason: dec.reason, rule: dec.rule,
                            policyVersion: $policyVersion, ref: dec.ref, createdAt: a.createdAt})
  CREATE (d)-[:CONSTRAINS]->(a)
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.tool_call AS dec
  MATCH (n:ToolCall {id: dec.ref, accountId: $accountId})
  CREATE (d:PolicyDecision {id: dec.id, accountId: $accountId, conversationId: a.conversationId, kind: dec.kind,
                            outcome: dec.outcome, as: dec.as, reason: dec.reason, rule: dec.rule,
                            policyVersion: $policyVersion, ref: dec.ref, createdAt: a.createdAt})
  CREATE (d)-[:CONSTRAINS]->(a)
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.checkpoint AS dec
  MATCH (n:Checkpoint {id: dec.ref, accountId: $accountId})
  CREATE (d:PolicyDecision {id: dec.id, accountId: $accountId, conversationId: a.conversationId, kind: dec.kind,
                            outcome: dec.outcome, as: dec.as, reason: dec.reason, rule: dec.rule,
                            policyVersion: $policyVersion, ref: dec.ref, createdAt: a.createdAt})
  CREATE (d)-[:CONSTRAINS]->(a)
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.skill_state AS dec
  MATCH (n:SkillState {id: dec.ref, accountId: $accountId})
  CREATE (d:PolicyDecision {id: dec.id, accountId: $accountId, conversationId: a.conversationId, kind: dec.kind,
                            outcome: dec.outcome, as: dec.as, reason: dec.reason, rule: dec.rule,
                            policyVersion: $policyVersion, ref: dec.ref, createdAt: a.createdAt})
  CREATE (d)-[:CONSTRAINS]->(a)
  CREATE (d)-[:ABOUT]->(n)
}
RETURN a.id AS id
