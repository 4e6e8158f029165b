// name: RecordAssembly
// The record of one assembly, in one statement: the request it answered, what it sent (as
// JSON text for Browser readers), FOR_RUN to its run, INCLUDED {as, position} to every record
// it serialised, and its stored policy decisions (privacy, routing, freshness, rehydration
// and recovery): one PolicyDecision per distinct decision and record type, ABOUT every
// record it was made for (also listed in its refs, for readers of the node alone), that
// CONSTRAINS every assembly it was made for. Its id is derived from its content, so an
// assembly whose decision was made before links the existing node (MERGE: concurrent
// assemblies agree on one) instead of writing it and its ABOUT edges again;
// firstAssemblyId names the assembly that wrote it. (Window, budget, branch and other bulk
// omissions are counted on the assembly.)
// $included lists the records by element id (as the assembler read them), each checked to
// still be the record of that id and account: an element id is found without an index seek
// or the lock a seek takes in a write (linking 200 records took about 15 % less of Neo4j's
// CPU; docs/performance.md). The id is compared as toString(n.id) so that the planner keeps
// the element-id seek instead of the id index. $decisions groups the records by type, so that
// each is found by one unique-index seek.
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
  UNWIND $included AS inc
  MATCH (n) WHERE elementId(n) = inc.eid
  WITH a, n, inc WHERE n.accountId = $accountId AND toString(n.id) = inc.ref
  CREATE (a)-[:INCLUDED {as: inc.as, position: inc.position}]->(n)
}
CALL (a) {
  UNWIND $decisions.message AS dec
  MERGE (d:PolicyDecision {id: dec.id, accountId: $accountId})
    ON CREATE SET d += {conversationId: a.conversationId, kind: dec.kind, outcome: dec.outcome, as: dec.as,
                        reason: dec.reason, rule: dec.rule, policyVersion: $policyVersion, refs: dec.refs,
                        firstAssemblyId: a.id, createdAt: a.createdAt}
  CREATE (d)-[:CONSTRAINS]->(a)
  WITH d, dec WHERE d.firstAssemblyId = $id
  UNWIND dec.refs AS ref
  MATCH (n:Message {id: ref, accountId: $accountId})
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.memory AS dec
  MERGE (d:PolicyDecision {id: dec.id, accountId: $accountId})
    ON CREATE SET d += {conversationId: a.conversationId, kind: dec.kind, outcome: dec.outcome, as: dec.as,
                        reason: dec.reason, rule: dec.rule, policyVersion: $policyVersion, refs: dec.refs,
                        firstAssemblyId: a.id, createdAt: a.createdAt}
  CREATE (d)-[:CONSTRAINS]->(a)
  WITH d, dec WHERE d.firstAssemblyId = $id
  UNWIND dec.refs AS ref
  MATCH (n:ToolMemory {id: ref, accountId: $accountId})
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.artifact AS dec
  MERGE (d:PolicyDecision {id: dec.id, accountId: $accountId})
    ON CREATE SET d += {conversationId: a.conversationId, kind: dec.kind, outcome: dec.outcome, as: dec.as,
                        reason: dec.reason, rule: dec.rule, policyVersion: $policyVersion, refs: dec.refs,
                        firstAssemblyId: a.id, createdAt: a.createdAt}
  CREATE (d)-[:CONSTRAINS]->(a)
  WITH d, dec WHERE d.firstAssemblyId = $id
  UNWIND dec.refs AS ref
  MATCH (n:ToolArtifact {id: ref, accountId: $accountId})
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.tool_call AS dec
  MERGE (d:PolicyDecision {id: dec.id, accountId: $accountId})
    ON CREATE SET d += {conversationId: a.conversationId, kind: dec.kind, outcome: dec.outcome, as: dec.as,
                        reason: dec.reason, rule: dec.rule, policyVersion: $policyVersion, refs: dec.refs,
                        firstAssemblyId: a.id, createdAt: a.createdAt}
  CREATE (d)-[:CONSTRAINS]->(a)
  WITH d, dec WHERE d.firstAssemblyId = $id
  UNWIND dec.refs AS ref
  MATCH (n:ToolCall {id: ref, accountId: $accountId})
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.checkpoint AS dec
  MERGE (d:PolicyDecision {id: dec.id, accountId: $accountId})
    ON CREATE SET d += {conversationId: a.conversationId, kind: dec.kind, outcome: dec.outcome, as: dec.as,
                        reason: dec.reason, rule: dec.rule, policyVersion: $policyVersion, refs: dec.refs,
                        firstAssemblyId: a.id, createdAt: a.createdAt}
  CREATE (d)-[:CONSTRAINS]->(a)
  WITH d, dec WHERE d.firstAssemblyId = $id
  UNWIND dec.refs AS ref
  MATCH (n:Checkpoint {id: ref, accountId: $accountId})
  CREATE (d)-[:ABOUT]->(n)
}
CALL (a) {
  UNWIND $decisions.skill_state AS dec
  MERGE (d:PolicyDecision {id: dec.id, accountId: $accountId})
    ON CREATE SET d += {conversationId: a.conversationId, kind: dec.kind, outcome: dec.outcome, as: dec.as,
                        reason: dec.reason, rule: dec.rule, policyVersion: $policyVersion, refs: dec.refs,
                        firstAssemblyId: a.id, createdAt: a.createdAt}
  CREATE (d)-[:CONSTRAINS]->(a)
  WITH d, dec WHERE d.firstAssemblyId = $id
  UNWIND dec.refs AS ref
  MATCH (n:SkillState {id: ref, accountId: $accountId})
  CREATE (d)-[:ABOUT]->(n)
}
RETURN a.id AS id
