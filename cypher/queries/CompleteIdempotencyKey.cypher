// name: CompleteIdempotencyKey
// Stores the first response of a keyed request.
MATCH (k:IdempotencyKey {id: $id, accountId: $accountId})
SET k.state = 'done', k.status = $status, k.body = $body, k.completedAt = $now
