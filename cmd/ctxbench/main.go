// Command ctxbench is ctxgraph's one reproducible benchmark (`make bench`): economy on the
// shared scenarios, assembly latency and store size at scale, the floor of a Neo4j round
// trip, and a mixed read/write load, written up as docs/benchmarks.md with PNG plots.
//
// It wires the API in-process with server.New, as cmd/ctxgraph and the integration harness
// do (over server.OpenStore and Migrate), and serves it with a real
// net/http server on 127.0.0.1:0, so every timed request goes over loopback REST. Synthetic
// conversations are written by seed.Generate in-process (seeding is not what is timed).
//
//	go run ./cmd/ctxbench [-quick] [-out docs/benchmarks.md] [-plots docs/plots]
//	                      [-neo4j bolt://127.0.0.1:7687] [-matrix '1000x10x*,100x*x1']
//	                      [-phases economy,floor,scale,load,generation,peers,conversations]
//	                      [-conversations-out docs/conversations.md] [-json run.json]
//	go run ./cmd/ctxbench -replot run.json [-out ...] [-plots ...]
//
// The report is rewritten after every phase and scale row (marked interim until the run
// ends); -json keeps every measurement, and -replot renders the report and plots again
// from it without touching Neo4j.
//
// The conversations phase writes its own file (-conversations-out), which the report links
// to; run alone (-phases conversations) it writes only that file, so the report's other
// sections, measured by another run, are left as they are.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ctxgraph/ctxgraph/api"
	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/cmd/internal/process"
	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/provider"
	"github.com/ctxgraph/ctxgraph/server"
)

// options are the command's flags.
type options struct {
	quick     bool
	out       string
	plots     string
	neo4jURI  string
	neo4jData string
	matrix    string
	phases    string
	scenarios string
	// conversations is the directory of the conversation files, conversationsOut the
	// file the conversations phase writes.
	conversations    string
	conversationsOut string
	budget           int
	n                int
	nLarge           int
	floorN           int
	loadDur          time.Duration
	clients          string
	cleanup          bool
	pprofDir         string
	seedConc         int
	jsonOut          string
	seedLimit        time.Duration
	replot           string
	args             []string
	phaseOrder       []string
}

func main() {
	var o options
	flag.BoolVar(&o.quick, "quick", false, "reduced matrix (rounds 10,100,1000 × branches 1,10 × 1 participant) and 10 s load levels")
	flag.StringVar(&o.out, "out", "docs/benchmarks.md", "the report to write")
	flag.StringVar(&o.plots, "plots", "docs/plots", "directory for the PNG plots")
	flag.StringVar(&o.neo4jURI, "neo4j", orDefault(os.Getenv("NEO4J_URI"), "bolt://127.0.0.1:7687"), "Neo4j Bolt URI (NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE are read from the environment)")
	flag.StringVar(&o.neo4jData, "neo4j-data", "auto", "Neo4j data directory to measure with du -sb; auto: the local launcher's (.neo4j-local/data or $NEO4J_LOCAL_HOME/data) when -neo4j is local; empty: don't")
	flag.StringVar(&o.matrix, "matrix", "", "comma-separated patterns ROUNDSxBRANCHESxPARTICIPANTS (path.Match syntax, e.g. '1000x*x1,100x10x*') selecting the scale rows; empty: all")
	flag.StringVar(&o.phases, "phases", "economy,floor,scale,load,generation,peers,conversations", "phases to run")
	flag.StringVar(&o.scenarios, "scenarios", filepath.Join("..", "shared", "scenarios"), "directory of the scenario files")
	flag.StringVar(&o.conversations, "conversations", filepath.Join("scenario", "testdata", "conversations"), "directory of the conversation files (the conversations phase)")
	flag.StringVar(&o.conversationsOut, "conversations-out", "docs/conversations.md", "the file the conversations phase writes (linked from -out)")
	flag.IntVar(&o.budget, "budget", 8000, "token budget of the timed assemblies")
	flag.IntVar(&o.n, "n", 200, "timed assemblies per scale row up to 1,000 rounds (at least 100)")
	flag.IntVar(&o.nLarge, "n-large", 100, "timed assemblies per scale row above 1,000 rounds (at least 100)")
	flag.IntVar(&o.floorN, "floor-n", 500, "samples per floor probe")
	flag.DurationVar(&o.loadDur, "load-duration", 0, "duration of each load level (default 30s, 10s with -quick)")
	flag.StringVar(&o.clients, "clients", "1,4,16,64", "concurrent clients of the load levels")
	flag.BoolVar(&o.cleanup, "cleanup", true, "at the end of the run, delete the conversations it made (DELETE /v1/conversations/{id}); failures are reported, not fatal")
	flag.StringVar(&o.pprofDir, "pprof", "", "directory for a Go CPU profile of each scale row's timed assemblies (assembly-ROW), of its assemblies after a write with those writes (afterwrite-ROW), and of its first (cold) assembly (cold-ROW), of each load level (load-N), of each generation row's unstreamed generations but the first (generations-ROW) and of its tool steps (toolsteps-ROW), and a heap profile after each row (heap-ROW) (off when empty)")
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
		case "economy", "floor", "scale", "load", "generation", "peers", "conversations":
			o.phaseOrder = append(o.phaseOrder, p)
		case "":
		default:
			fatal(fmt.Errorf("unknown phase %q (want economy, floor, scale, load, generation, peers, conversations)", p))
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

// bench is one run: the server, its client and everything measured.
type bench struct {
	// dropInModelName is the model the drop-in calls name (provider/model), from a generation.
	dropInModelName string
	o               options
	store           *cypher.Store
	assembler       *assembly.Service
	blobDir         string
	srv             *api.Server
	hs              *http.Server
	base            string
	client          *http.Client
	// api is the REST client of the server, over client.
	api     *client.Client
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
	peers      *peersResult // the peers phase (peers.go)
	// conversations is the conversations phase (conversations.go), played as the account
	// of convKey on servers of their own, logging to log.
	conversations *conversationsResult
	convKey       string
	log           *zap.Logger
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
	Peers      *peersResult
	// Conversations is the conversations phase.
	Conversations *conversationsResult
	Cleanups      []cleanupResult
	Failures      []string
	ServerErr     []string
}

func (b *bench) results() results {
	return results{
		Started: b.started, Total: b.elapsed(), Args: b.o.args, Quick: b.o.quick, Matrix: b.o.matrix, Budget: b.o.budget,
		FloorN: b.o.floorN, LoadDur: b.o.loadDur, SeedConc: b.o.seedConc, Scenarios: b.o.scenarios, Base: b.base,
		Account: b.account, DataDir: b.dataDir, Sys: b.sys, Phases: b.phases, Speed: b.speed, Economy: b.economy, Floor: b.floor,
		Rows: b.rows, Load: b.load, Generation: b.generation, Peers: b.peers, Conversations: b.conversations, Cleanups: b.cleanups, Failures: b.failures, ServerErr: b.serverErrLines(),
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
	// The phases the run measured decide which reports are written again.
	o.phaseOrder = nil
	for _, p := range r.Phases {
		if p.Name != "cleanup" && p.Name != "plots" {
			o.phaseOrder = append(o.phaseOrder, p.Name)
		}
	}
	o.jsonOut = ""
	b := &bench{o: o, started: r.Started, total: r.Total, base: r.Base, account: r.Account, dataDir: r.DataDir, sys: r.Sys,
		phases: r.Phases, speed: r.Speed, economy: r.Economy, floor: r.Floor, rows: r.Rows, load: r.Load, generation: r.Generation, peers: r.Peers, conversations: r.Conversations, cleanups: r.Cleanups, failures: r.Failures,
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

func newBench(o options) (*bench, error) {
	b := &bench{o: o, started: time.Now(), scKeys: map[string]string{}}
	var err error
	if b.blobDir, err = os.MkdirTemp("", "ctxbench-blobs-"); err != nil {
		return nil, err
	}
	process.TuneGarbageCollector()
	b.store, err = server.OpenStore(cypher.Config{
		URI: o.neo4jURI, User: os.Getenv("NEO4J_USER"), Password: os.Getenv("NEO4J_PASSWORD"),
		Database: orDefault(os.Getenv("NEO4J_DATABASE"), "neo4j"),
	}, b.blobDir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := b.store.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrating the schema on %s: %w", o.neo4jURI, err)
	}

	run := randomHex(4)
	b.key = "ctxbench-" + randomHex(12)
	b.account = "ctxbench-" + run
	keys := map[string]string{b.key: b.account}
	if slices.Contains(o.phaseOrder, "conversations") {
		// The conversations' own servers take this key; the main one knows it too, so that
		// the cleanup deletes their conversations.
		b.convKey = "ctxbench-conv-" + randomHex(12)
		keys[b.convKey] = b.account
	}
	if slices.Contains(o.phaseOrder, "economy") || slices.Contains(o.phaseOrder, "peers") {
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
	b.log = log
	var providers []provider.Config
	if slices.Contains(o.phaseOrder, "generation") {
		if b.katan, b.stopKatan, err = startKatan(); err != nil {
			return nil, err
		}
		if providers, err = katanProviders(b.katan); err != nil {
			return nil, err
		}
	}
	// Wired as cmd/ctxgraph wires it, without the metrics: the scheduler is never started.
	full := server.New(server.Config{Store: b.store, Keys: keys, Log: log, Providers: providers, ObserveStep: b.steps.observe})
	b.srv, b.assembler = full.API, full.Assembler
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
	b.api = &client.Client{HTTP: b.client, BaseURL: b.base}
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
		case "peers":
			b.runPeers(ctx)
		case "conversations":
			b.runConversations(ctx)
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

// call sends one request, encoded beforehand, over loopback as the account of key and
// reads the whole answer; the duration covers both. An answer outside 2xx is no error here:
// the status says it.
func (b *bench) call(ctx context.Context, key, method, p string, body []byte) (int, []byte, time.Duration, error) {
	var sent any // a nil []byte would still be a body
	if body != nil {
		sent = body
	}
	var resp client.Response
	start := time.Now()
	err := b.api.WithKey(key).Do(ctx, method, p, sent, &resp)
	d := time.Since(start)
	if refused := (*client.Error)(nil); errors.As(err, &refused) {
		err = nil
	}
	return resp.Status, resp.Body, d, err
}
