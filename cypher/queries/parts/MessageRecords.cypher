// part: MessageRecords
// What the assembler reads of a message (ConversationChanges, Whole*): for each x that the
// including statement unwinds (a branch's id, and the revision after which it is read), a
// row ('message', record) per record of the branch written or changed since.
MATCH (m:Message {branchId: x.id}) WHERE m.rev > x.since
RETURN 'message' AS kind, m {.id, eid: elementId(m), .branchId, .seq, .rev, .role, .participantId, .runId, .visibility, .createdAt,
                             .recordedAt, .content, .baselineTokens} AS record
