// GET /v1/conversations lists an account's conversations newest first.
CREATE INDEX conversation_account_created IF NOT EXISTS FOR (n:Conversation) ON (n.accountId, n.createdAt);
