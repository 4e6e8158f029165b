// name: ReleaseIdempotencyKey
// Frees a key whose request failed, so that a retry runs again; only while that request
// still holds it.
MATCH (k:IdempotencyKey {id: $id, accountId: $accountId, state: 'pending'})
WHERE k.claim = $claim
DELETE k
