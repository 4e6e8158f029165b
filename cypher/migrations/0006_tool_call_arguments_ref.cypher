// Deleting an artifact or a conversation frees a blob only when no record still holds it
// (UnreferencedBlobRefs): for tool calls, an index seek per reference instead of reading
// every call of every account.
CREATE INDEX tool_call_arguments_ref IF NOT EXISTS FOR (n:ToolCall) ON (n.argumentsRef);
