// name: EndUnrecordedRun
// Ends a run whose model call its server could not record because Neo4j was unavailable as
// failed with error code database_unavailable, releasing its step claim and lease, if it is
// still as that call left it: running with the call's step claim ($claim, empty for a
// turn's first call) or none left, or already ended interrupted by a sweep that came first
// (its lease lapsed during the outage: the error is corrected, its end kept); and in either
// case with $modelCalls model calls recorded and $interruptions reopenings, so that a run
// another call has claimed, reopened or recorded a call of since, or that ended otherwise,
// is left alone. The branch is locked before the run is read again (as in EndLapsedRuns),
// matched again after the lock. Returns the run's id when it ended it.
MATCH (seen:ModelRun {id: $runId, accountId: $accountId})
WHERE seen.status = 'running' OR seen.errorCode = 'interrupted'
MATCH (b:Branch {id: seen.branchId})
SET b._lock = true REMOVE b._lock
WITH b
MATCH (r:ModelRun {id: $runId})
WHERE coalesce(r.modelCalls, 0) = $modelCalls AND coalesce(r.interruptions, 0) = $interruptions AND
      (r.status = 'running' AND coalesce(r.stepClaim, $claim) = $claim OR r.status = 'failed' AND r.errorCode = 'interrupted')
SET b.rev = b.rev + 1
SET r.status = 'failed', r.errorCode = 'database_unavailable', r.errorMessage = $message, r.providerStatus = null,
    r.endedAt = coalesce(r.endedAt, $now), r.endRecordedAt = coalesce(r.endRecordedAt, $now), r.rev = b.rev
REMOVE r.stepClaim, r.stepClaimedAt, r.leaseUntil, r.leaseHolder
RETURN r.id AS id
