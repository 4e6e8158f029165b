// name: WholeCalls
// The tool calls of the branches in $branches, for a whole read of a conversation: its head
// (ConversationHead), then the Whole* statements at once, so that Neo4j projects them on as
// many threads; each its own statement, so that each plan is small (rows:
// parts/RecordBatches.cypher).
// include: AccountBranches
CALL (branches) {
  UNWIND branches AS x
  // include: CallRecords
}
// include: RecordBatches
