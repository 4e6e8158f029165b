// part: ConversationChanges
// What the assembler reads of a conversation cv (included where a statement has it bound,
// by a line `// include: ConversationChanges`, and followed by the statement's RETURN of
// kind and record among what it carries): on every branch whose revision is above the one
// in $since (a map from branch id to revision; a branch missing from it is read in full;
// none when $since is null), the records written or changed since, each with what the
// policies need to judge it (and its element id, by which RecordAssembly links it: the
// parts <Kind>Records) and never a raw artifact body. One row per record (kind, record),
// and one row of kind "head": the conversation's branches with their fork points, seq
// counters and revisions, the count of its deletions (resetRev), its participants, the
// versions of the conversation's instructions, and the requesting participant
// ($participantId, with the versions of its instructions) and run ($runId).
// include: ConversationBranches
WITH *, [x IN branches WHERE $since IS NOT NULL AND x.rev > coalesce($since[x.id], -1) | {id: x.id, since: coalesce($since[x.id], -1)}] AS changed
CALL (cv, branches, changed) {
  // include: HeadRecord
  UNION ALL
  UNWIND changed AS x
  // include: RunRecords
  UNION ALL
  UNWIND changed AS x
  // include: MessageRecords
  UNION ALL
  UNWIND changed AS x
  // include: CallRecords
  UNION ALL
  UNWIND changed AS x
  // include: ArtifactRecords
  UNION ALL
  UNWIND changed AS x
  // include: MemoryRecords
  UNION ALL
  UNWIND changed AS x
  // include: CheckpointRecords
  UNION ALL
  UNWIND changed AS x
  // include: SkillsRecords
}
