// part: HeldKey
// A write under a request's Idempotency-Key (included after a statement has write-locked
// its branch b and carries b alone): the key $keyId of the account is locked after the
// branch, and the statement goes on, with b and k (null without $keyId), only while the
// request holds the key ($claim, still pending); otherwise it has no row left, writes
// nothing more and returns nothing.
OPTIONAL MATCH (k:IdempotencyKey {id: $keyId, accountId: $accountId})
CALL (k) {
  WITH k WHERE k IS NOT NULL
  SET k._lock = true REMOVE k._lock
}
WITH b, k
WHERE $keyId IS NULL OR (k.claim = $claim AND k.state = 'pending')
