// Assembly records are kept whole for the latest of each branch and trimmed beyond
// (DESIGN §10): the sweeper finds the branches with new assemblies by createdAt, a branch's
// latest by (branchId, createdAt) and its untrimmed ones by (branchId, recordState), and it
// takes its work through a SweepLease. Assemblies recorded before keep their records whole
// while among their branch's latest, traced ones always.
CREATE INDEX context_assembly_created IF NOT EXISTS FOR (n:ContextAssembly) ON (n.createdAt);
CREATE INDEX context_assembly_branch_created IF NOT EXISTS FOR (n:ContextAssembly) ON (n.branchId, n.createdAt);
CREATE INDEX context_assembly_branch_state IF NOT EXISTS FOR (n:ContextAssembly) ON (n.branchId, n.recordState);
CREATE CONSTRAINT sweep_lease_name IF NOT EXISTS FOR (n:SweepLease) REQUIRE n.name IS UNIQUE;
MATCH (a:ContextAssembly) WHERE a.recordState IS NULL CALL (a) { SET a.recordState = CASE WHEN a.trace THEN 'kept' ELSE 'full' END, a.recordKept = CASE WHEN a.trace THEN 'traced' END } IN TRANSACTIONS OF 10000 ROWS;
