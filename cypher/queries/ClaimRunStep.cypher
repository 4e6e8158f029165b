// name: ClaimRunStep
// Claims a running run of the account for one model call, so that two continuations of
// the run never call the model at once: the run is locked before its claim is read, and a
// claim older than $staleBefore (a server that died mid-call) is taken over. Returns the
// run as claimed (with the tools it offers, read under the lock) and whether the claim was
// taken.
MATCH (r:ModelRun {id: $runId, accountId: $accountId})
SET r._lock = true REMOVE r._lock
WITH r, r.status = 'running' AND (r.stepClaim IS NULL OR r.stepClaimedAt < $staleBefore) AS free
CALL (r, free) {
  WITH r WHERE free
  SET r.stepClaim = $claim, r.stepClaimedAt = $now
}
RETURN r, free AS claimed
