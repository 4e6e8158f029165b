// name: ReleaseRunStep
// Releases a run's step claim if it is still the given one.
MATCH (r:ModelRun {id: $runId, accountId: $accountId})
WHERE r.stepClaim = $claim
REMOVE r.stepClaim, r.stepClaimedAt
