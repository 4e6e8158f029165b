// name: ProvenancePath
// Every provenance path from a record to the participant behind it: memory → artifact →
// tool call → run → participant (or the shorter paths of calls, messages, checkpoints and
// skill states). A record with no path at all answers itself alone. An artifact whose body
// went by retention is named 'redacted' (DESIGN §10).
CALL () {
  MATCH p = (:ToolMemory {id: $ref, accountId: $accountId})-[:DERIVED_FROM]->(:ToolArtifact)<-[:PRODUCED]-(:ToolCall)<-[:REQUESTED]-(:ModelRun)-[:BY]->(:Participant)
  RETURN p
  UNION MATCH p = (:ToolArtifact {id: $ref, accountId: $accountId})<-[:PRODUCED]-(:ToolCall)<-[:REQUESTED]-(:ModelRun)-[:BY]->(:Participant)
  RETURN p
  UNION MATCH p = (:ToolCall {id: $ref, accountId: $accountId})<-[:REQUESTED]-(:ModelRun)-[:BY]->(:Participant)
  RETURN p
  UNION MATCH p = (:Message {id: $ref, accountId: $accountId})-[:GENERATED_BY]->(:ModelRun)-[:BY]->(:Participant)
  RETURN p
  UNION MATCH p = (:Checkpoint {id: $ref, accountId: $accountId})<-[:CHECKPOINTED]-(:ModelRun)-[:BY]->(:Participant)
  RETURN p
  UNION MATCH p = (:SkillState {id: $ref, accountId: $accountId})<-[:HAD_SKILLS]-(:ModelRun)-[:BY]->(:Participant)
  RETURN p
  UNION MATCH p = (:Message {id: $ref, accountId: $accountId})
  RETURN p
  UNION MATCH p = (:ToolMemory {id: $ref, accountId: $accountId})
  RETURN p
  UNION MATCH p = (:ToolArtifact {id: $ref, accountId: $accountId})
  RETURN p
  UNION MATCH p = (:ToolCall {id: $ref, accountId: $accountId})
  RETURN p
  UNION MATCH p = (:Checkpoint {id: $ref, accountId: $accountId})
  RETURN p
  UNION MATCH p = (:SkillState {id: $ref, accountId: $accountId})
  RETURN p
}
RETURN [n IN nodes(p) | {type: labels(n)[0], id: n.id,
        name: CASE WHEN n:ToolArtifact AND n.redactedAt IS NOT NULL THEN 'redacted' ELSE n.name END,
        sources: n.sourceArtifactIds, locators: n.provenanceLocators}] AS steps
ORDER BY size(steps) DESC
