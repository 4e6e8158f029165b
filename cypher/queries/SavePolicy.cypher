// name: SavePolicy
// Stores a policy version of an account unless the account holds that id already: a
// version is immutable, so the stored one is kept as it is. created is true only for the
// call that wrote it (its createdAt is this call's $now). Nothing for an erased account.
OPTIONAL MATCH (erased:AccountErasure {accountId: $accountId})
WITH erased WHERE erased IS NULL
MERGE (p:PolicyVersion {accountId: $accountId, id: $id})
  ON CREATE SET p.name = $name, p.definition = $definition, p.origin = $origin, p.createdAt = $now
RETURN p, p.createdAt = $now AS created
