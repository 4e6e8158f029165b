// name: ReleaseIdempotencyKey
// Frees a key whose request failed, so that a retry runs again.
MATCH (k:IdempotencyKey {id: $id, accountId: $accountId, state: 'pending'})
DELETE k
