// name: DeleteAccountBatch
// Deletes up to $limit of an erased account's own nodes (idempotency keys, policy versions,
// its default): what its conversations' deletions leave. Returns how many it deleted.
MATCH (:AccountErasure {accountId: $accountId})
CALL () {
  MATCH (n:IdempotencyKey {accountId: $accountId}) RETURN n
  UNION ALL MATCH (n:PolicyVersion {accountId: $accountId}) RETURN n
  UNION ALL MATCH (n:PolicyDefault {accountId: $accountId}) RETURN n
}
WITH n LIMIT $limit
DETACH DELETE n
RETURN count(*) AS deleted
