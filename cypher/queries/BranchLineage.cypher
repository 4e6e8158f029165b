// name: BranchLineage
// A branch and its ancestors through FORKED_FROM, nearest first, each with the seq up to
// which it is inherited (null for the branch itself).
MATCH path = (b:Branch {id: $branchId, accountId: $accountId})-[:FORKED_FROM*0..]->(a:Branch)
RETURN b.conversationId AS conversationId, a.id AS branchId, length(path) AS depth,
       CASE length(path) WHEN 0 THEN null ELSE last(relationships(path)).afterSeq END AS cutoff
ORDER BY depth
