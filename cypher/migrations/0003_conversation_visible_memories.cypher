// Conversation-visible memories of other branches, found without scanning every memory of
// the conversation.
CREATE INDEX tool_memory_conversation_visibility IF NOT EXISTS FOR (n:ToolMemory) ON (n.conversationId, n.visibility);
