// Branch revisions: every write increments the revision (rev) of the branch it writes on and
// stamps the nodes it creates or changes with the new value, so the assembler brings its
// cached copy of a conversation up to date with one index seek per label and changed branch
// (rev above the one it holds). Deletions, which cannot be stamped, increment
// Conversation.resetRev instead. Records written before this migration get rev 0.
CREATE INDEX message_branch_rev IF NOT EXISTS FOR (n:Message) ON (n.branchId, n.rev);
CREATE INDEX model_run_branch_rev IF NOT EXISTS FOR (n:ModelRun) ON (n.branchId, n.rev);
CREATE INDEX tool_call_branch_rev IF NOT EXISTS FOR (n:ToolCall) ON (n.branchId, n.rev);
CREATE INDEX tool_artifact_branch_rev IF NOT EXISTS FOR (n:ToolArtifact) ON (n.branchId, n.rev);
CREATE INDEX tool_memory_branch_rev IF NOT EXISTS FOR (n:ToolMemory) ON (n.branchId, n.rev);
CREATE INDEX skill_state_branch_rev IF NOT EXISTS FOR (n:SkillState) ON (n.branchId, n.rev);
CREATE INDEX checkpoint_branch_rev IF NOT EXISTS FOR (n:Checkpoint) ON (n.branchId, n.rev);
MATCH (c:Conversation) WHERE c.resetRev IS NULL CALL (c) { SET c.resetRev = 0 } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:Branch) WHERE n.rev IS NULL CALL (n) { SET n.rev = 0 } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:Message) WHERE n.rev IS NULL CALL (n) { SET n.rev = 0 } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:ModelRun) WHERE n.rev IS NULL CALL (n) { SET n.rev = 0 } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:ToolCall) WHERE n.rev IS NULL CALL (n) { SET n.rev = 0 } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:ToolArtifact) WHERE n.rev IS NULL CALL (n) { SET n.rev = 0 } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:ToolMemory) WHERE n.rev IS NULL CALL (n) { SET n.rev = 0 } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:SkillState) WHERE n.rev IS NULL CALL (n) { SET n.rev = 0 } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:Checkpoint) WHERE n.rev IS NULL CALL (n) { SET n.rev = 0 } IN TRANSACTIONS OF 10000 ROWS;
