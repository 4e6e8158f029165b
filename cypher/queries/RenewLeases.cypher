// name: RenewLeases
// Extends to $until the leases a server holds: on each of $runIds still running under its
// lease ($holder), and on each generation request's Idempotency-Key claim still pending
// ($keyIds with $keyClaims, pairwise), whose hold ends when its lease would. Each node is
// locked before it is checked, so that a write ending the run or answering the key, which
// commits while the renewal waits on its lock, is seen and the lease not put back.
CALL () {
  UNWIND $runIds AS id
  MATCH (r:ModelRun {id: id})
  SET r._lock = true REMOVE r._lock
  WITH r
  WHERE r.leaseHolder = $holder AND r.status = 'running' AND r.leaseUntil IS NOT NULL
  SET r.leaseUntil = $until
}
CALL () {
  UNWIND range(0, size($keyIds) - 1) AS i
  MATCH (k:IdempotencyKey {id: $keyIds[i]})
  SET k._lock = true REMOVE k._lock
  WITH k, i
  WHERE k.claim = $keyClaims[i] AND k.state = 'pending'
  SET k.staleAt = $until
}
