// part: SkillsRecords
// What the assembler reads of a skill state (ConversationChanges, Whole*): for each x that
// the including statement unwinds (a branch's id, and the revision after which it is read),
// a row ('skills', record) per record of the branch written or changed since.
MATCH (s:SkillState {branchId: x.id}) WHERE s.rev > x.since
RETURN 'skills' AS kind, s {.id, eid: elementId(s), .branchId, .seq, .rev, .runId, .loadedSkills, .activeProfiles, .directTools, .createdAt,
                            .recordedAt} AS record
