// name: FinishRun
// Ends a running run; returns nothing when the run has already ended.
MATCH (r:ModelRun {id: $id, accountId: $accountId})
MATCH (b:Branch {id: r.branchId})
// The branch is locked before the run's status is read, so that another end of the run being
// written in another transaction commits first and is seen (as in RecordToolResult).
SET b._lock = true REMOVE b._lock
WITH r, b
WHERE r.status = 'running'
SET b.rev = b.rev + 1
SET r.status = $status, r.endedAt = $endedAt, r.endRecordedAt = $recordedAt, r.rev = b.rev
// An ended run holds no lease: no sweeper reads it again (EndLapsedRuns).
REMOVE r.leaseUntil, r.leaseHolder
RETURN r
