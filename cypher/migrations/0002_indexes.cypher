// Indexes for account filtering, conversation deletion, lineage traversal (records of a
// branch in seq order), blob reference counting and child-run ownership.
CREATE INDEX conversation_account IF NOT EXISTS FOR (n:Conversation) ON (n.accountId);
CREATE INDEX branch_conversation IF NOT EXISTS FOR (n:Branch) ON (n.conversationId);
CREATE INDEX participant_conversation IF NOT EXISTS FOR (n:Participant) ON (n.conversationId);
CREATE INDEX message_conversation IF NOT EXISTS FOR (n:Message) ON (n.conversationId);
CREATE INDEX model_run_conversation IF NOT EXISTS FOR (n:ModelRun) ON (n.conversationId);
CREATE INDEX tool_call_conversation IF NOT EXISTS FOR (n:ToolCall) ON (n.conversationId);
CREATE INDEX tool_artifact_conversation IF NOT EXISTS FOR (n:ToolArtifact) ON (n.conversationId);
CREATE INDEX tool_memory_conversation IF NOT EXISTS FOR (n:ToolMemory) ON (n.conversationId);
CREATE INDEX user_memory_account IF NOT EXISTS FOR (n:UserMemory) ON (n.accountId);
CREATE INDEX skill_state_conversation IF NOT EXISTS FOR (n:SkillState) ON (n.conversationId);
CREATE INDEX checkpoint_conversation IF NOT EXISTS FOR (n:Checkpoint) ON (n.conversationId);
CREATE INDEX context_assembly_conversation IF NOT EXISTS FOR (n:ContextAssembly) ON (n.conversationId);
CREATE INDEX policy_decision_conversation IF NOT EXISTS FOR (n:PolicyDecision) ON (n.conversationId);
CREATE INDEX message_branch_seq IF NOT EXISTS FOR (n:Message) ON (n.branchId, n.seq);
CREATE INDEX model_run_branch_seq IF NOT EXISTS FOR (n:ModelRun) ON (n.branchId, n.seq);
CREATE INDEX tool_call_branch_seq IF NOT EXISTS FOR (n:ToolCall) ON (n.branchId, n.seq);
CREATE INDEX tool_artifact_branch_seq IF NOT EXISTS FOR (n:ToolArtifact) ON (n.branchId, n.seq);
CREATE INDEX tool_memory_branch_seq IF NOT EXISTS FOR (n:ToolMemory) ON (n.branchId, n.seq);
CREATE INDEX skill_state_branch_seq IF NOT EXISTS FOR (n:SkillState) ON (n.branchId, n.seq);
CREATE INDEX checkpoint_branch_seq IF NOT EXISTS FOR (n:Checkpoint) ON (n.branchId, n.seq);
CREATE INDEX tool_call_retry_of IF NOT EXISTS FOR (n:ToolCall) ON (n.retryOf);
CREATE INDEX tool_artifact_result_ref IF NOT EXISTS FOR (n:ToolArtifact) ON (n.resultRef);
CREATE INDEX tool_artifact_args_ref IF NOT EXISTS FOR (n:ToolArtifact) ON (n.argsRef);
CREATE INDEX tool_artifact_owner_run IF NOT EXISTS FOR (n:ToolArtifact) ON (n.ownerRunId);
CREATE INDEX tool_memory_owner_run IF NOT EXISTS FOR (n:ToolMemory) ON (n.ownerRunId);
CREATE INDEX idempotency_key_account IF NOT EXISTS FOR (n:IdempotencyKey) ON (n.accountId);
