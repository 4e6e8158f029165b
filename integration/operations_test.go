package integration

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/server"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// One access-log line per request, naming method, route, status, latency, request id and
// account, and never the key or the body.
func TestAccessLogOneLinePerRequest(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	h := newHarness(t)
	h.wire(server.Config{Store: sharedStore, Keys: map[string]string{h.key: h.account}, Log: zap.New(core)})
	const secret = "TITLE-ONLY-IN-THE-BODY-5521"
	conv := h.must(201, "POST", "/v1/conversations", map[string]any{"title": secret})
	h.expectError(h.call("GET", "/v1/runs/run_nope", nil), 404, "not_found", "")
	h.expectError(h.callAs("", "GET", "/v1/conversations/"+str(conv, "id"), nil), 401, "unauthenticated", "")
	h.must(200, "GET", "/healthz", nil)

	var lines []observer.LoggedEntry
	for _, e := range logs.All() {
		if e.Message == "request" {
			lines = append(lines, e)
		}
		for _, f := range e.Context {
			if v := fmt.Sprint(f.Interface, f.String); strings.Contains(v, h.key) || strings.Contains(v, secret) {
				t.Errorf("a log line carries the key or the body: %v", e.ContextMap())
			}
		}
		if e.Stack != "" {
			t.Errorf("a log line carries a stack trace: %s", e.Message)
		}
	}
	want := []struct {
		method, route string
		status        int64
		account       string
		level         zapcore.Level
	}{
		{"POST", "/v1/conversations", 201, h.account, zap.InfoLevel},
		{"GET", "/v1/runs/{id}", 404, h.account, zap.InfoLevel},
		{"GET", "/v1/conversations/{id}", 401, "", zap.InfoLevel},
		{"GET", "/healthz", 200, "", zap.DebugLevel},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d access-log lines for %d requests", len(lines), len(want))
	}
	for i, w := range want {
		m := lines[i].ContextMap()
		if m["method"] != w.method || m["route"] != w.route || m["status"] != w.status || m["account"] != w.account ||
			lines[i].Level != w.level || m["requestId"] == "" || m["latencyMs"] == nil {
			t.Errorf("line %d: %v at %v, want %+v", i, m, lines[i].Level, w)
		}
	}
}

// GET /v1/conversations pages through an account's conversations, newest first.
func TestListConversationsNewestFirst(t *testing.T) {
	h := newHarness(t)
	var ids []string
	for day := 1; day <= 5; day++ {
		c := h.must(201, "POST", "/v1/conversations", map[string]any{"title": fmt.Sprintf("day %d", day), "at": fmt.Sprintf("2026-11-0%dT09:00:00Z", day)})
		ids = append(ids, str(c, "id"))
	}
	h.callAs(h.otherKey, "POST", "/v1/conversations", map[string]any{"title": "another account's"})
	h.must(204, "DELETE", "/v1/conversations/"+ids[2], nil)
	var listed []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("paging does not end")
		}
		page := h.must(200, "GET", "/v1/conversations?limit=2&cursor="+cursor, nil)
		for _, v := range page["conversations"].([]any) {
			listed = append(listed, str(v.(map[string]any), "id"))
		}
		next, _ := page["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if want := []string{ids[4], ids[3], ids[1], ids[0]}; fmt.Sprint(listed) != fmt.Sprint(want) {
		t.Fatalf("listed %v, want %v (newest first, the deleted one left out)", listed, want)
	}
	h.expectError(h.call("GET", "/v1/conversations?cursor=not-a-cursor", nil), 400, "invalid", "cursor")
	h.expectError(h.call("GET", "/v1/conversations?limit=0", nil), 400, "invalid", "limit")
	if other := h.callAs(h.otherKey, "GET", "/v1/conversations", nil).obj(t)["conversations"].([]any); len(other) != 1 {
		t.Fatalf("the other account lists %d conversations, want its own one", len(other))
	}
}

// An error quotes an id as the client meant it, not as the path escaped it.
func TestErrorsQuoteIdsAsSent(t *testing.T) {
	h := newHarness(t)
	for path, id := range map[string]string{"/v1/runs/run%2Fx": "run/x", "/v1/runs/run%41b": "runAb", "/v1/memories/mem%20%22q%22": `mem "q"`} {
		r := h.call("GET", path, nil)
		h.expectError(r, 404, "not_found", "")
		if msg := str(r.obj(t)["error"].(map[string]any), "message"); !strings.Contains(msg, fmt.Sprintf("%q", id)) {
			t.Errorf("GET %s: the error says %q, want it to quote %q", path, msg, id)
		}
	}
}

// metricValue is the value of the sample of name whose labels include want, and whether
// the exposition holds one.
func metricValue(exposition, name string, want map[string]string) (float64, bool) {
	for _, line := range strings.Split(exposition, "\n") {
		series, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		metric, labels, _ := strings.Cut(series, "{")
		if metric != name {
			continue
		}
		match := true
		for k, v := range want {
			match = match && strings.Contains(labels, k+`="`+v+`"`)
		}
		if match {
			f, err := strconv.ParseFloat(value, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// GET /metrics after real requests: request, assembly, provider, Neo4j and cache series,
// with the counts the requests made.
func TestMetricsAfterRealRequests(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nowhere := closed.Addr().String()
	closed.Close()
	providers := providersFor(t, `providers:
  - {name: echo, kind: echo}
  - {name: broken, kind: openai, baseURL: "http://`+nowhere+`/v1", apiKeyEnv: BROKEN_KEY, maxRetries: 0}
`)
	h := newProviderHarness(t, providers...)
	h.wire(server.Config{Store: sharedStore, Providers: providers, Metrics: true, Keys: map[string]string{h.key: h.account}})
	// Before any request, the counters a dashboard rates are there at zero.
	if fresh := string(h.call("GET", "/metrics", nil).body); !strings.Contains(fresh, `ctxgraph_assembly_omitted_records_total{reason="budget"} 0`) ||
		!strings.Contains(fresh, `ctxgraph_provider_errors_total{code="provider_error",model="",provider="broken"} 0`) {
		t.Errorf("GET /metrics before any request: want the omission and provider error counters at zero, got:\n%s", fresh)
	}
	_, branch, ids := h.conversationWith([3]string{"echo-bot", "echo", ""}, [3]string{"broken-bot", "broken", "m1"})
	gen := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[:1], "userMessage": map[string]any{"content": "hello"}})
	h.expectError(h.call("POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids[1:], "userMessage": map[string]any{"content": "again"}}),
		502, "provider_error", "")
	asm := h.must(201, "POST", "/v1/assemblies", map[string]any{"branchId": branch, "participantId": ids[0]})
	h.expectError(h.call("GET", "/v1/runs/run_nope", nil), 404, "not_found", "")

	r := h.call("GET", "/metrics", nil)
	if r.status != 200 {
		t.Fatalf("GET /metrics: %d", r.status)
	}
	body := string(r.body)
	omitted := 0.0
	for _, a := range []string{str(first(gen, "runs"), "assemblyId"), str(asm, "id")} {
		for _, n := range h.must(200, "GET", "/v1/assemblies/"+a, nil)["omitted"].(map[string]any) {
			omitted += n.(float64)
		}
	}
	gotOmitted := 0.0
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "ctxgraph_assembly_omitted_records_total{") {
			v, _ := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
			gotOmitted += v
		}
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		check  func(float64) bool
		want   string
	}{
		{"ctxgraph_http_request_duration_seconds_count", map[string]string{"method": "POST", "route": "/v1/generations", "status": "201"}, eq(1), "1"},
		{"ctxgraph_http_request_duration_seconds_count", map[string]string{"method": "POST", "route": "/v1/generations", "status": "502"}, eq(1), "1"},
		{"ctxgraph_http_request_duration_seconds_count", map[string]string{"method": "GET", "route": "/v1/runs/{id}", "status": "404"}, eq(1), "1"},
		{"ctxgraph_http_request_duration_seconds_bucket", map[string]string{"route": "/v1/assemblies", "le": "+Inf"}, eq(1), "1"},
		// Three assemblies: the two turns' and the plain one.
		{"ctxgraph_assembly_duration_seconds_count", map[string]string{"step": "graph"}, eq(3), "3"},
		{"ctxgraph_assembly_duration_seconds_count", map[string]string{"step": "total"}, eq(3), "3"},
		{"ctxgraph_assembly_tokens_sum", map[string]string{"kind": "assembled"}, gt(0), "> 0"},
		{"ctxgraph_assembly_tokens_sum", map[string]string{"kind": "baseline"}, gt(0), "> 0"},
		{"ctxgraph_provider_request_duration_seconds_count", map[string]string{"provider": "echo", "outcome": "ok"}, eq(1), "1"},
		{"ctxgraph_provider_request_duration_seconds_count", map[string]string{"provider": "broken", "model": "m1", "outcome": "error"}, eq(1), "1"},
		{"ctxgraph_provider_errors_total", map[string]string{"provider": "broken", "model": "m1"}, eq(1), "1"},
		{"ctxgraph_provider_tokens_total", map[string]string{"provider": "echo", "type": "input"}, gt(0), "> 0"},
		{"ctxgraph_neo4j_errors_total", map[string]string{"kind": "unavailable"}, gte(0), "present"},
		{"ctxgraph_record_cache_reads_total", map[string]string{"result": "hit"}, gt(0), "> 0"},
		{"ctxgraph_assembler_memory_bytes", map[string]string{"cache": "copies"}, gt(0), "> 0"},
		{"ctxgraph_assembler_memory_bytes", map[string]string{"cache": "judgements"}, gt(0), "> 0"},
		{"ctxgraph_assembler_memory_limit_bytes", map[string]string{"cache": "copies"}, eq(float64(cypher.DefaultRecordCacheBytes)), "the default"},
		{"ctxgraph_assembler_memory_limit_bytes", map[string]string{"cache": "judgements"}, eq(float64(assembly.DefaultJudgementBytes)), "the default"},
		{"ctxgraph_record_cache_dropped_total", nil, gte(0), "present"},
		{"go_goroutines", nil, gt(0), "> 0"},
	} {
		if v, ok := metricValue(body, c.name, c.labels); !ok || !c.check(v) {
			t.Errorf("%s%v = %v (present %v), want %s", c.name, c.labels, v, ok, c.want)
		}
	}
	if gotOmitted != omitted {
		t.Errorf("omitted records: the metric counts %v, the assemblies %v", gotOmitted, omitted)
	}
}

func eq(want float64) func(float64) bool  { return func(v float64) bool { return v == want } }
func gt(than float64) func(float64) bool  { return func(v float64) bool { return v > than } }
func gte(than float64) func(float64) bool { return func(v float64) bool { return v >= than } }

// The spans of a generation, in an in-memory exporter: the request's server span continuing
// the caller's trace, the assembly and its steps, and the provider call with the GenAI
// semantic conventions.
func TestTracesOfAGeneration(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	previous, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTracerProvider(previous); otel.SetTextMapPropagator(prevProp) })

	h := newProviderHarness(t)
	conv, branch, ids := h.conversationWith([3]string{"echo-bot", "echo", ""})
	exp.Reset()
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	gen := h.must(201, "POST", "/v1/generations", map[string]any{"branchId": branch, "participantIds": ids, "userMessage": map[string]any{"content": "hello"}},
		"traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	run := first(gen, "runs")

	byName := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		byName[s.Name] = s
		if s.SpanContext.TraceID().String() != traceID {
			t.Errorf("span %s is in trace %s, not the caller's %s", s.Name, s.SpanContext.TraceID(), traceID)
		}
	}
	attrs := func(name string) map[string]any {
		s, ok := byName[name]
		if !ok {
			t.Fatalf("no span %q among %v", name, keys(byName))
		}
		out := map[string]any{}
		for _, kv := range s.Attributes {
			out[string(kv.Key)] = kv.Value.AsInterface()
		}
		return out
	}
	server := attrs("POST /v1/generations")
	if server["http.route"] != "/v1/generations" || server["http.response.status_code"] != int64(201) || byName["POST /v1/generations"].SpanKind != trace.SpanKindServer {
		t.Errorf("server span: %v", server)
	}
	asm := attrs("ctxgraph.assemble")
	if asm["ctxgraph.assembly.id"] != str(run, "assemblyId") {
		t.Errorf("assembly span: %v, want assembly %s", asm, str(run, "assemblyId"))
	}
	for _, step := range []string{"ctxgraph.assembly.graph", "ctxgraph.assembly.policy", "ctxgraph.assembly.serialize", "ctxgraph.assembly.record"} {
		attrs(step)
	}
	if byName["ctxgraph.assembly.graph"].Parent.SpanID() != byName["ctxgraph.assemble"].SpanContext.SpanID() {
		t.Error("the graph step is not a child of the assembly's span")
	}
	call := attrs("chat echo")
	want := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "echo", "gen_ai.request.model": "echo",
		"gen_ai.conversation.id": conv, "ctxgraph.run.id": str(run, "runId")}
	for k, v := range want {
		if call[k] != v {
			t.Errorf("provider span %s = %v, want %v", k, call[k], v)
		}
	}
	usage := run["usage"].(map[string]any)
	if call["gen_ai.response.model"] == "" || call["gen_ai.usage.input_tokens"] != int64(usage["inputTokens"].(float64)) ||
		call["gen_ai.usage.output_tokens"] != int64(usage["outputTokens"].(float64)) || fmt.Sprint(call["gen_ai.response.finish_reasons"]) != "["+str(run, "finishReason")+"]" {
		t.Errorf("provider span answer attributes %v, the run says %v", call, run)
	}
	if byName["chat echo"].SpanKind != trace.SpanKindClient || byName["chat echo"].Parent.SpanID() != byName["POST /v1/generations"].SpanContext.SpanID() {
		t.Error("the provider span is not a client span under the request's")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
