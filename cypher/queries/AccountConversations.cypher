// name: AccountConversations
// The ids of every conversation of an account, deleted ones included, at most $limit.
MATCH (c:Conversation {accountId: $accountId})
RETURN c.id AS id
LIMIT $limit
