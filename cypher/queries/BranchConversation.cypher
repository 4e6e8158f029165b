// name: BranchConversation
// The conversation a branch of the account belongs to.
MATCH (b:Branch {id: $branchId, accountId: $accountId})
RETURN b.conversationId AS conversationId
