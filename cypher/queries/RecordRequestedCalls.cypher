// name: RecordRequestedCalls
// Records one model call of the generation path that asked for tool calls, in one
// statement: each call of $calls, in order, as RequestToolCall writes it (REQUESTED by the
// run at its branch's next seq, pending), then the call on its assembly and run as
// RecordModelCall records it, with no end: the run awaits its client's tools, so its step
// claim and its lease are released. Writes nothing and returns nothing when the run is not
// the account's, has already ended, or already has a call with one of the callIds (found
// by the tool_call_run_call index).
MATCH (r:ModelRun {id: $runId, accountId: $accountId})
MATCH (b:Branch {id: r.branchId, accountId: $accountId})
// The branch is locked before the run's status and calls are read (as in RequestToolCall
// and RecordModelCall), so that a write of either in another transaction commits first and
// is seen.
SET b._lock = true REMOVE b._lock
WITH r, b
WHERE r.status = 'running'
  AND none(row IN $calls WHERE EXISTS { MATCH (:ToolCall {runId: r.id, callId: row.callId}) })
CALL (r, b) {
  UNWIND $calls AS row
  CALL (r, b, row) {
    SET b.seq = b.seq + 1, b.rev = b.rev + 1
    WITH r, b, row, b.seq AS seq, b.rev AS rev
    CREATE (t:ToolCall {id: row.id, accountId: $accountId, conversationId: r.conversationId, branchId: b.id, seq: seq,
                        runId: r.id, participantId: r.participantId, callId: row.callId, tool: row.tool,
                        arguments: row.arguments, argumentsRef: row.argumentsRef, argumentsSha256: row.argumentsSha256,
                        argumentsBytes: row.argumentsBytes, baselineTokens: row.baselineTokens, status: 'pending', retryable: false, retryOf: null,
                        freshnessClass: row.freshnessClass, staleAfter: row.staleAfter, revalidateWith: row.revalidateWith,
                        retentionClass: row.retentionClass, retentionAfter: row.retentionAfter,
                        rev: rev, createdAt: row.createdAt, recordedAt: row.recordedAt})
    CREATE (r)-[:REQUESTED]->(t)
    RETURN t
  }
  RETURN collect(t) AS calls
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
RETURN calls
