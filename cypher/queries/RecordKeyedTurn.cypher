// name: RecordKeyedTurn
// Keeps under a generation request's Idempotency-Key, in the transaction that begins its
// turn, the turn's user message and runs, while the request still holds the key ($claim):
// a retry that takes the key over once the request was interrupted completes this turn
// instead of writing it again. Returns nothing when a retry has taken the key over.
MATCH (k:IdempotencyKey {id: $id, accountId: $accountId})
WHERE k.claim = $claim AND k.state = 'pending'
SET k.userMessageId = $userMessageId, k.runIds = $runIds
RETURN k.id AS id
