// name: ConversationByKey
// The conversation a drop-in client's stable key names, if it has been made: a read, so
// that a thread's later calls find it without a write.
MATCH (c:Conversation {accountId: $accountId, clientKey: $key})
WHERE c.deletedAt IS NULL
RETURN c.id AS id
