package cypher

import (
	"testing"
	"time"
)

func TestUnavailableRetryAfterGrowsWithTheOutage(t *testing.T) {
	for _, tc := range []struct {
		down time.Duration
		want int
	}{
		{0, 1}, {time.Second, 1}, {3 * time.Second, 1}, {4 * time.Second, 2}, {7 * time.Second, 3},
		{10 * time.Second, 5}, {time.Hour, maxUnavailableRetryAfter},
	} {
		if got := unavailableRetryAfter(tc.down); got != tc.want {
			t.Errorf("after %v unavailable: got Retry-After %d, want %d", tc.down, got, tc.want)
		}
	}
}
