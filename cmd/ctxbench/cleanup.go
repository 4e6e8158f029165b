package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The cleanup phase: the conversations the run made are deleted at its end.

type cleanupResult struct {
	Conversation string
	Elapsed      time.Duration
	Err          string
}

func (b *bench) runCleanup(ctx context.Context) {
	for _, kc := range b.convs {
		key, id, _ := strings.Cut(kc, "|")
		st, out, d, err := b.call(ctx, key, http.MethodDelete, "/v1/conversations/"+id, nil)
		c := cleanupResult{Conversation: id, Elapsed: d}
		if err != nil || (st != http.StatusNoContent && st != http.StatusOK) {
			c.Err = fmt.Sprintf("%d %v %s", st, err, clip(out))
			b.failures = append(b.failures, fmt.Sprintf("cleanup: DELETE /v1/conversations/%s (account %s) failed after %s: %s",
				id, b.account, d.Round(time.Millisecond), clipS(c.Err, 300)))
		}
		b.cleanups = append(b.cleanups, c)
	}
	failed := 0
	for _, c := range b.cleanups {
		if c.Err != "" {
			failed++
		}
	}
	logf("cleanup: %d conversations deleted, %d failed", len(b.cleanups)-failed, failed)
}
