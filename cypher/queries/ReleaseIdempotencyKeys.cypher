// name: ReleaseIdempotencyKeys
// Frees, as ReleaseIdempotencyKey does, the keys of many failed requests at once: the
// releases that Neo4j did not answer while it was away, made together once it is back
// ($ids, $accountIds and $claims, pairwise). A key that holds a begun turn lapses ($now).
UNWIND range(0, size($ids) - 1) AS i
MATCH (k:IdempotencyKey {id: $ids[i], accountId: $accountIds[i], state: 'pending'})
WHERE k.claim = $claims[i]
FOREACH (_ IN CASE WHEN k.runIds IS NOT NULL THEN [1] ELSE [] END | SET k.staleAt = $now)
FOREACH (_ IN CASE WHEN k.runIds IS NULL THEN [1] ELSE [] END | DELETE k)
