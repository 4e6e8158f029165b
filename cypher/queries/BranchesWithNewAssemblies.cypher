// name: BranchesWithNewAssemblies
// The branches that have assemblies recorded after $cursor and up to $upTo, each with the
// latest such time and the keepPerBranch of the newest of them, oldest first, at most
// $limit: where assembly records may have fallen out of their branch's latest since the
// sweep last looked (TrimAssemblyRecords).
MATCH (a:ContextAssembly)
WHERE a.createdAt > $cursor AND a.createdAt <= $upTo
WITH a ORDER BY a.createdAt DESC
WITH a.accountId AS accountId, a.branchId AS branchId, max(a.createdAt) AS last,
     head(collect(coalesce(a.keepPerBranch, 20))) AS keep
ORDER BY last
LIMIT $limit
RETURN accountId, branchId, last, keep
