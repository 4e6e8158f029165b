// part: CheckpointRecords
// What the assembler reads of a checkpoint (ConversationChanges, Whole*): for each x that
// the including statement unwinds (a branch's id, and the revision after which it is read),
// a row ('checkpoint', record) per record of the branch written or changed since.
MATCH (c:Checkpoint {branchId: x.id}) WHERE c.rev > x.since
RETURN 'checkpoint' AS kind, c {.id, eid: elementId(c), .branchId, .seq, .rev, .runId, .state, .createdAt, .recordedAt} AS record
