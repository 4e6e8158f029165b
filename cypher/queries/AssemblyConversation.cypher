// name: AssemblyConversation
// The conversation an assembly of the account belongs to.
MATCH (a:ContextAssembly {id: $id, accountId: $accountId})
RETURN a.conversationId AS conversationId
