// name: ReleaseIdempotencyKey
// Frees a key whose request failed, so that a retry runs again; only while that request
// still holds it. A generation's key that holds the turn it began (RecordKeyedTurn) is not
// deleted but lapses now ($now): the retry takes it over and completes that turn, instead
// of writing its user message and runs a second time.
MATCH (k:IdempotencyKey {id: $id, accountId: $accountId, state: 'pending'})
WHERE k.claim = $claim
FOREACH (_ IN CASE WHEN k.runIds IS NOT NULL THEN [1] ELSE [] END | SET k.staleAt = $now)
FOREACH (_ IN CASE WHEN k.runIds IS NULL THEN [1] ELSE [] END | DELETE k)
