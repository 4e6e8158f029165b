package main

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/model"
)

func TestParseEnvRecordCache(t *testing.T) {
	dir := t.TempDir()
	env := func(vars map[string]string) func(string) string {
		return func(k string) string {
			if k == "CTXGRAPH_BLOB_DIR" {
				return filepath.Join(dir, "blobs")
			}
			return vars[k]
		}
	}
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
