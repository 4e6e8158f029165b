// name: FinishTurn
// The generation path's completed model call in one statement: the assistant message
// GENERATED_BY the run, replying to $parentMessageIds, and the call on its assembly and
// run, which ends with $status (as RecordModelCall records it). The run, its branch and
// participant, and the message it replies to are the serving server's own (the run it
// claimed and the message that triggered it), so no lineage is read. Returns nothing when
// the run is not the account's or has already ended.
MATCH (r:ModelRun {id: $runId, accountId: $accountId})
MATCH (b:Branch {id: r.branchId})
// The branch is locked before the run's status is read (as in FinishRun).
SET b._lock = true REMOVE b._lock
WITH r, b
WHERE r.status = 'running'
SET b.seq = b.seq + 1, b.rev = b.rev + 1
WITH r, b, b.seq AS seq, b.rev AS rev
CREATE (m:Message {id: $id, accountId: $accountId, conversationId: b.conversationId, branchId: b.id, seq: seq,
                   role: 'assistant', content: $content, participantId: r.participantId, runId: r.id,
                   parentMessageIds: $parentMessageIds, visibility: $visibility, baselineTokens: $baselineTokens,
                   rev: rev, createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (b)-[:HAS_MESSAGE]->(m)
CREATE (m)-[:GENERATED_BY]->(r)
WITH r, b, m
CALL (m) {
  UNWIND $parentMessageIds AS parentId
  MATCH (p:Message {id: parentId, accountId: $accountId})
  CREATE (m)-[:REPLIES_TO]->(p)
}
OPTIONAL MATCH (a:ContextAssembly {id: $assemblyId, accountId: $accountId})
SET a.requestSha256 = $requestSha256, a.requestBody = $requestBody
SET r.responseId = $responseId, r.responseModel = $responseModel, r.finishReason = $finishReason,
    r.inputTokens = $inputTokens, r.outputTokens = $outputTokens, r.latencyMs = $latencyMs,
    r.modelCalls = coalesce(r.modelCalls, 0) + 1, r.lastAssemblyId = coalesce($assemblyId, r.lastAssemblyId),
    r.policyVersion = coalesce($policyVersion, r.policyVersion),
    r.errorCode = null, r.errorMessage = null, r.providerStatus = null,
    r.tools = CASE WHEN $reoffer THEN $tools ELSE r.tools END,
    r.toolChoice = CASE WHEN $reoffer THEN $toolChoice ELSE r.toolChoice END
REMOVE r.stepClaim, r.stepClaimedAt, r.leaseUntil, r.leaseHolder
SET b.rev = b.rev + 1
SET r.status = $status, r.endedAt = $endedAt, r.endRecordedAt = $recordedAt, r.rev = b.rev
RETURN m
