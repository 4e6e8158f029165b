// name: ClaimRunStep
// Claims a run of the account for one model call, so that two continuations of the run
// never call the model at once, and writes the claimant's lease on it. The branch is locked
// before the run is read (as in RecordModelCall and EndLapsedRuns). A running run is free
// when no live lease holds it and no claim does, or its claim's lease lapsed (its server
// died), or a claim without a lease is older than $staleBefore; a claim of $claim is its own
// (a retried statement). A run that ended interrupted or database_unavailable (by what
// befell its server, not its model) is reopened: running again, its end and error removed,
// its interruptions counted. With $continuing (a continue's claim) the claim is taken only
// of a run the generation path started (it has made a model call, been interrupted, or is
// to be reopened) none of whose requested calls waits for a result; otherwise nothing is
// written. Returns, on the head row of what the assembler reads (ConversationRecords, for
// $participantId, the run's participant, and the run) since the revisions of its copy in
// $since ($since null reads the head only), as BeginTurn does, so that the step's first
// assembly reads nothing: the run as claimed (with the tools it offers, read under the
// lock; as it was when not claimed, with the lease that holds it), whether the claim was
// taken, whether the run was free (or reopened), and the ids of its requested calls that
// have no result, oldest first.
MATCH (r:ModelRun {id: $runId, accountId: $accountId})
MATCH (b:Branch {id: r.branchId})
SET b._lock = true REMOVE b._lock
WITH r, b, COLLECT {
       MATCH (r)-[:REQUESTED]->(t:ToolCall) WHERE NOT (t)-[:PRODUCED]->(:ToolArtifact)
       RETURN t.id ORDER BY t.seq
     } AS open,
     r.status = 'failed' AND r.errorCode IN ['interrupted', 'database_unavailable'] AS resumable
WITH r, b, open, resumable, resumable OR (r.status = 'running' AND (coalesce(r.stepClaim = $claim, false) OR
       (NOT coalesce(r.leaseUntil >= $now, false) AND
        (r.stepClaim IS NULL OR r.leaseUntil IS NOT NULL OR r.stepClaimedAt < $staleBefore)))) AS free
WITH r, b, open, resumable, free, free AND (NOT $continuing OR
       (size(open) = 0 AND (coalesce(r.modelCalls, 0) > 0 OR coalesce(r.interruptions, 0) > 0 OR resumable))) AS claimed
CALL (r, b, resumable, claimed) {
  WITH r, b WHERE resumable AND claimed
  SET b.rev = b.rev + 1
  SET r.status = 'running', r.rev = b.rev, r.interruptions = coalesce(r.interruptions, 0) + 1
  REMOVE r.endedAt, r.endRecordedAt, r.errorCode, r.errorMessage, r.providerStatus
}
CALL (r, claimed) {
  WITH r WHERE claimed
  SET r.stepClaim = $claim, r.stepClaimedAt = $now, r.leaseUntil = $leaseUntil, r.leaseHolder = $leaseHolder
}
WITH r, claimed, free, open
MATCH (cv:Conversation {id: r.conversationId, accountId: $accountId})
// include: ConversationChanges
RETURN kind, record, CASE kind WHEN 'head' THEN r END AS r, CASE kind WHEN 'head' THEN claimed END AS claimed,
       CASE kind WHEN 'head' THEN free END AS free, CASE kind WHEN 'head' THEN open END AS open
