// name: RecordAssembly
// The record of one assembly, in one statement: the request it answered, what it sent (as
// JSON text for Browser readers), FOR_RUN to its run, INCLUDED {as, position} to every record
// it serialised, and its stored policy decisions (privacy, routing, freshness, rehydration
// and recovery): one PolicyDecision per distinct decision and record type, CONSTRAINS the
// assembly and ABOUT every record it was made for (also listed in its refs, for readers of
// the node alone). $included and $decisions group the records by type, so that each is
// found by one unique-index seek. (Window, budget, branch and other bulk omissions are
// counted on the assembly.)
MATCH (c:Conversation {id: $conversationId, accountId: $accountId})
CREATE (a:ContextAssembly {id: $id, accountId: $accountId, conversationId: c.id, branchId: $branchId,
                           participantId: $participantId, runId: $runId, runtimeKind: $runtimeKind,
                           provider: $provider, model: $model, tokenBudget: $tokenBudget,
                           exactArtifactIds: $exactArtifactIds, policyVersion: $policyVersion,
                           assemblerVersion: $assemblerVersion, now: $now, asOf: $asOf, trace: $trace,
                           assembledTokens: $assembledTokens, baselineTokens: $baselineTokens,
                           record: $record, createdAt: $recordedAt, recordedAt: $recordedAt})
WITH a
CALL (a) {
  MATCH (r:ModelRun {id: $runId, accountId: $accountId})
  CREATE (a)-[:FOR_RUN]->(r)
}
CALL (a) {
  UNWIND $included.message AS inc
  MATCH (n:Message {id: inc.ref, accountId: $accountId})
  CREATE (a)-[:INCLUDED {as: inc.as, position: inc.position}]->(n)
}
CALL (a) {
  UNWIND $included.memory AS inc
  MATCH (n:ToolMemory {id: inc.ref, accountId: $accountId})
  CREATE (a)-[:INCLUDED {as: inc.as, position: inc.position}]->(n)
}
CALL (a) {
  UNWIND $included.artifact AS inc
  MATCH (n:ToolArtifact {id: inc.ref, accountId: $accountId})
  CREATE (a)-[:INCLUDED {as: inc.as, position: inc.position}]->(n)
}
CALL (a) {
  UNWIND $included.tool_call AS inc
  MATCH (n:ToolCall {id: inc.ref, accountId: $accountId})
  CREATE (a)-[:INCLUDED {as: inc.as, position: inc.position}]->(n)
}
CALL (a) {
  UNWIND $included.checkpoint AS inc
  MATCH (n:Checkpoint {id: inc.ref, accountId: $accountId})
  CREATE (a)-[:INCLUDED {as: inc.as, position: inc.position}]->(n)
}
CALL (a) {
  UNWIND $included.skill_state AS inc
  MATCH (n:SkillState {id: inc.ref, accountId: $accountId})
  CREATE (a)-[:INCLUDED {as: inc.as, position: inc.position}]->(n)
}
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
