// Command ctxbench is ctxgraph's one reproducible benchmark (`make bench`): economy on the
// shared scenarios, assembly latency and store size at scale, the floor of a Neo4j round
// trip, and a mixed read/write load, written up as docs/benchmarks.md with PNG plots.
//
// It wires the API in-process exactly like the integration harness (cypher.Open, Migrate,
// the o200k_base tokenizer, api.New with assembly.NewService) and serves it with a real
// net/http server on 127.0.0.1:0, so every timed request goes over loopback REST. Synthetic
// conversations are written by seed.Generate in-process (seeding is not what is timed).
//
//	go run ./cmd/ctxbench [-quick] [-out docs/benchmarks.md] [-plots docs/plots]
//	                      [-neo4j bolt://127.0.0.1:7687] [-matrix '1000x10x*,100x*x1']
//	                      [-phases economy,floor,scale,load] [-json run.json]
//	go run ./cmd/ctxbench -replot run.json [-out ...] [-plots ...]
//
// The report is rewritten after every phase and scale row (marked interim until the run
// ends); -json keeps every measurement, and -replot renders the report and plots again
// from it without touching Neo4j.
package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"io/fs"
	"maps"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tiktoken-go/tokenizer"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ctxgraph/ctxgraph/api"
	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/blob"
	"github.com/ctxgraph/ctxgraph/cmd/internal/process"
	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/generation"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/provider"
	"github.com/ctxgraph/ctxgraph/scenario"
	"github.com/ctxgraph/ctxgraph/seed"
)

// options are the command's flags.
type options struct {
	quick      bool
	out        string
	plots      string
	neo4jURI   string
	neo4jData  string
	matrix     string
	phases     string
	scenarios  string
	budget     int
	n          int
	nLarge     int
	floorN     int
	loadDur    time.Duration
	clients    string
	cleanup    bool
	pprofDir   string
	seedConc   int
	jsonOut    string
	seedLimit  time.Duration
	replot     string
	args       []string
	phaseOrder []string
}

func main() {
	var o options
	flag.BoolVar(&o.quick, "quick", false, "reduced matrix (rounds 10,100,1000 × branches 1,10 × 1 participant) and 10 s load levels")
	flag.StringVar(&o.out, "out", "docs/benchmarks.md", "the report to write")
	flag.StringVar(&o.plots, "plots", "docs/plots", "directory for the PNG plots")
	flag.StringVar(&o.neo4jURI, "neo4j", orDefault(os.Getenv("NEO4J_URI"), "bolt://127.0.0.1:7687"), "Neo4j Bolt URI (NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE are read from the environment)")
	flag.StringVar(&o.neo4jData, "neo4j-data", "auto", "Neo4j data directory to measure with du -sb; auto: the local launcher's (.neo4j-local/data or $NEO4J_LOCAL_HOME/data) when -neo4j is local; empty: don't")
	flag.StringVar(&o.matrix, "matrix", "", "comma-separated patterns ROUNDSxBRANCHESxPARTICIPANTS (path.Match syntax, e.g. '1000x*x1,100x10x*') selecting the scale rows; empty: all")
	flag.StringVar(&o.phases, "phases", "economy,floor,scale,load,generation", "phases to run")
	flag.StringVar(&o.scenarios, "scenarios", filepath.Join("..", "shared", "scenarios"), "directory of the scenario files")
	flag.IntVar(&o.budget, "budget", 8000, "token budget of the timed assemblies")
	flag.IntVar(&o.n, "n", 200, "timed assemblies per scale row up to 1,000 rounds (at least 100)")
	flag.IntVar(&o.nLarge, "n-large", 100, "timed assemblies per scale row above 1,000 rounds (at least 100)")
	flag.IntVar(&o.floorN, "floor-n", 500, "samples per floor probe")
	flag.DurationVar(&o.loadDur, "load-duration", 0, "duration of each load level (default 30s, 10s with -quick)")
	flag.StringVar(&o.clients, "clients", "1,4,16,64", "concurrent clients of the load levels")
	flag.BoolVar(&o.cleanup, "cleanup", true, "at the end of the run, delete the conversations it made (DELETE /v1/conversations/{id}); failures are reported, not fatal")
	flag.StringVar(&o.pprofDir, "pprof", "", "directory for a Go CPU profile of each scale row's timed assemblies (assembly-ROW), of its assemblies after a write with those writes (afterwrite-ROW), and of each load level (load-N) (off when empty)")
	flag.IntVar(&o.seedConc, "seed-concurrency", 4, "seed.Config.Concurrency (branches written in parallel)")
	flag.DurationVar(&o.seedLimit, "seed-timeout", 15*time.Minute, "give up seeding a scale row after this long and skip the remaining rows of that size (0: no limit)")
	flag.StringVar(&o.jsonOut, "json", "", "also write every measurement as JSON to this file")
	flag.StringVar(&o.replot, "replot", "", "read the measurements of an earlier run from this -json file and only rewrite the report and the plots")
	flag.Parse()
	o.args = os.Args[1:]
	if o.n < 100 || o.nLarge < 100 {
		fatal(fmt.Errorf("-n and -n-large must be at least 100"))
	}
	if o.loadDur == 0 {
		o.loadDur = 30 * time.Second
		if o.quick {
			o.loadDur = 10 * time.Second
		}
	}
	for _, p := range strings.Split(o.phases, ",") {
		p = strings.TrimSpace(p)
		switch p {
		case "economy", "floor", "scale", "load", "generation":
			o.phaseOrder = append(o.phaseOrder, p)
		case "":
		default:
			fatal(fmt.Errorf("unknown phase %q (want economy, floor, scale, load, generation)", p))
		}
	}
	if o.replot != "" {
		if err := replot(o); err != nil {
			fatal(err)
		}
		return
	}
	b, err := newBench(o)
	if err != nil {
		fatal(err)
	}
	err = b.run(context.Background())
	b.close()
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "ctxbench:", err)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s ctxbench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// ---------------------------------------------------------------------------------------
// Wiring

// bench is one run: the server, its client and everything measured.
type bench struct {
	o       options
	store   *cypher.Store
	blobDir string
	srv     *api.Server
	hs      *http.Server
	base    string
	client  *http.Client
	key     string
	account string
	scKeys  map[string]string // scenario file → its own account's key
	dataDir string
	started time.Time
	sys     sysInfo
	phases  []phaseTiming
	speed   []speedProbe
	economy *economyResult
	floor   []floorProbe
	rows    []*scaleRow
	load    *loadResult
	// generation is the generation phase against llm-katan, served at katan until
	// stopKatan.
	generation *generationResult
	// steps collects the generation service's step times.
	steps     stepTimes
	katan     string
	stopKatan func()
	plots     []plotFile
	cleanups  []cleanupResult
	convs     []string // conversations to delete at the end
	failures  []string
	total     time.Duration // set when replotting

	serverErrs      *errorLog
	savedServerErrs []string // when replotting
}

func (b *bench) serverErrLines() []string {
	if b.serverErrs == nil {
		return b.savedServerErrs
	}
	return b.serverErrs.lines()
}

// errorLog counts the server's logged request failures by method, path (ids blanked),
// status and error text.
type errorLog struct {
	mu     sync.Mutex
	counts map[string]int
	order  []string
}

var idPattern = regexp.MustCompile(`\b[a-z]{2,5}_[0-9a-f]{16,}\b`)

func (l *errorLog) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(p, []byte("\n")) {
		var e struct {
			Method string `json:"method"`
			Path   string `json:"path"`
			Status int    `json:"status"`
			Error  string `json:"error"`
			Msg    string `json:"msg"`
		}
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &e) != nil {
			continue
		}
		k := fmt.Sprintf("%s %s → %d: %s", e.Method, idPattern.ReplaceAllString(e.Path, "{id}"), e.Status, clipS(e.Error, 400))
		if e.Method == "" {
			k = e.Msg + ": " + clipS(e.Error, 400)
		}
		l.mu.Lock()
		if l.counts[k] == 0 {
			l.order = append(l.order, k)
		}
		l.counts[k]++
		l.mu.Unlock()
	}
	return len(p), nil
}

var (
	amountPattern   = regexp.MustCompile(`\d+\.\d+`)
	attemptsPattern = regexp.MustCompile(`after \d+ attempts`)
)

// groupErrLines merges "N × cause" lines whose causes differ only in amounts (MiB used,
// retry attempts).
func groupErrLines(lines []string) []string {
	counts := map[string]int{}
	var order []string
	for _, l := range lines {
		n, rest := 1, l
		if c, r, ok := strings.Cut(l, " × "); ok {
			if v, err := strconv.Atoi(c); err == nil {
				n, rest = v, r
			}
		}
		rest = attemptsPattern.ReplaceAllString(amountPattern.ReplaceAllString(rest, "…"), "after … attempts")
		if counts[rest] == 0 {
			order = append(order, rest)
		}
		counts[rest] += n
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, fmt.Sprintf("%d × %s", counts[k], k))
	}
	return out
}

// collapseCleanup folds the failed deletes of the cleanup into one line.
func collapseCleanup(failures []string, account string) []string {
	const prefix = "cleanup: DELETE /v1/conversations/"
	var out, ids []string
	for _, f := range failures {
		if rest, ok := strings.CutPrefix(f, prefix); ok {
			id, _, _ := strings.Cut(rest, " ")
			ids = append(ids, "`"+id+"`")
			continue
		}
		out = append(out, f)
	}
	if len(ids) > 0 {
		out = append(out, fmt.Sprintf("cleanup: `DELETE /v1/conversations/{id}` failed for %d conversation%s of account `%s`, which stay in Neo4j (cause in the server log below): %s",
			len(ids), plural(len(ids), "s"), account, strings.Join(ids, ", ")))
	}
	return out
}

// lines returns "N × cause" for each distinct cause, in first-seen order.
func (l *errorLog) lines() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, k := range l.order {
		out = append(out, fmt.Sprintf("%d × %s", l.counts[k], k))
	}
	return out
}

// results is everything a run measured, as -json writes it and -replot reads it.
type results struct {
	Started    time.Time
	Total      time.Duration
	Args       []string
	Quick      bool
	Matrix     string
	Budget     int
	FloorN     int
	LoadDur    time.Duration
	SeedConc   int
	Scenarios  string
	Base       string
	Account    string
	DataDir    string
	Sys        sysInfo
	Phases     []phaseTiming
	Speed      []speedProbe
	Economy    *economyResult
	Floor      []floorProbe
	Rows       []*scaleRow
	Load       *loadResult
	Generation *generationResult
	Cleanups   []cleanupResult
	Failures   []string
	ServerErr  []string
}

func (b *bench) results() results {
	return results{
		Started: b.started, Total: b.elapsed(), Args: b.o.args, Quick: b.o.quick, Matrix: b.o.matrix, Budget: b.o.budget,
		FloorN: b.o.floorN, LoadDur: b.o.loadDur, SeedConc: b.o.seedConc, Scenarios: b.o.scenarios, Base: b.base,
		Account: b.account, DataDir: b.dataDir, Sys: b.sys, Phases: b.phases, Speed: b.speed, Economy: b.economy, Floor: b.floor,
		Rows: b.rows, Load: b.load, Generation: b.generation, Cleanups: b.cleanups, Failures: b.failures, ServerErr: b.serverErrLines(),
	}
}

func (b *bench) elapsed() time.Duration {
	if b.total > 0 {
		return b.total
	}
	return time.Since(b.started)
}

// replot rewrites the report and the plots from an earlier run's -json file.
func replot(o options) error {
	data, err := os.ReadFile(o.replot)
	if err != nil {
		return err
	}
	var r results
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("%s: %w", o.replot, err)
	}
	o.args, o.quick, o.matrix, o.budget, o.floorN, o.loadDur, o.seedConc, o.scenarios =
		r.Args, r.Quick, r.Matrix, r.Budget, r.FloorN, r.LoadDur, r.SeedConc, r.Scenarios
	o.jsonOut = ""
	b := &bench{o: o, started: r.Started, total: r.Total, base: r.Base, account: r.Account, dataDir: r.DataDir, sys: r.Sys,
		phases: r.Phases, speed: r.Speed, economy: r.Economy, floor: r.Floor, rows: r.Rows, load: r.Load, generation: r.Generation, cleanups: r.Cleanups, failures: r.Failures,
		savedServerErrs: r.ServerErr}
	if err := b.makePlots(); err != nil {
		return err
	}
	return b.writeReport(true)
}

type phaseTiming struct {
	Name    string
	Elapsed time.Duration
}

// speedProbe is one measurement of the machine's CPU speed between phases: how long a
// fixed, single-threaded piece of work took (speedWork), the best of three. The machine is
// a VM on a shared host whose speed has been seen to move by tens of percent within an hour.
// A slow probe says the CPU was slow during the run; a normal one does not vouch for the
// rest (on 2026-12-03 a run was twice as slow end to end with the probe near normal).
type speedProbe struct {
	When string
	Ms   float64
}

// speedText is the fixed work of a speed probe: 400 lines of CSV, 29 KB.
var speedText = func() string {
	var b strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&b, "row-%d,Region %d,%d.%02d,2026-11-%02d,\"note about item %d with some words\"\n", i, i%7, i*13, i%100, i%28+1, i)
	}
	return b.String()
}()

// speedWork tokenizes speedText with the tokenizer library's own split pattern and BPE (not
// ctxgraph's code, so that the probe measures the machine, not the change under test).
func speedWork() time.Duration {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return 0
	}
	best := time.Duration(0)
	for range 3 {
		start := time.Now()
		for range 5 {
			_, _ = codec.Count(speedText)
		}
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
	}
	return best
}

func (b *bench) probeSpeed(when string) {
	ms := float64(speedWork().Microseconds()) / 1000
	b.speed = append(b.speed, speedProbe{When: when, Ms: ms})
	logf("machine speed probe %s: %.1f ms", when, ms)
}

// speedLine summarises the probes for the report's header.
func (b *bench) speedLine() string {
	if len(b.speed) == 0 {
		return "not measured"
	}
	parts := make([]string, len(b.speed))
	for i, p := range b.speed {
		parts[i] = fmt.Sprintf("%.1f ms %s", p.Ms, p.When)
	}
	return strings.Join(parts, ", ")
}

func newBench(o options) (*bench, error) {
	b := &bench{o: o, started: time.Now(), scKeys: map[string]string{}}
	var err error
	if b.blobDir, err = os.MkdirTemp("", "ctxbench-blobs-"); err != nil {
		return nil, err
	}
	blobs, err := blob.Open(b.blobDir)
	if err != nil {
		return nil, err
	}
	process.TuneGarbageCollector()
	b.store, err = cypher.Open(cypher.Config{
		URI: o.neo4jURI, User: os.Getenv("NEO4J_USER"), Password: os.Getenv("NEO4J_PASSWORD"),
		Database: orDefault(os.Getenv("NEO4J_DATABASE"), "neo4j"),
	}, blobs)
	if err != nil {
		return nil, err
	}
	b.store.Tokens = assembly.MustTokenizer("o200k_base")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := b.store.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrating the schema on %s: %w", o.neo4jURI, err)
	}

	run := randomHex(4)
	b.key = "ctxbench-" + randomHex(12)
	b.account = "ctxbench-" + run
	keys := map[string]string{b.key: b.account}
	if slices.Contains(o.phaseOrder, "economy") {
		files, _ := filepath.Glob(filepath.Join(o.scenarios, "*.json"))
		for i, f := range files {
			k := "ctxbench-sc-" + randomHex(12)
			keys[k] = fmt.Sprintf("ctxbench-%s-sc%02d", run, i)
			b.scKeys[f] = k
		}
	}
	// The server logs only failed requests; they go to stderr and, counted by cause, to the
	// report.
	b.serverErrs = &errorLog{counts: map[string]int{}}
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()),
		zapcore.AddSync(io.MultiWriter(os.Stderr, b.serverErrs)), zap.ErrorLevel))
	asm := assembly.NewService(b.store)
	var providers []provider.Config
	if slices.Contains(o.phaseOrder, "generation") {
		if b.katan, b.stopKatan, err = startKatan(); err != nil {
			return nil, err
		}
		if providers, err = katanProviders(b.katan); err != nil {
			return nil, err
		}
	}
	b.srv = api.New(api.Config{
		Graph: b.store, Idempotency: b.store, Health: b.store,
		Assembler: asm, Assemblies: b.store, Keys: keys, Log: log,
		Generator: &generation.Service{Graph: b.store, Calls: b.store, Assembler: asm, Providers: provider.NewRegistry(providers),
			Observe: b.steps.observe},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b.hs = &http.Server{Handler: b.srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = b.hs.Serve(ln) }()
	b.base = "http://" + ln.Addr().String()
	b.client = &http.Client{
		Timeout: 10 * time.Minute,
		Transport: &http.Transport{
			Proxy: nil, MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: 90 * time.Second,
			DisableCompression: true,
			DialContext:        (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		},
	}
	b.dataDir = neo4jDataDir(o)
	b.sys = readSysInfo(o, b.dataDir)
	logf("serving on %s (Neo4j %s, blobs %s, Neo4j data dir %q)", b.base, o.neo4jURI, b.blobDir, b.dataDir)
	return b, nil
}

func (b *bench) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = b.hs.Shutdown(ctx)
	_ = b.store.Close(ctx)
	if b.stopKatan != nil {
		b.stopKatan()
	}
	_ = os.RemoveAll(b.blobDir)
}

func (b *bench) run(ctx context.Context) error {
	for _, p := range b.o.phaseOrder {
		b.probeSpeed("before " + p)
		start := time.Now()
		logf("phase %s", p)
		switch p {
		case "economy":
			b.runEconomy(ctx)
		case "floor":
			b.runFloor(ctx)
		case "scale":
			b.runScale(ctx)
		case "load":
			b.runLoad(ctx)
		case "generation":
			b.runGeneration(ctx)
		}
		b.phases = append(b.phases, phaseTiming{p, time.Since(start)})
		logf("phase %s done in %s", p, time.Since(start).Round(time.Millisecond))
		if err := b.writeReport(false); err != nil {
			return err
		}
	}
	b.probeSpeed("after the last phase")
	if b.o.cleanup {
		start := time.Now()
		b.runCleanup(ctx)
		b.phases = append(b.phases, phaseTiming{"cleanup", time.Since(start)})
	}
	start := time.Now()
	if err := b.makePlots(); err != nil {
		b.failures = append(b.failures, "plots: "+err.Error())
		logf("plots failed: %v", err)
	}
	b.phases = append(b.phases, phaseTiming{"plots", time.Since(start)})
	return b.writeReport(true)
}

// call sends one request over loopback and reads the whole answer; the duration covers
// both.
func (b *bench) call(ctx context.Context, key, method, p string, body []byte) (int, []byte, time.Duration, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.base+p, r)
	if err != nil {
		return 0, nil, 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	start := time.Now()
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, nil, time.Since(start), err
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, out, time.Since(start), err
}

// ---------------------------------------------------------------------------------------
// Economy

type economyResult struct {
	Files   int
	Results []scenario.Result
	Table   string
	Errors  []string
	Elapsed time.Duration
}

func (b *bench) runEconomy(ctx context.Context) {
	start := time.Now()
	files, err := filepath.Glob(filepath.Join(b.o.scenarios, "*.json"))
	e := &economyResult{Files: len(files)}
	b.economy = e
	if err != nil || len(files) == 0 {
		e.Errors = append(e.Errors, fmt.Sprintf("no scenario files in %s (%v)", b.o.scenarios, err))
		b.failures = append(b.failures, "economy: no scenario files")
		return
	}
	for _, f := range files {
		name := filepath.Base(f)
		sc, err := scenario.Load(f)
		if err != nil {
			e.Results = append(e.Results, scenario.Result{Scenario: name, PlaybackError: err.Error()})
			e.Errors = append(e.Errors, name+": loading: "+err.Error())
			continue
		}
		runner := scenario.Runner{Client: b.client, BaseURL: b.base, Key: b.scKeys[f]}
		res, err := runner.Run(ctx, sc)
		e.Results = append(e.Results, res)
		if err != nil {
			e.Errors = append(e.Errors, name+": playback: "+err.Error())
		}
		for _, a := range res.Assemblies {
			for _, fl := range a.Failures {
				e.Errors = append(e.Errors, fmt.Sprintf("%s %s: %s", name, a.Key, fl))
			}
		}
		if res.ConversationID != "" {
			b.convs = append(b.convs, b.scKeys[f]+"|"+res.ConversationID)
		}
	}
	e.Table = scenario.Table(e.Results)
	e.Elapsed = time.Since(start)
	if len(e.Errors) > 0 {
		b.failures = append(b.failures, fmt.Sprintf("economy: %d scenario expectation or playback failures", len(e.Errors)))
	}
	logf("economy: %d scenario files in %s, %d failures", len(files), e.Elapsed.Round(time.Millisecond), len(e.Errors))
}

// ---------------------------------------------------------------------------------------
// Floor

type floorProbe struct {
	Name   string
	What   string
	Stats  stats
	Errors int
	Err    string
}

func (b *bench) runFloor(ctx context.Context) {
	n := b.o.floorN
	var probes []floorProbe

	probes = append(probes, sample("store.Ping (driver VerifyConnectivity)",
		"the driver's VerifyConnectivity through cypher.Store.Ping (no Cypher statement; see the note below)", n,
		func() (time.Duration, error) {
			start := time.Now()
			err := b.store.Ping(ctx)
			return time.Since(start), err
		}))

	probes = append(probes, sample("Bolt RETURN 1 (store.RoundTrip)",
		"the issue's bare Bolt round trip: `RETURN 1` in a managed read transaction through the driver (session, BEGIN, RUN and PULL, COMMIT on a pooled connection)", n,
		func() (time.Duration, error) {
			start := time.Now()
			err := b.store.RoundTrip(ctx)
			return time.Since(start), err
		}))

	if addr, ok := boltAddr(b.o.neo4jURI); ok {
		probes = append(probes, sample("Bolt handshake (TCP connect + version negotiation)",
			"a fresh TCP connection to the Bolt port, the Bolt preamble and version proposal, the server's 4-byte answer; no driver, no Cypher", n,
			func() (time.Duration, error) { return boltHandshake(addr) }))
	}

	probes = append(probes, sample("GET /healthz over REST",
		"loopback HTTP + Echo routing; Neo4j not involved", n,
		func() (time.Duration, error) {
			return b.expect(ctx, "", http.MethodGet, "/healthz", nil, http.StatusOK)
		}))
	probes = append(probes, sample("GET /readyz over REST",
		"loopback HTTP + store.Ping", n,
		func() (time.Duration, error) { return b.expect(ctx, "", http.MethodGet, "/readyz", nil, http.StatusOK) }))

	// The smallest Cypher round trip reachable over REST: read a one-branch conversation.
	st, body, _, err := b.call(ctx, b.key, http.MethodPost, "/v1/conversations", mustJSON(map[string]any{"title": "ctxbench floor"}))
	var conv struct {
		ID string `json:"id"`
	}
	if err == nil && st == http.StatusCreated {
		_ = json.Unmarshal(body, &conv)
	}
	if conv.ID != "" {
		b.convs = append(b.convs, b.key+"|"+conv.ID)
		probes = append(probes, sample("GET /v1/conversations/{id} over REST",
			"loopback HTTP + auth + one read transaction running one small indexed Cypher query (ReadConversation on a one-branch conversation)", n,
			func() (time.Duration, error) {
				return b.expect(ctx, b.key, http.MethodGet, "/v1/conversations/"+conv.ID, nil, http.StatusOK)
			}))
	} else {
		b.failures = append(b.failures, fmt.Sprintf("floor: creating the probe conversation answered %d %s (%v)", st, clip(body), err))
	}
	b.floor = probes
	for _, p := range probes {
		logf("floor %s: p50 %s p99 %s errors %d", p.Name, ms(p.Stats.P50), ms(p.Stats.P99), p.Errors)
		if p.Errors > 0 {
			b.failures = append(b.failures, fmt.Sprintf("floor %s: %d errors (%s)", p.Name, p.Errors, p.Err))
		}
	}
}

// sample times fn n times after n/10 untimed warm-up calls.
func sample(name, what string, n int, fn func() (time.Duration, error)) floorProbe {
	p := floorProbe{Name: name, What: what}
	for i := 0; i < n/10; i++ {
		_, _ = fn()
	}
	var ds []time.Duration
	for i := 0; i < n; i++ {
		d, err := fn()
		if err != nil {
			p.Errors++
			p.Err = err.Error()
			continue
		}
		ds = append(ds, d)
	}
	p.Stats = summarize(ds)
	return p
}

func (b *bench) expect(ctx context.Context, key, method, p string, body []byte, want int) (time.Duration, error) {
	st, out, d, err := b.call(ctx, key, method, p, body)
	if err != nil {
		return d, err
	}
	if st != want {
		return d, fmt.Errorf("%s %s answered %d, want %d: %s", method, p, st, want, clip(out))
	}
	return d, nil
}

func boltAddr(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "bolt" && u.Scheme != "neo4j") {
		return "", false
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "7687")
	}
	return host, true
}

// boltHandshake opens a TCP connection, proposes Bolt 5.0–5.8 and 4.4 and reads the
// server's choice: the cheapest exchange that the Bolt server itself answers.
func boltHandshake(addr string) (time.Duration, error) {
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	msg := []byte{0x60, 0x60, 0xB0, 0x17,
		0x00, 0x08, 0x08, 0x05, // 5.8 down to 5.0
		0x00, 0x00, 0x04, 0x04, // 4.4
		0, 0, 0, 0, 0, 0, 0, 0}
	if _, err := c.Write(msg); err != nil {
		return 0, err
	}
	var v [4]byte
	if _, err := io.ReadFull(c, v[:]); err != nil {
		return 0, err
	}
	d := time.Since(start)
	if v == [4]byte{} {
		return d, errors.New("the server accepted none of the proposed Bolt versions")
	}
	return d, nil
}

// ---------------------------------------------------------------------------------------
// Scale

type scaleRow struct {
	Rounds, Branches, Participants int
	// HeapMB is the Go heap live after the row (after a forced collection): the server's
	// conversation copies, views and judgements, with the benchmark's own data.
	HeapMB                  float64
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
		sum, err := seed.Generate(sctx, seed.Client{Handler: b.srv, Key: b.key}, row.config(b.o.seedConc))
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
	return mustJSON(map[string]any{
		"branchId": target.ID, "participantId": target.LastRunParticipantID, "runId": target.LastRunID,
		"tokenBudget": b.o.budget, "trace": false,
		// Freshness is judged just after the synthetic timeline ends, as bench_test.go does.
		"now": sum.LastEventAt.Add(5 * time.Minute).Format(time.RFC3339),
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
	st, out, d, err := b.call(ctx, b.key, http.MethodPost, "/v1/assemblies", body)
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
	st, out, _, err = b.call(ctx, b.key, http.MethodPost, "/v1/branches/"+row.Target.ID+"/runs", mustJSON(map[string]any{
		"participantId": row.Target.LastRunParticipantID, "runtimeKind": "chat", "triggerMessageId": row.Target.LastMessageID,
	}))
	var run struct {
		ID string `json:"id"`
	}
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
	logf("scale %s: %d assemblies on %s (depth %d, %d lineage rounds): p50 %s p95 %s p99 %s, tokens %d/%d, errors %d; after a write p50 %s p99 %s; Go heap live %.0f MB",
		row.name(), len(t.ds), row.Target.Name, row.Target.Depth, row.Target.LineageRounds, ms(row.Lat.P50), ms(row.Lat.P95), ms(row.Lat.P99),
		row.Assembled, row.Baseline, row.Errors, ms(row.AfterWrite.P50), ms(row.AfterWrite.P99), row.HeapMB)
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

// ---------------------------------------------------------------------------------------
// Load

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
		s, err := seed.Generate(ctx, seed.Client{Handler: b.srv, Key: b.key}, row.config(b.o.seedConc))
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
		st, out, _, err := b.call(ctx, b.key, http.MethodPost, "/v1/branches/"+br.ID+"/runs", mustJSON(map[string]any{
			"participantId": pid, "runtimeKind": "chat", "triggerMessageId": br.LastMessageID,
		}))
		var id struct {
			ID string `json:"id"`
		}
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
	neoBefore, selfBefore := b.neo4jCPU(), selfCPU()
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
	lv.Neo4jCores = -1
	if neoAfter := b.neo4jCPU(); neoBefore >= 0 && neoAfter >= neoBefore {
		lv.Neo4jCores = (neoAfter - neoBefore).Seconds() / lv.Elapsed.Seconds()
	}
	lv.SelfCores = (selfCPU() - selfBefore).Seconds() / lv.Elapsed.Seconds()
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
	st, out, d, err := b.call(ctx, b.key, http.MethodPost, "/v1/runs/"+run+"/tool-calls", mustJSON(map[string]any{
		"tool": "web_search", "callId": callID, "arguments": map[string]any{"query": "ctxbench load " + callID, "limit": 10},
	}))
	if err != nil || st != http.StatusCreated {
		return nil, 1, fmt.Sprintf("POST tool-calls: %d %v %s", st, err, clip(out))
	}
	ds = append(ds, d)
	var id struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(out, &id)
	st, out, d, err = b.call(ctx, b.key, http.MethodPost, "/v1/tool-calls/"+id.ID+"/result", mustJSON(map[string]any{
		"status": "succeeded", "result": searchResult(rng, callID), "toolVersion": "ctxbench-1",
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

// ---------------------------------------------------------------------------------------
// Cleanup

type cleanupResult struct {
	Conversation string
	Elapsed      time.Duration
	Err          string
}

func (b *bench) runCleanup(ctx context.Context) {
	for _, kc := range b.convs {
		key, id, _ := strings.Cut(kc, "|")
		st, out, d, err := b.call(ctx, key, http.MethodDelete, "/v1/conversations/"+id, nil)
		c := cleanupResult{Conversation: id, Elapsed: d}
		if err != nil || (st != http.StatusNoContent && st != http.StatusOK) {
			c.Err = fmt.Sprintf("%d %v %s", st, err, clip(out))
			b.failures = append(b.failures, fmt.Sprintf("cleanup: DELETE /v1/conversations/%s (account %s) failed after %s: %s",
				id, b.account, d.Round(time.Millisecond), clipS(c.Err, 300)))
		}
		b.cleanups = append(b.cleanups, c)
	}
	failed := 0
	for _, c := range b.cleanups {
		if c.Err != "" {
			failed++
		}
	}
	logf("cleanup: %d conversations deleted, %d failed", len(b.cleanups)-failed, failed)
}

// ---------------------------------------------------------------------------------------
// Plots

type plotFile struct {
	Title string
	Path  string
}

var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
	{0xff, 0x7f, 0x0e, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
}

// series groups the measured rows by branches × participants, ordered by rounds.
func (b *bench) series() (keys []string, by map[string][]*scaleRow) {
	by = map[string][]*scaleRow{}
	for _, r := range b.sortedRows() {
		if !r.measured() {
			continue
		}
		k := fmt.Sprintf("%d branch%s, %d participant%s", r.Branches, plural(r.Branches, "es"), r.Participants, plural(r.Participants, "s"))
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	return keys, by
}

func (b *bench) makePlots() error {
	if err := os.MkdirAll(b.o.plots, 0o755); err != nil {
		return err
	}
	keys, by := b.series()
	var errs []error
	if len(keys) > 0 {
		errs = append(errs, b.plotTokens(keys, by), b.plotLatency(keys, by))
	}
	if b.load != nil && len(b.load.Levels) > 0 {
		errs = append(errs, b.plotThroughput())
	}
	return errors.Join(errs...)
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.X.Label.TextStyle.Font.Size = vg.Points(12)
	p.Y.Label.TextStyle.Font.Size = vg.Points(12)
	p.X.Tick.Label.Font.Size = vg.Points(10)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Add(plotter.NewGrid())
	return p
}

func logAxis(a *plot.Axis) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = logTicks{}
}

// logTicks labels 1, 2 and 5 × 10^k on a log axis (plot.LogTicks labels only powers of
// ten, which leaves a short range with one label), with minor ticks between.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * p
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (hi/lo < 2000 && (m == 2 || m == 5)) {
				t.Label = shortNumber(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// shortNumber writes 20, 500, 2k, 50k, 1M, 0.5.
func shortNumber(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	default:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
}

// headroom raises the top of the y axis so that the legend (top left) clears the data.
func headroom(p *plot.Plot, factor float64) {
	p.Y.Max *= factor
}

func addLine(p *plot.Plot, xys plotter.XYs, c color.Color, dashed bool, shape draw.GlyphDrawer, label string) error {
	l, pts, err := plotterLinePoints(xys)
	if err != nil {
		return err
	}
	l.Color, l.Width = c, vg.Points(1.6)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
	pts.Color, pts.Shape, pts.Radius = c, shape, vg.Points(3)
	p.Add(l, pts)
	p.Legend.Add(label, l, pts)
	return nil
}

func plotterLinePoints(xys plotter.XYs) (*plotter.Line, *plotter.Scatter, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, nil, err
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, nil, err
	}
	return l, s, nil
}

func (b *bench) save(p *plot.Plot, name, title string) error {
	if _, ok := p.X.Scale.(plot.LogScale); ok {
		// Room for the first and last tick labels.
		p.X.Min, p.X.Max = p.X.Min/1.15, p.X.Max*1.15
	}
	file := filepath.Join(b.o.plots, name)
	if err := p.Save(9*vg.Inch, 6*vg.Inch, file); err != nil {
		return err
	}
	b.plots = append(b.plots, plotFile{Title: title, Path: file})
	return nil
}

func (b *bench) plotTokens(keys []string, by map[string][]*scaleRow) error {
	p := newPlot("Prompt tokens: history replay vs assembled (budget "+thousands(b.o.budget)+")",
		"tool rounds in the conversation (log)", "tokens (log)")
	logAxis(&p.X)
	logAxis(&p.Y)
	p.Legend.Top, p.Legend.Left = true, true
	minX, maxX := 1e18, 0.0
	for i, k := range keys {
		var rep, asm plotter.XYs
		for _, r := range by[k] {
			x := float64(r.Rounds)
			minX, maxX = min(minX, x), max(maxX, x)
			if r.Baseline > 0 {
				rep = append(rep, plotter.XY{X: x, Y: float64(r.Baseline)})
			}
			if r.Assembled > 0 {
				asm = append(asm, plotter.XY{X: x, Y: float64(r.Assembled)})
			}
		}
		c := palette[i%len(palette)]
		if len(rep) > 0 {
			if err := addLine(p, rep, c, false, draw.CircleGlyph{}, "replay, "+k); err != nil {
				return err
			}
		}
		if len(asm) > 0 {
			if err := addLine(p, asm, c, true, draw.TriangleGlyph{}, "assembled, "+k); err != nil {
				return err
			}
		}
	}
	if maxX > 0 {
		bl, err := plotter.NewLine(plotter.XYs{{X: minX, Y: float64(b.o.budget)}, {X: maxX, Y: float64(b.o.budget)}})
		if err != nil {
			return err
		}
		bl.Color, bl.Width, bl.Dashes = color.Gray{0x55}, vg.Points(1), []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(bl)
		p.Legend.Add("token budget", bl)
	}
	headroom(p, 20)
	return b.save(p, "tokens-vs-rounds.png", "Tokens against tool rounds")
}

func (b *bench) plotLatency(keys []string, by map[string][]*scaleRow) error {
	p := newPlot("Assembly latency over REST (p50 solid, p99 dashed)", "tool rounds in the conversation (log)", "milliseconds (log)")
	logAxis(&p.X)
	logAxis(&p.Y)
	p.Legend.Top, p.Legend.Left = true, true
	for i, k := range keys {
		var p50, p99 plotter.XYs
		for _, r := range by[k] {
			p50 = append(p50, plotter.XY{X: float64(r.Rounds), Y: msf(r.Lat.P50)})
			p99 = append(p99, plotter.XY{X: float64(r.Rounds), Y: msf(r.Lat.P99)})
		}
		c := palette[i%len(palette)]
		if err := addLine(p, p50, c, false, draw.CircleGlyph{}, "p50, "+k); err != nil {
			return err
		}
		if err := addLine(p, p99, c, true, draw.TriangleGlyph{}, "p99, "+k); err != nil {
			return err
		}
	}
	// The targets (at 10,000 rounds × 50 branches), for scale.
	for _, t := range []struct {
		ms    float64
		label string
	}{{10, "target p50 ≤ 10 ms (10k rounds × 50 branches)"}, {30, "target p99 ≤ 30 ms"}} {
		tl, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: t.ms}, {X: p.X.Max, Y: t.ms}})
		if err != nil {
			return err
		}
		tl.Color, tl.Width, tl.Dashes = color.Gray{0x55}, vg.Points(1), []vg.Length{vg.Points(2), vg.Points(2)}
		if t.ms == 30 {
			tl.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
		}
		p.Add(tl)
		p.Legend.Add(t.label, tl)
	}
	headroom(p, 4)
	return b.save(p, "latency-vs-rounds.png", "Assembly latency against tool rounds")
}

func (b *bench) plotThroughput() error {
	p := newPlot(fmt.Sprintf("Mixed load (50 %% assemblies, 50 %% tool-result writes), %g s per level", b.o.loadDur.Seconds()),
		"concurrent clients (log)", "per second")
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	var req, asm, res plotter.XYs
	for _, lv := range b.load.Levels {
		x := float64(lv.Clients)
		ticks = append(ticks, plot.Tick{Value: x, Label: strconv.Itoa(lv.Clients)})
		req = append(req, plotter.XY{X: x, Y: rate(lv.Requests, lv.Elapsed)})
		asm = append(asm, plotter.XY{X: x, Y: rate(lv.Assemblies, lv.Elapsed)})
		res = append(res, plotter.XY{X: x, Y: rate(lv.ToolResults, lv.Elapsed)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min = 0
	p.Legend.Top, p.Legend.Left = true, true
	if err := addLine(p, req, palette[0], false, draw.CircleGlyph{}, "HTTP requests/s (all)"); err != nil {
		return err
	}
	if err := addLine(p, asm, palette[1], false, draw.TriangleGlyph{}, "assemblies/s"); err != nil {
		return err
	}
	if err := addLine(p, res, palette[2], true, draw.BoxGlyph{}, "tool results written/s (2 requests each)"); err != nil {
		return err
	}
	headroom(p, 1.4)
	return b.save(p, "throughput-vs-clients.png", "Throughput against concurrent clients")
}

// ---------------------------------------------------------------------------------------
// Report

func (b *bench) writeReport(final bool) error {
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
	pf("| wiring | ctxgraph in-process (cypher.Open, Migrate, o200k_base tokenizer, api.New with assembly.NewService) behind a real `net/http` server on %s; every timed request goes over loopback HTTP. The benchmark client runs in the same process (it shares the %d CPUs with the server and with Neo4j). |\n", b.base, s.NProc)
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
	if b.o.jsonOut != "" {
		data, err := json.MarshalIndent(b.results(), "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(b.o.jsonOut, data, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(b.o.out, []byte(w.String()), 0o644)
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
			ms(r.AfterWrite.P50), ms(r.AfterWrite.P95), ms(r.AfterWrite.P99), w.Graph, w.Policy, w.Serialize, w.Record, multiple(r.AfterWrite.P50, r.Lat.P50))
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
	pf("\nWhere a target is missed, [performance.md](performance.md) (written by hand, not by this run) gives the profile that explains it (Go pprof of the server, Neo4j `PROFILE` of the conversation read in [traversal-profile.md](traversal-profile.md)) and what was fixed; `-pprof DIR` writes a Go CPU profile of each scale row's timed assemblies and of its assemblies after a write, the log gives each row's statements as the driver and as Neo4j timed them, and `scripts/profile-traversal` profiles the read.\n\n")
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

// ---------------------------------------------------------------------------------------
// Machine and sizes

type sysInfo struct {
	NProc  int
	Mem    string
	CPU    string
	Kernel string
	Neo4j  string
	Code   string
}

func readSysInfo(o options, dataDir string) sysInfo {
	s := sysInfo{NProc: runtime.NumCPU(), Mem: "memory unknown", CPU: "CPU model unknown", Kernel: runtime.GOOS + "/" + runtime.GOARCH}
	if out, err := exec.Command("nproc").Output(); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil {
			s.NProc = n
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "MemTotal:") {
				f := strings.Fields(line)
				if len(f) >= 2 {
					if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
						s.Mem = fmt.Sprintf("%.1f GiB RAM", kb/1024/1024)
					}
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				if _, v, ok := strings.Cut(line, ":"); ok {
					s.CPU = strings.TrimSpace(v)
					break
				}
			}
		}
	}
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		s.Kernel = strings.TrimSpace(string(out))
	}
	s.Code = codeVersion()
	s.Neo4j = "version unknown (" + o.neo4jURI + ")"
	if dataDir != "" {
		home := filepath.Dir(dataDir)
		jars, _ := filepath.Glob(filepath.Join(home, "lib", "neo4j-kernel-[0-9]*.jar"))
		if len(jars) > 0 {
			v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(jars[0]), "neo4j-kernel-"), ".jar")
			set := startupSettings(filepath.Join(home, "logs", "debug.log"), "server.memory.heap.max_size",
				"server.memory.pagecache.size", "dbms.memory.transaction.total.max")
			s.Neo4j = fmt.Sprintf("Community %s, the project's local launcher (%s): heap %s, page cache %s, transaction memory %s (as its debug.log reports them); shared with whatever else uses it during the run",
				v, o.neo4jURI, set[0], set[1], set[2])
		}
	}
	return s
}

// codeVersion names the commit the benchmark was built from, from git in the working
// directory (make bench runs in the repository), and says whether tracked files differed from
// it: a report measures the code it names, not whatever is committed later.
func codeVersion() string {
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown (not run in a git checkout)"
	}
	v := "commit " + strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err != nil {
		v += " (working tree not checked)"
	} else if len(strings.TrimSpace(string(st))) > 0 {
		v += " with uncommitted changes to tracked files"
	}
	return v
}

// startupSettings returns the values of the named settings as the last start of Neo4j
// logged them in its debug.log ("?" for one not found).
func startupSettings(debugLog string, names ...string) []string {
	out := make([]string, len(names))
	for i := range out {
		out[i] = "?"
	}
	body, err := os.ReadFile(debugLog)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(body), "\n") {
		line = strings.TrimSpace(line)
		for i, n := range names {
			if v, ok := strings.CutPrefix(line, n+"="); ok {
				out[i] = v
			}
		}
	}
	return out
}

// neo4jDataDir is the Neo4j data directory to measure, when it is known.
func neo4jDataDir(o options) string {
	if o.neo4jData != "auto" {
		return o.neo4jData
	}
	u, err := url.Parse(o.neo4jURI)
	if err != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost") {
		return ""
	}
	home := orDefault(os.Getenv("NEO4J_LOCAL_HOME"), ".neo4j-local")
	dir, err := filepath.Abs(filepath.Join(home, "data"))
	if err != nil {
		return ""
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	return dir
}

// du is `du -sb` of a directory under the Neo4j data directory, or 0.
func (b *bench) du(sub string) int64 {
	if b.dataDir == "" {
		return 0
	}
	return max(duBytes(filepath.Join(b.dataDir, sub)), 0)
}

// duData is `du -sb` of the Neo4j data directory, or -1.
func (b *bench) duData() int64 {
	if b.dataDir == "" {
		return -1
	}
	return duBytes(b.dataDir)
}

func duBytes(dir string) int64 {
	// du exits non-zero when Neo4j removes a file (a rotated transaction log) while it
	// walks; it still prints the total, so the exit status alone is not a failure.
	for attempt := 0; attempt < 3; attempt++ {
		out, _ := exec.Command("du", "-sb", dir).Output()
		if f := strings.Fields(string(out)); len(f) > 0 {
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

// dirBytes sums the sizes of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// ---------------------------------------------------------------------------------------
// Statistics and formatting

type stats struct {
	N                            int
	Min, P50, P95, P99, Max, Avg time.Duration
}

// summarize computes nearest-rank percentiles, as integration/bench_test.go does.
func summarize(ds []time.Duration) stats {
	if len(ds) == 0 {
		return stats{}
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	pct := func(p int) time.Duration {
		rank := (p*len(s) + 99) / 100
		return s[max(rank, 1)-1]
	}
	return stats{N: len(s), Min: s[0], P50: pct(50), P95: pct(95), P99: pct(99), Max: s[len(s)-1], Avg: sum / time.Duration(len(s))}
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ms(d time.Duration) string {
	switch f := msf(d); {
	case d == 0:
		return "—"
	case f < 1:
		return fmt.Sprintf("%.3f", f)
	case f < 100:
		return fmt.Sprintf("%.2f", f)
	default:
		return fmt.Sprintf("%.1f", f)
	}
}

func multiple(d, floor time.Duration) string {
	if d == 0 || floor == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f×", float64(d)/float64(floor))
}

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func mb(n int64) string {
	if n < 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func plural(n int, suffix string) string {
	if n == 1 {
		return ""
	}
	return suffix
}

func parseInts(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		out = []int{1}
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func clip(b []byte) string { return clipS(string(b), 200) }

func clipS(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func oneLine(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func orDash(s string) string {
	if s == "" {
		return "the Neo4j data directory (not measured: not a local launcher)"
	}
	return "`" + s + "`"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
