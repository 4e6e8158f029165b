package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/generation"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/provider"
)

// The generation phase: POST /v1/generations against llm-katan (scripts/llm-katan, its echo
// backend with no added latency), each timed beside the same request sent straight to
// llm-katan, so that what ctxgraph adds is the difference of the pair.

// katanKey is the key the benchmark's providers send; llm-katan checks only its presence.
const katanKey = "ctxbench-katan"

// genRow is one conversation size of the generation phase.
type genRow struct {
	Row string
	// Through is POST /v1/generations end to end; Direct the same provider request posted
	// to llm-katan; Added the difference of each pair.
	Through, Direct, Added stats
	// First is the added time of the row's first generation, left out of Added: the
	// process may not hold the conversation yet and read it whole (the scale phase's cold
	// column measures that read), which would make Added's p99 the read rather than a step.
	First time.Duration
	// FirstThrough is the time to the first message.delta of a streamed generation,
	// FirstDirect to the first content chunk of the same request streamed by llm-katan,
	// Assembly the mean server-side time of the streamed generations' assemblies.
	FirstThrough, FirstDirect stats
	Assembly                  time.Duration
	// Steps is the mean server-side time of each step of the unstreamed generations
	// (generation.Service.Observe), by step name.
	Steps     map[generation.Step]time.Duration
	N, Errors int
	Err       string
	// DropAdded is the added time of the drop-in calls alternated with the unstreamed
	// generations (dropin.go), DropErrors their failures.
	DropAdded  stats
	DropErrors int
}

// stepTimes collects the step times the server's generation service observes.
type stepTimes struct {
	mu    sync.Mutex
	sum   map[generation.Step]time.Duration
	count map[generation.Step]int
}

func (s *stepTimes) observe(step generation.Step, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sum == nil {
		s.sum, s.count = map[generation.Step]time.Duration{}, map[generation.Step]int{}
	}
	s.sum[step] += d
	s.count[step]++
}

// take returns the mean of each step observed since the last take, and starts afresh.
func (s *stepTimes) take() map[generation.Step]time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[generation.Step]time.Duration{}
	for step, d := range s.sum {
		out[step] = d / time.Duration(s.count[step])
	}
	s.sum, s.count = nil, nil
	return out
}

// generationSteps is the order of the steps in the report.
var generationSteps = []generation.Step{generation.StepResolve, generation.StepBeginTurn, generation.StepAssemble,
	generation.StepProvider, generation.StepRecordWait, generation.StepFinish}

// genLoad is the generation throughput level.
type genLoad struct {
	Clients     int
	Elapsed     time.Duration
	Generations int
	Errors      int
	Err         string
	Lat         stats
	// Neo4jCores and SelfCores are the cores the local Neo4j (-1: unknown) and this
	// process (the server and its clients) used on average over the level.
	Neo4jCores, SelfCores float64
}

type generationResult struct {
	Katan string
	Rows  []genRow
	// ToolSteps are the continues of runs that ask for tools, by conversation size.
	ToolSteps []toolStepRow
	Load      *genLoad
	// Reconcile is the cost of a long client list on the drop-in path.
	Reconcile *reconcileResult
	// Storage is what generations leave in the store.
	Storage *storageResult
}

// startKatan runs llm-katan on a free port for the whole run and returns its base URL.
func startKatan() (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	logPath := filepath.Join(os.TempDir(), fmt.Sprintf("ctxbench-llm-katan-%d.log", port))
	log, err := os.Create(logPath)
	if err != nil {
		return "", nil, err
	}
	// Its echo backend calls the first tool a request offers, which on the seeded
	// conversations is ctxgraph_recall: every generation would make three recall rounds
	// (refused: it names no real artifact) and four model calls against the one straight
	// to llm-katan. Answering text on the openai endpoint, which the generations call, it
	// times what a turn adds, as the direct request does. The anthropic endpoint calls
	// tools: the tool steps (toolsteps.go) offer theirs first.
	cmd := exec.Command(filepath.Join("scripts", "llm-katan"), "serve", strconv.Itoa(port), "--no-auto-tool-providers", "openai")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("starting scripts/llm-katan (run ctxbench from the repository root): %w", err)
	}
	stop = func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
		log.Close()
	}
	base = fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				logf("llm-katan serving on %s (log %s)", base, logPath)
				return base, stop, nil
			}
		}
	}
	stop()
	return "", nil, fmt.Errorf("llm-katan did not answer on %s within 3 minutes (log %s)", base, logPath)
}

// katanProviders are the providers the benchmark's server calls: llm-katan under the
// names the policies know.
func katanProviders(base string) ([]provider.Config, error) {
	return provider.Parse([]byte(fmt.Sprintf(`providers:
  - {name: openai, kind: openai, baseURL: "%[1]s/v1", apiKeyEnv: KATAN_KEY, maxRetries: 0}
  - {name: anthropic, kind: anthropic, baseURL: "%[1]s", apiKeyEnv: KATAN_KEY, maxRetries: 0}
`, base)), func(string) string { return katanKey })
}

// generationRows are the scale rows the phase times: 10, 1,000 and 10,000 rounds.
var generationRows = []string{"10x1x1", "1000x50x1", "10000x50x1"}

func (b *bench) runGeneration(ctx context.Context) {
	g := &generationResult{Katan: b.katan}
	b.generation = g
	byName := map[string]*scaleRow{}
	for _, r := range b.rows {
		byName[r.name()] = r
	}
	for _, name := range generationRows {
		row := byName[name]
		if row == nil || row.SeedErr != "" || row.Summary.ConversationID == "" {
			if b.o.quick && name == "10000x50x1" {
				continue
			}
			var r, br, p int
			fmt.Sscanf(name, "%dx%dx%d", &r, &br, &p)
			row = &scaleRow{Rounds: r, Branches: br, Participants: p, Neo4jBefore: -1, Neo4jAfter: -1}
			b.seedRow(ctx, row)
			if row.SeedErr != "" {
				g.Rows = append(g.Rows, genRow{Row: name, Err: "seeding: " + row.SeedErr})
				continue
			}
		}
		g.Rows = append(g.Rows, b.timeGenerations(ctx, row))
		g.ToolSteps = append(g.ToolSteps, b.timeToolSteps(ctx, row))
		if err := b.writeReport(false); err != nil {
			logf("writing the interim report: %v", err)
		}
	}
	g.Load = b.generationLoad(ctx, 16)
	n := 10000
	if b.o.quick {
		n = 1000
	}
	g.Reconcile = b.reconcileLongList(ctx, n, b.dropInModelName)
	g.Storage = b.measureStorage(ctx, n/5)
}

func (b *bench) generationBody(branch, participant string, i int, stream bool) []byte {
	return mustJSON(client.GenerationRequest{
		BranchID: branch, ParticipantIDs: []string{participant}, TokenBudget: b.o.budget, Stream: stream,
		UserMessage: &client.UserMessage{Content: fmt.Sprintf("Generation %d: how do the Q3 figures compare with the forecast?", i)},
	})
}

// timeGenerations times n generations on the row's deepest branch, each paired with the
// same request sent straight to llm-katan, then streamed ones for the first delta.
func (b *bench) timeGenerations(ctx context.Context, row *scaleRow) genRow {
	out := genRow{Row: row.name()}
	target := row.Summary.Deepest()
	n := 100
	if row.Rounds > 1000 {
		n = 50
	}
	out.N = n
	var through, direct, added, firstThrough, firstDirect []time.Duration
	var asmTotal time.Duration
	var drop *dropInClient
	var dropAdded []time.Duration
	fail := func(format string, args ...any) {
		out.Errors++
		out.Err = fmt.Sprintf(format, args...)
	}
	b.steps.take()
	queriesBefore := cypher.QueryTimes()
	// The row's first generation (i = 0) is timed apart (First), and left out of the
	// steps' means and the profile.
	stopProfile := func() {}
	for i := 0; i < n+11; i++ {
		stream := i > n
		if i == 1 {
			b.steps.take()
			_, stopProfile = b.startProfile("generations-" + row.name())
		}
		if i == n+1 {
			out.Steps = b.steps.take()
			stopProfile()
			stopProfile = func() {}
		}
		st, body, d, err := b.call(ctx, b.key, http.MethodPost, "/v1/generations", b.generationBody(target.ID, target.LastRunParticipantID, i, stream))
		if err != nil || (st != http.StatusCreated && st != http.StatusOK) {
			fail("generation: %d %v %s", st, err, clip(body))
			continue
		}
		if stream {
			// The first delta through ctxgraph is timed by a second, streamed request below.
			continue
		}
		var ans client.Generation
		if json.Unmarshal(body, &ans) != nil || len(ans.Runs) != 1 || ans.Runs[0].Status != model.RunCompleted {
			fail("generation answered %s", clip(body))
			continue
		}
		req, _, err := b.providerRequest(ctx, ans.Runs[0].AssemblyID, ans.Runs[0].Model)
		if err != nil {
			fail("%v", err)
			continue
		}
		dd, _, err := b.postKatan(ctx, req, false)
		if err != nil {
			fail("straight to llm-katan: %v", err)
			continue
		}
		if i == 0 {
			out.First = d - dd
			continue
		}
		through, direct, added = append(through, d), append(direct, dd), append(added, d-dd)
		// The drop-in path, alternated with the native one on the same branch.
		if drop == nil {
			b.dropInModelName = dropInModel(ans.Runs[0].Provider, ans.Runs[0].Model)
			drop = &dropInClient{b: b, branch: target.ID, participant: target.LastRunParticipantID, modelName: b.dropInModelName}
		}
		if a, err := b.timeDropIn(ctx, drop, fmt.Sprintf("Drop-in %d: and against last year?", i)); err != nil {
			out.DropErrors++
			fail("%v", err)
		} else {
			dropAdded = append(dropAdded, a)
		}
	}
	logf("generation %s: the statements of the generations and drop-in calls: %s", row.name(), statementMeans(queryTimesSince(queriesBefore)))
	// Time to the first delta, ctxgraph and llm-katan alternated.
	for i := 0; i < 20; i++ {
		ft, asmID, err := b.firstDelta(ctx, b.generationBody(target.ID, target.LastRunParticipantID, 1000+i, true))
		if err != nil {
			fail("streamed generation: %v", err)
			continue
		}
		req, asm, err := b.providerRequest(ctx, asmID, "")
		if err != nil {
			fail("%v", err)
			continue
		}
		_, fd, err := b.postKatan(ctx, req, true)
		if err != nil {
			fail("streamed straight to llm-katan: %v", err)
			continue
		}
		asmTotal += asm
		firstThrough, firstDirect = append(firstThrough, ft), append(firstDirect, fd)
	}
	out.Through, out.Direct, out.Added = summarize(through), summarize(direct), summarize(added)
	out.DropAdded = summarize(dropAdded)
	out.FirstThrough, out.FirstDirect = summarize(firstThrough), summarize(firstDirect)
	if len(firstThrough) > 0 {
		out.Assembly = asmTotal / time.Duration(len(firstThrough))
	}
	if out.Errors > 0 {
		b.failures = append(b.failures, fmt.Sprintf("generation %s: %d errors (last: %s)", row.name(), out.Errors, clipS(out.Err, 300)))
	}
	logf("generation %s: through ctxgraph p50 %s p99 %s, straight to llm-katan p50 %s, added p50 %s p99 %s (the row's first generation, apart: %s); first delta %s against %s (+ assembly %s); errors %d",
		row.name(), ms(out.Through.P50), ms(out.Through.P99), ms(out.Direct.P50), ms(out.Added.P50), ms(out.Added.P99), ms(out.First),
		ms(out.FirstThrough.P50), ms(out.FirstDirect.P50), ms(out.Assembly), out.Errors)
	logf("generation %s: the drop-in path added p50 %s p99 %s", row.name(), ms(out.DropAdded.P50), ms(out.DropAdded.P99))
	return out
}

// providerRequest reads a recorded assembly and rebuilds its chat-completions body, as the
// openai adapter serialises it, with the assembly's server-side time as its record keeps
// it (graph, policy and serialise: the record holds no time for its own write).
func (b *bench) providerRequest(ctx context.Context, assemblyID, modelName string) ([]byte, time.Duration, error) {
	a, err := b.api.WithKey(b.key).GetAssembly(ctx, assemblyID)
	if err != nil {
		return nil, 0, fmt.Errorf("reading assembly %s: %w", assemblyID, err)
	}
	if modelName == "" {
		modelName = a.Request.Model
	}
	params, err := provider.OpenAIParams(model.ProviderRequest{Model: modelName, Messages: a.Messages})
	if err != nil {
		return nil, 0, err
	}
	out, err := json.Marshal(params)
	t := a.TimingsMs
	return out, time.Duration((t.Graph + t.Policy + t.Serialize + t.Record) * float64(time.Millisecond)), err
}

// postKatan sends a chat-completions body to llm-katan: the whole answer's time, and with
// stream the time to the first chunk that carries text.
func (b *bench) postKatan(ctx context.Context, body []byte, stream bool) (total, first time.Duration, err error) {
	if stream {
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		m["stream"] = true
		body = mustJSON(m)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.katan+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+katanKey)
	start := time.Now()
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("llm-katan answered %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if first == 0 && stream && strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), `"content"`) {
			first = time.Since(start)
		}
	}
	return time.Since(start), first, sc.Err()
}

// firstDelta sends a streamed generation and times its first message.delta event.
func (b *bench) firstDelta(ctx context.Context, body []byte) (time.Duration, string, error) {
	var first time.Duration
	assemblyID := ""
	start := time.Now()
	err := b.api.WithKey(b.key).Do(ctx, http.MethodPost, "/v1/generations", body, client.Events(func(e client.Event) error {
		switch e.Name {
		case model.EventMessageDelta:
			if first == 0 {
				first = time.Since(start)
			}
		case model.EventRunStarted:
			var s struct {
				AssemblyID string `json:"assemblyId"`
			}
			_ = json.Unmarshal(e.Data, &s)
			assemblyID = s.AssemblyID
		}
		return nil
	}))
	if err != nil {
		return 0, "", err
	}
	if first == 0 || assemblyID == "" {
		return 0, "", fmt.Errorf("the stream had no message.delta")
	}
	return first, assemblyID, nil
}

// generationLoad runs clients concurrent generation loops, each on a small conversation of
// its own, for the load duration.
func (b *bench) generationLoad(ctx context.Context, clients int) *genLoad {
	l := &genLoad{Clients: clients}
	type conv struct{ branch, participant string }
	convs := make([]conv, clients)
	for i := range convs {
		st, body, _, err := b.call(ctx, b.key, http.MethodPost, "/v1/conversations", mustJSON(client.Conversation{Title: fmt.Sprintf("generation load %d", i)}))
		var c client.Created
		if err != nil || st != http.StatusCreated || json.Unmarshal(body, &c) != nil {
			l.Err = fmt.Sprintf("creating a conversation: %d %v", st, err)
			return l
		}
		b.convs = append(b.convs, b.key+"|"+c.ID)
		st, body, _, err = b.call(ctx, b.key, http.MethodPost, "/v1/conversations/"+c.ID+"/participants",
			mustJSON(client.Participant{Kind: "model", Name: "gpt", Provider: "openai", Model: "ctxgraph-test"}))
		var p client.Created
		if err != nil || st != http.StatusCreated || json.Unmarshal(body, &p) != nil {
			l.Err = fmt.Sprintf("adding a participant: %d %v", st, err)
			return l
		}
		convs[i] = conv{c.BranchID, p.ID}
	}
	var mu sync.Mutex
	var ds []time.Duration
	cpuBefore := b.cpuNow()
	start := time.Now()
	deadline := start.Add(b.o.loadDur)
	var wg sync.WaitGroup
	for i := range convs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; time.Now().Before(deadline); k++ {
				st, body, d, err := b.call(ctx, b.key, http.MethodPost, "/v1/generations", b.generationBody(convs[i].branch, convs[i].participant, k, false))
				mu.Lock()
				if err != nil || st != http.StatusCreated {
					l.Errors++
					l.Err = fmt.Sprintf("%d %v %s", st, err, clip(body))
				} else {
					l.Generations++
					ds = append(ds, d)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	l.Elapsed, l.Lat = time.Since(start), summarize(ds)
	l.Neo4jCores, l.SelfCores = b.coresSince(cpuBefore, l.Elapsed)
	if l.Errors > 0 {
		b.failures = append(b.failures, fmt.Sprintf("generation load: %d errors (last: %s)", l.Errors, clipS(l.Err, 300)))
	}
	logf("generation load: %d clients, %d generations in %s (%.1f/s), p50 %s p99 %s, errors %d",
		clients, l.Generations, l.Elapsed.Round(time.Millisecond), rate(l.Generations, l.Elapsed), ms(l.Lat.P50), ms(l.Lat.P99), l.Errors)
	return l
}

func (b *bench) reportGeneration(pf func(string, ...any)) {
	g := b.generation
	pf("## Generation\n\n")
	pf("`POST /v1/generations` against llm-katan 0.22.0 (`scripts/llm-katan`: echo backend, no added latency, answering text even when tools are offered, on %s), each timed beside the same chat-completions body sent straight to llm-katan by the same client: the assembly's messages as the openai adapter serialises them. *Added* is, pair by pair, the generation's time less llm-katan's own; each generation writes its user message, run, assembly and answer, so every assembly but the first follows a write. *First generation* is the added time of the row's first generation, timed the same way and left out of the other columns and of the step means below: the process may not hold the conversation yet and then reads it whole, which the scale phase's *cold* column measures on its own. The first delta is the time to the first `message.delta` of a streamed generation against the time to the first content chunk of the same request streamed by llm-katan (20 of each, alternated); *assembly* is the mean server-side time of those generations' assemblies as their records keep them (graph, policy and serialise; a record holds no time for its own write).\n\n", g.Katan)
	pf("| conversation | n | through ctxgraph p50 | p99 | straight to llm-katan p50 | p99 | added p50 | added p99 | first generation added | first delta (ctxgraph) p50 | first chunk (llm-katan) p50 | assembly | errors |\n")
	pf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range g.Rows {
		if r.Through.N == 0 {
			pf("| %s | %d | — | — | — | — | — | — | — | — | — | — | %d: %s |\n", r.Row, r.N, r.Errors, oneLine(clipS(r.Err, 120)))
			continue
		}
		pf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", r.Row, r.Through.N, ms(r.Through.P50), ms(r.Through.P99),
			ms(r.Direct.P50), ms(r.Direct.P99), ms(r.Added.P50), ms(r.Added.P99), ms(r.First), ms(r.FirstThrough.P50), ms(r.FirstDirect.P50), ms(r.Assembly), r.Errors)
	}
	if l := g.Load; l != nil {
		pf("\nThroughput: %d clients, each looping generations on a conversation of its own for %s: %d generations (%.1f/s), p50 %s ms, p99 %s ms, %d errors.\n\n",
			l.Clients, l.Elapsed.Round(time.Millisecond), l.Generations, rate(l.Generations, l.Elapsed), ms(l.Lat.P50), ms(l.Lat.P99), l.Errors)
		if l.Generations > 0 {
			perGen := func(cores float64) string {
				return fmt.Sprintf("%.2f", cores*l.Elapsed.Seconds()*1000/float64(l.Generations))
			}
			neo := "unknown (not the local Neo4j)"
			if l.Neo4jCores >= 0 {
				neo = fmt.Sprintf("%.2f cores, %s ms per generation", l.Neo4jCores, perGen(l.Neo4jCores))
			}
			pf("CPU over those %s: Neo4j %s; this process (the server and its %d clients) %.2f cores, %s ms per generation; llm-katan's is not counted.\n\n",
				l.Elapsed.Round(time.Millisecond), neo, l.Clients, l.SelfCores, perGen(l.SelfCores))
		}
	}
	pf("Latency in ms.\n\n")
	pf("### Where a generation's time goes\n\n")
	pf("The mean time of each step of the unstreamed generations above, as the server's generation service observed it: *resolve* reads the branch's conversation and its participants, *begin turn* writes the user message and starts the run (one transaction), *assemble* is the assembly (its record is written meanwhile), *provider* the call through the vendor's SDK (serialising the request, the HTTP exchange with llm-katan, parsing the answer), *record wait* the wait for the assembly's record to commit after the answer, *finish* the transaction that writes the answer and ends the run. The HTTP exchange with ctxgraph itself is the rest.\n\n")
	var steps []stepsRow
	for _, r := range g.Rows {
		steps = append(steps, stepsRow{r.Row, r.Steps, r.Direct.P50})
	}
	reportSteps(pf, generationSteps, steps)
	pf("\nMean times in ms.\n\n")
	b.reportToolSteps(pf)
	b.reportDropIn(pf)
	if s := b.generation.Storage; s != nil {
		b.reportStorage(pf, s)
	}
}

// stepsRow is one row of a table of step times: its steps' means and the same requests'
// p50 straight to llm-katan.
type stepsRow struct {
	Row    string
	Steps  map[generation.Step]time.Duration
	Direct time.Duration
}

// reportSteps writes a table of step times, the steps in order, with their sum.
func reportSteps(pf func(string, ...any), order []generation.Step, rows []stepsRow) {
	pf("| conversation |")
	for _, st := range order {
		pf(" %s |", strings.ReplaceAll(string(st), "_", " "))
	}
	pf(" sum | straight to llm-katan p50 |\n|---|")
	for range order {
		pf("---:|")
	}
	pf("---:|---:|\n")
	for _, r := range rows {
		if len(r.Steps) == 0 {
			continue
		}
		pf("| %s |", r.Row)
		var sum time.Duration
		for _, st := range order {
			sum += r.Steps[st]
			pf(" %s |", ms(r.Steps[st]))
		}
		pf(" %s | %s |\n", ms(sum), ms(r.Direct))
	}
}

func (b *bench) reportGenerationTargets(pf func(string, ...any)) {
	g := b.generation
	if g == nil {
		pf("| generation targets | not measured in this run | not measured |\n")
		return
	}
	for _, want := range []struct {
		row    string
		target time.Duration
	}{{"1000x50x1", 10 * time.Millisecond}, {"10000x50x1", 15 * time.Millisecond}} {
		var r *genRow
		for i := range g.Rows {
			if g.Rows[i].Row == want.row && g.Rows[i].Added.N > 0 {
				r = &g.Rows[i]
			}
		}
		if r == nil {
			pf("| generation adds p50 ≤ %s ms at %s | not measured | not measured |\n", ms(want.target), want.row)
			continue
		}
		pf("| generation adds p50 ≤ %s ms at %s (issue 19) | %s ms (p99 %s) | %s |\n", ms(want.target), want.row, ms(r.Added.P50), ms(r.Added.P99), metText(r.Added.P50 <= want.target))
	}
	for _, r := range g.Rows {
		if r.FirstThrough.N == 0 {
			continue
		}
		bound := r.FirstDirect.P50 + r.Assembly + 2*time.Millisecond
		pf("| first delta within 2 ms of llm-katan's plus the assembly at %s (issue 19) | %s ms against %s + %s + 2 ms | %s |\n",
			r.Row, ms(r.FirstThrough.P50), ms(r.FirstDirect.P50), ms(r.Assembly), metText(r.FirstThrough.P50 <= bound))
	}
	if l := g.Load; l != nil {
		r := rate(l.Generations, l.Elapsed)
		pf("| ≥ 100 generations/s at 16 clients with zero errors (issue 19) | %.1f generations/s, %d errors | %s |\n", r, l.Errors, metText(r >= 100 && l.Errors == 0))
	}
}
