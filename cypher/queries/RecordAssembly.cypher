// name: RecordAssembly
// The record of one assembly: the request it answered, what it sent (as JSON text for
// Browser readers), FOR_RUN to its run and INCLUDED {as} to every record it serialised.
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
  CALL (inc) {
    MATCH (n:Message {id: inc.ref}) WHERE inc.type = 'message' RETURN n
    UNION MATCH (n:ToolMemory {id: inc.ref}) WHERE inc.type = 'memory' RETURN n
    UNION MATCH (n:ToolArtifact {id: inc.ref}) WHERE inc.type = 'artifact' RETURN n
    UNION MATCH (n:ToolCall {id: inc.ref}) WHERE inc.type = 'tool_call' RETURN n
    UNION MATCH (n:Checkpoint {id: inc.ref}) WHERE inc.type = 'checkpoint' RETURN n
    UNION MATCH (n:SkillState {id: inc.ref}) WHERE inc.type = 'skill_state' RETURN n
  }
  WITH a, inc, n WHERE n.accountId = $accountId
  CREATE (a)-[:INCLUDED {as: inc.as, position: inc.position}]->(n)
}
RETURN a.id AS id
