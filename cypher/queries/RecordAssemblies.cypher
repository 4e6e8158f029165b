// name: RecordAssemblies
// The records of one or more assemblies of one account, in one statement: each entry of
// $assemblies is written as one assembly was before batching (recordBatcher in assemblies.go writes the
// assemblies that waited while the previous batch committed together, because the
// relationships they add to the same included records and decisions cost Neo4j far less in
// one transaction than in concurrent ones that wait on each other's locks). Returns the ids
// written; an entry whose conversation is not found (deleted, or not its account's) writes
// nothing and returns no id.
// Each assembly: the request it answered, what it sent (as JSON text for Browser readers),
// FOR_RUN to its run, INCLUDED {as, position} to every record it serialised, and its stored
// policy decisions (privacy, routing, freshness, rehydration and recovery): one
// PolicyDecision per distinct decision and record type, ABOUT every record it was made for
// (also listed in its refs, for readers of the node alone), that CONSTRAINS every assembly
// it was made for. A decision's id is derived from its content, so an assembly whose
// decision was made before (earlier, or earlier in the same batch) links the existing node
// (MERGE: concurrent assemblies agree on one) instead of writing it and its ABOUT edges
// again; firstAssemblyId names the assembly that wrote it. (Window, budget, branch and other
// bulk omissions are counted on the assembly.)
// included lists the records by element id (as the assembler read them), each checked to
// still be the record of that id and account: an element id is found without an index seek
// or the lock a seek takes in a write (linking 200 records took about 15 % less of Neo4j's
// CPU; docs/performance.md). The id is compared as toString(n.id) so that the planner keeps
// the element-id seek instead of the id index. decisions groups the records by type, so that
// each is found by one unique-index seek.
UNWIND $assemblies AS asm
CALL (asm) {
  MATCH (c:Conversation {id: asm.conversationId, accountId: $accountId})
  CREATE (a:ContextAssembly {id: asm.id, accountId: $accountId, conversationId: c.id, branchId: asm.branchId,
                             participantId: asm.participantId, runId: asm.runId, runtimeKind: asm.runtimeKind,
                             provider: asm.provider, model: asm.model, tokenBudget: asm.tokenBudget,
                             exactArtifactIds: asm.exactArtifactIds, policyVersion: asm.policyVersion,
                             assemblerVersion: asm.assemblerVersion, now: asm.now, asOf: asm.asOf, trace: asm.trace,
                             assembledTokens: asm.assembledTokens, baselineTokens: asm.baselineTokens,
                             record: asm.record, createdAt: asm.recordedAt, recordedAt: asm.recordedAt})
  WITH a, asm
  CALL (a, asm) {
    MATCH (r:ModelRun {id: asm.runId, accountId: $accountId})
    CREATE (a)-[:FOR_RUN]->(r)
  }
  CALL (a, asm) {
    UNWIND asm.included AS inc
    MATCH (n) WHERE elementId(n) = inc.eid
    WITH a, asm, n, inc WHERE n.accountId = $accountId AND toString(n.id) = inc.ref
    CREATE (a)-[:INCLUDED {as: inc.as, position: inc.position}]->(n)
  }
  CALL (a, asm) {
    UNWIND asm.decisions.message AS dec
    MERGE (d:PolicyDecision {id: dec.id, accountId: $accountId})
      ON CREATE SET d += {conversationId: a.conversationId, kind: dec.kind, outcome: dec.outcome, as: dec.as,
                          reason: dec.reason, rule: dec.rule, policyVersion: asm.policyVersion, refs: dec.refs,
                          firstAssemblyId: a.id, createdAt: a.createdAt}
    CREATE (d)-[:CONSTRAINS]->(a)
    WITH d, dec, asm WHERE d.firstAssemblyId = asm.id
    UNWIND dec.refs AS ref
    MATCH (n:Message {id: ref, accountId: $accountId})
    CREATE (d)-[:ABOUT]->(n)
  }
  CALL (a, asm) {
    UNWIND asm.decisions.memory AS dec
    MERGE (d:PolicyDecision {id: dec.id, accountId: $accountId})
      ON CREATE SET d += {conversationId: a.conversationId, kind: dec.kind, outcome: dec.outcome, as: dec.as,
                          reason: dec.reason, rule: dec.rule, policyVersion: asm.policyVersion, refs: dec.refs,
                          firstAssemblyId: a.id, createdAt: a.createdAt}
    CREATE (d)-[:CONSTRAINS]->(a)
    WITH d, dec, asm WHERE d.firstAssemblyId = asm.id
    UNWIND dec.refs AS ref
    MATCH (n:ToolMemory {id: ref, accountId: $accountId})
    CREATE (d)-[:ABOUT]->(n)
  }
  CALL (a, asm) {
    UNWIND asm.decisions.artifact AS dec
    MERGE (d:PolicyDecision {id: dec.id, accountId: $accountId})
      ON CREATE SET d += {conversationId: a.conversationId, kind: dec.kind, outcome: dec.outcome, as: dec.as,
                          reason: dec.reason, rule: dec.rule, policyVersion: asm.policyVersion, refs: dec.refs,
                          firstAssemblyId: a.id, createdAt: a.createdAt}
    CREATE (d)-[:CONSTRAINS]->(a)
    WITH d, dec, asm WHERE d.firstAssemblyId = asm.id
    UNWIND dec.refs AS ref
    MATCH (n:ToolArtifact {id: ref, accountId: $accountId})
    CREATE (d)-[:ABOUT]->(n)
  }
  CALL (a, asm) {
    UNWIND asm.decisions.tool_call AS dec
    MERGE (d:PolicyDecision {id: dec.id, accountId: $accountId})
      ON CREATE SET d += {conversationId: a.conversationId, kind: dec.kind, outcome: dec.outcome, as: dec.as,
                          reason: dec.reason, rule: dec.rule, policyVersion: asm.policyVersion, refs: dec.refs,
                          firstAssemblyId: a.id, createdAt: a.createdAt}
    CREATE (d)-[:CONSTRAINS]->(a)
    WITH d, dec, asm WHERE d.firstAssemblyId = asm.id
    UNWIND dec.refs AS ref
    MATCH (n:ToolCall {id: ref, accountId: $accountId})
    CREATE (d)-[:ABOUT]->(n)
  }
  CALL (a, asm) {
    UNWIND asm.decisions.checkpoint AS dec
    MERGE (d:PolicyDecision {id: dec.id, accountId: $accountId})
      ON CREATE SET d += {conversationId: a.conversationId, kind: dec.kind, outcome: dec.outcome, as: dec.as,
                          reason: dec.reason, rule: dec.rule, policyVersion: asm.policyVersion, refs: dec.refs,
                          firstAssemblyId: a.id, createdAt: a.createdAt}
    CREATE (d)-[:CONSTRAINS]->(a)
    WITH d, dec, asm WHERE d.firstAssemblyId = asm.id
    UNWIND dec.refs AS ref
    MATCH (n:Checkpoint {id: ref, accountId: $accountId})
    CREATE (d)-[:ABOUT]->(n)
  }
  CALL (a, asm) {
    UNWIND asm.decisions.skill_state AS dec
    MERGE (d:PolicyDecision {id: dec.id, accountId: $accountId})
      ON CREATE SET d += {conversationId: a.conversationId, kind: dec.kind, outcome: dec.outcome, as: dec.as,
                          reason: dec.reason, rule: dec.rule, policyVersion: asm.policyVersion, refs: dec.refs,
                          firstAssemblyId: a.id, createdAt: a.createdAt}
    CREATE (d)-[:CONSTRAINS]->(a)
    WITH d, dec, asm WHERE d.firstAssemblyId = asm.id
    UNWIND dec.refs AS ref
    MATCH (n:SkillState {id: ref, accountId: $accountId})
    CREATE (d)-[:ABOUT]->(n)
  }
  RETURN a.id AS id
}
RETURN collect(id) AS ids
