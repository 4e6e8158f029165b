// name: RecordModelCall
// Records one model call of the generation path: on its assembly the exact request body
// sent to the provider and its sha256 (the body goes with the full record when it is trimmed), on the run what the provider answered (response id,
// model, finish reason, usage, latency, error) and, when $status is set, the run's end.
// When $reoffer is set, the call's request named other tools or another tool choice: the
// run keeps them for its later calls ($tools null offers none). It releases the run's step
// claim (ClaimRunStep) and its lease, unless $keepLease (another call of the step follows
// under the same lease). Returns nothing when the run is not the account's or has already
// ended.
MATCH (r:ModelRun {id: $runId, accountId: $accountId})
MATCH (b:Branch {id: r.branchId})
// The branch is locked before the run's status is read (as in FinishRun).
SET b._lock = true REMOVE b._lock
WITH r, b
WHERE r.status = 'running'
OPTIONAL MATCH (a:ContextAssembly {id: $assemblyId, accountId: $accountId})
SET a.requestSha256 = $requestSha256, a.requestBody = $requestBody
SET r.responseId = $responseId, r.responseModel = $responseModel, r.finishReason = $finishReason,
    r.inputTokens = $inputTokens, r.outputTokens = $outputTokens, r.latencyMs = $latencyMs,
    r.modelCalls = coalesce(r.modelCalls, 0) + 1, r.lastAssemblyId = coalesce($assemblyId, r.lastAssemblyId),
    r.policyVersion = coalesce($policyVersion, r.policyVersion),
    r.errorCode = $errorCode, r.errorMessage = $errorMessage, r.providerStatus = $providerStatus,
    r.tools = CASE WHEN $reoffer THEN $tools ELSE r.tools END,
    r.toolChoice = CASE WHEN $reoffer THEN $toolChoice ELSE r.toolChoice END
REMOVE r.stepClaim, r.stepClaimedAt
WITH r, b
CALL (r) {
  WITH r WHERE NOT $keepLease OR $status IS NOT NULL
  REMOVE r.leaseUntil, r.leaseHolder
}
CALL (r, b) {
  WITH r, b WHERE $status IS NOT NULL
  SET b.rev = b.rev + 1
  SET r.status = $status, r.endedAt = $endedAt, r.endRecordedAt = $recordedAt, r.rev = b.rev
}
RETURN r
