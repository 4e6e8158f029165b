package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/tiktoken-go/tokenizer"
)

// Probes of the machine's CPU speed between phases.

// speedProbe is one measurement of the machine's CPU speed between phases: how long a
// fixed, single-threaded piece of work took (speedWork), the best of three. The machine is
// a VM on a shared host whose speed has been seen to move by tens of percent within an hour.
// A slow probe says the CPU was slow during the run; a normal one does not vouch for the
// rest (a run has been far slower end to end with the probe near normal).
type speedProbe struct {
	When string
	Ms   float64
}

// speedText is the fixed work of a speed probe: 400 lines of CSV, 29 KB.
var speedText = func() string {
	var b strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&b, "row-%d,Region %d,%d.%02d,2026-11-%02d,\"note about item %d with some words\"\n", i, i%7, i*13, i%100, i%28+1, i)
	}
	return b.String()
}()

// speedWork tokenizes speedText with the tokenizer library's own split pattern and BPE (not
// ctxgraph's code, so that the probe measures the machine, not the change under test).
func speedWork() time.Duration {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return 0
	}
	best := time.Duration(0)
	for range 3 {
		start := time.Now()
		for range 5 {
			_, _ = codec.Count(speedText)
		}
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
	}
	return best
}

func (b *bench) probeSpeed(when string) {
	ms := float64(speedWork().Microseconds()) / 1000
	b.speed = append(b.speed, speedProbe{When: when, Ms: ms})
	logf("machine speed probe %s: %.1f ms", when, ms)
}

// speedLine summarises the probes for the report's header.
func (b *bench) speedLine() string {
	if len(b.speed) == 0 {
		return "not measured"
	}
	parts := make([]string, len(b.speed))
	for i, p := range b.speed {
		parts[i] = fmt.Sprintf("%.1f ms %s", p.Ms, p.When)
	}
	return strings.Join(parts, ", ")
}
