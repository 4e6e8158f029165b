// name: RecordChain
// Records what one drop-in call leaves (DESIGN §9): its chain points (a point already
// recorded, by a try of the same list that failed, takes the new run and message) and its
// branch's new head. The branch is write-locked first, as every writer of it does. With
// $keyId, the call's answer is stored under its Idempotency-Key in the same statement, as
// CompleteIdempotencyKey stores it ($status, $body, naming $conversationId), and only while
// the request holds the key ($claim): the key is locked after the branch, and nothing is
// written and nothing returned when a retry has taken it over.
MATCH (b:Branch {id: $branchId, accountId: $accountId})
SET b._lock = true REMOVE b._lock
WITH b
// include: HeldKey
FOREACH (x IN CASE WHEN k IS NULL THEN [] ELSE [k] END |
  SET x.state = 'done', x.status = $status, x.body = $body, x.completedAt = $now, x.conversationId = $conversationId)
SET b.chainSha256 = $headSha256, b.chainLength = $headLength, b.chainMessageId = $headMessageId,
    b.chainRunId = $headRunId, b.chainAwaiting = $headAwaiting
WITH b
UNWIND $points AS p
MERGE (cp:ChainPoint {conversationId: b.conversationId, sha256: p.sha256, branchId: p.branchId})
  ON CREATE SET cp.accountId = $accountId, cp.length = p.length, cp.createdAt = $now
SET cp.messageId = p.messageId, cp.runId = p.runId, cp.request = p.request, cp.awaiting = p.awaiting
RETURN b.id AS branchId, count(cp) AS points
