// part: MemoryRecords
// What the assembler reads of a memory (ConversationChanges, Whole*): for each x that the
// including statement unwinds (a branch's id, and the revision after which it is read), a
// row ('memory', record) per record of the branch written or changed since, with its
// sources and its supersession and conflict edges.
MATCH (m:ToolMemory {branchId: x.id}) WHERE m.rev > x.since
RETURN 'memory' AS kind, m {.id, eid: elementId(m), .branchId, .seq, .rev, .kind, .summary, .safeSummary, .data, .confidence, .privacyClass,
                            .freshnessClass, .observedAt, .staleAfter, .revalidateWith, .sourceArtifactIds, .visibility,
                            .ownerParticipantId, .ownerRunId, .createdAt, .recordedAt, .promotedAt, .quotesWhole,
                            sharedWith: m.sharedWithParticipants, promotedTo: m.promotedToParticipantId,
                            liveSources: [(m)-[:DERIVED_FROM]->(src:ToolArtifact) | src.id],
                            redactedSources: [(m)-[:DERIVED_FROM]->(src:ToolArtifact) WHERE src.redactedAt IS NOT NULL | src.id],
                            supersedes: [(m)-[:SUPERSEDES]->(o:ToolMemory) | o.id],
                            conflictsWith: [(m)-[:CONFLICTS_WITH]-(o:ToolMemory) | o.id]} AS record
