// name: BeginTurn
// A generation's turn begins in one statement: its user message (when $content is not null)
// at the branch's next seq, replying to the latest message of the branch's lineage (its own
// latest, else the message it was forked after), then one run per entry of $runs, in order,
// each at the next seq, TRIGGERED_BY the message, with its server's lease. The participants
// are the conversation's: the generation path resolved them from it. Returns nothing for a
// branch that is not the account's, so the messages found by the branch's id are the account's.
// The latest message is read from the (branchId, seq) index in descending order, cut at the
// first: ordering on both of the index's properties lets the planner take the index's order
// instead of sorting every message of the branch (TestStepStatementsDoNotGrowWithHistory).
// Then, in the same transaction, it reads what the assembler reads (ConversationRecords,
// for $participantId and $runId: the first run's) since the revisions of the assembler's
// copy in $since, when it holds one ($since null reads the head only): the turn's first
// assembly then needs no read of its own. The message and runs come on the head row.
// A keyed turn ($keyId, a generation request's Idempotency-Key) is written only while the
// request holds the key ($claim), which is locked after the branch (the order of a turn's
// transaction that records it with RecordKeyedTurn), and its message and runs are kept
// under the key, so that a retry that takes the key over completes this turn: nothing is
// written and nothing returned when a retry has taken it over.
MATCH (b:Branch {id: $branchId, accountId: $accountId})
SET b._lock = true REMOVE b._lock
WITH b
// include: HeldKey
CALL (b) {
  OPTIONAL MATCH (own:Message)
  WHERE own.branchId = $branchId AND own.seq IS NOT NULL
  WITH own ORDER BY own.branchId DESC, own.seq DESC LIMIT 1
  OPTIONAL MATCH (b)-[f:FORKED_FROM]->()
  RETURN coalesce(own.id, f.afterMessageId) AS latestId
}
CALL (b, latestId) {
  WITH b, latestId WHERE $content IS NOT NULL
  SET b.seq = b.seq + 1, b.rev = b.rev + 1
  WITH b, latestId, b.seq AS seq, b.rev AS rev
  CREATE (m:Message {id: $messageId, accountId: $accountId, conversationId: b.conversationId, branchId: b.id, seq: seq,
                     role: 'user', content: $content,
                     parentMessageIds: CASE WHEN latestId IS NULL THEN [] ELSE [latestId] END,
                     visibility: $visibility, baselineTokens: $baselineTokens,
                     rev: rev, createdAt: $createdAt, recordedAt: $recordedAt})
  CREATE (b)-[:HAS_MESSAGE]->(m)
  WITH m, latestId
  OPTIONAL MATCH (parent:Message {id: latestId, accountId: $accountId})
  FOREACH (p IN CASE WHEN parent IS NULL THEN [] ELSE [parent] END | CREATE (m)-[:REPLIES_TO]->(p))
  RETURN collect(m)[0] AS m
}
UNWIND $runs AS run
MATCH (p:Participant {id: run.participantId, accountId: $accountId})
SET b.seq = b.seq + 1, b.rev = b.rev + 1
WITH b, m, k, run, p, b.seq AS seq, b.rev AS rev
CREATE (r:ModelRun {id: run.id, accountId: $accountId, conversationId: b.conversationId, branchId: b.id, seq: seq,
                    participantId: p.id, runtimeKind: run.runtimeKind, status: 'running',
                    provider: coalesce(run.provider, p.provider), model: coalesce(run.model, p.model),
                    triggerMessageId: m.id, tools: run.tools, toolChoice: run.toolChoice,
                    leaseUntil: run.leaseUntil, leaseHolder: run.leaseHolder,
                    startedAt: $createdAt, rev: rev, createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (r)-[:ON_BRANCH]->(b)
CREATE (r)-[:BY]->(p)
FOREACH (t IN CASE WHEN m IS NULL THEN [] ELSE [m] END | CREATE (r)-[:TRIGGERED_BY]->(t))
WITH b, m, k, collect(r) AS runs
FOREACH (x IN CASE WHEN k IS NULL THEN [] ELSE [k] END | SET x.userMessageId = m.id, x.runIds = [r IN runs | r.id])
WITH b, m, runs
MATCH (cv:Conversation {id: b.conversationId, accountId: $accountId})
// include: ConversationChanges
RETURN kind, record, CASE kind WHEN 'head' THEN m END AS m, CASE kind WHEN 'head' THEN runs END AS runs
