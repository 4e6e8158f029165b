// name: TrimAssemblyRecords
// Trims, on one branch, the records of at most $limit assemblies that are no longer among
// the branch's latest $keep ($skip is $keep - 1, or 0 when $keep is 0; threshold is the
// time of the $keep-th newest, whose ties stay) and are not kept
// (DESIGN §10): the JSON record, the INCLUDED and OMITTED edges, the CONSTRAINS edges of
// its decisions and the request's details go; the assembly node stays with its branch,
// participant, run, time, policy version, tokens and non-zero omission counts, marked
// recordState 'trimmed'. An assembly whose run has not ended waits; one whose run failed is
// kept whole instead (recordKept 'failed_run'). The PolicyDecision nodes stay: each is shared
// by every assembly that made the same decision, and concurrent records MERGE into them.
// Returns the ids trimmed and kept.
CALL () {
  MATCH (y:ContextAssembly)
  WHERE y.branchId = $branchId AND y.createdAt IS NOT NULL AND y.accountId = $accountId
  WITH y ORDER BY y.createdAt DESC SKIP $skip LIMIT 1
  RETURN y.createdAt AS threshold
}
MATCH (x:ContextAssembly {branchId: $branchId, recordState: 'full'})
WHERE x.accountId = $accountId AND (x.createdAt < threshold OR $keep = 0 AND x.createdAt <= threshold)
OPTIONAL MATCH (x)-[:FOR_RUN]->(r:ModelRun)
WITH x, r.status AS runStatus
WHERE runStatus IS NULL OR NOT runStatus IN ['running', 'awaiting_tools']
WITH x, runStatus LIMIT $limit
CALL (x, runStatus) {
  WITH x WHERE runStatus = 'failed'
  SET x.recordState = 'kept', x.recordKept = 'failed_run'
}
CALL (x, runStatus) {
  WITH x WHERE runStatus IS NULL OR runStatus <> 'failed'
  CALL (x) {
    MATCH (x)-[e:INCLUDED|OMITTED]->()
    DELETE e
  }
  CALL (x) {
    MATCH (:PolicyDecision)-[e:CONSTRAINS]->(x)
    DELETE e
  }
  // What stays: who, where, when, under which version, the tokens and the omissions that
  // were not zero. The request's details are in the record that goes.
  FOREACH (k IN [k IN keys(x) WHERE k STARTS WITH 'omitted' AND x[k] = 0] | SET x[k] = null)
  SET x.recordState = 'trimmed', x.recordTrimmed = 'beyond_latest', x.recordTrimmedAt = $now
  REMOVE x.record, x.requestBody, x.exactArtifactIds, x.assemblerVersion, x.now, x.asOf, x.tokenBudget, x.provider, x.model,
         x.runtimeKind, x.instructionsSha256, x.trace, x.recordedAt
}
RETURN collect(CASE WHEN runStatus = 'failed' THEN null ELSE x.id END) AS trimmed,
       collect(CASE WHEN runStatus = 'failed' THEN x.id END) AS kept
