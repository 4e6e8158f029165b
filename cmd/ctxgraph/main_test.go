package main

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/api"

	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/model"
)

// testEnv returns an environment of the given variables, with a blob directory of the test's.
func testEnv(t *testing.T) func(vars map[string]string) func(string) string {
	dir := t.TempDir()
	return func(vars map[string]string) func(string) string {
		return func(k string) string {
			if k == "CTXGRAPH_BLOB_DIR" {
				return filepath.Join(dir, "blobs")
			}
			return vars[k]
		}
	}
}

func TestParseEnvRecordCache(t *testing.T) {
	env := testEnv(t)
	for _, tc := range []struct {
		value string
		want  int
	}{{"", cypher.DefaultRecordCacheSize}, {"0", 0}, {"1000", 1000}} {
		var m Main
		if err := m.ParseEnv(env(map[string]string{"CTXGRAPH_RECORD_CACHE": tc.value})); err != nil {
			t.Fatalf("CTXGRAPH_RECORD_CACHE=%q: %v", tc.value, err)
		}
		if m.RecordCache != tc.want {
			t.Errorf("CTXGRAPH_RECORD_CACHE=%q: got %d, want %d", tc.value, m.RecordCache, tc.want)
		}
	}
	for _, bad := range []string{"-1", "lots"} {
		var m Main
		err := m.ParseEnv(env(map[string]string{"CTXGRAPH_RECORD_CACHE": bad}))
		var me *model.Error
		if !errors.As(err, &me) || me.Field != "CTXGRAPH_RECORD_CACHE" {
			t.Errorf("CTXGRAPH_RECORD_CACHE=%q: got %v, want an error naming the variable", bad, err)
		}
	}
}

func TestParseEnvDurations(t *testing.T) {
	env := testEnv(t)
	var m Main
	if err := m.ParseEnv(env(map[string]string{"CTXGRAPH_READ_TIMEOUT": "5s", "CTXGRAPH_IDLE_TIMEOUT": "0", "CTXGRAPH_BLOB_SWEEP_INTERVAL": "10m", "CTXGRAPH_SHUTDOWN_TIMEOUT": "45s"})); err != nil {
		t.Fatal(err)
	}
	if m.Timeouts.Read != 5*time.Second || m.Timeouts.Idle != 0 || m.Timeouts.Write != api.DefaultTimeouts.Write || m.BlobSweep != 10*time.Minute || m.ShutdownTimeout != 45*time.Second {
		t.Errorf("got timeouts %+v, sweep %v, shutdown %v", m.Timeouts, m.BlobSweep, m.ShutdownTimeout)
	}
	for name, bad := range map[string]string{"CTXGRAPH_WRITE_TIMEOUT": "soon", "CTXGRAPH_READ_HEADER_TIMEOUT": "-1s", "CTXGRAPH_BLOB_SWEEP_INTERVAL": "0", "CTXGRAPH_SHUTDOWN_TIMEOUT": "0"} {
		var m Main
		err := m.ParseEnv(env(map[string]string{name: bad}))
		var me *model.Error
		if !errors.As(err, &me) || me.Field != name {
			t.Errorf("%s=%q: got %v, want an error naming the variable", name, bad, err)
		}
	}
}
