package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/seed"
)

// The load phase: concurrent clients assembling while writers add tool results, with
// Neo4j's checkpoints and CPU beside the latencies.

type loadLevel struct {
	Clients     int
	Elapsed     time.Duration
	Requests    int
	Assemblies  int
	ToolResults int
	Errors      int
	ErrSamples  []string
	AsmLat      stats
	WriteLat    stats
	AllLat      stats
	// Queries is the time each Cypher query took during the level (cypher.QueryTimes).
	Queries map[string]cypher.QueryTime
	// Profile is the Go CPU profile of the level (-pprof).
	Profile string
	// Neo4jCores and SelfCores are the CPU time the local Neo4j (-1: not measured) and this
	// process (server and clients) used during the level, per second of wall time.
	Neo4jCores, SelfCores float64
	// Checkpoints are the local Neo4j's checkpoints that ran during the level (nil: none, or
	// its log not known).
	Checkpoints []checkpoint
}

// checkpoint is one checkpoint of the local Neo4j, as its debug.log reports it: it flushes
// every page changed since the one before (by default after 100,000 transactions or 15
// minutes), and the writes compete with the commits' for the disk.
type checkpoint struct {
	Start time.Time
	Took  time.Duration // 0 while it runs
	Pages int64
}

// checkpointLine matches debug.log's lines on a checkpoint starting or completing.
var checkpointLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}[+-]\d{4}) .*Checkpoint triggered by .* @ txId: (\d+).* checkpoint (started|completed in ([0-9hms ]+)\. Checkpoint flushed (\d+) pages)`)

// checkpoints lists the local Neo4j's checkpoints that ran during [from, to], from its
// debug.log; nil when the log is not known.
func (b *bench) checkpoints(from, to time.Time) []checkpoint {
	if b.dataDir == "" {
		return nil
	}
	log, err := os.ReadFile(filepath.Join(filepath.Dir(b.dataDir), "logs", "debug.log"))
	if err != nil {
		return nil
	}
	started := map[string]time.Time{}
	var out []checkpoint
	for _, line := range strings.Split(string(log), "\n") {
		m := checkpointLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at, err := time.Parse("2006-01-02 15:04:05.000-0700", m[1])
		if err != nil {
			continue
		}
		if m[3] == "started" {
			started[m[2]] = at
			continue
		}
		took, err := time.ParseDuration(strings.ReplaceAll(m[4], " ", ""))
		if err != nil {
			continue
		}
		delete(started, m[2])
		pages, _ := strconv.ParseInt(m[5], 10, 64)
		if at.After(from) && at.Add(-took).Before(to) {
			out = append(out, checkpoint{Start: at.Add(-took), Took: took, Pages: pages})
		}
	}
	for _, at := range started { // still running
		if at.Before(to) {
			out = append(out, checkpoint{Start: at})
		}
	}
	return out
}

type loadResult struct {
	Conversation string
	Target       seed.Branch
	SeededHere   bool
	SeedElapsed  time.Duration
	WriteRuns    []string
	WriteErr     string
	Levels       []loadLevel
}

// runLoad mixes tool-result writes and assemblies (50/50) from 1, 4, 16 and 64 clients
// against the 1,000-round, 10-branch conversation.
func (b *bench) runLoad(ctx context.Context) {
	lr := &loadResult{}
	b.load = lr
	var sum seed.Summary
	for _, r := range b.rows {
		if r.Rounds == 1000 && r.Branches == 10 && r.Participants == 1 && r.SeedErr == "" {
			sum = r.Summary
		}
	}
	if sum.ConversationID == "" {
		row := &scaleRow{Rounds: 1000, Branches: 10, Participants: 1}
		logf("load: seeding the 1000x10x1 conversation")
		s, err := seed.Generate(ctx, &client.Client{Handler: b.srv, Key: b.key}, row.config(b.o.seedConc))
		if s.ConversationID != "" {
			b.convs = append(b.convs, b.key+"|"+s.ConversationID)
		}
		if err != nil {
			lr.WriteErr = "seeding: " + err.Error()
			b.failures = append(b.failures, "load: seeding the 1000x10x1 conversation failed: "+clipS(err.Error(), 400))
			return
		}
		sum, lr.SeededHere, lr.SeedElapsed = s, true, s.Elapsed
	}
	lr.Conversation = sum.ConversationID
	lr.Target = sum.Deepest()
	asmBody := b.assemblyBody(sum, lr.Target)

	// The writers' runs: one per client, on the branches other than the assembled one, so
	// that the assembled lineage stays the same through every level.
	var others []seed.Branch
	for _, br := range sum.Branches {
		if br.ID != lr.Target.ID && br.LastMessageID != "" {
			others = append(others, br)
		}
	}
	if len(others) == 0 {
		others = []seed.Branch{lr.Target}
	}
	levels := parseInts(b.o.clients)
	maxClients := slices.Max(levels)
	for i := 0; i < maxClients; i++ {
		br := others[i%len(others)]
		pid := br.LastRunParticipantID
		if pid == "" {
			pid = sum.ParticipantIDs[0]
		}
		st, out, _, err := b.call(ctx, b.key, http.MethodPost, "/v1/branches/"+br.ID+"/runs", mustJSON(client.Run{
			ParticipantID: pid, RuntimeKind: "chat", TriggerMessageID: br.LastMessageID,
		}))
		var id client.Created
		if err == nil && st == http.StatusCreated {
			_ = json.Unmarshal(out, &id)
		}
		if id.ID == "" {
			lr.WriteErr = fmt.Sprintf("starting a writer run answered %d %v %s", st, err, clip(out))
			b.failures = append(b.failures, "load: "+lr.WriteErr)
			return
		}
		lr.WriteRuns = append(lr.WriteRuns, id.ID)
	}

	for li, clients := range levels {
		lv := b.loadLevel(ctx, li, clients, asmBody, lr.WriteRuns)
		lr.Levels = append(lr.Levels, lv)
		logf("load %d clients: %d requests in %s (%.1f req/s, %.1f assemblies/s), assembly p99 %s, write p99 %s, errors %d",
			clients, lv.Requests, lv.Elapsed.Round(time.Millisecond), rate(lv.Requests, lv.Elapsed), rate(lv.Assemblies, lv.Elapsed),
			ms(lv.AsmLat.P99), ms(lv.WriteLat.P99), lv.Errors)
		logf("  CPU: Neo4j %.2f cores, ctxbench (server and clients) %.2f cores", lv.Neo4jCores, lv.SelfCores)
		if len(lv.Checkpoints) > 0 {
			logf("  Neo4j checkpoints during the level: %s", checkpointsText(lv.Checkpoints))
		}
		if lv.Errors > 0 {
			b.failures = append(b.failures, fmt.Sprintf("load %d clients: %d errors (%s)", clients, lv.Errors, strings.Join(lv.ErrSamples, "; ")))
		}
	}
}

func (b *bench) loadLevel(ctx context.Context, level, clients int, asmBody []byte, runs []string) loadLevel {
	lv := loadLevel{Clients: clients}
	var mu sync.Mutex
	var asm, wr, all []time.Duration
	fail := func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		lv.Errors++
		if len(lv.ErrSamples) < 5 {
			lv.ErrSamples = append(lv.ErrSamples, clipS(msg, 200))
		}
	}
	deadline := time.Now().Add(b.o.loadDur)
	start := time.Now()
	queriesBefore := cypher.QueryTimes()
	cpuBefore := b.cpuNow()
	var stopProfile func()
	lv.Profile, stopProfile = b.startProfile(fmt.Sprintf("load-%d", clients))
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			rng := mrand.New(mrand.NewPCG(uint64(level), uint64(c)))
			var myAsm, myWr []time.Duration
			requests, assemblies, results := 0, 0, 0
			run := runs[c]
			for i := 0; time.Now().Before(deadline); i++ {
				if rng.IntN(2) == 0 {
					st, out, d, err := b.call(ctx, b.key, http.MethodPost, "/v1/assemblies", asmBody)
					requests++
					if err != nil || st != http.StatusCreated {
						fail(fmt.Sprintf("POST /v1/assemblies: %d %v %s", st, err, clip(out)))
						continue
					}
					myAsm = append(myAsm, d)
					assemblies++
					continue
				}
				callID := fmt.Sprintf("load-%d-%d-%d", level, c, i)
				ds, n, msg := b.writeToolResult(ctx, run, callID, rng)
				myWr = append(myWr, ds...)
				requests += n
				if msg != "" {
					fail(msg)
					continue
				}
				results++
			}
			mu.Lock()
			asm = append(asm, myAsm...)
			wr = append(wr, myWr...)
			lv.Requests += requests
			lv.Assemblies += assemblies
			lv.ToolResults += results
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	lv.Elapsed = time.Since(start)
	stopProfile()
	lv.Neo4jCores, lv.SelfCores = b.coresSince(cpuBefore, lv.Elapsed)
	lv.Queries = queryTimesSince(queriesBefore)
	lv.Checkpoints = b.checkpoints(start, start.Add(lv.Elapsed))
	all = append(append(all, asm...), wr...)
	lv.AsmLat, lv.WriteLat, lv.AllLat = summarize(asm), summarize(wr), summarize(all)
	return lv
}

func meanMs(d time.Duration, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Microseconds()) / 1000 / float64(n)
}

// neo4jCPU is the CPU time the local Neo4j has used (user and system, from /proc), or -1
// when its process is not known.
func (b *bench) neo4jCPU() time.Duration {
	if b.dataDir == "" {
		return -1
	}
	pid, err := os.ReadFile(filepath.Join(filepath.Dir(b.dataDir), "neo4j.pid"))
	if err != nil {
		return -1
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(string(pid)), "stat"))
	if err != nil {
		return -1
	}
	// Fields after the command name (which may hold spaces): utime and stime are the 12th
	// and 13th, in clock ticks of 1/100 s (USER_HZ on Linux).
	rest := string(stat)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// cpuMark is the CPU time the local Neo4j (-1: unknown) and this process had used at a
// moment.
type cpuMark struct{ neo4j, self time.Duration }

func (b *bench) cpuNow() cpuMark { return cpuMark{b.neo4jCPU(), selfCPU()} }

// coresSince is the cores the local Neo4j (-1: unknown) and this process used on average
// over the elapsed time since before.
func (b *bench) coresSince(before cpuMark, elapsed time.Duration) (neo4j, self float64) {
	now := b.cpuNow()
	neo4j = -1
	if before.neo4j >= 0 && now.neo4j >= before.neo4j {
		neo4j = (now.neo4j - before.neo4j).Seconds() / elapsed.Seconds()
	}
	return neo4j, (now.self - before.self).Seconds() / elapsed.Seconds()
}

// selfCPU is the CPU time this process has used (user and system).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// queryTimesSince returns the time each query took since before was taken.
func queryTimesSince(before map[string]cypher.QueryTime) map[string]cypher.QueryTime {
	out := map[string]cypher.QueryTime{}
	for name, t := range cypher.QueryTimes() {
		b := before[name]
		d := cypher.QueryTime{Runs: t.Runs - b.Runs, Transactions: t.Transactions - b.Transactions,
			Statement: t.Statement - b.Statement, Server: t.Server - b.Server, Transaction: t.Transaction - b.Transaction}
		if d.Runs > 0 || d.Transactions > 0 {
			out[name] = d
		}
	}
	return out
}

// statementMeans describes, per query, how often it ran and its mean time as the driver saw
// it (sent, run, results read) and as Neo4j reported it (available after + consumed after).
func statementMeans(times map[string]cypher.QueryTime) string {
	names := slices.Sorted(maps.Keys(times))
	parts := make([]string, 0, len(names))
	for _, name := range names {
		t := times[name]
		if t.Runs == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s ×%d %.2f ms (Neo4j %.2f)", name, t.Runs, meanMs(t.Statement, t.Runs), meanMs(t.Server, t.Runs)))
	}
	return strings.Join(parts, ", ")
}

// writeToolResult records a web_search call on a run and its ~2 KB result: two requests. It
// returns the latencies of the requests that succeeded, how many requests it made and, when
// one failed, what went wrong.
func (b *bench) writeToolResult(ctx context.Context, run, callID string, rng *mrand.Rand) (ds []time.Duration, requests int, failure string) {
	st, out, d, err := b.call(ctx, b.key, http.MethodPost, "/v1/runs/"+run+"/tool-calls", mustJSON(client.ToolCall{
		Tool: "web_search", CallID: callID, Arguments: mustJSON(map[string]any{"query": "ctxbench load " + callID, "limit": 10}),
	}))
	if err != nil || st != http.StatusCreated {
		return nil, 1, fmt.Sprintf("POST tool-calls: %d %v %s", st, err, clip(out))
	}
	ds = append(ds, d)
	var id client.Created
	_ = json.Unmarshal(out, &id)
	st, out, d, err = b.call(ctx, b.key, http.MethodPost, "/v1/tool-calls/"+id.ID+"/result", mustJSON(client.ToolResult{
		Status: "succeeded", Result: mustJSON(searchResult(rng, callID)), ToolVersion: "ctxbench-1",
	}))
	if err != nil || st != http.StatusCreated {
		return ds, 2, fmt.Sprintf("POST result: %d %v %s", st, err, clip(out))
	}
	return append(ds, d), 2, ""
}

// searchResult is a web-search result of about 2 KB.
func searchResult(rng *mrand.Rand, q string) map[string]any {
	words := []string{"context", "graph", "assembly", "latency", "branch", "memory", "artifact", "policy", "token", "replay", "neo4j", "cypher"}
	var results []map[string]any
	for i := 0; i < 8; i++ {
		var sn []string
		for j := 0; j < 22; j++ {
			sn = append(sn, words[rng.IntN(len(words))])
		}
		results = append(results, map[string]any{
			"title":   fmt.Sprintf("Result %d for %s", i+1, q),
			"url":     fmt.Sprintf("https://example.org/%s/%d", q, i),
			"snippet": strings.Join(sn, " "),
		})
	}
	return map[string]any{"query": q, "results": results}
}
