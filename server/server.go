// Package server wires ctxgraph's parts into the API server: over an opened store, the
// assembler, the generation service and its scheduler, and the HTTP API. It is the one
// wiring that cmd/ctxgraph serves and that cmd/ctxbench and the integration tests build, so
// what they measure and test is what runs.
package server

import (
	"context"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/ctxgraph/ctxgraph/api"
	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/blob"
	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/dropin"
	"github.com/ctxgraph/ctxgraph/generation"
	"github.com/ctxgraph/ctxgraph/metrics"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policies"
	"github.com/ctxgraph/ctxgraph/policy"
	"github.com/ctxgraph/ctxgraph/promotion"
	"github.com/ctxgraph/ctxgraph/provider"
)

// Config is what the server is built from.
type Config struct {
	// Store is the graph, opened (OpenStore) and migrated by the caller, who closes it.
	Store *cypher.Store
	// Keys maps each API key to the account it belongs to.
	Keys map[string]string
	// Log logs failed requests, access lines and the scheduler; nil logs nothing.
	Log *zap.Logger
	// MaxBody is the largest request body accepted (api.DefaultMaxBody when empty).
	MaxBody string
	// Providers are the model providers; none means the built-in echo provider.
	Providers []provider.Config
	// Metrics turns on the Prometheus metrics of assemblies, provider calls, Neo4j errors
	// and the assembler's cache (GET /metrics); without it /metrics serves the requests' and
	// the process's only.
	Metrics bool
	// ObserveStep, when set, is told how long each step of a generation took.
	ObserveStep func(generation.Step, time.Duration)
	// RunLease is how long a run's lease holds without renewal (model.DefaultRunLease when
	// zero): a run whose server died is ended as interrupted that long after (DESIGN §6).
	RunLease time.Duration
}

// Server is the wired server: the HTTP API and the services behind it.
type Server struct {
	// API is the http.Handler that serves the REST API.
	API       *api.Server
	Assembler *assembly.Service
	Turns     *generation.Service
	// Summariser is the optional model summariser of tool results; Wait lets the
	// summarisations in flight finish.
	Summariser *generation.Summariser
	// Scheduler runs scheduled turns once started; the caller starts and stops it.
	Scheduler *generation.Scheduler
	// Leases renews the leases of the runs and turns this process serves and sweeps the
	// runs whose lease lapsed, once started; the caller starts it, and stops it after the
	// API and the scheduler. Until started, runs and keys are served without leases.
	Leases *generation.LeaseKeeper
	// Metrics are the collectors, nil unless Config.Metrics.
	Metrics *metrics.Metrics
	// Policies resolves and keeps the accounts' policy versions: the embedded ones with
	// the providers' trust folded in (DESIGN §8), and the accounts' own.
	Policies *policies.Service
	// Providers describes the configured providers (the built-in echo when none).
	Providers []model.ProviderInfo
	// DropIns serves the drop-in endpoints (DESIGN §9).
	DropIns *dropin.Service
}

// New wires a server over cfg.Store.
func New(cfg Config) *Server {
	store := cfg.Store
	configured := cfg.Providers
	if len(configured) == 0 {
		configured = provider.Builtin()
	}
	s := &Server{Assembler: assembly.NewService(store), Providers: provider.Describe(configured),
		Policies: policies.New(store, policy.NewCatalog(provider.Trust(configured)))}
	s.Assembler.Policies = s.Policies
	// The summariser follows the account's default version, as the store's Promoter does.
	promoting := func(ctx context.Context, accountID string) (policy.Version, error) {
		return s.Policies.Resolve(ctx, accountID, "")
	}
	providers := provider.NewRegistry(configured)
	s.Summariser = &generation.Summariser{Graph: store, Calls: store, Assembler: s.Assembler, Providers: providers, Policy: promoting}
	if cfg.Log != nil {
		s.Summariser.Log = cfg.Log.Named("summariser")
	}
	// Results recorded through the API and recall answers of the generation path both go
	// through this graph, which starts the summariser after each.
	graph := generation.SummarisingGraph{ExecutionGraph: store, Summariser: s.Summariser}
	s.Leases = &generation.LeaseKeeper{Graph: store, Term: cfg.RunLease}
	if cfg.Log != nil {
		s.Leases.Log = cfg.Log.Named("leases")
	}
	s.Turns = &generation.Service{Graph: graph, Calls: store, Assembler: s.Assembler,
		Providers: providers, Policies: s.Policies, Observe: cfg.ObserveStep, Leases: s.Leases}
	if cfg.Metrics {
		providers := map[string][]string{provider.EchoName: nil}
		if len(cfg.Providers) > 0 {
			providers = map[string][]string{}
			for _, p := range cfg.Providers {
				providers[p.Name] = p.Models
			}
		}
		s.Metrics = metrics.New(metrics.Sources{
			Neo4jErrors: store.Neo4jErrors, Providers: providers,
			CacheReads: func() (int64, int64, int64) {
				st := store.RecordCacheStats()
				return st.DeltaReads, st.FullReads, st.SharedViews
			},
			AssemblerMemory: func() metrics.AssemblerMemory {
				st := store.RecordCacheStats()
				held, limit := s.Assembler.JudgementMemory()
				return metrics.AssemblerMemory{Copies: st.Bytes, CopiesLimit: st.Limit, Judgements: held, JudgementsLimit: limit, CopiesDropped: st.Dropped}
			},
		})
		// Assigned only when set: an interface holding a nil *Metrics is not nil.
		s.Assembler.Observer = s.Metrics
		s.Turns.ProviderCalls = s.Metrics
		s.Summariser.ProviderCalls = s.Metrics
	}
	s.Scheduler = &generation.Scheduler{Graph: store, Turns: s.Turns}
	if cfg.Log != nil {
		s.Scheduler.Log = cfg.Log.Named("scheduler")
	}
	s.DropIns = &dropin.Service{Graph: graph, Chains: store, Generator: s.Turns, Providers: s.Providers}
	s.API = api.New(api.Config{
		DropIns: s.DropIns, Graph: graph, Idempotency: store, Health: store, Assembler: s.Assembler, Assemblies: store, ModelCalls: store,
		Generator: s.Turns, Schedules: s.Scheduler, Policies: s.Policies, Providers: s.Providers, Leases: s.Leases,
		Metrics: s.Metrics, Keys: cfg.Keys, Log: cfg.Log, MaxBody: cfg.MaxBody, Accounts: store,
	})
	return s
}

// OpenBlobs opens the blob store at location: an S3-compatible object store
// (s3://bucket/prefix, reached through the standard AWS configuration) or a directory.
func OpenBlobs(location string) (model.BlobStore, error) {
	if strings.HasPrefix(location, "s3://") {
		return blob.OpenS3(context.Background(), location)
	}
	return blob.Open(location)
}

// OpenStore opens the blob store at blobs (OpenBlobs) and the Neo4j store over it, counting
// tokens with the
// o200k_base vocabulary and deriving memories under the promotion rules of each account's
// default version (stored in the same graph; an account without one, the embedded default:
// the providers' trust, which the servers fold into the embedded versions, does not change
// promotion rules).
// The schema is not migrated: that is the caller's (Store.Migrate).
func OpenStore(neo4j cypher.Config, blobs string) (*cypher.Store, error) {
	blobStore, err := OpenBlobs(blobs)
	if err != nil {
		return nil, err
	}
	store, err := cypher.Open(neo4j, blobStore)
	if err != nil {
		return nil, err
	}
	store.Tokens = assembly.MustTokenizer("o200k_base")
	store.Promoter = promotion.New(store.Tokens, policies.New(store, policy.Embedded()))
	return store, nil
}
