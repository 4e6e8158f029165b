// name: ClaimIdempotencyKey
// Reserves an idempotency key, or returns the record that already holds it. A claim holds
// until its staleAt, which its claimant chose to outlast its request; one left pending past
// it (its request died before it wrote or released anything) is taken over by a retry of
// the same request, which holds it until its own $staleAt. A generation's claim holds as
// long as its server renews it (RenewLeases); the turn it began (userMessageId, runIds,
// RecordKeyedTurn) stays on the key for the retry that takes it over. (A claim written before claims
// carried staleAt holds for two minutes from createdAt.) No row for an erased account.
OPTIONAL MATCH (erased:AccountErasure {accountId: $accountId})
WITH erased WHERE erased IS NULL
MERGE (k:IdempotencyKey {id: $id})
  ON CREATE SET k.accountId = $accountId, k.requestHash = $requestHash, k.state = 'pending',
                k.createdAt = $now, k.staleAt = $staleAt, k.claim = $claim
WITH k, k.state = 'pending' AND k.requestHash = $requestHash AND
        coalesce(k.staleAt, k.createdAt + duration({minutes: 2})) < $now AS stale
SET k.claim = CASE WHEN stale THEN $claim ELSE k.claim END,
    k.createdAt = CASE WHEN stale THEN $now ELSE k.createdAt END,
    k.staleAt = CASE WHEN stale THEN $staleAt ELSE k.staleAt END
RETURN k
