// name: SetDefaultPolicy
// Makes a stored policy version the account's default. Returns nothing when the account
// holds no version of that id.
MATCH (p:PolicyVersion {accountId: $accountId, id: $id})
MERGE (d:PolicyDefault {accountId: $accountId})
SET d.policyVersion = p.id, d.updatedAt = $now
RETURN d.policyVersion AS id
