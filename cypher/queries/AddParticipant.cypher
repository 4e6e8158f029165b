// name: AddParticipant
// Adds a participant to a conversation.
MATCH (c:Conversation {id: $conversationId, accountId: $accountId})
CREATE (p:Participant {id: $id, accountId: $accountId, conversationId: c.id, kind: $kind, name: $name,
                       provider: $provider, model: $model, createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (c)-[:HAS_PARTICIPANT]->(p)
RETURN p
