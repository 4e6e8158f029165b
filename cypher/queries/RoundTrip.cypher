// name: RoundTrip
// The smallest statement: the floor an assembly's latency is compared with (ctxbench).
RETURN 1 AS one
