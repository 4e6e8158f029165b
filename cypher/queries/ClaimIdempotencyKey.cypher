// name: ClaimIdempotencyKey
// Reserves an idempotency key, or returns the record that already holds it.
MERGE (k:IdempotencyKey {id: $id})
  ON CREATE SET k.accountId = $accountId, k.requestHash = $requestHash, k.state = 'pending',
                k.createdAt = $now, k.claim = $claim
RETURN k
