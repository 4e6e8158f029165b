// name: FinishScheduleTick
// Records how a claimed tick's turn went: on the tick, with a STARTED edge to each run of
// the turn, and on its schedule while the tick is still the schedule's last (a later tick
// may have been claimed while this one's turn ran).
MATCH (t:ScheduleTick {id: $tickId, accountId: $accountId})
SET t.status = $status, t.endedAt = $now, t.runIds = $runIds, t.userMessageId = $userMessageId,
    t.errorCode = $errorCode, t.errorMessage = $errorMessage
WITH t
CALL (t) {
  UNWIND $runIds AS runId
  MATCH (r:ModelRun {id: runId, accountId: t.accountId})
  MERGE (t)-[:STARTED]->(r)
}
WITH t
OPTIONAL MATCH (s:Schedule {id: t.scheduleId, accountId: t.accountId})
WHERE s.lastTickId = t.id
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END |
  SET s.lastStatus = $status, s.lastRunIds = $runIds, s.lastErrorCode = $errorCode,
      s.lastErrorMessage = $errorMessage)
RETURN t.id AS id
