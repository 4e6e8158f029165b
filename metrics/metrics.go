// Package metrics keeps ctxgraph's Prometheus metrics (served at GET /metrics): request
// latency, assembly latency by step and its tokens, omissions, provider calls, Neo4j
// errors and the assembler's cache. Histograms, in seconds and counts; names follow the
// Prometheus conventions (unit suffixes, _total for counters).
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ctxgraph/ctxgraph/model"
)

// Sources are what the metrics read when scraped rather than count as they happen.
type Sources struct {
	// Neo4jErrors reports the store's driver failures: unavailable and failed.
	Neo4jErrors func() (unavailable, failed int64)
	// CacheReads reports the assembler's conversation reads: from a copy brought up to date
	// (hits), in full (misses), and lineage views shared between assemblies.
	CacheReads func() (hits, misses, sharedViews int64)
	// AssemblerMemory reports the heap the assembler's caches hold, as estimated, and their
	// limits: its copies of conversations and its judgements; and the copies dropped for room.
	AssemblerMemory func() AssemblerMemory
	// Providers are the configured providers and the models each allows, whose error
	// counters start at zero.
	Providers map[string][]string
}

// AssemblerMemory is what the assembler's caches hold and may hold, in bytes.
type AssemblerMemory struct {
	Copies, CopiesLimit, Judgements, JudgementsLimit, CopiesDropped int64
}

// Metrics holds the collectors. A nil *Metrics observes nothing.
type Metrics struct {
	registry         *prometheus.Registry
	requests         *prometheus.HistogramVec
	assembly         *prometheus.HistogramVec
	tokens           *prometheus.HistogramVec
	omitted          *prometheus.CounterVec
	providerDuration *prometheus.HistogramVec
	providerErrors   *prometheus.CounterVec
	providerTokens   *prometheus.CounterVec
}

// latencyBuckets span a cached assembly (under a millisecond) to a slow provider call.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// New registers ctxgraph's collectors, with the Go runtime's and the process's.
func New(src Sources) *Metrics {
	m := &Metrics{registry: prometheus.NewRegistry()}
	m.requests = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "ctxgraph_http_request_duration_seconds", Help: "HTTP request latency by method, route and status.", Buckets: latencyBuckets,
	}, []string{"method", "route", "status"})
	m.assembly = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "ctxgraph_assembly_duration_seconds", Help: "Assembly latency by step: graph (the lineage read), policy, serialize, record, and total.",
		Buckets: latencyBuckets,
	}, []string{"step"})
	m.tokens = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "ctxgraph_assembly_tokens", Help: "Prompt tokens per assembly: assembled, and baseline (history replay of the same lineage).",
		Buckets: prometheus.ExponentialBuckets(16, 2, 16),
	}, []string{"kind"})
	m.omitted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ctxgraph_assembly_omitted_records_total", Help: "Records assemblies left out, by omission reason.",
	}, []string{"reason"})
	m.providerDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "ctxgraph_provider_request_duration_seconds", Help: "Provider call latency, retries included, by provider, model and outcome (ok or error).",
		Buckets: latencyBuckets,
	}, []string{"provider", "model", "outcome"})
	m.providerErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ctxgraph_provider_errors_total", Help: "Failed provider calls by provider, model and error code.",
	}, []string{"provider", "model", "code"})
	m.providerTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ctxgraph_provider_tokens_total", Help: "Tokens the providers reported, by provider, model and type (input or output).",
	}, []string{"provider", "model", "type"})
	// Counters a dashboard rates start at zero, as Prometheus recommends, instead of
	// appearing at their first increment: every omission reason, and each configured
	// provider's and model's generic error.
	for _, reason := range model.OmissionReasons {
		m.omitted.WithLabelValues(reason)
	}
	for name, models := range src.Providers {
		for _, modelName := range append([]string{""}, models...) {
			m.providerErrors.WithLabelValues(name, modelName, "provider_error")
		}
	}
	m.registry.MustRegister(m.requests, m.assembly, m.tokens, m.omitted, m.providerDuration, m.providerErrors, m.providerTokens,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if f := src.Neo4jErrors; f != nil {
		m.counterFuncs("ctxgraph_neo4j_errors_total", "Neo4j statements and transactions that failed: unavailable (unreachable, or refusing for a while) or failed.",
			"kind", map[string]func() float64{
				"unavailable": func() float64 { u, _ := f(); return float64(u) },
				"failed":      func() float64 { _, fl := f(); return float64(fl) },
			})
	}
	if f := src.CacheReads; f != nil {
		m.counterFuncs("ctxgraph_record_cache_reads_total", "Conversation reads of the assembler: hit (its copy brought up to date) or miss (read in full).",
			"result", map[string]func() float64{
				"hit":  func() float64 { h, _, _ := f(); return float64(h) },
				"miss": func() float64 { _, mi, _ := f(); return float64(mi) },
			})
		m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "ctxgraph_lineage_view_reuses_total", Help: "Assemblies that took over a lineage's candidates built by an earlier one.",
		}, func() float64 { _, _, v := f(); return float64(v) }))
	}
	if f := src.AssemblerMemory; f != nil {
		gauge := func(name, help, cache string, read func(AssemblerMemory) int64) {
			m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: name, Help: help, ConstLabels: prometheus.Labels{"cache": cache},
			}, func() float64 { return float64(read(f())) }))
		}
		const held, limit = "Heap the assembler's caches hold, as estimated from what they keep: copies of conversations, judgements.",
			"Heap the assembler's caches may hold (CTXGRAPH_ASSEMBLER_MEMORY): copies of conversations, judgements."
		gauge("ctxgraph_assembler_memory_bytes", held, "copies", func(a AssemblerMemory) int64 { return a.Copies })
		gauge("ctxgraph_assembler_memory_bytes", held, "judgements", func(a AssemblerMemory) int64 { return a.Judgements })
		gauge("ctxgraph_assembler_memory_limit_bytes", limit, "copies", func(a AssemblerMemory) int64 { return a.CopiesLimit })
		gauge("ctxgraph_assembler_memory_limit_bytes", limit, "judgements", func(a AssemblerMemory) int64 { return a.JudgementsLimit })
		m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "ctxgraph_record_cache_dropped_total", Help: "Copies of conversations the assembler dropped for room (CTXGRAPH_ASSEMBLER_MEMORY).",
		}, func() float64 { return float64(f().CopiesDropped) }))
	}
	return m
}

// counterFuncs registers a counter read when scraped, one series per value of label.
func (m *Metrics) counterFuncs(name, help, label string, values map[string]func() float64) {
	for value, read := range values {
		m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: name, Help: help, ConstLabels: prometheus.Labels{label: value},
		}, read))
	}
}

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// ObserveRequest counts one HTTP request.
func (m *Metrics) ObserveRequest(method, route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched" // a path no route serves: one series, not one per path
	}
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Observe(d.Seconds())
}

// ObserveAssembly counts one recorded assembly: its steps' times (model.Timings, in
// milliseconds), its tokens and its omissions.
func (m *Metrics) ObserveAssembly(a model.Assembly, t model.Timings) {
	if m == nil {
		return
	}
	total := 0.0
	for step, ms := range map[string]float64{"graph": t.Graph, "policy": t.Policy, "serialize": t.Serialize, "record": t.Record} {
		m.assembly.WithLabelValues(step).Observe(ms / 1000)
		total += ms
	}
	m.assembly.WithLabelValues("total").Observe(total / 1000)
	m.tokens.WithLabelValues("assembled").Observe(float64(a.Tokens.Assembled))
	m.tokens.WithLabelValues("baseline").Observe(float64(a.Tokens.Baseline))
	for reason, n := range a.Omitted {
		if n > 0 {
			m.omitted.WithLabelValues(reason).Add(float64(n))
		}
	}
}

// ObserveProviderCall counts one provider call: its latency, its error when it failed
// (nil otherwise) and the tokens the provider reported.
func (m *Metrics) ObserveProviderCall(provider, model string, d time.Duration, usage model.Usage, failure *model.ProviderError) {
	if m == nil {
		return
	}
	outcome := "ok"
	if failure != nil {
		outcome = "error"
		m.providerErrors.WithLabelValues(provider, model, failure.Code).Inc()
	}
	m.providerDuration.WithLabelValues(provider, model, outcome).Observe(d.Seconds())
	m.providerTokens.WithLabelValues(provider, model, "input").Add(float64(usage.InputTokens))
	m.providerTokens.WithLabelValues(provider, model, "output").Add(float64(usage.OutputTokens))
}
