// name: ConversationHead
// The head of a branch's conversation alone (parts/HeadRecord.cypher): the first
// statement of a whole read of the conversation, whose records the Whole* statements then
// read. Nothing for a branch that is not the account's.
MATCH (b:Branch {id: $branchId, accountId: $accountId})
MATCH (cv:Conversation {id: b.conversationId, accountId: $accountId})
// include: ConversationBranches
CALL (cv, branches) {
  // include: HeadRecord
}
RETURN kind, record
