// name: ExpiredArtifacts
// The artifacts whose bodies are due to go by retention at $now (DESIGN §10), the earliest
// first, at most $limit: each is then redacted or deleted under its own account
// (RedactArtifact, EraseArtifact).
MATCH (a:ToolArtifact)
WHERE a.retainUntil <= $now
RETURN a.accountId AS accountId, a.id AS id, a.retentionClass AS class
ORDER BY a.retainUntil
LIMIT $limit
