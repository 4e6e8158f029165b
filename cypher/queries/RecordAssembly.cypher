// name: RecordAssembly
// The record of one assembly: the request it answered, what it sent (as JSON text for
// Browser readers), FOR_RUN to its run and INCLUDED {as, position} to every record it
// serialised ($included groups them by type, so each is found by one unique-index seek).
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
RETURN a.id AS id
