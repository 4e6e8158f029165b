// Package tracing gives ctxgraph's spans their tracer and, when an OTLP endpoint is
// configured, exports them: a span per request, per assembly step and per provider call,
// the provider call carrying the OpenTelemetry GenAI semantic conventions so that Langfuse,
// Phoenix or any OTLP backend shows ctxgraph's generations.
package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracer is ctxgraph's tracer from the global provider: a no-op until Setup, or a test,
// installs one.
func Tracer() trace.Tracer { return otel.Tracer("github.com/ctxgraph/ctxgraph") }

// Setup exports spans over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (the exporter reads the OTEL_EXPORTER_OTLP_*
// variables itself: headers, protocol details, timeouts), and does nothing otherwise. The
// service is named ctxgraph unless OTEL_SERVICE_NAME says otherwise. shutdown flushes the
// spans still buffered.
func Setup(ctx context.Context, getenv func(string) string) (shutdown func(context.Context) error, err error) {
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "ctxgraph")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return tp.Shutdown, nil
}

// Steps records spans of known durations, laid end to end from start under ctx's span: an
// assembly's steps, whose times are measured as they run (policy and serialisation
// interleave, so their spans carry each step's time, not its exact place).
func Steps(ctx context.Context, start time.Time, steps []Step) {
	at := start
	for _, st := range steps {
		_, span := Tracer().Start(ctx, st.Name, trace.WithTimestamp(at))
		at = at.Add(st.Took)
		span.End(trace.WithTimestamp(at))
	}
}

// Step is one span Steps records.
type Step struct {
	Name string
	Took time.Duration
}
