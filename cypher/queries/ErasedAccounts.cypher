// name: ErasedAccounts
// Every erased account, for the servers' refusal of their requests.
MATCH (e:AccountErasure)
RETURN e.accountId AS accountId, e.erasedAt AS erasedAt
