// Package process tunes the Go runtime of a ctxgraph server process: whatever builds a
// server (cmd/ctxgraph, cmd/ctxbench) calls it at start.
package process

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// GCPercent is the garbage-collection target a ctxgraph server runs with unless GOGC is set.
// The store's cached conversation copies are a large heap that lives as long as the
// process, and every assembly allocates its candidates afresh: at Go's default of 100 the
// collector would scan the whole cache every time the assemblies have allocated as much
// again.
const GCPercent = 400

// TuneGarbageCollector applies GCPercent unless the GOGC environment variable says
// otherwise, and, unless GOMEMLIMIT does, a soft memory limit of a quarter of the machine's
// memory (at least 1 GiB): GCPercent lets the heap grow to five times what is live, and the
// limit makes the collector run sooner instead when that would not fit.
func TuneGarbageCollector() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(max(MemTotal()/4, 1<<30))
	}
}

// MemTotal is the machine's memory in bytes (MemTotal in /proc/meminfo), 0 when unknown.
func MemTotal() int64 {
	body, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}
