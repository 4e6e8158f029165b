// name: RecordSkills
// Records the skills, profiles and direct tools visible to a run.
MATCH (r:ModelRun {id: $runId, accountId: $accountId})
MATCH (b:Branch {id: r.branchId, accountId: $accountId})
SET b.seq = b.seq + 1
WITH r, b, b.seq AS seq
CREATE (s:SkillState {id: $id, accountId: $accountId, conversationId: r.conversationId, branchId: b.id, seq: seq,
                      runId: r.id, loadedSkills: $loadedSkills, activeProfiles: $activeProfiles,
                      directTools: $directTools, createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (r)-[:HAD_SKILLS]->(s)
RETURN s
