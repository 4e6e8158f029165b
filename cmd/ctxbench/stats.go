package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
)

// Latency statistics and the formatting of figures.

type stats struct {
	N                            int
	Min, P50, P95, P99, Max, Avg time.Duration
}

// summarize computes nearest-rank percentiles, as integration/bench_test.go does.
func summarize(ds []time.Duration) stats {
	if len(ds) == 0 {
		return stats{}
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	pct := func(p int) time.Duration {
		rank := (p*len(s) + 99) / 100
		return s[max(rank, 1)-1]
	}
	return stats{N: len(s), Min: s[0], P50: pct(50), P95: pct(95), P99: pct(99), Max: s[len(s)-1], Avg: sum / time.Duration(len(s))}
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ms(d time.Duration) string {
	switch f := msf(d); {
	case d == 0:
		return "—"
	case f < 1:
		return fmt.Sprintf("%.3f", f)
	case f < 100:
		return fmt.Sprintf("%.2f", f)
	default:
		return fmt.Sprintf("%.1f", f)
	}
}

func multiple(d, floor time.Duration) string {
	if d == 0 || floor == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f×", float64(d)/float64(floor))
}

// ratio is d as a multiple of base to two decimals, for ratios a target bounds (the
// after-write assembly's 1.5 × the unchanged one's).
func ratio(d, base time.Duration) string {
	if d == 0 || base == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", float64(d)/float64(base))
}

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func mb(n int64) string {
	if n < 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func plural(n int, suffix string) string {
	if n == 1 {
		return ""
	}
	return suffix
}

func parseInts(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		out = []int{1}
	}
	return out
}

// mustJSON encodes a request body as the client sends it.
func mustJSON(v any) []byte {
	b, err := client.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func clip(b []byte) string { return clipS(string(b), 200) }

func clipS(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func oneLine(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func orDash(s string) string {
	if s == "" {
		return "the Neo4j data directory (not measured: not a local launcher)"
	}
	return "`" + s + "`"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
