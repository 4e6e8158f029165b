// name: AccountPolicies
// The policy versions an account created (not the embedded ones it stored by using them),
// the oldest first.
MATCH (p:PolicyVersion {accountId: $accountId})
WHERE p.origin = $origin
RETURN p
ORDER BY p.createdAt, p.id
