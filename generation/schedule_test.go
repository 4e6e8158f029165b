package generation

import (
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParseCronFieldsAndZones(t *testing.T) {
	for _, tc := range []struct {
		cron, zone, after, want string
	}{
		{"*/15 * * * *", "", "2026-12-05T10:07:30Z", "2026-12-05T10:15:00Z"},
		{"30 * * * * *", "UTC", "2026-12-05T10:07:30Z", "2026-12-05T10:08:30Z"},
		// 09:00 in Berlin is 08:00 UTC in winter and 07:00 UTC in summer.
		{"0 9 * * *", "Europe/Berlin", "2026-12-05T10:00:00Z", "2026-12-06T08:00:00Z"},
		{"0 9 * * *", "Europe/Berlin", "2026-07-01T10:00:00Z", "2026-07-02T07:00:00Z"},
		{"@hourly", "", "2026-12-05T10:07:30Z", "2026-12-05T11:00:00Z"},
		{"@every 90s", "", "2026-12-05T10:07:30Z", "2026-12-05T10:09:00Z"},
	} {
		s, err := ParseCron(tc.cron, tc.zone)
		if err != nil {
			t.Fatalf("%q in %q: %v", tc.cron, tc.zone, err)
		}
		if got := s.Next(at(t, tc.after)).UTC(); !got.Equal(at(t, tc.want)) {
			t.Errorf("%q in %q after %s: next %s, want %s", tc.cron, tc.zone, tc.after, got, tc.want)
		}
	}
}

func TestParseCronRefusals(t *testing.T) {
	for _, tc := range []struct{ cron, zone, field string }{
		{"* * *", "", "cron"},
		{"61 * * * *", "", "cron"},
		{"* * * * * * *", "", "cron"},
		{"TZ=Europe/Berlin 0 9 * * *", "", "cron"},
		{"0 9 * * *", "Mars/Olympus", "timezone"},
		{"0 9 * * *", "Local", "timezone"},
	} {
		_, err := ParseCron(tc.cron, tc.zone)
		if me, ok := err.(*model.Error); !ok || me.Kind != model.KindInvalid || me.Field != tc.field {
			t.Errorf("%q in %q: got %v, want invalid %s", tc.cron, tc.zone, err, tc.field)
		}
	}
}

// Ticks missed while no server ran fire once, as the latest; a tick to come fires not yet.
func TestLatestTick(t *testing.T) {
	everySecond, _ := ParseCron("* * * * * *", "")
	hourly, _ := ParseCron("0 * * * *", "")
	weekly, _ := ParseCron("0 9 * * 1", "Europe/Berlin")
	for _, tc := range []struct {
		name      string
		next, now string
		want      string
	}{
		{"due now", "2026-12-05T10:00:01Z", "2026-12-05T10:00:01.2Z", "2026-12-05T10:00:01Z"},
		{"to come", "2026-12-05T10:00:02Z", "2026-12-05T10:00:01.9Z", ""},
		{"missed a few", "2026-12-05T10:00:01Z", "2026-12-05T10:00:04.5Z", "2026-12-05T10:00:04Z"},
		{"missed two days", "2026-12-03T10:00:01Z", "2026-12-05T10:00:04.5Z", "2026-12-05T10:00:04Z"},
	} {
		got := LatestTick(everySecond, at(t, tc.next), at(t, tc.now))
		if tc.want == "" && !got.IsZero() || tc.want != "" && !got.Equal(at(t, tc.want)) {
			t.Errorf("every second, %s: got %s, want %q", tc.name, got, tc.want)
		}
	}
	if got := LatestTick(hourly, at(t, "2026-12-01T00:00:00Z"), at(t, "2026-12-05T10:59:59Z")); !got.Equal(at(t, "2026-12-05T10:00:00Z")) {
		t.Errorf("hourly missed for days: got %s", got)
	}
	// Mondays 09:00 Berlin, down for three weeks: the latest Monday, 2026-11-30 08:00 UTC.
	if got := LatestTick(weekly, at(t, "2026-11-09T08:00:00Z"), at(t, "2026-12-05T10:00:00Z")); !got.Equal(at(t, "2026-11-30T08:00:00Z")) {
		t.Errorf("weekly missed for weeks: got %s", got)
	}
}
