package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The report (docs/benchmarks.md), rewritten after every phase and scale row.

func (b *bench) writeReport(final bool) error {
	if err := b.writeConversationsReport(final); err != nil {
		return err
	}
	if !b.mainReport() {
		return b.writeJSON()
	}
	if err := os.MkdirAll(filepath.Dir(b.o.out), 0o755); err != nil && filepath.Dir(b.o.out) != "." {
		return err
	}
	var w strings.Builder
	pf := func(format string, args ...any) { fmt.Fprintf(&w, format, args...) }
	s := b.sys

	pf("# Benchmarks\n\n")
	if !final {
		pf("> **Interim report**: the run is still going; phases not listed below have not finished.\n\n")
	}
	pf("Written by `cmd/ctxbench` (`make bench`). Every figure below was measured in the one run described here;\n")
	pf("nothing is carried over from earlier runs.\n\n")
	pf("| | |\n|---|---|\n")
	pf("| date | %s |\n", b.started.UTC().Format("2006-01-02 15:04 MST"))
	pf("| command | `go run ./cmd/ctxbench %s` |\n", strings.Join(b.o.args, " "))
	if s.Code != "" {
		pf("| code | %s |\n", s.Code)
	}
	pf("| machine | %d CPUs (nproc), %s, %s |\n", s.NProc, s.Mem, s.CPU)
	pf("| machine speed | %s (CPU only: a fixed single-threaded workload, the tokenizer library counting a 29 KB CSV 5 times, best of 3; lower is faster) |\n", b.speedLine())
	pf("| OS | %s |\n", s.Kernel)
	pf("| Go | %s (GOMAXPROCS %d) |\n", runtime.Version(), runtime.GOMAXPROCS(0))
	pf("| Neo4j | %s |\n", s.Neo4j)
	pf("| wiring | ctxgraph in-process, wired by server.New as cmd/ctxgraph wires it (over server.OpenStore and Migrate, without metrics or a running scheduler), behind a real `net/http` server on %s; every timed request goes over loopback HTTP. The benchmark client runs in the same process (it shares the %d CPUs with the server and with Neo4j). |\n", b.base, s.NProc)
	pf("| matrix | %s |\n", b.matrixText())
	pf("| total time | %s |\n", b.elapsed().Round(time.Second))
	if b.o.replot != "" {
		pf("| rendered | again from the run's `-json` measurements with `-replot`, %s (no new measurement) |\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	}
	pf("\n")

	if errs := b.serverErrLines(); len(b.failures) > 0 || len(errs) > 0 {
		pf("## Failures and errors\n\n")
		for _, f := range collapseCleanup(b.failures, b.account) {
			pf("- %s\n", oneLine(f))
		}
		if len(errs) > 0 {
			errs = groupErrLines(errs)
			pf("\nThe server's log of failed requests, by cause (ids and amounts blanked):\n\n")
			for _, e := range errs {
				pf("- %s\n", oneLine(e))
			}
		}
		pf("\n")
	}

	if e := b.economy; e != nil {
		pf("## Economy\n\n")
		pf("Every scenario of `%s` (%d files) played through the API over loopback HTTP with `scenario.Runner`, each on a fresh account; replay (`tokens.baseline`) against assembled tokens, and the reference design's figures (DESIGN §1) where the scenario has them. The phase took %s.\n\n",
			b.o.scenarios, e.Files, e.Elapsed.Round(time.Millisecond))
		pf("%s\n", e.Table)
		if len(e.Errors) > 0 {
			pf("Failures:\n\n")
			for _, x := range e.Errors {
				pf("- %s\n", oneLine(x))
			}
			pf("\n")
		}
	}

	if b.peers != nil {
		b.reportPeers(pf)
	}
	b.reportConversationsLink(pf)

	if len(b.floor) > 0 {
		pf("## Floor\n\n")
		pf("%d samples per probe after %d untimed warm-up calls, one at a time.\n\n", b.o.floorN, b.o.floorN/10)
		pf("| probe | what it does | p50 | p95 | p99 | max | errors |\n|---|---|---:|---:|---:|---:|---:|\n")
		for _, p := range b.floor {
			pf("| %s | %s | %s | %s | %s | %s | %d |\n", p.Name, p.What, ms(p.Stats.P50), ms(p.Stats.P95), ms(p.Stats.P99), ms(p.Stats.Max), p.Errors)
		}
		pf("\nThe floor is the issue's bare Bolt round trip, `RETURN 1` (`store.RoundTrip`, a managed read transaction as every query of the service runs in); assembly latency is given as a multiple of it below, and of `GET /v1/conversations/{id}`, the cheapest REST call that runs one Cypher query. `store.Ping` is the driver's `VerifyConnectivity`: with driver v5.28 on a direct `bolt://` URI, once the pool holds a connection it sends no Bolt message at all, so it measures the driver's own overhead, not a round trip.\n\n")
	}

	if len(b.rows) > 0 {
		b.reportScale(pf)
	}
	if b.load != nil {
		b.reportLoad(pf)
	}
	if b.generation != nil {
		b.reportGeneration(pf)
	}
	if len(b.plots) > 0 {
		pf("## Plots\n\n")
		rel, err := filepath.Rel(filepath.Dir(b.o.out), b.o.plots)
		if err != nil {
			rel = b.o.plots
		}
		for _, p := range b.plots {
			pf("![%s](%s)\n\n", p.Title, filepath.ToSlash(filepath.Join(rel, filepath.Base(p.Path))))
		}
	}
	b.reportTargets(pf)

	pf("## Phase timings\n\n| phase | wall time |\n|---|---:|\n")
	for _, p := range b.phases {
		pf("| %s | %s |\n", p.Name, p.Elapsed.Round(time.Millisecond))
	}
	for _, r := range b.sortedRows() {
		if r.Summary.Elapsed > 0 || r.MeasureElapsed > 0 {
			pf("| scale %s: seeding / timed assemblies | %s / %s |\n", r.name(), r.Summary.Elapsed.Round(time.Millisecond), r.MeasureElapsed.Round(time.Millisecond))
		}
	}
	if b.load != nil && b.load.SeededHere {
		pf("| load: seeding 1000x10x1 | %s |\n", b.load.SeedElapsed.Round(time.Millisecond))
	}
	if len(b.cleanups) > 0 {
		var tot, worst time.Duration
		for _, c := range b.cleanups {
			tot += c.Elapsed
			worst = max(worst, c.Elapsed)
		}
		failed := 0
		for _, c := range b.cleanups {
			if c.Err != "" {
				failed++
			}
		}
		pf("\nCleanup sent `DELETE /v1/conversations/{id}` for the %d conversations of the run (account `%s`) in %s (slowest %s); %d failed (listed under Failures) and stay in Neo4j.\n",
			len(b.cleanups), b.account, tot.Round(time.Millisecond), worst.Round(time.Millisecond), failed)
	}
	pf("\n")
	if err := b.writeJSON(); err != nil {
		return err
	}
	return os.WriteFile(b.o.out, []byte(w.String()), 0o644)
}

// mainReport says whether the run writes the main report (-out): unless its only phase is
// conversations, whose file (-conversations-out) stands on its own, so that running it alone
// leaves the report of the run that measured everything else as it was.
func (b *bench) mainReport() bool {
	return slices.ContainsFunc(b.o.phaseOrder, func(p string) bool { return p != "conversations" })
}

// writeJSON writes every measurement to the -json file, if one is named.
func (b *bench) writeJSON() error {
	if b.o.jsonOut == "" {
		return nil
	}
	data, err := json.MarshalIndent(b.results(), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(b.o.jsonOut, data, 0o644)
}

func (b *bench) matrixText() string {
	if b.o.quick {
		return "quick: rounds {10, 100, 1000} × branches {1, 10} × participants {1}, branches > rounds/2 skipped" + filterText(b.o.matrix)
	}
	return "rounds {10, 100, 1000, 10000} × branches {1, 10, 50} × participants {1, 4}, branches > rounds/2 skipped" + filterText(b.o.matrix)
}

func filterText(m string) string {
	if m == "" {
		return ""
	}
	return "; filtered to `-matrix " + m + "`"
}

func (b *bench) reportScale(pf func(string, ...any)) {
	pf("## Scale\n\n")
	pf("Each row is one conversation written by `seed.Generate` (seed = rounds·1000 + branches·10 + participants, branches written in parallel by %d writers; in-process, not timed). Then one cold `POST /v1/assemblies` and n timed ones, one at a time, over loopback HTTP, for the last run of the deepest branch (`Summary.Deepest()`), `now` = last seeded event + 5 min, token budget %s, no trace. Latency is client-side, end to end (HTTP, the Neo4j traversal, policies, serialisation with token counting, and the record write); the split is the mean of the server's `timingsMs`.\n\n",
		b.o.seedConc, thousands(b.o.budget))
	floorBolt, floorRead := b.floorP50("Bolt RETURN 1"), b.floorP50("GET /v1/conversations")
	pf("| rounds | branches | participants | assembled branch: depth, lineage rounds | replay tokens | assembled tokens | cut | n | cold | p50 | p95 | p99 | graph | policy | serialize | record | p50 ÷ RETURN 1 p50 | p50 ÷ REST read p50 | errors |\n")
	pf("|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range b.sortedRows() {
		if !r.measured() {
			why := "not measured"
			if r.Skipped != "" {
				why = r.Skipped
			} else if r.SeedErr != "" {
				why = "seeding failed: " + clipS(r.SeedErr, 120)
			} else if r.Err != "" {
				why = clipS(r.Err, 120)
			}
			pf("| %d | %d | %d | %s | | | | | | | | | | | | | | | %d |\n", r.Rounds, r.Branches, r.Participants, oneLine(why), r.Errors)
			continue
		}
		cut := "—"
		if r.Baseline > 0 {
			cut = fmt.Sprintf("%.1f %%", 100*(1-float64(r.Assembled)/float64(r.Baseline)))
		}
		pf("| %d | %d | %d | %s: %d, %d | %s | %s | %s | %d | %s | %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %s | %s | %d |\n",
			r.Rounds, r.Branches, r.Participants, r.Target.Name, r.Target.Depth, r.Target.LineageRounds,
			thousands(r.Baseline), thousands(r.Assembled), cut, r.Lat.N, ms(r.Cold), ms(r.Lat.P50), ms(r.Lat.P95), ms(r.Lat.P99),
			r.Split.Graph, r.Split.Policy, r.Split.Serialize, r.Split.Record,
			multiple(r.Lat.P50, floorBolt), multiple(r.Lat.P50, floorRead), r.Errors)
	}
	pf("\nLatency columns in ms; graph / policy / serialize / record are the mean server-side split in ms (`timingsMs`).\n\n")

	pf("### After a write\n\n")
	pf("The timed assemblies above repeat one request on an unchanged graph, so from the second on they share the lineage's candidates and verdicts with the one before (see [architecture.md](architecture.md)). An agent usually writes between its model calls. After the timed assemblies, each row therefore also starts a run on the assembled branch and %d times records a `web_search` call with a ~2 KB result on it, then times the same assembly: every write reaches the lineage, so nothing built for it before can be reused (the copy is brought up to date, the candidates built and judged again). The writes are not timed.\n\n", afterWrites)
	pf("| rounds | branches | participants | n | p50 | p95 | p99 | graph | policy | serialize | record | p50 ÷ unchanged p50 |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range b.sortedRows() {
		if !r.measured() {
			continue
		}
		if r.AfterWrite.N == 0 {
			pf("| %d | %d | %d | %s | | | | | | | | |\n", r.Rounds, r.Branches, r.Participants, oneLine(clipS(orDefault(r.AfterWriteErr, "not measured"), 120)))
			continue
		}
		w := r.AfterWriteSplit
		pf("| %d | %d | %d | %d | %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %s |\n", r.Rounds, r.Branches, r.Participants, r.AfterWrite.N,
			ms(r.AfterWrite.P50), ms(r.AfterWrite.P95), ms(r.AfterWrite.P99), w.Graph, w.Policy, w.Serialize, w.Record, ratio(r.AfterWrite.P50, r.Lat.P50))
	}
	pf("\n")

	pf("### What a conversation costs the server's memory\n\n")
	pf("After each row: the heap the server's copy of the row's conversation holds with its lineage views, and what the kept judgements hold in all (of every row so far still kept), as the caches charge them against `CTXGRAPH_ASSEMBLER_MEMORY` (1 GiB by default: 768 MiB of copies, 256 MiB of judgements; `ctxgraph_assembler_memory_bytes` in `/metrics`); and the benchmark process's whole live Go heap after a forced collection (server, client and the benchmark's own data, every earlier row's copies included while the cache holds them).\n\n")
	pf("| rounds | branches | participants | its copy (MB) | judgements kept (MB) | Go heap live (MB) |\n|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range b.sortedRows() {
		if r.measured() {
			pf("| %d | %d | %d | %.1f | %.1f | %.0f |\n", r.Rounds, r.Branches, r.Participants, r.CopyMB, r.JudgementsMB, r.HeapMB)
		}
	}
	pf("\n")

	pf("### What the timed assembly included\n\n")
	pf("From the last timed assembly of each row: the included records by form (`as`) and the omitted ones by reason.\n\n")
	pf("| rounds | branches | participants | assembled / budget | included by form | omitted by reason |\n|---:|---:|---:|---:|---|---|\n")
	for _, r := range b.sortedRows() {
		if !r.measured() {
			continue
		}
		over := ""
		if r.Assembled > b.o.budget {
			over = " **over**"
		}
		pf("| %d | %d | %d | %s / %s%s | %s | %s |\n", r.Rounds, r.Branches, r.Participants, thousands(r.Assembled), thousands(b.o.budget), over,
			countsText(r.Included), countsText(r.Omitted))
	}
	pf("\n")

	pf("### What each conversation wrote\n\n")
	// Runs recorded before the store / log split have no such figures: leave the columns out.
	split := slices.ContainsFunc(b.rows, func(r *scaleRow) bool { return r.StoreAfter > 0 })
	if split {
		pf("| rounds | branches | participants | seeding time | requests | MB sent | tool calls | results (blob > 64 KiB) | memories | nodes | relationships (derived) | blob bytes on disk | Neo4j data dir Δ | of which store files Δ | of which tx logs Δ |\n")
		pf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	} else {
		pf("| rounds | branches | participants | seeding time | requests | MB sent | tool calls | results (blob > 64 KiB) | memories | nodes | relationships (derived) | blob bytes on disk | Neo4j data dir Δ |\n")
		pf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	}
	for _, r := range b.sortedRows() {
		if r.Summary.ConversationID == "" && r.SeedErr == "" {
			continue
		}
		c := r.Summary.Counts
		nodes, rels := graphSize(r)
		delta, store, tx := "—", "—", "—"
		if r.Neo4jBefore >= 0 && r.Neo4jAfter >= 0 {
			delta = mb(r.Neo4jAfter - r.Neo4jBefore)
		}
		if r.StoreBefore > 0 && r.StoreAfter > 0 {
			store = mb(r.StoreAfter - r.StoreBefore)
		}
		if r.TxBefore > 0 && r.TxAfter > 0 {
			tx = mb(r.TxAfter - r.TxBefore)
		}
		note := ""
		if r.TimedOut {
			note = " (timed out, partial)"
		} else if r.SeedErr != "" {
			note = " (failed)"
		}
		last := ""
		if split {
			last = " " + store + " | " + tx + " |"
		}
		pf("| %d | %d | %d | %s%s | %s | %.1f | %s | %s (%d) | %s | %s | %s | %s | %s |%s\n",
			r.Rounds, r.Branches, r.Participants, r.Summary.Elapsed.Round(time.Millisecond), note, thousands(int(c.Requests)),
			float64(r.Summary.BytesWritten)/1e6, thousands(c.ToolCalls), thousands(c.ToolResults), c.BlobResults, thousands(c.Memories),
			thousands(nodes), thousands(rels), mb(r.BlobBytes), delta, last)
	}
	pf("\nNodes are counted from what `seed` reports it wrote (conversation, branches, participants, messages, runs, tool calls, one artifact per result, memories). Relationships are derived, not counted: HAS_BRANCH and FORKED_FROM per branch, HAS_PARTICIPANT, HAS_MESSAGE and REPLIES_TO per message, ON_BRANCH, BY, TRIGGERED_BY and GENERATED_BY per run, REQUESTED per call, PRODUCED per result, DERIVED_FROM per memory plus SUPERSEDES and CONFLICTS_WITH — as the write queries create them; no Cypher runs outside `cypher/`, so neither figure was read back from Neo4j. Neither includes the ContextAssembly records the timed assemblies then wrote. Blob bytes are the growth of the benchmark's blob directory. The Neo4j figures are the growth of `du -sb` of %s%s across the seeding. Store files grow in preallocated steps and transaction logs are pruned at checkpoints (a negative or small figure), and anything else writing to the same Neo4j meanwhile (other test runs) is counted too, so read them as rough sizes%s.\n\n",
		orDash(b.dataDir), map[bool]string{true: " (and of its `databases/` and `transactions/`)"}[split],
		map[bool]string{true: "; the store files column is the closest to the conversation's size on disk"}[split])
}

// graphSize derives the node and relationship counts of a seeded conversation from the
// counts seed reports (see the report's note).
func graphSize(r *scaleRow) (nodes, rels int) {
	c := r.Summary.Counts
	br, pt := len(r.Summary.Branches), len(r.Summary.ParticipantIDs)
	if br == 0 {
		br = r.Branches
	}
	if pt == 0 {
		pt = r.Participants
	}
	nodes = 1 + br + pt + c.Messages + c.Runs + c.ToolCalls + c.ToolResults + c.Memories
	rels = br + (br - 1) + pt + c.Messages + max(c.Messages-1, 0) + 4*c.Runs + c.ToolCalls + c.ToolResults + c.Memories + c.Supersedes + c.Conflicts
	return nodes, rels
}

// sortedRows are the scale rows by rounds, branches and participants.
func (b *bench) sortedRows() []*scaleRow {
	rows := slices.Clone(b.rows)
	slices.SortStableFunc(rows, func(x, y *scaleRow) int {
		if x.Rounds != y.Rounds {
			return x.Rounds - y.Rounds
		}
		if x.Branches != y.Branches {
			return x.Branches - y.Branches
		}
		return x.Participants - y.Participants
	})
	return rows
}

func (b *bench) floorP50(prefix string) time.Duration {
	for _, p := range b.floor {
		if strings.HasPrefix(p.Name, prefix) {
			return p.Stats.P50
		}
	}
	return 0
}

func (b *bench) reportLoad(pf func(string, ...any)) {
	l := b.load
	pf("## Load\n\n")
	if l.Conversation == "" {
		pf("Not run: %s\n\n", oneLine(l.WriteErr))
		return
	}
	pf("Against the 1,000-round, 10-branch, 1-participant conversation%s. Each client loops until the level's %s are up, choosing at random (50/50) between an assembly — the same request as the scale row: the last run of `%s` (depth %d, %d lineage rounds), budget %s — and a tool-result write: `POST /v1/runs/{run}/tool-calls` for a new call, then `POST /v1/tool-calls/{id}/result` with a ~2 KB web-search result. Each client writes on its own run, started before the levels on one of the other branches, so the assembled lineage is the same at every level. Latencies are per HTTP request; an error is any transport error or unexpected status.\n\n",
		map[bool]string{true: " (seeded for this phase)", false: " of the scale phase"}[l.SeededHere], b.o.loadDur, l.Target.Name, l.Target.Depth, l.Target.LineageRounds, thousands(b.o.budget))
	pf("| clients | wall time | requests | req/s | assemblies | assemblies/s | tool results | results/s | assembly p50 | assembly p99 | write p50 | write p99 | all p99 | errors |\n")
	pf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, lv := range l.Levels {
		pf("| %d | %s | %s | %.1f | %s | %.1f | %s | %.1f | %s | %s | %s | %s | %s | %d |\n",
			lv.Clients, lv.Elapsed.Round(time.Millisecond), thousands(lv.Requests), rate(lv.Requests, lv.Elapsed),
			thousands(lv.Assemblies), rate(lv.Assemblies, lv.Elapsed), thousands(lv.ToolResults), rate(lv.ToolResults, lv.Elapsed),
			ms(lv.AsmLat.P50), ms(lv.AsmLat.P99), ms(lv.WriteLat.P50), ms(lv.WriteLat.P99), ms(lv.AllLat.P99), lv.Errors)
	}
	pf("\nLatencies in ms. The wall time runs past the level's duration by the requests in flight when it ends.\n\n")
	b.reportLoadCost(pf)
	for _, lv := range l.Levels {
		if len(lv.ErrSamples) > 0 {
			pf("- %d clients, errors: %s\n", lv.Clients, oneLine(strings.Join(lv.ErrSamples, "; ")))
		}
	}
}

// checkpointsText says what checkpoints flushed and how long they took.
func checkpointsText(cps []checkpoint) string {
	var parts []string
	for _, c := range cps {
		if c.Took == 0 {
			parts = append(parts, fmt.Sprintf("one from %s, still running", c.Start.UTC().Format("15:04:05")))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s pages in %.1f s from %s", thousands(int(c.Pages)), c.Took.Seconds(), c.Start.UTC().Format("15:04:05")))
	}
	return strings.Join(parts, "; ")
}

// reportLoadCost says where each level's CPU went (Neo4j, this process) and how long each
// Cypher query took, per request it served.
func (b *bench) reportLoadCost(pf func(string, ...any)) {
	l := b.load
	pf("### Where the time goes under load\n\n")
	pf("CPU of the machine's %s cores per second of each level: the local Neo4j's (from /proc) and this process's, which is the server and the clients together; then, per assembly or tool result served, the CPU each spent (the clients' share included in the second).\n\n", strconv.Itoa(b.sys.NProc))
	pf("| clients | Neo4j cores | ctxbench cores | Neo4j ms per (assembly + tool result) | ctxbench ms per (assembly + tool result) | Neo4j checkpoints during the level |\n|---:|---:|---:|---:|---:|---|\n")
	for _, lv := range l.Levels {
		served := float64(lv.Assemblies+lv.ToolResults) / 2
		neo, per := "—", "—"
		if lv.Neo4jCores >= 0 && served > 0 {
			neo = fmt.Sprintf("%.2f", lv.Neo4jCores)
			per = fmt.Sprintf("%.2f", lv.Neo4jCores*lv.Elapsed.Seconds()*1000/served)
		}
		self := "—"
		if served > 0 {
			self = fmt.Sprintf("%.2f", lv.SelfCores*lv.Elapsed.Seconds()*1000/served)
		}
		cps := "none"
		if b.dataDir == "" {
			cps = "—"
		} else if len(lv.Checkpoints) > 0 {
			cps = checkpointsText(lv.Checkpoints)
		}
		pf("| %d | %s | %.2f | %s | %s | %s |\n", lv.Clients, neo, lv.SelfCores, per, self, cps)
	}
	pf("\nA checkpoint (from the local Neo4j's debug.log) flushes every store page changed since the one before, by default after 100,000 transactions or 15 minutes; its writes compete with the commits' for the disk, so a level it overlaps serves less.\n")
	pf("\nEach Cypher query of each level: how often it ran, its mean time from sending it to holding its records (statement) and the part of that Neo4j reports as its own (server: result available after plus consumed after), and, counted under the first statement of each transaction (the hot paths are one statement each, run as auto-commit transactions), the mean time of the whole transaction (commit, retries and waiting for a pooled connection included). Under load, both include waiting for a core. `RecordAssemblies`, `RequestToolCall` and `RecordToolResult` each write the rows of the requests that came while the previous batch of the same statement was written, together (group commit: at most 16, two batches at a time): their runs are batches, so requests ÷ runs is the mean batch, and a request's wait for its batch's turn is in its latency but not in this table.\n\n")
	pf("| clients | query | runs | statement ms | server ms | transactions | transaction ms |\n|---:|---|---:|---:|---:|---:|---:|\n")
	for _, lv := range l.Levels {
		names := slices.Collect(maps.Keys(lv.Queries))
		slices.SortFunc(names, func(x, y string) int {
			return cmp.Compare(lv.Queries[y].Statement+lv.Queries[y].Transaction, lv.Queries[x].Statement+lv.Queries[x].Transaction)
		})
		for _, n := range names {
			q := lv.Queries[n]
			tx := "—"
			if q.Transactions > 0 {
				tx = fmt.Sprintf("%.2f", meanMs(q.Transaction, q.Transactions))
			}
			pf("| %d | %s | %s | %.2f | %.2f | %s | %s |\n", lv.Clients, n, thousands(int(q.Runs)), meanMs(q.Statement, q.Runs),
				meanMs(q.Server, q.Runs), thousands(int(q.Transactions)), tx)
		}
	}
	pf("\n")
}

func (b *bench) reportTargets(pf func(string, ...any)) {
	pf("## Targets\n\n")
	pf("| target (issue 4) | measured | status |\n|---|---|---|\n")
	var big []*scaleRow
	for _, r := range b.rows {
		if r.Rounds == 10000 && r.Branches == 50 && r.measured() {
			big = append(big, r)
		}
	}
	if len(big) == 0 {
		pf("| assembly p50 ≤ 10 ms over REST at 10,000 rounds × 50 branches | not measured in this run | not measured |\n")
		pf("| assembly p99 ≤ 30 ms over REST at 10,000 rounds × 50 branches | not measured in this run | not measured |\n")
	}
	for _, r := range big {
		pf("| assembly p50 ≤ 10 ms over REST at 10,000 rounds × 50 branches (%d participant%s) | %s ms | %s |\n", r.Participants, plural(r.Participants, "s"), ms(r.Lat.P50), metText(r.Lat.P50 <= 10*time.Millisecond))
		pf("| assembly p99 ≤ 30 ms over REST at 10,000 rounds × 50 branches (%d participant%s) | %s ms | %s |\n", r.Participants, plural(r.Participants, "s"), ms(r.Lat.P99), metText(r.Lat.P99 <= 30*time.Millisecond))
	}
	measured, within, maxAsm := 0, 0, 0
	maxName := ""
	for _, r := range b.rows {
		if !r.measured() {
			continue
		}
		measured++
		if r.Assembled <= b.o.budget && (r.Budget == 0 || r.Assembled <= r.Budget) {
			within++
		}
		if r.Assembled >= maxAsm {
			maxAsm, maxName = r.Assembled, r.name()
		}
	}
	if measured == 0 {
		pf("| assembled tokens within the budget at every size | no scale row measured | not measured |\n")
	} else {
		largest := ""
		for _, r := range b.rows {
			if r.measured() {
				largest = fmt.Sprintf("%d rounds", r.Rounds)
			}
		}
		pf("| assembled tokens within the budget (%s) at every size | %d of %d rows within; largest %s tokens (%s); sizes up to %s | %s |\n",
			thousands(b.o.budget), within, measured, thousands(maxAsm), maxName, largest, metText(within == measured))
	}
	var at16 *loadLevel
	if b.load != nil {
		for i := range b.load.Levels {
			if b.load.Levels[i].Clients == 16 {
				at16 = &b.load.Levels[i]
			}
		}
	}
	if at16 == nil {
		pf("| ≥ 200 assemblies/s at 16 clients with zero errors | not measured in this run | not measured |\n")
	} else {
		r := rate(at16.Assemblies, at16.Elapsed)
		pf("| ≥ 200 assemblies/s at 16 clients with zero errors | %.1f assemblies/s (in a 50/50 mix with writes), %d errors | %s |\n", r, at16.Errors, metText(r >= 200 && at16.Errors == 0))
	}
	b.reportGenerationTargets(pf)
	pf("\nWhere a target is missed, [performance.md](performance.md) (written by hand, not by this run) says why and what limits it; `-pprof DIR` writes a Go CPU profile of each scale row's timed assemblies and of its assemblies after a write, the log gives each row's statements as the driver and as Neo4j timed them, and `scripts/profile-traversal` prints Neo4j's `PROFILE` of the read on the benchmark's data.\n\n")
}

// countsText writes counts as "a 3, b 1", largest first.
func countsText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %s", k, thousands(m[k])))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

func metText(ok bool) string {
	if ok {
		return "**met**"
	}
	return "**missed**"
}
