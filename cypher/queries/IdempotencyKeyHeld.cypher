// name: IdempotencyKeyHeld
// Whether a request still holds its Idempotency-Key ($claim, pending): asked after a
// statement that writes only while it does wrote nothing, to say why.
MATCH (k:IdempotencyKey {id: $id, accountId: $accountId})
RETURN k.claim = $claim AND k.state = 'pending' AS held
