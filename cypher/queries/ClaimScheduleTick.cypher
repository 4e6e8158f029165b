// name: ClaimScheduleTick
// Claims a due tick of a schedule for one process, once across every process sharing the
// graph. The schedule is locked first, so that claims of one schedule queue and each reads
// the nextRunAt the one before it left: a tick before it was claimed already or passed over
// (of ticks missed while no server ran, only the latest fires). The tick's node is keyed by
// the schedule's id and the tick's time under a uniqueness constraint, so a tick is one node
// however many processes MERGE it, and only the claim that created it wins. The winner moves
// the schedule on to $nextRunAt and prunes a few of its ticks older than $pruneBefore. A
// retry of a claim that committed with its answer lost finds its own tick and wins again.
// Returns the schedule and whether this claim won; nothing when the schedule is gone.
MATCH (s:Schedule {id: $scheduleId, accountId: $accountId})
SET s._lock = true
REMOVE s._lock
WITH s
OPTIONAL MATCH (mine:ScheduleTick {id: $tickId})
WHERE mine.claim = $claim
WITH s, mine
WHERE mine IS NOT NULL OR (s.enabled AND s.nextRunAt IS NOT NULL AND s.nextRunAt <= $tickAt)
MERGE (t:ScheduleTick {id: $tickId})
  ON CREATE SET t.accountId = s.accountId, t.conversationId = s.conversationId, t.scheduleId = s.id,
                t.tickAt = $tickAt, t.claimedAt = $now, t.claimedBy = $claimant, t.claim = $claim,
                t.status = 'running', t.runIds = []
WITH s, t, t.claim = $claim AS won
CALL (s, t, won) {
  WITH s, t
  WHERE won
  MERGE (s)-[:HAS_TICK]->(t)
  SET s.nextRunAt = $nextRunAt, s.lastRunAt = $now, s.lastStatus = 'running', s.lastRunIds = [],
      s.lastTickId = t.id
  REMOVE s.lastErrorCode, s.lastErrorMessage
}
CALL (s, won) {
  WITH s
  WHERE won
  MATCH (old:ScheduleTick {scheduleId: s.id})
  WHERE old.tickAt < $pruneBefore
  WITH old
  LIMIT 8
  DETACH DELETE old
}
RETURN s, won
