package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/api"
	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/seed"
	"github.com/ctxgraph/ctxgraph/server"
)

// seededWorld is a generated conversation with the server and key that can read it. It is
// seeded once per process: a benchmark function runs several times (N=1 first), and the
// seeding is far slower than what is measured.
type seededWorld struct {
	srv     *api.Server
	key     string
	summary seed.Summary
	err     error
}

var (
	seed1000Once  sync.Once
	seed1000World seededWorld
)

// newBenchServer wires the API to the shared store like newHarness, for benchmarks: one
// fresh account with its key.
func newBenchServer() (*api.Server, string) {
	key := "bench-key-" + randomHex(8)
	srv := server.New(server.Config{Store: sharedStore, Keys: map[string]string{key: "bench-" + randomHex(6)}})
	return srv.API, key
}

// seedWorld generates cfg through the API in-process and logs what it wrote.
func seedWorld(b *testing.B, cfg seed.Config) seededWorld {
	srv, key := newBenchServer()
	w := seededWorld{srv: srv, key: key}
	w.summary, w.err = seed.Generate(context.Background(), &client.Client{Handler: srv, Key: key}, cfg)
	if w.err != nil {
		return w
	}
	s, c := w.summary, w.summary.Counts
	b.Logf("seeded %d rounds on %d branches in %s: %d requests, %.1f MB written (%.1f MB of tool results, %d over 64 KiB), "+
		"%d messages, %d tool calls, %d results (%d failed, %d retries, %d deferred, %d pending), %d memories (%d supersede, %d conflict)",
		cfg.Rounds, len(s.Branches), s.Elapsed.Round(time.Millisecond), c.Requests, float64(s.BytesWritten)/1e6,
		float64(c.ResultBytes)/1e6, c.BlobResults, c.Messages, c.ToolCalls, c.ToolResults, c.Failed, c.Retries,
		c.Deferred, c.Pending, c.Memories, c.Supersedes, c.Conflicts)
	return w
}

// BenchmarkAssembly1000Rounds10Branches times POST /v1/assemblies over real loopback HTTP
// for the deepest branch of a 1,000-round, 10-branch conversation (one participant), with
// its last run and an 8,000-token budget. Besides ns/op it reports the p50, p95 and p99
// latencies of the b.N assemblies and the tokens of the last one; seeding is not timed.
func BenchmarkAssembly1000Rounds10Branches(b *testing.B) {
	seed1000Once.Do(func() {
		// Branch-parallel writing keeps each branch's request sequence, so the graph is the
		// same as in plan order; only the seeding is faster.
		seed1000World = seedWorld(b, seed.Config{Rounds: 1000, Branches: 10, Participants: 1, Seed: 1000, Concurrency: 4})
	})
	w := seed1000World
	if w.err != nil {
		b.Fatalf("seeding: %v", w.err)
	}
	benchmarkAssembly(b, w)
}

func benchmarkAssembly(b *testing.B, w seededWorld) {
	target := w.summary.Deepest()
	if target.LastRunID == "" {
		b.Fatalf("the deepest branch %s has no run of its own", target.Name)
	}
	body, err := client.Marshal(client.AssemblyRequest{
		BranchID: target.ID, ParticipantID: target.LastRunParticipantID, RunID: target.LastRunID, TokenBudget: 8000,
		// CTXGRAPH_BENCH_TRACE=1 times traced assemblies (omittedRefs, OMITTED edges).
		Trace: os.Getenv("CTXGRAPH_BENCH_TRACE") != "",
		// Freshness is judged just after the synthetic timeline ends, as a live agent would.
		Now: w.summary.LastEventAt.Add(5 * time.Minute).Format(time.RFC3339),
	})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(w.srv)
	defer ts.Close()
	c := &client.Client{HTTP: ts.Client(), BaseURL: ts.URL, Key: w.key}

	latencies := make([]time.Duration, 0, b.N)
	stages := map[string]float64{}
	var last []byte
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The body is encoded beforehand and the answer read whole: the latency is the
		// request's.
		var resp client.Response
		start := time.Now()
		err := c.Do(context.Background(), http.MethodPost, "/v1/assemblies", body, &resp)
		latencies = append(latencies, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		var t struct {
			TimingsMs map[string]float64 `json:"timingsMs"`
		}
		if err := json.Unmarshal(resp.Body, &t); err != nil {
			b.Fatalf("POST /v1/assemblies: the answer is not the expected JSON: %v", err)
		}
		for k, v := range t.TimingsMs {
			stages[k] += v / float64(b.N)
		}
		last = resp.Body
	}
	b.StopTimer()

	var a client.Assembly
	if err := json.Unmarshal(last, &a); err != nil {
		b.Fatalf("the last assembly is not the expected JSON: %v", err)
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	b.ReportMetric(percentileMs(latencies, 50), "p50-ms")
	b.ReportMetric(percentileMs(latencies, 95), "p95-ms")
	b.ReportMetric(percentileMs(latencies, 99), "p99-ms")
	b.ReportMetric(float64(a.Tokens.Assembled), "assembled-tokens")
	b.ReportMetric(float64(a.Tokens.Baseline), "baseline-tokens")
	b.ReportMetric(w.summary.Elapsed.Seconds(), "seed-s")

	as := map[string]int{}
	for _, inc := range a.Included {
		as[inc.As]++
	}
	b.Logf("N=%d on branch %s (depth %d, %d lineage rounds), %d bytes answered: included %s; omitted %s; mean server timings (ms): %s",
		b.N, target.Name, target.Depth, target.LineageRounds, len(last), countsText(as), countsText(a.Omitted), floatsText(stages))
}

// percentileMs is the nearest-rank percentile of sorted latencies, in milliseconds.
func percentileMs(sorted []time.Duration, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return float64(sorted[max(rank, 1)-1]) / float64(time.Millisecond)
}

func countsText(m map[string]int) string { return mapText(m, "%s=%d") }

func floatsText(m map[string]float64) string { return mapText(m, "%s=%.1f") }

// mapText renders a map in key order with the given key/value format.
func mapText[V int | float64](m map[string]V, format string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf(format, k, m[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}
