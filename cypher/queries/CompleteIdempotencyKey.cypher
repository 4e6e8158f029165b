// name: CompleteIdempotencyKey
// Stores the first response of a keyed request, in the transaction of the write it answers,
// while the request still holds the key ($claim): returns nothing when a retry took it over,
// and the write then fails with it. conversationId, artifactId and recordId (an assembly,
// memory or report the response carries) name what the response carries data of, so that
// deleting them (or the bodies an assembly included raw) erases it.
MATCH (k:IdempotencyKey {id: $id, accountId: $accountId})
WHERE k.claim = $claim AND k.state = 'pending'
SET k.state = 'done', k.status = $status, k.body = $body, k.completedAt = $now,
    k.conversationId = $conversationId, k.artifactId = $artifactId, k.recordId = $recordId
RETURN k.id AS id
