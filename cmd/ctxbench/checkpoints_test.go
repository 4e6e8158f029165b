package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCheckpointsFromDebugLog(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	log := `2026-12-03 16:40:23.613+0000 INFO  [o.n.k.i.t.l.c.CheckPointerImpl] [neo4j/89e1d274] Checkpoint triggered by "Scheduled checkpoint for every 100000 log chunks threshold" @ txId: 201675, append index: 201675 checkpoint started...
2026-12-03 16:40:30.000+0000 INFO  [o.n.k.i.t.l.c.CheckPointerImpl] something else
2026-12-03 16:40:33.875+0000 INFO  [o.n.k.i.t.l.c.CheckPointerImpl] [neo4j/89e1d274] Checkpoint triggered by "Scheduled checkpoint for every 100000 log chunks threshold" @ txId: 201675, append index: 201675 checkpoint completed in 10s 262ms. Checkpoint flushed 212630 pages (40% of total available pages), in 77512 IOs. Checkpoint performed with IO limit: unlimited, paused in total 0 times( 0 millis).
2026-12-03 16:50:00.000+0000 INFO  [o.n.k.i.t.l.c.CheckPointerImpl] [neo4j/89e1d274] Checkpoint triggered by "Scheduled checkpoint for time threshold" @ txId: 300000, append index: 300000 checkpoint started...
`
	if err := os.WriteFile(filepath.Join(home, "logs", "debug.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &bench{dataDir: filepath.Join(home, "data")}
	at := func(s string) time.Time {
		t0, err := time.Parse(time.RFC3339, "2026-12-03T"+s+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return t0
	}
	for _, tc := range []struct {
		from, to string
		want     []checkpoint
	}{
		{"16:40:00", "16:40:30", []checkpoint{{Start: at("16:40:23.613"), Took: 10262 * time.Millisecond, Pages: 212630}}},
		{"16:40:30", "16:41:00", []checkpoint{{Start: at("16:40:23.613"), Took: 10262 * time.Millisecond, Pages: 212630}}},
		{"16:41:00", "16:49:00", nil},
		{"16:49:30", "16:50:30", []checkpoint{{Start: at("16:50:00")}}},
	} {
		got := b.checkpoints(at(tc.from), at(tc.to))
		if len(got) != len(tc.want) {
			t.Errorf("[%s, %s]: got %v, want %v", tc.from, tc.to, got, tc.want)
			continue
		}
		for i := range got {
			if !got[i].Start.Equal(tc.want[i].Start) || got[i].Took != tc.want[i].Took || got[i].Pages != tc.want[i].Pages {
				t.Errorf("[%s, %s]: got %+v, want %+v", tc.from, tc.to, got[i], tc.want[i])
			}
		}
	}
}
