// name: ClaimIdempotencyKey
// Reserves an idempotency key, or returns the record that already holds it. A claim left
// pending past $staleBefore (its request died before it wrote or released anything) is
// taken over by a retry of the same request.
MERGE (k:IdempotencyKey {id: $id})
  ON CREATE SET k.accountId = $accountId, k.requestHash = $requestHash, k.state = 'pending',
                k.createdAt = $now, k.claim = $claim
WITH k, k.state = 'pending' AND k.requestHash = $requestHash AND k.createdAt < $staleBefore AS stale
SET k.claim = CASE WHEN stale THEN $claim ELSE k.claim END,
    k.createdAt = CASE WHEN stale THEN $now ELSE k.createdAt END
RETURN k
