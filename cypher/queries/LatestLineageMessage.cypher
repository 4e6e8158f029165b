// name: LatestLineageMessage
// The latest message of a lineage: the default parent of a new message.
UNWIND $lineage AS l
MATCH (m:Message {branchId: l.branchId})
WHERE m.seq <= l.cutoff AND m.accountId = $accountId
RETURN m.id AS id
ORDER BY l.depth ASC, m.seq DESC
LIMIT 1
