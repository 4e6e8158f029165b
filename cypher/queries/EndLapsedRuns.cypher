// name: EndLapsedRuns
// Ends up to $limit running runs whose lease lapsed before $now (their server died mid-call)
// as failed with error code interrupted, releasing their step claims and leases; their
// requested tool calls stay as they are. Each run's branch is locked before its status and
// lease are read again, so that of two sweepers, or a sweeper and the run's own record or
// renewal, the later sees what the earlier wrote: a run is ended once, and never after it
// was renewed. The run is matched again after the lock: Neo4j keeps a property it read for
// the rest of the statement, so a check made again on the same variable would see the
// values from before the lock. Returns the ids of the runs it ended.
MATCH (lapsed:ModelRun)
WHERE lapsed.leaseUntil < $now AND lapsed.status = 'running'
WITH lapsed.id AS id, lapsed.branchId AS branchId LIMIT $limit
MATCH (b:Branch {id: branchId})
SET b._lock = true REMOVE b._lock
WITH b, id
MATCH (r:ModelRun {id: id})
WHERE r.status = 'running' AND r.leaseUntil < $now
SET b.rev = b.rev + 1
SET r.status = 'failed', r.errorCode = 'interrupted', r.errorMessage = $message, r.providerStatus = null,
    r.endedAt = $now, r.endRecordedAt = $now, r.rev = b.rev
REMOVE r.stepClaim, r.stepClaimedAt, r.leaseUntil, r.leaseHolder
RETURN r.id AS id
