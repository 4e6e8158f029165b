package main

import (
	"context"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/seed"
)

// The scale phase: a seeded conversation per row of the matrix, its assembly latency,
// before and after a write, and its size in the store.

type scaleRow struct {
	Rounds, Branches, Participants int
	// HeapMB is the Go heap live after the row (after a forced collection): the server's
	// conversation copies, views and judgements, with the benchmark's own data.
	HeapMB float64
	// CopyMB is what the server's copy of the row's conversation holds, with its views, and
	// JudgementsMB what its kept judgements hold in all, as the caches charge them
	// (CTXGRAPH_ASSEMBLER_MEMORY).
	CopyMB, JudgementsMB    float64
	Summary                 seed.Summary
	SeedErr                 string
	SeedAttempts            int
	TimedOut                bool
	Skipped                 string
	BlobBytes               int64
	Neo4jBefore, Neo4jAfter int64
	// StoreBefore/After are `du -sb` of data/databases (the store files), TxBefore/After
	// of data/transactions (the transaction logs); 0 when not measured.
	StoreBefore, StoreAfter     int64
	TxBefore, TxAfter           int64
	Target                      seed.Branch
	Baseline, Assembled, Budget int
	Included                    map[string]int
	Omitted                     map[string]int
	Cold                        time.Duration
	Lat                         stats
	N                           int
	Split                       model.Timings
	Errors                      int
	Err                         string
	MeasureElapsed              time.Duration
	Profile                     string
	// AfterWrite times the same assembly right after a tool call and its result were
	// written on the assembled branch (after the timed assemblies), so that nothing the
	// assembler built for the lineage before can be reused; AfterWriteSplit is its mean
	// split.
	AfterWrite      stats
	AfterWriteSplit model.Timings
	AfterWriteErr   string
}

func (r *scaleRow) name() string {
	return fmt.Sprintf("%dx%dx%d", r.Rounds, r.Branches, r.Participants)
}

func (r *scaleRow) measured() bool { return r.SeedErr == "" && r.Lat.N > 0 }

func (b *bench) matrix() []*scaleRow {
	rounds, branches, parts := []int{10, 100, 1000, 10000}, []int{1, 10, 50}, []int{1, 4}
	if b.o.quick {
		rounds, branches, parts = []int{10, 100, 1000}, []int{1, 10}, []int{1}
	}
	var pats []string
	for _, p := range strings.Split(b.o.matrix, ",") {
		if p = strings.TrimSpace(p); p != "" {
			pats = append(pats, p)
		}
	}
	var rows []*scaleRow
	for _, r := range rounds {
		// Most branches first: at 10,000 rounds the 50-branch rows are the target,
		// and they are measured before a seeding time-out can skip the rest of the size.
		for _, br := range slices.Backward(branches) {
			if br > r/2 && br > 1 {
				continue
			}
			for _, p := range parts {
				row := &scaleRow{Rounds: r, Branches: br, Participants: p, Neo4jBefore: -1, Neo4jAfter: -1}
				if len(pats) > 0 && !slices.ContainsFunc(pats, func(pat string) bool { ok, _ := path.Match(pat, row.name()); return ok }) {
					continue
				}
				rows = append(rows, row)
			}
		}
	}
	return rows
}

func (r *scaleRow) config(conc int) seed.Config {
	return seed.Config{Rounds: r.Rounds, Branches: r.Branches, Participants: r.Participants,
		Seed: int64(r.Rounds*1000 + r.Branches*10 + r.Participants), Concurrency: conc}
}

func (b *bench) runScale(ctx context.Context) {
	b.rows = b.matrix()
	skipSize := map[int]string{}
	for _, row := range b.rows {
		if why, ok := skipSize[row.Rounds]; ok {
			row.Skipped = why
			logf("scale %s: skipped (%s)", row.name(), why)
			continue
		}
		b.seedRow(ctx, row)
		if row.TimedOut {
			skipSize[row.Rounds] = fmt.Sprintf("skipped: seeding %s took longer than -seed-timeout %s", row.name(), b.o.seedLimit)
			continue
		}
		if row.SeedErr != "" {
			continue
		}
		b.measureRow(ctx, row)
		if err := b.writeReport(false); err != nil {
			logf("writing the interim report: %v", err)
		}
	}
}

// seedRow writes the row's conversation in-process (not timed as part of the latency),
// measuring the blob directory and the Neo4j data directory around it. A failed seeding is
// tried once more on a new conversation (another engineer may restart the shared Neo4j).
func (b *bench) seedRow(ctx context.Context, row *scaleRow) {
	for attempt := 1; attempt <= 2; attempt++ {
		row.SeedAttempts = attempt
		blobBefore := dirBytes(b.blobDir)
		row.Neo4jBefore = b.duData()
		row.StoreBefore, row.TxBefore = b.du("databases"), b.du("transactions")
		logf("scale %s: seeding (attempt %d)", row.name(), attempt)
		sctx, cancel := ctx, context.CancelFunc(func() {})
		if b.o.seedLimit > 0 {
			sctx, cancel = context.WithTimeout(ctx, b.o.seedLimit)
		}
		sum, err := seed.Generate(sctx, &client.Client{Handler: b.srv, Key: b.key}, row.config(b.o.seedConc))
		timedOut := sctx.Err() != nil && ctx.Err() == nil
		cancel()
		row.Neo4jAfter = b.duData()
		row.StoreAfter, row.TxAfter = b.du("databases"), b.du("transactions")
		row.BlobBytes = dirBytes(b.blobDir) - blobBefore
		row.Summary = sum
		if sum.ConversationID != "" {
			b.convs = append(b.convs, b.key+"|"+sum.ConversationID)
		}
		if err == nil {
			row.SeedErr = ""
			c := sum.Counts
			logf("scale %s: seeded in %s: %d requests, %.1f MB, %d tool calls, %d memories, blobs %.1f MB",
				row.name(), sum.Elapsed.Round(time.Millisecond), c.Requests, float64(sum.BytesWritten)/1e6, c.ToolCalls, c.Memories, float64(row.BlobBytes)/1e6)
			return
		}
		row.SeedErr = err.Error()
		if timedOut {
			row.TimedOut = true
			row.SeedErr = fmt.Sprintf("seeding passed -seed-timeout %s (%d requests sent)", b.o.seedLimit, sum.Counts.Requests)
			b.failures = append(b.failures, fmt.Sprintf("scale %s: %s; the remaining rows of %d rounds are skipped", row.name(), row.SeedErr, row.Rounds))
			logf("scale %s: %s", row.name(), row.SeedErr)
			return
		}
		b.failures = append(b.failures, fmt.Sprintf("scale %s: seeding attempt %d failed after %s: %s", row.name(), attempt, sum.Elapsed.Round(time.Millisecond), clipS(err.Error(), 400)))
		logf("scale %s: seeding failed: %v", row.name(), err)
	}
}

// assemblyAnswer is the part of an assembly response the benchmark reads.
type assemblyAnswer struct {
	Tokens struct {
		Assembled int `json:"assembled"`
		Baseline  int `json:"baseline"`
		Budget    int `json:"budget"`
	} `json:"tokens"`
	Included []struct {
		As string `json:"as"`
	} `json:"included"`
	Omitted   map[string]int `json:"omitted"`
	TimingsMs model.Timings  `json:"timingsMs"`
}

func (b *bench) assemblyBody(sum seed.Summary, target seed.Branch) []byte {
	return mustJSON(client.AssemblyRequest{
		BranchID: target.ID, ParticipantID: target.LastRunParticipantID, RunID: target.LastRunID, TokenBudget: b.o.budget,
		// Freshness is judged just after the synthetic timeline ends, as bench_test.go does.
		Now: sum.LastEventAt.Add(5 * time.Minute).Format(time.RFC3339),
	})
}

// measureRow times the row's assemblies: one cold call, then n sequential ones over REST.
func (b *bench) measureRow(ctx context.Context, row *scaleRow) {
	start := time.Now()
	defer func() { row.MeasureElapsed = time.Since(start) }()
	row.Target = row.Summary.Deepest()
	if row.Target.LastRunID == "" {
		row.Err = "the deepest branch has no run of its own"
		b.failures = append(b.failures, "scale "+row.name()+": "+row.Err)
		return
	}
	body := b.assemblyBody(row.Summary, row.Target)
	n := b.o.n
	if row.Rounds > 1000 {
		n = b.o.nLarge
	}
	row.N = n
	_, stopCold := b.startProfile("cold-" + row.name())
	st, out, d, err := b.call(ctx, b.key, http.MethodPost, "/v1/assemblies", body)
	stopCold()
	row.Cold = d
	if err != nil || st != http.StatusCreated {
		row.Errors++
		row.Err = fmt.Sprintf("cold call: %d %v %s", st, err, clip(out))
	}
	var stopProfile func()
	queriesBefore := cypher.QueryTimes()
	row.Profile, stopProfile = b.startProfile("assembly-" + row.name())
	var t timedAssemblies
	for i := 0; i < n; i++ {
		t.assemble(ctx, b, body)
	}
	stopProfile()
	logf("scale %s: timed assemblies' statements: %s", row.name(), statementMeans(queryTimesSince(queriesBefore)))
	if t.errors > 0 {
		row.Errors += t.errors
		row.Err = t.err
	}
	row.Lat, row.Split = summarize(t.ds), t.meanSplit()
	last := t.last

	// The same assembly after a write on the assembled branch, on a run of its own.
	var w timedAssemblies
	st, out, _, err = b.call(ctx, b.key, http.MethodPost, "/v1/branches/"+row.Target.ID+"/runs", mustJSON(client.Run{
		ParticipantID: row.Target.LastRunParticipantID, RuntimeKind: "chat", TriggerMessageID: row.Target.LastMessageID,
	}))
	var run client.Created
	if err == nil && st == http.StatusCreated {
		_ = json.Unmarshal(out, &run)
	}
	if run.ID == "" {
		row.AfterWriteErr = fmt.Sprintf("starting a run on the assembled branch answered %d %v %s", st, err, clip(out))
	}
	rng := mrand.New(mrand.NewPCG(uint64(row.Rounds), uint64(row.Branches)))
	// Its profile holds the untimed writes too: the assemblies alone are not separable here.
	_, stopProfile = b.startProfile("afterwrite-" + row.name())
	for i := 0; i < afterWrites && row.AfterWriteErr == ""; i++ {
		if _, _, msg := b.writeToolResult(ctx, run.ID, fmt.Sprintf("after-write-%d", i), rng); msg != "" {
			row.AfterWriteErr = msg
			break
		}
		w.assemble(ctx, b, body)
	}
	stopProfile()
	if w.errors > 0 {
		row.AfterWriteErr = w.err
	}
	if row.AfterWriteErr != "" {
		b.failures = append(b.failures, fmt.Sprintf("scale %s: after a write: %s", row.name(), clipS(row.AfterWriteErr, 300)))
	}
	row.AfterWrite, row.AfterWriteSplit = summarize(w.ds), w.meanSplit()
	row.Baseline, row.Assembled, row.Budget = last.Tokens.Baseline, last.Tokens.Assembled, last.Tokens.Budget
	row.Included = map[string]int{}
	for _, inc := range last.Included {
		row.Included[inc.As]++
	}
	row.Omitted = last.Omitted
	if row.Errors > 0 {
		b.failures = append(b.failures, fmt.Sprintf("scale %s: %d assembly errors (last: %s)", row.name(), row.Errors, clipS(row.Err, 300)))
	}
	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	row.HeapMB = float64(mem.HeapAlloc) / (1 << 20)
	b.heapProfile("heap-" + row.name())
	row.CopyMB = float64(b.store.CopyBytes(b.account, row.Summary.ConversationID)) / (1 << 20)
	judged, _ := b.assembler.JudgementMemory()
	row.JudgementsMB = float64(judged) / (1 << 20)
	logf("scale %s: %d assemblies on %s (depth %d, %d lineage rounds): p50 %s p95 %s p99 %s, tokens %d/%d, errors %d; after a write p50 %s p99 %s; Go heap live %.0f MB, its copy %.0f MB, judgements %.0f MB",
		row.name(), len(t.ds), row.Target.Name, row.Target.Depth, row.Target.LineageRounds, ms(row.Lat.P50), ms(row.Lat.P95), ms(row.Lat.P99),
		row.Assembled, row.Baseline, row.Errors, ms(row.AfterWrite.P50), ms(row.AfterWrite.P99), row.HeapMB, row.CopyMB, row.JudgementsMB)
}

// afterWrites is how many assemblies each scale row times right after a write.
const afterWrites = 50

// timedAssemblies collects the latencies and server-side splits of assemblies over REST.
type timedAssemblies struct {
	ds     []time.Duration
	split  model.Timings
	last   assemblyAnswer
	errors int
	err    string
}

// startProfile starts a Go CPU profile of the process (server and clients) into
// DIR/name.pprof when -pprof DIR is set; it returns the file's name ("" when none) and the
// function that stops it.
func (b *bench) startProfile(name string) (string, func()) {
	if b.o.pprofDir == "" {
		return "", func() {}
	}
	if err := os.MkdirAll(b.o.pprofDir, 0o755); err != nil {
		return "", func() {}
	}
	f, err := os.Create(filepath.Join(b.o.pprofDir, name+".pprof"))
	if err != nil {
		return "", func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return "", func() {}
	}
	return f.Name(), func() { pprof.StopCPUProfile(); f.Close() }
}

// heapProfile writes a Go heap profile of the process into DIR/name.pprof when -pprof DIR
// is set.
func (b *bench) heapProfile(name string) {
	if b.o.pprofDir == "" {
		return
	}
	f, err := os.Create(filepath.Join(b.o.pprofDir, name+".pprof"))
	if err != nil {
		return
	}
	defer f.Close()
	_ = pprof.WriteHeapProfile(f)
}

func (t *timedAssemblies) assemble(ctx context.Context, b *bench, body []byte) {
	st, out, d, err := b.call(ctx, b.key, http.MethodPost, "/v1/assemblies", body)
	if err != nil || st != http.StatusCreated {
		t.errors++
		t.err = fmt.Sprintf("%d %v %s", st, err, clip(out))
		return
	}
	var a assemblyAnswer
	if err := json.Unmarshal(out, &a); err != nil {
		t.errors++
		t.err = "the answer is not the expected JSON: " + err.Error()
		return
	}
	t.ds = append(t.ds, d)
	t.split.Graph += a.TimingsMs.Graph
	t.split.Policy += a.TimingsMs.Policy
	t.split.Serialize += a.TimingsMs.Serialize
	t.split.Record += a.TimingsMs.Record
	t.last = a
}

// meanSplit is the mean server-side split of the assemblies that succeeded.
func (t *timedAssemblies) meanSplit() model.Timings {
	if len(t.ds) == 0 {
		return model.Timings{}
	}
	f := float64(len(t.ds))
	return model.Timings{Graph: t.split.Graph / f, Policy: t.split.Policy / f, Serialize: t.split.Serialize / f, Record: t.split.Record / f}
}
