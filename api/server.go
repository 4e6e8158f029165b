// Package api serves ctxgraph's REST API (DESIGN §5) with Echo: thin handlers over the
// model's services, one error handler, bearer-key accounts and idempotent writes.
package api

import (
	"context"
	_ "embed"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/go-playground/validator/v10"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"go.uber.org/zap"

	"github.com/ctxgraph/ctxgraph/browser"
	"github.com/ctxgraph/ctxgraph/dropin"
	"github.com/ctxgraph/ctxgraph/inspect"
	"github.com/ctxgraph/ctxgraph/metrics"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

//go:embed openapi.yaml
var openAPISpec []byte

// DefaultMaxBody is the largest request body accepted unless configured otherwise.
const DefaultMaxBody = "16M"

// MaxFieldBytes is the most a message's content or a tool call's arguments may hold (the
// maxbytes rule of their request fields): both are stored on graph nodes and sent to models
// as they are. Large payloads belong in tool results, which go to the blob store.
const MaxFieldBytes = 1 << 20

// Config wires the server to its services.
type Config struct {
	Graph       model.ExecutionGraph
	Idempotency model.IdempotencyStore
	Health      model.Pinger
	Assembler   model.ContextAssembler
	Assemblies  model.AssemblyGraph
	// ModelCalls reads the model calls of runs and the requests they sent; without it
	// those routes answer 503.
	ModelCalls model.ModelCallReader
	// Generator runs turns on the generation path; without it those routes answer 503.
	Generator model.Generator
	// DropIns serves the drop-in endpoints (DESIGN §9); without it they answer 503.
	DropIns *dropin.Service
	// Schedules keeps schedules; without it those routes answer 503.
	Schedules model.Schedules
	// Policies resolves, lists and creates the accounts' policy versions; without it the
	// policy and provider routes answer 503.
	Policies policy.Library
	// Providers describes the configured providers (GET /v1/providers).
	Providers []model.ProviderInfo
	// Leases, when set, renews the Idempotency-Key claims of turns while they run, which
	// then hold for a lease rather than model.TurnHold (DESIGN §6).
	Leases model.LeaseHolder
	// Metrics are served at GET /metrics and told of every request; without them /metrics
	// serves the Go runtime's and the process's only.
	Metrics *metrics.Metrics
	// Keys maps each API key to the account it belongs to.
	Keys    map[string]string
	Log     *zap.Logger
	MaxBody string
	// Accounts erases accounts (DELETE /v1/account) and says which are erased, whose
	// requests answer 410; nil serves neither.
	Accounts model.Accounts
}

// Server is the HTTP API.
type Server struct {
	echo       *echo.Echo
	graph      model.ExecutionGraph
	idem       model.IdempotencyStore
	health     model.Pinger
	assembler  model.ContextAssembler
	assemblies model.AssemblyGraph
	modelCalls model.ModelCallReader
	generator  model.Generator
	dropins    *dropin.Service
	schedules  model.Schedules
	// policyLibrary keeps the policy versions; providerInfo describes the providers.
	policyLibrary policy.Library
	providerInfo  []model.ProviderInfo
	leases        model.LeaseHolder
	metrics       *metrics.Metrics
	keys          map[string]string
	accounts      model.Accounts
	log           *zap.Logger
	validate      *validator.Validate
	maxBody       string
}

// New builds the server and registers every route.
func New(cfg Config) *Server {
	s := &Server{
		echo: echo.New(), graph: cfg.Graph, idem: cfg.Idempotency, health: cfg.Health, keys: cfg.Keys,
		assembler: cfg.Assembler, assemblies: cfg.Assemblies, modelCalls: cfg.ModelCalls, generator: cfg.Generator, dropins: cfg.DropIns,
		schedules: cfg.Schedules, leases: cfg.Leases, metrics: cfg.Metrics, log: cfg.Log, validate: newValidator(),
		policyLibrary: cfg.Policies, providerInfo: cfg.Providers, accounts: cfg.Accounts,
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	privacyClass := regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	_ = s.validate.RegisterValidation("privacyclass", func(fl validator.FieldLevel) bool {
		return privacyClass.MatchString(fl.Field().String())
	})
	// maxbytes bounds a string or a raw JSON value by its size in bytes, not characters.
	_ = s.validate.RegisterValidation("maxbytes", func(fl validator.FieldLevel) bool {
		limit, err := strconv.Atoi(fl.Param())
		return err == nil && fl.Field().Len() <= limit
	})
	maxBody := cfg.MaxBody
	if maxBody == "" {
		maxBody = DefaultMaxBody
	}
	s.maxBody = maxBody
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.JSONSerializer = jsonSerializer{}
	e.Use(middleware.RequestID())
	e.Use(s.observe)
	e.Use(middleware.Recover())
	e.Use(middleware.BodyLimit(maxBody))

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/openapi.yaml", s.openapi)
	if s.metrics == nil {
		s.metrics = metrics.New(metrics.Sources{})
	}
	e.GET("/metrics", echo.WrapHandler(s.metrics.Handler()))
	e.GET("/browser/ctxgraph.grass", browserFile("text/plain; charset=utf-8", browser.Style))
	e.GET("/browser/guide.html", browserFile("text/html; charset=utf-8", browser.Guide))
	e.OPTIONS("/browser/guide.html", browserPreflight)
	e.GET("/inspect", inspectorFile("text/html; charset=utf-8", inspect.Page))
	e.GET("/inspect/inspect.js", inspectorFile("text/javascript; charset=utf-8", inspect.Script))
	e.GET("/inspect/inspect.css", inspectorFile("text/css; charset=utf-8", inspect.Style))

	// Middleware is attached per route rather than to a group: an Echo group with middleware
	// answers every unknown method and path under it, which would turn 405s into 404s.
	v1 := func(method, path string, h echo.HandlerFunc) {
		e.Add(method, "/v1"+path, h, unescapeParams, s.authenticate, causal, s.idempotent)
	}
	v1(http.MethodGet, "/conversations", s.listConversations)
	v1(http.MethodPost, "/conversations", s.createConversation)
	v1(http.MethodGet, "/conversations/:id", s.readConversation)
	v1(http.MethodDelete, "/conversations/:id", s.deleteConversation)
	v1(http.MethodPatch, "/conversations/:id", s.setConversationInstructions)
	v1(http.MethodPost, "/conversations/:id/participants", s.addParticipant)
	v1(http.MethodGet, "/participants/:id", s.readParticipant)
	v1(http.MethodPatch, "/participants/:id", s.setParticipantInstructions)
	v1(http.MethodPost, "/conversations/:id/branches", s.forkBranch)
	v1(http.MethodPost, "/branches/:id/messages", s.appendMessage)
	v1(http.MethodGet, "/branches/:id/history", s.history)
	v1(http.MethodPost, "/branches/:id/runs", s.startRun)
	v1(http.MethodGet, "/runs/:id", s.readRun)
	v1(http.MethodGet, "/runs/:id/model-calls", s.runModelCalls)
	v1(http.MethodPatch, "/runs/:id", s.finishRun)
	v1(http.MethodPost, "/runs/:id/tool-calls", s.requestToolCall)
	v1(http.MethodPost, "/runs/:id/skills", s.recordSkills)
	v1(http.MethodPost, "/runs/:id/checkpoints", s.recordCheckpoint)
	v1(http.MethodPost, "/runs/:id/promote", s.promote)
	v1(http.MethodGet, "/tool-calls/:id", s.readToolCall)
	v1(http.MethodPost, "/tool-calls/:id/result", s.recordToolResult)
	v1(http.MethodPost, "/memories", s.deriveMemory)
	v1(http.MethodGet, "/memories/:id", s.readMemory)
	v1(http.MethodGet, "/artifacts/:id", s.readArtifact)
	v1(http.MethodGet, "/artifacts/:id/raw", s.readArtifactRaw)
	v1(http.MethodDelete, "/artifacts/:id", s.deleteArtifact)
	v1(http.MethodPost, "/artifacts/:id/erase", s.eraseArtifact)
	// An account's erasure deletes its idempotency records too: it takes no Idempotency-Key
	// (asked again, it finishes what it began).
	e.Add(http.MethodDelete, "/v1/account", s.eraseAccount, s.authenticate, causal)
	v1(http.MethodPost, "/assemblies", s.assemble)
	v1(http.MethodGet, "/assemblies/:id", s.readAssembly)
	v1(http.MethodGet, "/assemblies/:id/explain", s.explain)
	v1(http.MethodGet, "/assemblies/:id/request", s.sentRequest)
	v1(http.MethodPost, "/assemblies/:id/replay", s.replay)
	v1(http.MethodPost, "/assemblies/:id/diff", s.diff)
	v1(http.MethodGet, "/policies", s.policies)
	v1(http.MethodPost, "/policies", s.createPolicy)
	v1(http.MethodPut, "/policies/default", s.setDefaultPolicy)
	v1(http.MethodGet, "/providers", s.providers)
	v1(http.MethodPost, "/generations", s.generate)
	v1(http.MethodPost, "/runs/:id/continue", s.continueRun)
	v1(http.MethodPost, "/discussions", s.discuss)
	v1(http.MethodPost, "/runs/:id/subagents", s.startSubagents)
	v1(http.MethodPost, "/runs/:id/resume", s.resumeRun)
	v1(http.MethodPost, "/conversations/:id/schedules", s.createSchedule)
	v1(http.MethodGet, "/conversations/:id/schedules", s.listSchedules)
	v1(http.MethodGet, "/schedules/:id", s.readSchedule)
	v1(http.MethodDelete, "/schedules/:id", s.deleteSchedule)

	// The drop-in endpoints (DESIGN §9) answer in their vendor's protocol, errors included,
	// and take the key where that vendor's SDK sends it.
	openAI := func(method, path string, h echo.HandlerFunc) {
		e.Add(method, "/v1/openai"+path, h, s.vendorErrors(openAIErrors), s.vendorKey, causal)
	}
	openAI(http.MethodPost, "/chat/completions", s.openAIChat)
	openAI(http.MethodPost, "/responses", s.openAIResponses)
	openAI(http.MethodGet, "/models", s.openAIModels)
	e.RouteNotFound("/v1/openai/*", openAIUnknown, s.vendorErrors(openAIErrors))
	e.Add(http.MethodPost, "/v1/anthropic/v1/messages", s.anthropicMessages, s.vendorErrors(anthropicErrors), s.vendorKey, causal)
	e.RouteNotFound("/v1/anthropic/*", anthropicUnknown, s.vendorErrors(anthropicErrors))
	return s
}

// Timeouts bound how long one connection may hold the server: ReadHeader for the request
// line and headers, Read for the whole request with its body (a body trickled in slower is
// cut there), Write from the end of the headers to the end of the response, and Idle
// between the requests of a kept-alive connection. Zero leaves a bound off.
type Timeouts struct {
	ReadHeader, Read, Write, Idle time.Duration
}

// DefaultTimeouts are the bounds used unless configured otherwise.
var DefaultTimeouts = Timeouts{ReadHeader: 10 * time.Second, Read: 30 * time.Second, Write: time.Minute, Idle: 2 * time.Minute}

// HTTPServer returns an http.Server serving s on addr under the timeouts t.
func (s *Server) HTTPServer(addr string, t Timeouts) *http.Server {
	return &http.Server{
		Addr: addr, Handler: s,
		ReadHeaderTimeout: t.ReadHeader, ReadTimeout: t.Read, WriteTimeout: t.Write, IdleTimeout: t.Idle,
	}
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }

// Routes lists the registered routes as "METHOD /path" with OpenAPI-style {params}.
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.echo.Routes() {
		out = append(out, r.Method+" "+openAPIPath(r.Path))
	}
	return out
}

// OpenAPISpec returns the embedded OpenAPI document.
func OpenAPISpec() []byte { return openAPISpec }

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
	defer cancel()
	if err := s.health.Ping(ctx); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}

// browserFile serves one of the files Neo4j Browser fetches from ctxgraph (the stylesheet,
// the guide). Browser fetches them from its own origin, so they allow any origin: they
// hold no data, and no key is asked for.
func browserFile(contentType string, body []byte) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderAccessControlAllowOrigin, "*")
		return c.Blob(http.StatusOK, contentType, body)
	}
}

// inspectorCSP confines the inspector to its own origin: its scripts, styles and requests
// go to the server that served it and nowhere else, so the key it holds cannot leave.
const inspectorCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// inspectorFile serves one of the inspector's embedded files. They hold no data and ask for
// no key: the page reads through the API with the key its user enters.
func inspectorFile(contentType string, body []byte) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", inspectorCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		return c.Blob(http.StatusOK, contentType, body)
	}
}

// browserPreflight answers the CORS preflight Browser's `:guide` sends before fetching a
// remote guide (it asks for the guide uncached, with Pragma and Cache-Control headers, which
// a simple cross-origin GET may not carry).
func browserPreflight(c echo.Context) error {
	h := c.Response().Header()
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	h.Set(echo.HeaderAccessControlAllowMethods, http.MethodGet)
	h.Set(echo.HeaderAccessControlAllowHeaders, "Cache-Control, Pragma")
	h.Set(echo.HeaderAccessControlMaxAge, "86400")
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) openapi(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", openAPISpec)
}
