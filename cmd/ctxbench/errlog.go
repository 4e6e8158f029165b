package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The server's failed requests, counted by cause for the report.

func (b *bench) serverErrLines() []string {
	if b.serverErrs == nil {
		return b.savedServerErrs
	}
	return b.serverErrs.lines()
}

// errorLog counts the server's logged request failures by method, path (ids blanked),
// status and error text.
type errorLog struct {
	mu     sync.Mutex
	counts map[string]int
	order  []string
}

var idPattern = regexp.MustCompile(`\b[a-z]{2,5}_[0-9a-f]{16,}\b`)

func (l *errorLog) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(p, []byte("\n")) {
		var e struct {
			Method string `json:"method"`
			Path   string `json:"path"`
			Status int    `json:"status"`
			Error  string `json:"error"`
			Msg    string `json:"msg"`
		}
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &e) != nil {
			continue
		}
		k := fmt.Sprintf("%s %s → %d: %s", e.Method, idPattern.ReplaceAllString(e.Path, "{id}"), e.Status, clipS(e.Error, 400))
		if e.Method == "" {
			k = e.Msg + ": " + clipS(e.Error, 400)
		}
		l.mu.Lock()
		if l.counts[k] == 0 {
			l.order = append(l.order, k)
		}
		l.counts[k]++
		l.mu.Unlock()
	}
	return len(p), nil
}

var (
	amountPattern   = regexp.MustCompile(`\d+\.\d+`)
	attemptsPattern = regexp.MustCompile(`after \d+ attempts`)
)

// groupErrLines merges "N × cause" lines whose causes differ only in amounts (MiB used,
// retry attempts).
func groupErrLines(lines []string) []string {
	counts := map[string]int{}
	var order []string
	for _, l := range lines {
		n, rest := 1, l
		if c, r, ok := strings.Cut(l, " × "); ok {
			if v, err := strconv.Atoi(c); err == nil {
				n, rest = v, r
			}
		}
		rest = attemptsPattern.ReplaceAllString(amountPattern.ReplaceAllString(rest, "…"), "after … attempts")
		if counts[rest] == 0 {
			order = append(order, rest)
		}
		counts[rest] += n
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, fmt.Sprintf("%d × %s", counts[k], k))
	}
	return out
}

// collapseCleanup folds the failed deletes of the cleanup into one line.
func collapseCleanup(failures []string, account string) []string {
	const prefix = "cleanup: DELETE /v1/conversations/"
	var out, ids []string
	for _, f := range failures {
		if rest, ok := strings.CutPrefix(f, prefix); ok {
			id, _, _ := strings.Cut(rest, " ")
			ids = append(ids, "`"+id+"`")
			continue
		}
		out = append(out, f)
	}
	if len(ids) > 0 {
		out = append(out, fmt.Sprintf("cleanup: `DELETE /v1/conversations/{id}` failed for %d conversation%s of account `%s`, which stay in Neo4j (cause in the server log below): %s",
			len(ids), plural(len(ids), "s"), account, strings.Join(ids, ", ")))
	}
	return out
}

// lines returns "N × cause" for each distinct cause, in first-seen order.
func (l *errorLog) lines() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, k := range l.order {
		out = append(out, fmt.Sprintf("%d × %s", l.counts[k], k))
	}
	return out
}
