package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/generation"
)

// serverProcess is a ctxgraph server running as a process of its own, built from
// cmd/ctxgraph, on the suite's Neo4j.
type serverProcess struct {
	base string
	log  string
	// kill ends the process as a crash does (SIGKILL): no shutdown, no record of what it
	// was doing; it returns once the process has exited.
	kill func()
}

// buildServer builds cmd/ctxgraph once per test.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ctxgraph")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/ctxgraph")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/ctxgraph: %v\n%s", err, out)
	}
	return bin
}

// startServer runs bin with the suite's Neo4j, the harness's keys and env, until the test
// ends (then it is stopped as an operator stops it, with SIGTERM).
func (h *harness) startServer(bin string, env ...string) serverProcess {
	h.t.Helper()
	return h.startServerIn("", bin, env...)
}

// startServerIn is startServer with dir as the server's working directory (the test's when
// empty), where a server without configured keys keeps its development key.
func (h *harness) startServerIn(dir, bin string, env ...string) serverProcess {
	h.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	logFile := filepath.Join(h.t.TempDir(), "ctxgraph.log")
	log, err := os.Create(logFile)
	if err != nil {
		h.t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "NEO4J_URI="+neo4jServer.URI, "NEO4J_USER="+neo4jServer.User, "NEO4J_PASSWORD="+neo4jServer.Password,
		"NEO4J_DATABASE="+neo4jServer.Database, "CTXGRAPH_ADDR="+addr, blobStoreEnv(blobDir),
		"CTXGRAPH_API_KEYS="+h.account+"="+h.key)
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	h.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(45 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		log.Close()
		if h.t.Failed() {
			out, _ := os.ReadFile(logFile)
			h.t.Logf("server %s log:\n%s", addr, out)
		}
	})
	p := serverProcess{base: "http://" + addr, log: logFile, kill: func() {
		_ = cmd.Process.Kill()
		<-exited
	}}
	deadline := time.Now().Add(time.Minute)
	for {
		var ready client.Response
		_ = client.New(p.base, "").Do(h.t.Context(), http.MethodGet, "/readyz", nil, &ready) // not ready yet: no answer, or 503
		if ready.Status == http.StatusOK {
			return p
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(logFile)
			h.t.Fatalf("server %s exited: %s", addr, out)
		default:
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("server %s was not ready within a minute", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// send makes a request of a server process as the harness's account, with headers as
// name, value pairs.
func (h *harness) send(p serverProcess, want int, method, path string, body any, headers ...string) map[string]any {
	h.t.Helper()
	var resp client.Response
	c := client.New(p.base, h.key)
	for i := 0; i+1 < len(headers); i += 2 {
		c = c.WithHeader(headers[i], headers[i+1])
	}
	err := c.Do(h.t.Context(), method, path, body, &resp)
	if refused := (*client.Error)(nil); err != nil && !errors.As(err, &refused) {
		h.t.Fatal(err)
	}
	if resp.Status != want {
		h.t.Fatalf("%s %s on %s: got %d, want %d: %s", method, path, p.base, resp.Status, want, resp.Body)
	}
	var out map[string]any
	_ = json.Unmarshal(resp.Body, &out)
	return out
}

// tick is a schedule's tick as the graph holds it, read without the code under test.
type tick struct {
	at, claimedAt      time.Time
	claimedBy, status  string
	errorCode          string
	runIDs, startedIDs []string
}

func ticksOf(t *testing.T, scheduleID string) []tick {
	t.Helper()
	var out []tick
	for _, r := range cypherQuery(t, `MATCH (t:ScheduleTick {scheduleId: $id})
		OPTIONAL MATCH (t)-[:STARTED]->(r:ModelRun)
		WITH t, r ORDER BY r.id
		RETURN t.tickAt AS at, t.claimedAt AS claimedAt, t.claimedBy AS claimedBy, t.status AS status,
		       coalesce(t.errorCode, '') AS errorCode, t.runIds AS runIds, collect(r.id) AS started
		ORDER BY t.tickAt`, map[string]any{"id": scheduleID}) {
		m := r.AsMap()
		tk := tick{at: m["at"].(time.Time).UTC(), claimedAt: m["claimedAt"].(time.Time).UTC(), claimedBy: m["claimedBy"].(string),
			status: m["status"].(string), errorCode: m["errorCode"].(string)}
		for _, v := range m["runIds"].([]any) {
			tk.runIDs = append(tk.runIDs, v.(string))
		}
		for _, v := range m["started"].([]any) {
			tk.startedIDs = append(tk.startedIDs, v.(string))
		}
		out = append(out, tk)
	}
	return out
}

// A schedule firing every second for ten seconds with two server processes on one Neo4j:
// one run per tick, none twice, none missed by more than one tick; a schedule whose
// provider fails records each failed run and fires again at its next tick; deleted, neither
// fires again. Every scheduled assembly explains as its trace says and replays identical.
func TestSchedulesAcrossTwoServers(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nowhere := closed.Addr().String()
	closed.Close() // connections to it are refused: a provider that fails at once
	providers := `providers:
  - {name: echo, kind: echo}
  - {name: broken, kind: openai, baseURL: "http://` + nowhere + `/v1", apiKeyEnv: BROKEN_KEY, maxRetries: 0, timeout: 5s}
`
	file := filepath.Join(t.TempDir(), "providers.yaml")
	if err := os.WriteFile(file, []byte(providers), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newProviderHarness(t, providersFor(t, providers)...)
	bin := buildServer(t)
	env := []string{"CTXGRAPH_PROVIDERS_FILE=" + file, "BROKEN_KEY=not-a-key"}
	a, b := h.startServer(bin, env...), h.startServer(bin, env...)
	conv, _, ids := h.conversationWith([3]string{"echo-bot", "echo", ""}, [3]string{"broken-bot", "broken", "m1"})

	created := time.Now()
	every := h.send(a, 201, "POST", "/v1/conversations/"+conv+"/schedules", map[string]any{
		"cron": "* * * * * *", "participantIds": ids[:1], "prompt": "every second: say the time"})
	failing := h.send(b, 201, "POST", "/v1/conversations/"+conv+"/schedules", map[string]any{
		"cron": "*/2 * * * * *", "timezone": "Europe/Berlin", "participantIds": ids[1:], "prompt": "every two seconds, to a provider that is down"})
	everyID, failingID := str(every, "id"), str(failing, "id")
	for _, id := range []string{everyID, failingID} {
		t.Cleanup(func() { h.call("DELETE", "/v1/schedules/"+id, nil) })
	}
	// Ten seconds of ticks, as long as the machine takes to fire them: the every-second
	// schedule's tenth and the other's fifth have ended. How far apart they fell is checked
	// below, once the schedules are deleted.
	waitWithin(t, time.Minute, 100*time.Millisecond, "ten seconds of ticks", func() error {
		every, failing := endedTicks(t, everyID), endedTicks(t, failingID)
		if every < 10 || failing < 5 {
			return fmt.Errorf("%d ticks of the every-second schedule and %d of the failing one have ended, want 10 and 5", every, failing)
		}
		return nil
	})
	// A listing read as a tick falls due, or while its turn runs, shows it still to be
	// claimed or still running: read it until it shows both schedules between two ticks.
	waitWithin(t, 20*time.Second, 100*time.Millisecond, "a listing between ticks", func() error {
		list := h.send(b, 200, "GET", "/v1/conversations/"+conv+"/schedules", nil)["schedules"].([]any)
		if len(list) != 2 {
			return fmt.Errorf("listed %d schedules, want 2: %v", len(list), list)
		}
		var wrong []error
		for _, v := range list {
			s := v.(map[string]any)
			next, _ := time.Parse(time.RFC3339Nano, str(s, "nextRunAt"))
			last, _ := time.Parse(time.RFC3339Nano, str(s, "lastRunAt"))
			if time.Until(next) <= 0 || time.Until(next) > 2*time.Second || time.Since(last) > 3*time.Second || len(s["lastRunIds"].([]any)) != 1 {
				wrong = append(wrong, fmt.Errorf("schedule %s lists next %v, last %v, last runs %v", str(s, "id"), s["nextRunAt"], s["lastRunAt"], s["lastRunIds"]))
			}
			if str(s, "id") == failingID {
				e, _ := s["lastError"].(map[string]any)
				if str(s, "lastStatus") != "failed" || str(e, "code") == "" {
					wrong = append(wrong, fmt.Errorf("the failing schedule lists status %v, error %v", s["lastStatus"], s["lastError"]))
				}
			}
		}
		return errors.Join(wrong...)
	})
	h.send(a, 204, "DELETE", "/v1/schedules/"+everyID, nil)
	h.send(b, 204, "DELETE", "/v1/schedules/"+failingID, nil)
	deleted := time.Now()
	h.send(a, 404, "DELETE", "/v1/schedules/"+everyID, nil)
	time.Sleep(2500 * time.Millisecond) // two more ticks of the every-second schedule, had it lived
	// The turns of ticks claimed before the deletion may still be running.
	waitWithin(t, 30*time.Second, 100*time.Millisecond, "the claimed ticks' turns", func() error {
		for _, id := range []string{everyID, failingID} {
			if n, ended := len(ticksOf(t, id)), endedTicks(t, id); ended != n {
				return fmt.Errorf("schedule %s: %d of %d ticks have ended", id, ended, n)
			}
		}
		return nil
	})

	claimants := map[string]int{}
	seen := map[string]bool{}
	for name, id := range map[string]string{"every second": everyID, "failing": failingID} {
		ticks := ticksOf(t, id)
		period := time.Second
		if id == failingID {
			period = 2 * time.Second
		}
		if want := int(deleted.Sub(created) / period); len(ticks) < want-1 {
			t.Errorf("%s: %d ticks in %v, want at least %d", name, len(ticks), deleted.Sub(created), want-1)
		}
		for i, tk := range ticks {
			claimants[tk.claimedBy]++
			if !tk.claimedAt.Before(deleted) {
				t.Errorf("%s: tick %s was claimed at %s, after the schedule was deleted at %s", name, tk.at, tk.claimedAt, deleted)
			}
			if i == 0 && tk.at.Sub(created) > period+time.Second {
				t.Errorf("%s: the first tick is %s, %v after the schedule was made", name, tk.at, tk.at.Sub(created))
			}
			if i > 0 && tk.at.Sub(ticks[i-1].at) > 2*period {
				t.Errorf("%s: ticks %s and %s: more than one tick missed between them", name, ticks[i-1].at, tk.at)
			}
			if len(tk.runIDs) != 1 || len(tk.startedIDs) != 1 || tk.runIDs[0] != tk.startedIDs[0] || seen[tk.runIDs[0]] {
				t.Errorf("%s: tick %s has runs %v, started %v: want one run of its own", name, tk.at, tk.runIDs, tk.startedIDs)
				continue
			}
			seen[tk.runIDs[0]] = true
			want := "completed"
			if id == failingID {
				want = "failed"
			}
			if tk.status != want || (want == "failed") != (tk.errorCode != "") {
				t.Errorf("%s: tick %s ended %s (error %q), want %s", name, tk.at, tk.status, tk.errorCode, want)
			}
		}
		if last := ticks[len(ticks)-1]; deleted.Sub(last.at) > period+time.Second {
			t.Errorf("%s: the last tick is %s, %v before the deletion", name, last.at, deleted.Sub(last.at))
		}
		// Every scheduled run of the schedule's participant is one of its ticks' runs.
		runs := cypherQuery(t, `MATCH (r:ModelRun {conversationId: $conv, runtimeKind: 'scheduled'})-[:BY]->(:Participant {id: $p})
			OPTIONAL MATCH (a:ContextAssembly)-[:FOR_RUN]->(r)
			RETURN r.id AS id, r.status AS status, collect(a.id) AS assemblies ORDER BY r.id`,
			map[string]any{"conv": conv, "p": map[string]string{everyID: ids[0], failingID: ids[1]}[id]})
		if len(runs) != len(ticks) {
			t.Errorf("%s: %d scheduled runs for %d ticks", name, len(runs), len(ticks))
		}
		for i, r := range runs {
			m := r.AsMap()
			if !seen[m["id"].(string)] {
				t.Errorf("%s: run %s belongs to no tick", name, m["id"])
			}
			if i%4 == 0 { // a sample: each check is a few requests
				for _, a := range m["assemblies"].([]any) {
					h.checkStory(a.(string))
				}
			}
		}
	}
	t.Logf("ticks claimed per server process: %v", claimants)
	hist := h.must(200, "GET", "/v1/branches/"+str(every, "branchId")+"/history", nil)["items"].([]any)
	prompts := 0
	for _, v := range hist {
		if m := v.(map[string]any); str(m, "role") == "user" && strings.HasPrefix(str(m, "content"), "every second") {
			prompts++
		}
	}
	if everyTicks := len(ticksOf(t, everyID)); prompts != everyTicks {
		t.Errorf("the branch holds %d scheduled prompts for %d ticks", prompts, everyTicks)
	}
}

// endedTicks counts the ticks of a schedule whose turns have ended.
func endedTicks(t *testing.T, scheduleID string) int {
	t.Helper()
	return int(cypherCount(t, `MATCH (t:ScheduleTick {scheduleId: $id}) WHERE t.status <> 'running' RETURN count(t)`,
		map[string]any{"id": scheduleID}))
}

// newScheduler runs a scheduler in the test's process over the harness's generation path.
func (h *harness) newScheduler() *generation.Scheduler {
	s := &generation.Scheduler{Graph: sharedStore, Turns: h.turns, Poll: 100 * time.Millisecond}
	s.Start()
	h.t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s
}

// Ticks missed while no server ran fire once, as the latest, in the schedule's time zone;
// the schedule then goes on from the tick after now.
func TestScheduleMissedTicksFireOnlyTheLatest(t *testing.T) {
	h := newProviderHarness(t)
	conv, _, ids := h.conversationWith([3]string{"echo-bot", "echo", ""})
	s := h.must(201, "POST", "/v1/conversations/"+conv+"/schedules", map[string]any{
		"cron": "0 9 * * 1", "timezone": "Europe/Berlin", "participantIds": ids, "prompt": "the Monday report"})
	id := str(s, "id")
	t.Cleanup(func() { h.call("DELETE", "/v1/schedules/"+id, nil) })
	// Down for five weeks: its nextRunAt is a Monday 09:00 in Berlin long past.
	berlin, _ := time.LoadLocation("Europe/Berlin")
	now := time.Now().In(berlin)
	latest := time.Date(now.Year(), now.Month(), now.Day(), 9, 0, 0, 0, berlin)
	for latest.Weekday() != time.Monday || latest.After(now) {
		latest = latest.AddDate(0, 0, -1)
	}
	cypherQuery(t, `MATCH (s:Schedule {id: $id}) SET s.nextRunAt = $past`, map[string]any{"id": id, "past": latest.AddDate(0, 0, -35).UTC()})

	sched := h.newScheduler()
	waitUntil(t, "the missed tick's turn", func() bool {
		ticks := ticksOf(t, id)
		return len(ticks) == 1 && ticks[0].status == "completed"
	})
	time.Sleep(500 * time.Millisecond) // time for a second claim, were there one
	if err := sched.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	ticks := ticksOf(t, id)
	if len(ticks) != 1 || !ticks[0].at.Equal(latest) {
		t.Fatalf("ticks %v, want one at the latest missed Monday 09:00 Berlin, %s", ticks, latest.UTC())
	}
	got := h.must(200, "GET", "/v1/schedules/"+id, nil)
	next, _ := time.Parse(time.RFC3339, str(got, "nextRunAt"))
	if !next.Equal(latest.AddDate(0, 0, 7)) || str(got, "lastStatus") != "completed" || len(got["lastRunIds"].([]any)) != 1 {
		t.Fatalf("after the catch-up the schedule reads %v, want next %s", got, latest.AddDate(0, 0, 7).UTC())
	}
	run := h.must(200, "GET", "/v1/runs/"+got["lastRunIds"].([]any)[0].(string), nil)
	if str(run, "runtimeKind") != "scheduled" || str(run, "status") != "completed" {
		t.Fatalf("the scheduled run reads %v", run)
	}
}

// A stopping scheduler claims nothing new and waits for the turns in flight; past its
// bound it cancels them, and each is recorded as failed, cancelled.
func TestSchedulerShutdownWaitsForTurnsInFlight(t *testing.T) {
	var gate atomic.Pointer[chan struct{}] // each call waits until the gate it found opens
	release := make(chan struct{})
	gate.Store(&release)
	slow := newProtocolServer(t, "/v1/chat/completions", func(n int, _ map[string]any) (int, map[string]string, any) {
		select {
		case <-*gate.Load():
		case <-time.After(20 * time.Second):
		}
		return 200, nil, openAIText(fmt.Sprintf("answer %d", n))
	})
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: slow, kind: openai, baseURL: "`+slow.URL+`/v1", maxRetries: 0, timeout: 60s}
`)...)
	conv, _, ids := h.conversationWith([3]string{"slow-bot", "slow", "gpt-4.1"})
	s := h.must(201, "POST", "/v1/conversations/"+conv+"/schedules", map[string]any{
		"cron": "* * * * * *", "participantIds": ids, "prompt": "every second, slowly"})
	id := str(s, "id")
	t.Cleanup(func() { h.call("DELETE", "/v1/schedules/"+id, nil) })

	sched := h.newScheduler()
	waitUntil(t, "a scheduled call in flight", func() bool { return slow.count() >= 1 })
	stopped := make(chan error, 1)
	go func() { stopped <- sched.Stop(context.Background()) }()
	time.Sleep(1500 * time.Millisecond) // a running scheduler would claim another tick meanwhile
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned %v with a turn in flight", err)
	default:
	}
	ticks := ticksOf(t, id)
	claimed := len(ticks)
	close(release)
	if err := <-stopped; err != nil {
		t.Fatalf("Stop after the turn finished: %v", err)
	}
	ticks = ticksOf(t, id)
	if len(ticks) != claimed || slow.count() != claimed {
		t.Fatalf("a stopping scheduler claimed ticks: %d before, %d after, %d calls", claimed, len(ticks), slow.count())
	}
	for _, tk := range ticks {
		if tk.status != "completed" {
			t.Fatalf("tick %s ended %s, want completed: Stop waited for it", tk.at, tk.status)
		}
	}

	// Past the bound: the turn in flight is cancelled and recorded so.
	again := make(chan struct{})
	gate.Store(&again)
	defer close(again)
	sched = h.newScheduler()
	waitUntil(t, "another scheduled call in flight", func() bool { return slow.count() > claimed })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := sched.Stop(ctx); err == nil {
		t.Fatal("Stop past its bound with a turn in flight said nothing was cancelled")
	}
	last := ticksOf(t, id)
	tk := last[len(last)-1]
	run := h.must(200, "GET", "/v1/runs/"+tk.runIDs[0], nil)
	if tk.status != "failed" || tk.errorCode != "cancelled" || str(run, "status") != "failed" {
		t.Fatalf("the cancelled turn's tick reads %+v and its run %v", tk, run)
	}
}

// Schedules are checked before anything is written, belong to their account, and go with
// their conversation.
func TestScheduleRequestsAndOwnership(t *testing.T) {
	h := newProviderHarness(t)
	conv, branch, ids := h.conversationWith([3]string{"echo-bot", "echo", ""}, [3]string{"ghost", "nowhere", "m"})
	other, otherBranch, otherIDs := h.conversationWith([3]string{"echo-bot", "echo", ""})
	path := "/v1/conversations/" + conv + "/schedules"
	valid := func(change map[string]any) map[string]any {
		body := map[string]any{"cron": "0 9 * * 1-5", "timezone": "America/New_York", "participantIds": ids[:1], "prompt": "weekday digest"}
		for k, v := range change {
			body[k] = v
		}
		return body
	}
	for _, tc := range []struct {
		change      map[string]any
		status      int
		code, field string
	}{
		{map[string]any{"cron": "every morning"}, 400, "invalid", "cron"},
		{map[string]any{"cron": "0 25 * * *"}, 400, "invalid", "cron"},
		{map[string]any{"cron": ""}, 400, "invalid", "cron"},
		{map[string]any{"timezone": "Atlantis/Capital"}, 400, "invalid", "timezone"},
		{map[string]any{"participantIds": ids[1:]}, 400, "invalid", "participantIds"},
		{map[string]any{"participantIds": otherIDs}, 400, "invalid", "participantIds"},
		{map[string]any{"branchId": otherBranch}, 400, "invalid", "branchId"},
		{map[string]any{"prompt": ""}, 400, "invalid", "prompt"},
		{map[string]any{"tools": []any{map[string]any{"name": "bad name"}}}, 400, "invalid", "tools[0].name"},
	} {
		h.expectError(h.call("POST", path, valid(tc.change)), tc.status, tc.code, tc.field)
	}
	h.expectError(h.call("POST", "/v1/conversations/cnv_unknown/schedules", valid(nil)), 404, "not_found", "")
	if n := cypherCount(t, `MATCH (s:Schedule {conversationId: $conv}) RETURN count(s)`, map[string]any{"conv": conv}); n != 0 {
		t.Fatalf("refused requests wrote %d schedules", n)
	}

	made := h.must(201, "POST", path, valid(map[string]any{"tools": []any{sheetTool}}))
	paused := h.must(201, "POST", path, valid(map[string]any{"enabled": false, "branchId": branch}))
	if str(made, "branchId") != branch || str(made, "timezone") != "America/New_York" || made["nextRunAt"] == nil || made["enabled"] != true {
		t.Fatalf("made %v", made)
	}
	if paused["nextRunAt"] != nil || paused["enabled"] != false || len(paused["lastRunIds"].([]any)) != 0 {
		t.Fatalf("a disabled schedule reads %v: it has no next tick", paused)
	}
	next, _ := time.Parse(time.RFC3339, str(made, "nextRunAt"))
	ny, _ := time.LoadLocation("America/New_York")
	if local := next.In(ny); local.Hour() != 9 || local.Minute() != 0 || local.Weekday() == time.Saturday || local.Weekday() == time.Sunday {
		t.Fatalf("next tick %s is not a weekday 09:00 in New York", local)
	}
	list := h.must(200, "GET", path, nil)["schedules"].([]any)
	if len(list) != 2 || str(list[0].(map[string]any), "id") != str(made, "id") || len(list[0].(map[string]any)["tools"].([]any)) != 1 {
		t.Fatalf("listed %v", list)
	}
	if empty := h.must(200, "GET", "/v1/conversations/"+other+"/schedules", nil)["schedules"].([]any); len(empty) != 0 {
		t.Fatalf("another conversation lists %v", empty)
	}

	// Another account sees none of it.
	for _, r := range []response{
		h.callAs(h.otherKey, "GET", path, nil),
		h.callAs(h.otherKey, "GET", "/v1/schedules/"+str(made, "id"), nil),
		h.callAs(h.otherKey, "DELETE", "/v1/schedules/"+str(made, "id"), nil),
		h.callAs(h.otherKey, "POST", path, valid(nil)),
	} {
		h.expectError(r, 404, "not_found", "")
	}

	h.must(204, "DELETE", "/v1/schedules/"+str(paused, "id"), nil)
	h.expectError(h.call("GET", "/v1/schedules/"+str(paused, "id"), nil), 404, "not_found", "")
	h.must(204, "DELETE", "/v1/conversations/"+conv, nil)
	if n := cypherCount(t, `MATCH (s:Schedule {conversationId: $conv}) RETURN count(s)`, map[string]any{"conv": conv}); n != 0 {
		t.Fatalf("a deleted conversation left %d schedules", n)
	}
	h.expectError(h.call("GET", "/v1/schedules/"+str(made, "id"), nil), 404, "not_found", "")
}
