// part: ArtifactRecords
// What the assembler reads of a tool artifact (ConversationChanges, Whole*): for each x
// that the including statement unwinds (a branch's id, and the revision after which it is
// read), a row ('artifact', record) per record of the branch written or changed since,
// never its raw body.
MATCH (a:ToolArtifact {branchId: x.id}) WHERE a.rev > x.since
RETURN 'artifact' AS kind, a {.id, eid: elementId(a), .branchId, .seq, .rev, .toolCallId, .tool, .status, .privacyClass, .visibility,
                              .ownerParticipantId, .ownerRunId, .resultBytes, .argsBytes, .createdAt, .recordedAt,
                              .errorCode, .errorMessage, .retryable, .promotedAt, .baselineTokens,
                              redacted: a.redactedAt IS NOT NULL,
                              sharedWith: a.sharedWithParticipants, promotedTo: a.promotedToParticipantId} AS record
