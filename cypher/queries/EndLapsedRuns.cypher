// name: EndLapsedRuns
// Ends up to $limit running runs whose lease lapsed before $now (their server died mid-call)
// as failed with error code interrupted, releasing their step claims and leases; their
// requested tool calls stay as they are. Each run's branch is locked before its status and
// lease are read again, so that of two sweepers, or a sweeper and the run's own record or
// renewal, the later sees what the earlier wrote: a run is ended once, and never after it
// was renewed. Returns the ids of the runs it ended.
MATCH (r:ModelRun)
WHERE r.leaseUntil < $now AND r.status = 'running'
WITH r LIMIT $limit
MATCH (b:Branch {id: r.branchId})
SET b._lock = true REMOVE b._lock
WITH r, b
WHERE r.status = 'running' AND r.leaseUntil < $now
SET b.rev = b.rev + 1
SET r.status = 'failed', r.errorCode = 'interrupted', r.errorMessage = $message, r.providerStatus = null,
    r.endedAt = $now, r.endRecordedAt = $now, r.rev = b.rev
REMOVE r.stepClaim, r.stepClaimedAt, r.leaseUntil, r.leaseHolder
RETURN r.id AS id
