// name: ClaimRunStep
// Claims a run of the account for one model call, so that two continuations of the run
// never call the model at once, and writes the claimant's lease on it. The branch is locked
// before the run is read (as in RecordModelCall and EndLapsedRuns). A running run is free
// when no live lease holds it and no claim does, or its claim's lease lapsed (its server
// died), or a claim without a lease is older than $staleBefore. A run that ended
// interrupted or database_unavailable (by what befell its server, not its model) is
// reopened: running again, its end and error removed, its interruptions counted. Returns the run as claimed (with the tools it offers, read under the lock; as it
// was when not claimed, with the lease that holds it) and whether the claim was taken, on
// the head row of what the assembler reads (ConversationRecords, for $participantId, the
// run's participant, and the run) since the revisions of its copy in $since ($since null
// reads the head only), as BeginTurn does: the step's first assembly then reads nothing.
MATCH (r:ModelRun {id: $runId, accountId: $accountId})
MATCH (b:Branch {id: r.branchId})
SET b._lock = true REMOVE b._lock
WITH r, b, r.status = 'failed' AND r.errorCode IN ['interrupted', 'database_unavailable'] AS reopen,
     r.status = 'running' AND NOT coalesce(r.leaseUntil >= $now, false) AND
       (r.stepClaim IS NULL OR r.leaseUntil IS NOT NULL OR r.stepClaimedAt < $staleBefore) AS free
CALL (r, b, reopen) {
  WITH r, b WHERE reopen
  SET b.rev = b.rev + 1
  SET r.status = 'running', r.rev = b.rev, r.interruptions = coalesce(r.interruptions, 0) + 1
  REMOVE r.endedAt, r.endRecordedAt, r.errorCode, r.errorMessage, r.providerStatus
}
WITH r, reopen OR free AS claimed
CALL (r, claimed) {
  WITH r WHERE claimed
  SET r.stepClaim = $claim, r.stepClaimedAt = $now, r.leaseUntil = $leaseUntil, r.leaseHolder = $leaseHolder
}
WITH r, claimed
MATCH (cv:Conversation {id: r.conversationId, accountId: $accountId})
// include: ConversationChanges
RETURN kind, record, CASE kind WHEN 'head' THEN r END AS r, CASE kind WHEN 'head' THEN claimed END AS claimed
