// name: FinishRun
// Ends a running run; returns nothing when the run has already ended.
MATCH (r:ModelRun {id: $id, accountId: $accountId})
WHERE r.status = 'running'
MATCH (b:Branch {id: r.branchId})
SET b.rev = b.rev + 1
SET r.status = $status, r.endedAt = $endedAt, r.endRecordedAt = $recordedAt, r.rev = b.rev
RETURN r
