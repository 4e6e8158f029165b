// Command ctxgraph serves the ctxgraph REST API over a Neo4j execution graph.
// `ctxgraph scenario [files]` plays scenario files against a running server instead, and
// `ctxgraph compare [files]` plays them through the peers' context strategies beside it.
//
// Configuration comes from the environment (DESIGN §5): NEO4J_URI, NEO4J_USER,
// NEO4J_PASSWORD, NEO4J_DATABASE, CTXGRAPH_ADDR, CTXGRAPH_API_KEYS, CTXGRAPH_BLOB_DIR or
// CTXGRAPH_BLOB_URL (an s3:// object store, with the standard AWS variables), and
// CTXGRAPH_MAX_BODY for the largest accepted request body, CTXGRAPH_ASSEMBLER_MEMORY for the
// heap the assembler's caches may hold (0: off), CTXGRAPH_READ_HEADER_TIMEOUT,
// CTXGRAPH_READ_TIMEOUT, CTXGRAPH_WRITE_TIMEOUT and CTXGRAPH_IDLE_TIMEOUT for the bounds of
// a connection (Go durations such as 30s; 0 turns one off), CTXGRAPH_SWEEP_INTERVAL for how
// often assembly records beyond their branch's latest are trimmed and artifacts whose
// retention ran out redacted or deleted (0: never), and CTXGRAPH_BLOB_SWEEP_INTERVAL
// for how often blobs that no record references are removed, and CTXGRAPH_SHUTDOWN_TIMEOUT
// for how long a stopping server waits for requests and scheduled turns in flight,
// CTXGRAPH_RUN_LEASE for how long a run's lease holds without renewal, and
// CTXGRAPH_LOG_LEVEL for the least severe level logged. `ctxgraph -h` lists them.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	_ "time/tzdata" // schedules name IANA zones, which a slim image may not carry

	"github.com/labstack/gommon/bytes"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ctxgraph/ctxgraph/api"
	"github.com/ctxgraph/ctxgraph/blob"
	"github.com/ctxgraph/ctxgraph/cmd/internal/process"
	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/generation"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
	"github.com/ctxgraph/ctxgraph/provider"
	"github.com/ctxgraph/ctxgraph/server"
	"github.com/ctxgraph/ctxgraph/tracing"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "scenario" {
		if err := runScenarios(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "ctxgraph scenario:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "compare" {
		if err := runCompare(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "ctxgraph compare:", err)
			os.Exit(1)
		}
		return
	}
	if serve, code := command(os.Args[1:], os.Stdout, os.Stderr); !serve {
		os.Exit(code)
	}
	m := &Main{}
	if err := m.ParseEnv(os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "ctxgraph:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "ctxgraph:", err)
		os.Exit(1)
	}
	<-ctx.Done()
	if err := m.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "ctxgraph:", err)
		os.Exit(1)
	}
}

// Main is the program: its configuration and the parts it wires together.
type Main struct {
	Neo4j cypher.Config
	Addr  string
	Keys  map[string]string
	// BlobDir is the blob store's directory (CTXGRAPH_BLOB_DIR, or a file:// CTXGRAPH_BLOB_URL),
	// unless BlobURL names an object store.
	BlobDir string
	// BlobURL is the blob store's object store (CTXGRAPH_BLOB_URL=s3://bucket/prefix), whose
	// endpoint, region and credentials come from the standard AWS variables.
	BlobURL string
	MaxBody string
	// AssemblerMemory is the heap, in bytes, that the assembler's caches may hold
	// (CTXGRAPH_ASSEMBLER_MEMORY): three quarters for its copies of conversations, one for
	// its judgements; 0 turns both off.
	AssemblerMemory int64
	// Timeouts bound each connection (CTXGRAPH_*_TIMEOUT).
	Timeouts api.Timeouts
	// BlobSweep is how often the blob store is swept of blobs no record references
	// (CTXGRAPH_BLOB_SWEEP_INTERVAL); it is also swept at start.
	BlobSweep time.Duration
	// Sweep is how often the assembly records that fell out of their branch's latest are
	// trimmed and the artifacts whose retention ran out redacted or deleted
	// (CTXGRAPH_SWEEP_INTERVAL, DESIGN §10); 0 turns the sweeps off.
	Sweep time.Duration
	// SweepLease is how long a sweep's lease holds (CTXGRAPH_SWEEP_LEASE): a server that
	// dies mid-sweep leaves it to lapse that long after it was taken or renewed.
	SweepLease time.Duration
	// ShutdownTimeout is how long a stopping server waits for the requests and scheduled
	// turns in flight (CTXGRAPH_SHUTDOWN_TIMEOUT); those still running then are cancelled.
	ShutdownTimeout time.Duration
	// LogLevel is the least severe level logged (CTXGRAPH_LOG_LEVEL).
	LogLevel zapcore.Level
	// DevKey is set when no keys were configured and a development key was made.
	DevKey string
	// Providers are the model providers of CTXGRAPH_PROVIDERS_FILE; none means the
	// built-in echo provider.
	Providers []provider.Config
	// NoScheduler serves without running scheduled turns (CTXGRAPH_SCHEDULER=off): the
	// server on a Neo4j that other servers (or a test suite) run the schedules of.
	NoScheduler bool
	// RunLease is how long the lease of a run this server serves holds without renewal
	// (CTXGRAPH_RUN_LEASE); a run whose server died is ended as interrupted that long after.
	RunLease time.Duration

	log         *zap.Logger
	store       *cypher.Store
	server      *http.Server
	scheduler   *generation.Scheduler
	summariser  *generation.Summariser
	leases      *generation.LeaseKeeper
	stopTracing func(context.Context) error
	stopSweeper context.CancelFunc
	swept       sync.WaitGroup
}

// DefaultBlobSweep is how often the blob store is swept unless configured otherwise.
const DefaultBlobSweep = time.Hour

// DefaultSweep is how often the sweeps run unless configured otherwise.
const DefaultSweep = time.Minute

// DefaultAssemblerMemory is the heap the assembler's caches may hold unless
// CTXGRAPH_ASSEMBLER_MEMORY says otherwise.
const DefaultAssemblerMemory = 1 << 30

// DevKeyFile is where the development key is kept, relative to the working directory
// (the repository's, under `make run`), whatever CTXGRAPH_BLOB_DIR says: the README,
// scripts/demo-session and `ctxgraph scenario` read it there.
var DevKeyFile = filepath.Join(".ctxgraph", "dev-api-key")

// DefaultShutdownTimeout is how long a stopping server waits unless configured otherwise.
const DefaultShutdownTimeout = 30 * time.Second

// parseBlobStore reads where the blobs go: CTXGRAPH_BLOB_URL (s3://bucket/prefix, or
// file:///path for a directory) or CTXGRAPH_BLOB_DIR, never both.
func (m *Main) parseBlobStore(getenv func(string) string) error {
	dir, location := getenv("CTXGRAPH_BLOB_DIR"), getenv("CTXGRAPH_BLOB_URL")
	switch {
	case location == "":
		m.BlobDir = orDefault(dir, filepath.Join(".ctxgraph", "blobs"))
	case dir != "":
		return model.Invalid("CTXGRAPH_BLOB_URL", "CTXGRAPH_BLOB_URL and CTXGRAPH_BLOB_DIR are both set: the blob store is one or the other; unset one")
	case strings.HasPrefix(location, "file://"):
		path := strings.TrimPrefix(location, "file://")
		if !filepath.IsAbs(path) {
			return model.Invalid("CTXGRAPH_BLOB_URL", "CTXGRAPH_BLOB_URL: %q is not file:///absolute/path", location)
		}
		m.BlobDir = path
	default:
		if _, _, err := blob.ParseS3URL(location); err != nil {
			return model.Invalid("CTXGRAPH_BLOB_URL", "CTXGRAPH_BLOB_URL: %v", err)
		}
		m.BlobURL = location
	}
	return nil
}

// blobStore is where the blobs go: the object store, or else the directory.
func (m *Main) blobStore() string { return orDefault(m.BlobURL, m.BlobDir) }

// ParseEnv reads the configuration.
func (m *Main) ParseEnv(getenv func(string) string) error {
	m.Neo4j = cypher.Config{
		URI: orDefault(getenv("NEO4J_URI"), "bolt://127.0.0.1:7687"), User: getenv("NEO4J_USER"),
		Password: getenv("NEO4J_PASSWORD"), Database: orDefault(getenv("NEO4J_DATABASE"), "neo4j"),
	}
	switch reads := getenv("CTXGRAPH_NEO4J_READS"); reads {
	case "", "leader":
	case "any":
		m.Neo4j.AnyReader = true
	default:
		return model.Invalid("CTXGRAPH_NEO4J_READS", "CTXGRAPH_NEO4J_READS: %q is not leader or any", reads)
	}
	m.Addr = orDefault(getenv("CTXGRAPH_ADDR"), "127.0.0.1:8080")
	if path := getenv("CTXGRAPH_PROVIDERS_FILE"); path != "" {
		cfgs, err := provider.Load(path, getenv)
		if err != nil {
			return model.Invalid("CTXGRAPH_PROVIDERS_FILE", "%v", err)
		}
		m.Providers = cfgs
	}
	if err := m.parseBlobStore(getenv); err != nil {
		return err
	}
	m.MaxBody = getenv("CTXGRAPH_MAX_BODY")
	if getenv("CTXGRAPH_RECORD_CACHE") != "" {
		return model.Invalid("CTXGRAPH_RECORD_CACHE", "CTXGRAPH_RECORD_CACHE (a number of records) is replaced by CTXGRAPH_ASSEMBLER_MEMORY, a number of bytes such as 1GiB")
	}
	m.AssemblerMemory = DefaultAssemblerMemory
	if v := getenv("CTXGRAPH_ASSEMBLER_MEMORY"); v != "" {
		n, err := bytes.Parse(v)
		if err != nil || n < 0 {
			return model.Invalid("CTXGRAPH_ASSEMBLER_MEMORY", "CTXGRAPH_ASSEMBLER_MEMORY: %q is not a number of bytes such as 1GiB or 512M (0 turns the caches off)", v)
		}
		m.AssemblerMemory = n
	}
	m.Timeouts = api.DefaultTimeouts
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{
		{"CTXGRAPH_READ_HEADER_TIMEOUT", &m.Timeouts.ReadHeader}, {"CTXGRAPH_READ_TIMEOUT", &m.Timeouts.Read},
		{"CTXGRAPH_WRITE_TIMEOUT", &m.Timeouts.Write}, {"CTXGRAPH_IDLE_TIMEOUT", &m.Timeouts.Idle},
	} {
		if err := parseDuration(getenv, d.name, d.dst, true); err != nil {
			return err
		}
	}
	m.BlobSweep = DefaultBlobSweep
	m.Sweep = DefaultSweep
	if err := parseDuration(getenv, "CTXGRAPH_SWEEP_INTERVAL", &m.Sweep, true); err != nil {
		return err
	}
	m.SweepLease = cypher.DefaultSweep.Lease
	if err := parseDuration(getenv, "CTXGRAPH_SWEEP_LEASE", &m.SweepLease, false); err != nil {
		return err
	}
	if err := parseDuration(getenv, "CTXGRAPH_BLOB_SWEEP_INTERVAL", &m.BlobSweep, false); err != nil {
		return err
	}
	m.LogLevel = zapcore.InfoLevel
	if v := getenv("CTXGRAPH_LOG_LEVEL"); v != "" {
		level, err := zapcore.ParseLevel(v)
		if err != nil || level > zapcore.ErrorLevel {
			return model.Invalid("CTXGRAPH_LOG_LEVEL", "CTXGRAPH_LOG_LEVEL: %q is not one of debug, info, warn, error", v)
		}
		m.LogLevel = level
	}
	switch v := getenv("CTXGRAPH_SCHEDULER"); v {
	case "", "on":
	case "off":
		m.NoScheduler = true
	default:
		return model.Invalid("CTXGRAPH_SCHEDULER", "CTXGRAPH_SCHEDULER: %q is not on or off", v)
	}
	m.RunLease = model.DefaultRunLease
	if err := parseDuration(getenv, "CTXGRAPH_RUN_LEASE", &m.RunLease, false); err != nil {
		return err
	}
	m.ShutdownTimeout = DefaultShutdownTimeout
	if err := parseDuration(getenv, "CTXGRAPH_SHUTDOWN_TIMEOUT", &m.ShutdownTimeout, false); err != nil {
		return err
	}
	keys, err := ParseAPIKeys(getenv("CTXGRAPH_API_KEYS"))
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		key, err := developmentKey(DevKeyFile)
		if err != nil {
			return err
		}
		keys = map[string]string{key: "dev"}
		m.DevKey = key
	}
	m.Keys = keys
	return nil
}

// parseDuration reads the Go duration in the variable name into dst, leaving dst as it is
// when the variable is unset; zero is accepted only when zeroOff.
func parseDuration(getenv func(string) string, name string, dst *time.Duration, zeroOff bool) error {
	v := getenv(name)
	if v == "" {
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || (d == 0 && !zeroOff) {
		if zeroOff {
			return model.Invalid(name, "%s: %q is not a duration such as 30s (0 turns it off)", name, v)
		}
		return model.Invalid(name, "%s: %q is not a positive duration such as 1h", name, v)
	}
	*dst = d
	return nil
}

// ParseAPIKeys reads CTXGRAPH_API_KEYS: comma-separated account=key pairs. It returns the
// keys mapped to their accounts.
func ParseAPIKeys(s string) (map[string]string, error) {
	keys := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		account, key, ok := strings.Cut(pair, "=")
		if !ok || account == "" || key == "" {
			return nil, model.Invalid("CTXGRAPH_API_KEYS", "CTXGRAPH_API_KEYS: %q is not account=key", pair)
		}
		if _, dup := keys[key]; dup {
			return nil, model.Invalid("CTXGRAPH_API_KEYS", "CTXGRAPH_API_KEYS: a key is given twice")
		}
		keys[key] = account
	}
	return keys, nil
}

// developmentKey returns the key kept at path, making one on first use, so that a local
// `make run` keeps the same key across restarts.
func developmentKey(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	key := "dev_" + hex.EncodeToString(buf)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return key, os.WriteFile(path, []byte(key+"\n"), 0o600)
}

// Run connects to Neo4j, applies the schema migrations (waiting up to a minute for Neo4j to
// answer) and starts serving in the background.
func (m *Main) Run(ctx context.Context) error {
	log := NewLogger(m.LogLevel, zapcore.Lock(os.Stderr))
	m.log = log
	var err error
	if m.stopTracing, err = tracing.Setup(ctx, os.Getenv); err != nil {
		return fmt.Errorf("tracing (OTEL_EXPORTER_OTLP_*): %w", err)
	}
	process.TuneGarbageCollector()
	if m.store, err = server.OpenStore(m.Neo4j, m.blobStore()); err != nil {
		return err
	}
	m.store.SetRecordCache(m.AssemblerMemory - m.AssemblerMemory/4)
	if err := m.migrate(ctx, time.Minute); err != nil {
		return err
	}
	srv := server.New(server.Config{
		Store: m.store, Keys: m.Keys, Log: log, MaxBody: m.MaxBody, Providers: m.Providers, Metrics: true, RunLease: m.RunLease,
	})
	srv.Assembler.SetJudgementMemory(m.AssemblerMemory / 4)
	m.scheduler, m.summariser, m.leases = srv.Scheduler, srv.Summariser, srv.Leases
	LogProviders(log, srv.Providers, srv.Policies.Catalog.Default())
	m.server = srv.API.HTTPServer(m.Addr, m.Timeouts)
	ln, err := net.Listen("tcp", m.Addr)
	if err != nil {
		return err
	}
	sweepCtx, stopSweeper := context.WithCancel(context.Background())
	m.stopSweeper = stopSweeper
	m.swept.Go(func() { m.store.RunBlobSweeper(sweepCtx, m.BlobSweep) })
	// Leases are kept with or without the scheduler: every server that serves generations
	// renews its runs' leases, and every one sweeps the runs of servers that died.
	m.leases.Start()
	if m.Sweep > 0 {
		// Every server runs the sweep; its lease in Neo4j lets one at a time do the work.
		sw := cypher.DefaultSweep
		sw.Holder, sw.Lease = m.leases.Lease().Holder, m.SweepLease
		m.swept.Go(func() { m.store.RunSweeps(sweepCtx, sw, m.Sweep) })
	}
	if m.NoScheduler {
		m.scheduler = nil
		log.Info("scheduler off (CTXGRAPH_SCHEDULER=off): this server runs no scheduled turns")
	} else {
		m.scheduler.Start()
	}
	go func() {
		if err := m.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("server stopped", zap.Error(err))
		}
	}()
	log.Info("ctxgraph serving", zap.String("addr", m.Addr), zap.String("neo4j", m.Neo4j.URI), zap.String("blobs", m.blobStore()))
	if m.DevKey != "" {
		fmt.Printf("\nctxgraph is serving on http://%s\n", m.Addr)
		fmt.Printf("development API key (account \"dev\"): %s\n", m.DevKey)
		fmt.Printf("try:\n  curl -s -X POST http://%s/v1/conversations -H 'Authorization: Bearer %s' -d '{\"title\":\"hello\"}'\n\n", m.Addr, m.DevKey)
	}
	return nil
}

// LogProviders writes one line per provider (DESIGN §8): its name, kind, base URL host and
// what it receives in full under the effective default version, so that an operator sees
// that a provider nothing names receives public only.
func LogProviders(log *zap.Logger, providers []model.ProviderInfo, v policy.Version) {
	for _, p := range providers {
		log.Info("provider", zap.String("name", p.Name), zap.String("kind", p.Kind), zap.String("baseURLHost", p.Host),
			zap.Strings("receives", v.Receives(p.Name)), zap.Bool("zeroRetention", v.RetainsNothing(p.Name)),
			zap.String("policyVersion", v.ID))
	}
}

func (m *Main) migrate(ctx context.Context, patience time.Duration) error {
	deadline := time.Now().Add(patience)
	for {
		applied, err := m.store.Migrate(ctx)
		if err == nil {
			if len(applied) > 0 {
				m.log.Info("schema migrations applied", zap.Strings("migrations", applied))
			}
			return nil
		}
		if model.KindOf(err) != model.KindUnavailable || time.Now().After(deadline) {
			return fmt.Errorf("migrating the schema: %w", err)
		}
		m.log.Warn("waiting for Neo4j", zap.Error(err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// Close stops serving and claiming scheduled ticks, letting the requests, scheduled turns
// and summarisations in flight finish for up to ShutdownTimeout, and closes the driver.
func (m *Main) Close() error {
	timeout := m.ShutdownTimeout
	if timeout <= 0 {
		timeout = DefaultShutdownTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var errs []error
	scheduled := make(chan error, 1)
	go func() {
		if m.scheduler == nil {
			scheduled <- nil
			return
		}
		scheduled <- m.scheduler.Stop(ctx)
	}()
	if m.server != nil {
		errs = append(errs, m.server.Shutdown(ctx))
	}
	errs = append(errs, <-scheduled)
	if m.leases != nil {
		// Nothing is served any more: no lease is held.
		m.leases.Stop()
	}
	if m.summariser != nil {
		// No result arrives once the server has shut down: what it started finishes.
		errs = append(errs, m.summariser.Wait(ctx))
	}
	if m.stopSweeper != nil {
		m.stopSweeper()
		m.swept.Wait()
	}
	if m.store != nil {
		errs = append(errs, m.store.Close(ctx))
	}
	if m.stopTracing != nil {
		errs = append(errs, m.stopTracing(ctx))
	}
	if m.log != nil {
		_ = m.log.Sync()
	}
	return errors.Join(errs...)
}

// NewLogger logs JSON lines to w from level on, with ISO-8601 timestamps and without stack
// traces: a failed request's line names its cause and request id, which is what an operator
// follows.
func NewLogger(level zapcore.Level, w zapcore.WriteSyncer) *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(enc), w, level), zap.AddCaller())
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
