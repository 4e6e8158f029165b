// name: ConversationSchedules
// A conversation's schedules, oldest first; nothing when the conversation is unknown or
// deleted.
MATCH (c:Conversation {id: $conversationId, accountId: $accountId})
WHERE c.deletedAt IS NULL
OPTIONAL MATCH (c)-[:HAS_SCHEDULE]->(s:Schedule)
WITH c, s
ORDER BY s.createdAt, s.id
RETURN c.id AS id, collect(s) AS schedules
