// Run leases (DESIGN §6 "Runs that outlive their server"): every server sweeps the running
// runs whose lease lapsed, an index seek on the lease's end.
CREATE INDEX model_run_lease IF NOT EXISTS FOR (n:ModelRun) ON (n.leaseUntil);
