// Artifacts whose bodies go by retention (DESIGN §10) are found by when they go, and the
// stored responses that carry an assembly's record, a memory or a report by its id.
CREATE INDEX tool_artifact_retain_until IF NOT EXISTS FOR (n:ToolArtifact) ON (n.retainUntil);
CREATE INDEX idempotency_key_record IF NOT EXISTS FOR (k:IdempotencyKey) ON (k.recordId);
