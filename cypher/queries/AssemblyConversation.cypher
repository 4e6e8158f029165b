// name: AssemblyConversation
// The conversation an assembly of the account belongs to.
MATCH (a:ContextAssembly {id: $id, accountId: $accountId})
WHERE EXISTS { MATCH (cv:Conversation {id: a.conversationId}) WHERE cv.deletedAt IS NULL }
RETURN a.conversationId AS conversationId
