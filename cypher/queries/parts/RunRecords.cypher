// part: RunRecords
// What the assembler reads of a run (ConversationChanges, Whole*): for each x that the
// including statement unwinds (a branch's id, and the revision after which it is read), a
// row ('run', record) per record of the branch written or changed since.
MATCH (r:ModelRun {branchId: x.id}) WHERE r.rev > x.since
RETURN 'run' AS kind, r {.id, .rev, .parentRunId, .status, .endedAt, .endRecordedAt} AS record
