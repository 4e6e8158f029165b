// name: RecordSkills
// Records the skills, profiles and direct tools visible to a run.
MATCH (r:ModelRun {id: $runId, accountId: $accountId})
MATCH (b:Branch {id: r.branchId, accountId: $accountId})
SET b.seq = b.seq + 1, b.rev = b.rev + 1
WITH r, b, b.seq AS seq, b.rev AS rev
CREATE (s:SkillState {id: $id, accountId: $accountId, conversationId: r.conversationId, branchId: b.id, seq: seq,
                      runId: r.id, loadedSkills: $loadedSkills, activeProfiles: $activeProfiles,
                      directTools: $directTools, rev: rev, createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (r)-[:HAD_SKILLS]->(s)
RETURN s
