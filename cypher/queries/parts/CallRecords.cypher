// part: CallRecords
// What the assembler reads of a tool call (ConversationChanges, Whole*): for each x that
// the including statement unwinds (a branch's id, and the revision after which it is read),
// a row ('call', record) per record of the branch written or changed since.
MATCH (t:ToolCall {branchId: x.id}) WHERE t.rev > x.since
RETURN 'call' AS kind, t {.id, eid: elementId(t), .branchId, .seq, .rev, .tool, .callId, .retryOf, .createdAt, .recordedAt, .arguments,
                          .argumentsRef, .argumentsSha256, .runId, .participantId, .baselineTokens} AS record
