// name: ReleaseRunStep
// Releases a run's step claim, and the lease that came with it, if it is still the given
// one.
MATCH (r:ModelRun {id: $runId, accountId: $accountId})
WHERE r.stepClaim = $claim
REMOVE r.stepClaim, r.stepClaimedAt, r.leaseUntil, r.leaseHolder
