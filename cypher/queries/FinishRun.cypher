// name: FinishRun
// Ends a running run; returns nothing when the run has already ended.
MATCH (r:ModelRun {id: $id, accountId: $accountId})
WHERE r.status = 'running'
SET r.status = $status, r.endedAt = $endedAt, r.endRecordedAt = $recordedAt
RETURN r
