// Uniqueness of `id` for every label of DESIGN §2, plus the store's own bookkeeping labels.
CREATE CONSTRAINT conversation_id IF NOT EXISTS FOR (n:Conversation) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT branch_id IF NOT EXISTS FOR (n:Branch) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT participant_id IF NOT EXISTS FOR (n:Participant) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT message_id IF NOT EXISTS FOR (n:Message) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT model_run_id IF NOT EXISTS FOR (n:ModelRun) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT tool_call_id IF NOT EXISTS FOR (n:ToolCall) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT tool_artifact_id IF NOT EXISTS FOR (n:ToolArtifact) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT tool_memory_id IF NOT EXISTS FOR (n:ToolMemory) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT user_memory_id IF NOT EXISTS FOR (n:UserMemory) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT skill_state_id IF NOT EXISTS FOR (n:SkillState) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT checkpoint_id IF NOT EXISTS FOR (n:Checkpoint) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT context_assembly_id IF NOT EXISTS FOR (n:ContextAssembly) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT policy_decision_id IF NOT EXISTS FOR (n:PolicyDecision) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT idempotency_key_id IF NOT EXISTS FOR (n:IdempotencyKey) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT schema_migration_id IF NOT EXISTS FOR (n:SchemaMigration) REQUIRE n.id IS UNIQUE;
