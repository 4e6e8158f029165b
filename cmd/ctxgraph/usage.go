package main

import (
	"fmt"
	"io"
)

// usageText is what `ctxgraph -h` prints: the commands and the configuration they read.
const usageText = `ctxgraph: the context runtime for tool-using agents, over a Neo4j execution graph.

usage:
  ctxgraph                      serve the REST API (configured by the environment below)
  ctxgraph scenario [-h] [...]  play scenario files against a running server
  ctxgraph compare [-h] [-budget N] [...]
                                play scenario files through every context strategy (replay,
                                LangChain, clear_tool_uses, LiteLLM, ctxgraph) and compare
  ctxgraph -h                   print this help

environment:
  NEO4J_URI                     bolt:// or neo4j:// address (default bolt://127.0.0.1:7687)
  NEO4J_USER, NEO4J_PASSWORD    credentials (none by default)
  NEO4J_DATABASE                database (default neo4j)
  CTXGRAPH_NEO4J_READS          leader (default): on a cluster (neo4j://), reads go to the
                                leader and see every answered write; any: to any member
                                that has applied the request's X-Ctxgraph-Bookmark
  CTXGRAPH_ADDR                 listen address (default 127.0.0.1:8080)
  CTXGRAPH_API_KEYS             account=key pairs, comma-separated; unset: a development
                                key for account "dev", kept in .ctxgraph/dev-api-key
  CTXGRAPH_BLOB_DIR             content-addressed store of large payloads (default .ctxgraph/blobs)
  CTXGRAPH_BLOB_URL             instead, an object store: s3://bucket/prefix, with AWS_ENDPOINT_URL_S3
                                (or AWS_ENDPOINT_URL), AWS_REGION, AWS_ACCESS_KEY_ID and
                                AWS_SECRET_ACCESS_KEY; or file:///path for a directory
  CTXGRAPH_PROVIDERS_FILE       model providers (YAML); unset: the built-in echo provider
  CTXGRAPH_MAX_BODY             largest request body (default 16M)
  CTXGRAPH_ASSEMBLER_MEMORY     heap the assembler's caches may hold, e.g. 512MiB (default 1GiB, 0: off)
  CTXGRAPH_READ_HEADER_TIMEOUT, CTXGRAPH_READ_TIMEOUT, CTXGRAPH_WRITE_TIMEOUT,
  CTXGRAPH_IDLE_TIMEOUT         connection bounds, Go durations (0 turns one off)
  CTXGRAPH_BLOB_SWEEP_INTERVAL  how often unreferenced blobs are removed (default 1h)
  CTXGRAPH_SWEEP_INTERVAL       how often assembly records beyond their branch's latest are
                                trimmed and artifacts past their retention redacted or
                                deleted (default 1m, 0: never)
  CTXGRAPH_SWEEP_LEASE          how long a sweep's lease holds if its server dies (default 1m)
  CTXGRAPH_SHUTDOWN_TIMEOUT     how long a stop waits for requests and scheduled turns (default 30s)
  CTXGRAPH_SCHEDULER            on (default) or off: off runs no scheduled turns
  CTXGRAPH_RUN_LEASE            how long a run's lease holds unless its server renews it
                                (default 15s): a run whose server died ends interrupted then
  CTXGRAPH_LOG_LEVEL            debug, info, warn or error (default info)
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
                                OpenTelemetry traces over OTLP/HTTP when either is set; the
                                exporter reads its other OTEL_EXPORTER_OTLP_* variables, and
                                OTEL_SERVICE_NAME names the service (default ctxgraph)
  GOGC, GOMEMLIMIT              Go's garbage collector (default GOGC 400, GOMEMLIMIT a quarter
                                of the machine's memory)

make run and make test start a local Neo4j (scripts/neo4j-local) configured by
  NEO4J_LOCAL_HOME, NEO4J_LOCAL_BOLT_PORT, NEO4J_LOCAL_HTTP_PORT, NEO4J_LOCAL_HEAP,
  NEO4J_LOCAL_PAGECACHE, NEO4J_LOCAL_HEAP_INITIAL, NEO4J_LOCAL_JAVA_OPTS, NEO4J_LOCAL_TIMEOUT
  (see the header of scripts/neo4j-local); make test's own on NEO4J_TEST_BOLT_PORT (7688).
`

// command reads the arguments: whether to serve, and otherwise the exit code after the
// help or the complaint it printed. `scenario` is handled before.
func command(args []string, stdout, stderr io.Writer) (serve bool, code int) {
	if len(args) == 0 {
		return true, 0
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usageText)
		return false, 0
	}
	fmt.Fprintf(stderr, "ctxgraph: unknown argument %q\n\n%s", args[0], usageText)
	return false, 2
}
