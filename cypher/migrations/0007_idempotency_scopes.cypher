// Deleting a conversation or an artifact erases the stored idempotent responses that carry
// its data (MarkConversationDeleted, DeleteArtifact): an index seek instead of reading every
// key of every account.
CREATE INDEX idempotency_key_conversation IF NOT EXISTS FOR (k:IdempotencyKey) ON (k.conversationId);
CREATE INDEX idempotency_key_artifact IF NOT EXISTS FOR (k:IdempotencyKey) ON (k.artifactId);
