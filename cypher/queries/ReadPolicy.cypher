// name: ReadPolicy
// One stored policy version of an account, by its id.
MATCH (p:PolicyVersion {accountId: $accountId, id: $id})
RETURN p
