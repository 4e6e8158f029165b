// name: MarkAccountErased
// Records that an account is erased (DESIGN §10), once: from then on the writes that create
// an account's first records find it and write nothing, and every server refuses the
// account's requests. Returns when it was erased (the first time asked).
MERGE (e:AccountErasure {accountId: $accountId})
  ON CREATE SET e.erasedAt = $now
RETURN e.erasedAt AS erasedAt
