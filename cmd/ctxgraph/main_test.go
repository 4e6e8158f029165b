package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ctxgraph/ctxgraph/api"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
	"github.com/ctxgraph/ctxgraph/provider"
)

// testEnv returns an environment of the given variables, with a blob directory of the test's.
func testEnv(t *testing.T) func(vars map[string]string) func(string) string {
	dir := t.TempDir()
	t.Chdir(dir) // the development key is kept in the working directory
	return func(vars map[string]string) func(string) string {
		return func(k string) string {
			if k == "CTXGRAPH_BLOB_DIR" {
				return filepath.Join(dir, "blobs")
			}
			return vars[k]
		}
	}
}

func TestParseEnvAssemblerMemory(t *testing.T) {
	env := testEnv(t)
	for _, tc := range []struct {
		value string
		want  int64
	}{{"", DefaultAssemblerMemory}, {"0", 0}, {"512MiB", 512 << 20}, {"2G", 2_000_000_000}, {"1048576", 1 << 20}} {
		var m Main
		if err := m.ParseEnv(env(map[string]string{"CTXGRAPH_ASSEMBLER_MEMORY": tc.value})); err != nil {
			t.Fatalf("CTXGRAPH_ASSEMBLER_MEMORY=%q: %v", tc.value, err)
		}
		if m.AssemblerMemory != tc.want {
			t.Errorf("CTXGRAPH_ASSEMBLER_MEMORY=%q: got %d, want %d", tc.value, m.AssemblerMemory, tc.want)
		}
	}
	for _, bad := range []map[string]string{{"CTXGRAPH_ASSEMBLER_MEMORY": "-1"}, {"CTXGRAPH_ASSEMBLER_MEMORY": "lots"},
		{"CTXGRAPH_RECORD_CACHE": "1000"}} {
		var m Main
		err := m.ParseEnv(env(bad))
		var me *model.Error
		for name := range bad {
			if !errors.As(err, &me) || me.Field != name {
				t.Errorf("%v: got %v, want an error naming %s", bad, err, name)
			}
		}
	}
}

func TestParseEnvDurations(t *testing.T) {
	env := testEnv(t)
	var m Main
	if err := m.ParseEnv(env(map[string]string{"CTXGRAPH_READ_TIMEOUT": "5s", "CTXGRAPH_IDLE_TIMEOUT": "0", "CTXGRAPH_BLOB_SWEEP_INTERVAL": "10m", "CTXGRAPH_SHUTDOWN_TIMEOUT": "45s", "CTXGRAPH_RUN_LEASE": "3s"})); err != nil {
		t.Fatal(err)
	}
	if m.Timeouts.Read != 5*time.Second || m.Timeouts.Idle != 0 || m.Timeouts.Write != api.DefaultTimeouts.Write || m.BlobSweep != 10*time.Minute || m.ShutdownTimeout != 45*time.Second || m.RunLease != 3*time.Second {
		t.Errorf("got timeouts %+v, sweep %v, shutdown %v, run lease %v", m.Timeouts, m.BlobSweep, m.ShutdownTimeout, m.RunLease)
	}
	if err := m.ParseEnv(env(nil)); err != nil || m.RunLease != model.DefaultRunLease {
		t.Errorf("unset CTXGRAPH_RUN_LEASE: got %v, %v, want %v", err, m.RunLease, model.DefaultRunLease)
	}
	for name, bad := range map[string]string{"CTXGRAPH_WRITE_TIMEOUT": "soon", "CTXGRAPH_READ_HEADER_TIMEOUT": "-1s", "CTXGRAPH_BLOB_SWEEP_INTERVAL": "0", "CTXGRAPH_SHUTDOWN_TIMEOUT": "0", "CTXGRAPH_RUN_LEASE": "0"} {
		var m Main
		err := m.ParseEnv(env(map[string]string{name: bad}))
		var me *model.Error
		if !errors.As(err, &me) || me.Field != name {
			t.Errorf("%s=%q: got %v, want an error naming the variable", name, bad, err)
		}
	}
}

func TestHelpPrintsUsageInsteadOfServing(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		var out, errs strings.Builder
		serve, code := command(args, &out, &errs)
		if serve || code != 0 || !strings.Contains(out.String(), "usage:") || !strings.Contains(out.String(), "CTXGRAPH_API_KEYS") || errs.Len() != 0 {
			t.Errorf("%v: serve %v, code %d, printed %q, complained %q", args, serve, code, out.String(), errs.String())
		}
	}
	var out, errs strings.Builder
	if serve, code := command([]string{"--port=8080"}, &out, &errs); serve || code != 2 || !strings.Contains(errs.String(), `"--port=8080"`) {
		t.Errorf("an unknown argument: serve %v, code %d, complained %q", serve, code, errs.String())
	}
	if serve, _ := command(nil, &out, &errs); !serve {
		t.Error("no arguments does not serve")
	}
}

func TestLoggerWritesISOTimesWithoutStacks(t *testing.T) {
	var buf bytes.Buffer
	log := NewLogger(zapcore.InfoLevel, zapcore.AddSync(&buf))
	log.Debug("not at info")
	log.Error("request failed", zap.Int("status", 500))
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("one JSON line expected, got %q", buf.String())
	}
	ts, _ := line["ts"].(string)
	if _, err := time.Parse("2006-01-02T15:04:05.000Z0700", ts); err != nil {
		t.Errorf("ts %v is not ISO-8601", line["ts"])
	}
	if _, ok := line["stacktrace"]; ok || line["level"] != "error" || line["msg"] != "request failed" {
		t.Errorf("logged %v", line)
	}

	env := testEnv(t)
	var m Main
	if err := m.ParseEnv(env(map[string]string{"CTXGRAPH_LOG_LEVEL": "debug"})); err != nil || m.LogLevel != zapcore.DebugLevel {
		t.Errorf("CTXGRAPH_LOG_LEVEL=debug: %v, level %v", err, m.LogLevel)
	}
	err := m.ParseEnv(env(map[string]string{"CTXGRAPH_LOG_LEVEL": "loud"}))
	var me *model.Error
	if !errors.As(err, &me) || me.Field != "CTXGRAPH_LOG_LEVEL" {
		t.Errorf("CTXGRAPH_LOG_LEVEL=loud: got %v, want an error naming the variable", err)
	}
}

func TestDevelopmentKeyLivesWhereTheREADMESays(t *testing.T) {
	env := testEnv(t)
	var m Main
	if err := m.ParseEnv(env(map[string]string{})); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(".ctxgraph", "dev-api-key"))
	if err != nil || strings.TrimSpace(string(b)) != m.DevKey || m.Keys[m.DevKey] != "dev" {
		t.Fatalf("dev key %q, file %q (%v)", m.DevKey, b, err)
	}
	var again Main // a restart keeps the key, wherever the blobs go
	if err := again.ParseEnv(func(k string) string {
		if k == "CTXGRAPH_BLOB_DIR" {
			return filepath.Join(t.TempDir(), "elsewhere", "blobs")
		}
		return ""
	}); err != nil || again.DevKey != m.DevKey {
		t.Fatalf("with another blob directory the key is %q (%v), want %q", again.DevKey, err, m.DevKey)
	}
}

func TestParseEnvNeo4jReads(t *testing.T) {
	env := testEnv(t)
	for value, anyReader := range map[string]bool{"": false, "leader": false, "any": true} {
		var m Main
		if err := m.ParseEnv(env(map[string]string{"CTXGRAPH_NEO4J_READS": value})); err != nil || m.Neo4j.AnyReader != anyReader {
			t.Errorf("CTXGRAPH_NEO4J_READS=%q: %v, any reader %v", value, err, m.Neo4j.AnyReader)
		}
	}
	var m Main
	var me *model.Error
	if err := m.ParseEnv(env(map[string]string{"CTXGRAPH_NEO4J_READS": "followers"})); !errors.As(err, &me) || me.Field != "CTXGRAPH_NEO4J_READS" {
		t.Errorf("CTXGRAPH_NEO4J_READS=followers: got %v, want an error naming the variable", err)
	}
}

func TestParseEnvScheduler(t *testing.T) {
	env := testEnv(t)
	for _, tc := range []struct {
		value string
		off   bool
	}{{"", false}, {"on", false}, {"off", true}} {
		var m Main
		if err := m.ParseEnv(env(map[string]string{"CTXGRAPH_SCHEDULER": tc.value})); err != nil || m.NoScheduler != tc.off {
			t.Errorf("CTXGRAPH_SCHEDULER=%q: got %v, off %v, want off %v", tc.value, err, m.NoScheduler, tc.off)
		}
	}
	var m Main
	var me *model.Error
	if err := m.ParseEnv(env(map[string]string{"CTXGRAPH_SCHEDULER": "sometimes"})); !errors.As(err, &me) || me.Field != "CTXGRAPH_SCHEDULER" {
		t.Errorf("CTXGRAPH_SCHEDULER=sometimes: got %v, want an error naming the variable", err)
	}
}

func TestLogProvidersWritesOneLinePerProvider(t *testing.T) {
	cfgs, err := provider.Parse([]byte(`providers:
  - {name: vllm, kind: openai, baseURL: "http://10.0.0.7:8000/v1", apiKeyEnv: VLLM_KEY, receives: [internal, public], zeroRetention: true}
  - {name: openrouter, kind: openai, baseURL: "https://openrouter.ai/api/v1"}
  - {name: echo, kind: echo}
`), func(string) string { return "sk-never-logged" })
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	LogProviders(NewLogger(zapcore.InfoLevel, zapcore.AddSync(&buf)), provider.Describe(cfgs), policy.NewCatalog(provider.Trust(cfgs)).Default())
	if strings.Contains(buf.String(), "sk-never-logged") {
		t.Fatalf("got the key logged: %s", buf.String())
	}
	want := []struct {
		name, host string
		receives   []any
		zero       bool
	}{
		{"vllm", "10.0.0.7:8000", []any{"public", "internal"}, true},
		{"openrouter", "openrouter.ai", []any{"public", "internal", "user_private"}, false},
		{"echo", "", []any{"public", "internal", "user_private", "oauth_derived", "google_derived"}, true},
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want one per provider: %s", len(lines), buf.String())
	}
	for i, w := range want {
		var line map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &line); err != nil {
			t.Fatal(err)
		}
		if line["msg"] != "provider" || line["name"] != w.name || line["baseURLHost"] != w.host ||
			!reflect.DeepEqual(line["receives"], w.receives) || line["zeroRetention"] != w.zero {
			t.Errorf("got line %v, want %s at %q receiving %v (zero retention %v)", line, w.name, w.host, w.receives, w.zero)
		}
	}
}

// CTXGRAPH_BLOB_URL names an object store or a directory; with CTXGRAPH_BLOB_DIR as well, or
// not a URL of either, it is a configuration error that names it.
func TestParseEnvBlobStore(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		dir, url         string
		wantDir, wantURL string
		bad              bool
	}{
		{wantDir: filepath.Join(".ctxgraph", "blobs")},
		{dir: "/var/blobs", wantDir: "/var/blobs"},
		{url: "s3://blobs/ctxgraph", wantURL: "s3://blobs/ctxgraph"},
		{url: "file:///var/blobs", wantDir: "/var/blobs"},
		{dir: "/var/blobs", url: "s3://blobs/ctxgraph", bad: true},
		{url: "file://relative/blobs", bad: true},
		{url: "gs://blobs/ctxgraph", bad: true},
		{url: "s3://", bad: true},
	} {
		vars := map[string]string{"CTXGRAPH_BLOB_DIR": tc.dir, "CTXGRAPH_BLOB_URL": tc.url}
		var m Main
		err := m.ParseEnv(func(k string) string { return vars[k] })
		var me *model.Error
		if tc.bad {
			if !errors.As(err, &me) || me.Field != "CTXGRAPH_BLOB_URL" {
				t.Errorf("dir %q, url %q: got %v, want an error naming CTXGRAPH_BLOB_URL", tc.dir, tc.url, err)
			}
			continue
		}
		if err != nil || m.BlobDir != tc.wantDir || m.BlobURL != tc.wantURL {
			t.Errorf("dir %q, url %q: got dir %q, url %q, %v; want dir %q, url %q", tc.dir, tc.url, m.BlobDir, m.BlobURL, err, tc.wantDir, tc.wantURL)
		}
	}
}
