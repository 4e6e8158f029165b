// name: RecordPolicyDecisions
// One PolicyDecision per privacy, freshness, rehydration, routing, recovery, visibility,
// supersession or provenance decision of an assembly, CONSTRAINS the assembly and ABOUT the
// record it judged. (Window, budget and branch omissions are counted on the assembly.)
MATCH (a:ContextAssembly {id: $assemblyId, accountId: $accountId})
UNWIND $decisions AS dec
CREATE (d:PolicyDecision {id: dec.id, accountId: $accountId, conversationId: a.conversationId, kind: dec.kind,
                          outcome: dec.outcome, as: dec.as, reason: dec.reason, rule: dec.rule,
                          policyVersion: $policyVersion, ref: dec.ref, createdAt: a.createdAt})
CREATE (d)-[:CONSTRAINS]->(a)
WITH d, dec
CALL (d, dec) {
  CALL (dec) {
    MATCH (n:Message {id: dec.ref}) WHERE dec.type = 'message' RETURN n
    UNION MATCH (n:ToolMemory {id: dec.ref}) WHERE dec.type = 'memory' RETURN n
    UNION MATCH (n:ToolArtifact {id: dec.ref}) WHERE dec.type = 'artifact' RETURN n
    UNION MATCH (n:ToolCall {id: dec.ref}) WHERE dec.type = 'tool_call' RETURN n
    UNION MATCH (n:Checkpoint {id: dec.ref}) WHERE dec.type = 'checkpoint' RETURN n
    UNION MATCH (n:SkillState {id: dec.ref}) WHERE dec.type = 'skill_state' RETURN n
  }
  WITH d, n WHERE n.accountId = $accountId
  CREATE (d)-[:ABOUT]->(n)
}
RETURN count(d) AS decisions
