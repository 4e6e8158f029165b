// name: AddParticipant
// Adds a participant to a conversation. Its instructions, when it has any, are also its first
// version of them, as CreateConversation keeps a conversation's.
// The conversation is write-locked before its deletion mark is checked, so that a deletion
// racing the write either comes first (nothing is written) or waits for it.
MATCH (c:Conversation {id: $conversationId, accountId: $accountId})
SET c._lock = true REMOVE c._lock
WITH c WHERE c.deletedAt IS NULL
CREATE (p:Participant {id: $id, accountId: $accountId, conversationId: c.id, kind: $kind, name: $name,
                       provider: $provider, model: $model, instructions: $instructions,
                       instructionsTexts: CASE WHEN $instructions = '' THEN null ELSE [$instructions] END,
                       instructionsAts: CASE WHEN $instructions = '' THEN null ELSE [$recordedAt] END,
                       createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (c)-[:HAS_PARTICIPANT]->(p)
RETURN p
