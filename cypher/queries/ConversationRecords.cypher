// name: ConversationRecords
// The assembler's read of a conversation (the branch's, parts/ConversationChanges.cypher):
// the records changed since the revisions in $since, and the head; the lineage is selected
// from them in Go. A row per record keeps every Bolt message the size of one record: a
// whole history collected into one row makes one message of the history's size, which the
// driver reassembles chunk by chunk in a buffer it grows by each chunk (quadratic in the
// history) and then keeps for the connection.
MATCH (b:Branch {id: $branchId, accountId: $accountId})
MATCH (cv:Conversation {id: b.conversationId, accountId: $accountId})
// include: ConversationChanges
RETURN kind, record
