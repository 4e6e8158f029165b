# ctxgraph: `make run` serves the API (starting a local Neo4j when NEO4J_URI is unset);
# `make test` runs every test, integration tests against a real Neo4j included.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

LOCAL_BOLT := bolt://127.0.0.1:$(or $(NEO4J_LOCAL_BOLT_PORT),7687)

# The tests' local Neo4j is one of their own (its own data directory and ports), so that a
# `make run` server on the development Neo4j never claims the tests' schedule ticks, and the
# outage test's restart never touches it.
TEST_NEO4J_ENV := NEO4J_LOCAL_HOME="$(CURDIR)/.neo4j-test" NEO4J_LOCAL_BOLT_PORT=$(or $(NEO4J_TEST_BOLT_PORT),7688) NEO4J_LOCAL_HTTP_PORT=$(or $(NEO4J_TEST_HTTP_PORT),7475)
TEST_BOLT := bolt://127.0.0.1:$(or $(NEO4J_TEST_BOLT_PORT),7688)

.PHONY: build run test bench bench-go vet neo4j-start neo4j-stop neo4j-status seaweedfs-start seaweedfs-stop clean

build:
	go build -o bin/ctxgraph ./cmd/ctxgraph

run: build
	@if [ -z "$${NEO4J_URI:-}" ]; then scripts/neo4j-local start; fi
	NEO4J_URI="$${NEO4J_URI:-$(LOCAL_BOLT)}" ./bin/ctxgraph

vet:
	go vet ./...

# Integration tests use NEO4J_URI when set; otherwise testcontainers-go when a Docker engine
# answers; otherwise a local Neo4j of the tests' own (.neo4j-test, Bolt on 7688), started
# here. Then schemathesis runs over the served OpenAPI spec (scripts/schemathesis;
# SCHEMATHESIS_MAX_TIME seconds, default 100) against NEO4J_URI, or that local Neo4j. llm-katan, the provider of the
# end-to-end generation tests, is installed first (scripts/llm-katan, into .venv-llm-katan),
# and so are the peers' libraries the conformance test of peers/ runs (scripts/peers-venv,
# into .venv-peers) and the vendors' clients the drop-in test drives (scripts/dropin-clients,
# into .venv-dropin and integration/testdata/dropin/node/node_modules), and headless Chromium
# with playwright-core, pinned, for the inspector's browser test (scripts/browser-check, into
# .browser-check).
#
# The S3 blob store's tests run against a real SeaweedFS of the tests' own, unless
# CTXGRAPH_TEST_S3_ENDPOINT already names a server: scripts/seaweedfs builds the pinned weed
# binary once (into .seaweedfs/bin, minutes) and starts it in .seaweedfs/test with S3 on
# SEAWEEDFS_TEST_PORT (8383; it takes 8383-8386 and 9383-9386). Its blob tests (the contract
# tests of blob/) and the three-server test fail without it. The integration suite runs whole
# on a blob directory, then the tests whose subject is the blob store (S3_INTEGRATION_TESTS:
# blobs, failed writes, sweeps, deletions, retention and erasure) run again with their blobs
# in SeaweedFS (CTXGRAPH_TEST_BLOB_STORE=s3), which keeps `make test` well under 15 minutes
# where a whole second run would not. The integration suite takes 7 to 9 minutes alone, near
# go test's default limit of 10 per package, so the limit is 20: a busy machine must not
# fail it by the clock.
SEAWEEDFS_TEST_ENV := SEAWEEDFS_HOME="$(CURDIR)/.seaweedfs/test" SEAWEEDFS_PORT=$(or $(SEAWEEDFS_TEST_PORT),8383)
S3_INTEGRATION_TESTS := ^(TestLargeToolResultGoesToTheBlobStore|TestEndedRequestLeavesNoBlob|TestFailureHalfWayThroughAWriteWritesNothing|TestFailedWriteNeverRemovesAnotherAccountsBlob|TestWritesRacingADeletionAnswer404|TestNoOrphanBlobsAfterAnOutage|TestSweepKeepsReferencedAndClaimedBlobs|TestDeletedConversationStaysDeleted|TestReplaysAfterDeletionCarryNoDeletedData|TestArtifactRetention.*|TestEraseArtifactTakesWhatDerivesOnlyFromIt|TestEraseAccountLeavesOtherAccountsAlone|TestErasuresRacingWritersBringNothingBack)$$
test: vet
	@if [ -z "$${NEO4J_URI:-}" ] && ! timeout 10 docker info >/dev/null 2>&1; then \
		export $(TEST_NEO4J_ENV); scripts/neo4j-local start; \
		export NEO4J_URI="$(TEST_BOLT)" CTXGRAPH_TEST_NEO4J_CONTROL="$(CURDIR)/scripts/neo4j-local"; \
	fi; \
	if [ -z "$${CTXGRAPH_TEST_S3_ENDPOINT:-}" ]; then \
		export $(SEAWEEDFS_TEST_ENV); scripts/seaweedfs start; \
		export $$(scripts/seaweedfs env); \
	fi; \
	scripts/llm-katan install; \
	scripts/peers-venv install; \
	scripts/dropin-clients install; \
	scripts/browser-check install; \
	go test -count=1 -timeout 20m ./...; \
	CTXGRAPH_TEST_BLOB_STORE=s3 go test -count=1 -run '$(S3_INTEGRATION_TESTS)' ./integration/
	@if [ -z "$${NEO4J_URI:-}" ]; then export $(TEST_NEO4J_ENV); scripts/neo4j-local start; fi; \
	NEO4J_URI="$${NEO4J_URI:-$(TEST_BOLT)}" scripts/schemathesis

# Benchmarks against a real Neo4j, never part of `make test`. `make bench` runs the whole
# benchmark (economy, scale, floor, load, generation against llm-katan, and the peers' context
# strategies on the scenarios, and the agent conversations against replay and the peers, written to
# docs/conversations.md) and writes docs/benchmarks.md with its plots in docs/plots;
# BENCH_FLAGS passes more flags (e.g. BENCH_FLAGS=-quick; BENCH_FLAGS=-phases=conversations runs
# that phase alone and rewrites only docs/conversations.md). Without NEO4J_URI it
# restarts the local Neo4j sized for the benchmark's few GB of store: a page cache that holds
# it (BENCH_PAGECACHE) and a 2g heap (BENCH_HEAP), as a production Neo4j would be sized, with
# the initial heap equal to the maximum as Neo4j's GC tuning guide recommends (a heap that
# grows from 256m pauses Neo4j right after a large read, which shows as outliers in the
# p99 of the 10,000-round rows).
BENCH_PAGECACHE ?= 4g
BENCH_HEAP ?= 2g
bench:
	@if [ -z "$${NEO4J_URI:-}" ]; then \
		NEO4J_LOCAL_PAGECACHE=$(BENCH_PAGECACHE) NEO4J_LOCAL_HEAP=$(BENCH_HEAP) NEO4J_LOCAL_HEAP_INITIAL=$(BENCH_HEAP) \
			scripts/neo4j-local restart; \
		export NEO4J_URI="$(LOCAL_BOLT)"; \
	fi; \
	go run ./cmd/ctxbench -out docs/benchmarks.md -plots docs/plots $(BENCH_FLAGS)

# The go test benchmark alone: assembly latency over REST on a seeded 1,000-round, 10-branch
# conversation.
bench-go:
	@if [ -z "$${NEO4J_URI:-}" ]; then scripts/neo4j-local start; export NEO4J_URI="$(LOCAL_BOLT)"; fi; \
	go test -run '^$$' -bench BenchmarkAssembly -benchtime 200x -timeout 30m ./integration/

neo4j-start:
	scripts/neo4j-local start

neo4j-stop:
	scripts/neo4j-local stop

neo4j-status:
	scripts/neo4j-local status

# The tests' SeaweedFS, as `make test` starts it; `export $$(scripts/seaweedfs env)` with the
# same SEAWEEDFS_HOME then points `go test` at it.
seaweedfs-start:
	$(SEAWEEDFS_TEST_ENV) scripts/seaweedfs start

seaweedfs-stop:
	$(SEAWEEDFS_TEST_ENV) scripts/seaweedfs stop

clean:
	rm -rf bin
