// name: DefaultPolicy
// The id of an account's default policy version; nothing when it set none.
MATCH (d:PolicyDefault {accountId: $accountId})
RETURN d.policyVersion AS id
