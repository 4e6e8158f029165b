package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/generation"
	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/provider"
)

// The tool steps of the generation phase: what an agent pays between two model calls of
// one run (posting its tool's result, then POST /v1/runs/{id}/continue), on the same
// branches as the generations. They go to llm-katan's anthropic endpoint, which calls the
// first tool a request offers (startKatan), so that every continue asks for a tool again.

// toolStepsPerRun is how many continues a run makes before it is ended with no tools.
const toolStepsPerRun = 5

// figuresTool is the client tool the tool steps offer.
var figuresTool = model.ToolSpec{
	Name:        "quarter_figures",
	Description: "The revenue and forecast of a quarter.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"quarter":{"type":"string"}},"required":["quarter"]}`),
}

// toolStepRow is one conversation size of the tool steps.
type toolStepRow struct {
	Row       string
	N, Errors int
	Err       string
	// Result is POST /v1/tool-calls/{id}/result; Through the continue that follows it,
	// Direct the same provider request posted to llm-katan, Added the difference of each
	// pair.
	Result, Through, Direct, Added stats
	// Steps is the mean server-side time of each step of the continues.
	Steps map[generation.Step]time.Duration
}

// toolStepsParticipant is the participant the tool steps run as: a model participant of
// the row's conversation on the provider that calls tools.
func (b *bench) toolStepsParticipant(ctx context.Context, conversationID string) (string, error) {
	p, err := b.api.WithKey(b.key).AddParticipant(ctx, conversationID,
		client.Participant{Kind: "model", Name: "tool user", Provider: "anthropic", Model: "ctxgraph-test"})
	return p.ID, err
}

// timeToolSteps times n continues on the row's deepest branch, each after the result of
// the call the model asked for, in runs of toolStepsPerRun continues started by a
// generation that offers figuresTool.
func (b *bench) timeToolSteps(ctx context.Context, row *scaleRow) toolStepRow {
	out := toolStepRow{Row: row.name(), N: 50}
	if row.Rounds > 1000 {
		out.N = 30
	}
	fail := func(format string, args ...any) {
		out.Errors++
		out.Err = fmt.Sprintf(format, args...)
	}
	target := row.Summary.Deepest()
	participant, err := b.toolStepsParticipant(ctx, row.Summary.ConversationID)
	if err != nil {
		fail("adding the participant: %v", err)
		return out
	}
	var results, through, direct, added []time.Duration
	stepSums, runs := map[generation.Step]time.Duration{}, 0
	queriesBefore := cypher.QueryTimes()
	_, stopProfile := b.startProfile("toolsteps-" + row.name())
	for i := 0; len(through) < out.N && out.Errors < 10; i++ {
		st, body, _, err := b.call(ctx, b.key, http.MethodPost, "/v1/generations", mustJSON(client.GenerationRequest{
			BranchID: target.ID, ParticipantIDs: []string{participant}, TokenBudget: b.o.budget, Tools: []model.ToolSpec{figuresTool},
			UserMessage: &client.UserMessage{Content: fmt.Sprintf("Tool run %d: fetch the Q3 figures and compare them with the forecast.", i)},
		}))
		gen, err := toolAsked(st, body, err)
		if err != nil {
			fail("generation: %v", err)
			continue
		}
		run := gen.RunID
		b.steps.take() // the generation's steps are not the continues'
		for s := 0; s < toolStepsPerRun && len(through) < out.N; s++ {
			for _, c := range gen.ToolCalls {
				st, body, d, err := b.call(ctx, b.key, http.MethodPost, "/v1/tool-calls/"+c.ID+"/result", mustJSON(client.ToolResult{
					Status: string(model.ToolSucceeded), Result: json.RawMessage(fmt.Sprintf(`{"quarter":"Q3","revenue":%d,"forecast":1200000}`, 1180000+1000*s)),
				}))
				if err != nil || (st != http.StatusCreated && st != http.StatusOK) {
					fail("tool result: %d %v %s", st, err, clip(body))
					continue
				}
				results = append(results, d)
			}
			st, body, d, err := b.call(ctx, b.key, http.MethodPost, "/v1/runs/"+run+"/continue", mustJSON(client.ContinueRequest{TokenBudget: b.o.budget}))
			if gen, err = toolAsked(st, body, err); err != nil {
				fail("continue: %v", err)
				break
			}
			req, err := b.anthropicRequest(ctx, gen.AssemblyID)
			if err != nil {
				fail("%v", err)
				break
			}
			dd, err := b.postKatanMessages(ctx, req)
			if err != nil {
				fail("straight to llm-katan: %v", err)
				break
			}
			through, direct, added = append(through, d), append(direct, dd), append(added, d-dd)
		}
		for st, d := range b.steps.take() {
			stepSums[st] += d
		}
		runs++
		// Ended without tools (nor the recall tool, which llm-katan would call), so that the
		// next generation finds no run waiting.
		for _, c := range gen.ToolCalls {
			b.call(ctx, b.key, http.MethodPost, "/v1/tool-calls/"+c.ID+"/result", mustJSON(client.ToolResult{Status: string(model.ToolSucceeded), Result: json.RawMessage(`{}`)}))
		}
		if st, body, _, err := b.call(ctx, b.key, http.MethodPost, "/v1/runs/"+run+"/continue", mustJSON(client.ContinueRequest{Tools: []model.ToolSpec{}, ToolChoice: model.ToolChoiceNone})); err != nil || (st != http.StatusCreated && st != http.StatusOK) {
			fail("ending the run: %d %v %s", st, err, clip(body))
		}
		b.steps.take()
	}
	stopProfile()
	logf("tool steps %s: the statements of the runs: %s", row.name(), statementMeans(queryTimesSince(queriesBefore)))
	if runs > 0 {
		out.Steps = map[generation.Step]time.Duration{}
		for st, d := range stepSums {
			out.Steps[st] = d / time.Duration(runs)
		}
	}
	out.Result, out.Through, out.Direct, out.Added = summarize(results), summarize(through), summarize(direct), summarize(added)
	if out.Errors > 0 {
		b.failures = append(b.failures, fmt.Sprintf("tool steps %s: %d errors (last: %s)", row.name(), out.Errors, clipS(out.Err, 300)))
	}
	logf("tool steps %s: tool result p50 %s; continue p50 %s p99 %s, straight to llm-katan p50 %s, added p50 %s p99 %s; errors %d",
		row.name(), ms(out.Result.P50), ms(out.Through.P50), ms(out.Through.P99), ms(out.Direct.P50), ms(out.Added.P50), ms(out.Added.P99), out.Errors)
	return out
}

// toolAsked reads a generation or continue that is to ask for a tool: its run's result,
// which must await the client's tools.
func toolAsked(status int, body []byte, err error) (model.RunResult, error) {
	if err != nil || (status != http.StatusCreated && status != http.StatusOK) {
		return model.RunResult{}, fmt.Errorf("%d %v %s", status, err, clip(body))
	}
	var g client.Generation
	if json.Unmarshal(body, &g) != nil || len(g.Runs) != 1 || g.Runs[0].Status != model.RunAwaitingTools || len(g.Runs[0].ToolCalls) == 0 {
		return model.RunResult{}, fmt.Errorf("answered without a tool call: %s", clip(body))
	}
	return g.Runs[0], nil
}

// anthropicRequest reads a recorded assembly and rebuilds its messages body, as the
// anthropic adapter serialises it, offering figuresTool.
func (b *bench) anthropicRequest(ctx context.Context, assemblyID string) ([]byte, error) {
	a, err := b.api.WithKey(b.key).GetAssembly(ctx, assemblyID)
	if err != nil {
		return nil, fmt.Errorf("reading assembly %s: %w", assemblyID, err)
	}
	params, err := provider.AnthropicParams(model.ProviderRequest{Model: a.Request.Model, Messages: a.Messages, Tools: []model.ToolSpec{figuresTool}})
	if err != nil {
		return nil, err
	}
	return json.Marshal(params)
}

// postKatanMessages sends a messages body to llm-katan's anthropic endpoint and reads the
// whole answer.
func (b *bench) postKatanMessages(ctx context.Context, body []byte) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.katan+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", katanKey)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	start := time.Now()
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("llm-katan answered %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
	}
	return time.Since(start), sc.Err()
}

// toolStepsSteps is the order of a continue's steps in the report.
var toolStepsSteps = []generation.Step{generation.StepClaim, generation.StepAssemble, generation.StepProvider,
	generation.StepRecordWait, generation.StepFinish}

func (b *bench) reportToolSteps(pf func(string, ...any)) {
	rows := b.generation.ToolSteps
	if len(rows) == 0 {
		return
	}
	pf("### Tool steps\n\n")
	pf("What an agent pays between two model calls of one run, on the same branches as the generations: it posts the result of the tool the model asked for (`POST /v1/tool-calls/{id}/result`), then continues the run (`POST /v1/runs/{id}/continue`). The runs are a participant's on llm-katan's anthropic endpoint, which calls the first tool a request offers, so each continue asks for the tool again; a generation offering one tool starts each run, which is ended after %d continues. Each continue is timed beside the same request (the assembly's messages as the anthropic adapter serialises them, offering the tool) sent straight to llm-katan; *added* is the difference of each pair.\n\n", toolStepsPerRun)
	pf("| conversation | n | tool result p50 | p99 | continue p50 | p99 | straight to llm-katan p50 | added p50 | added p99 | errors |\n")
	pf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var steps []stepsRow
	for _, r := range rows {
		pf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %d |\n", r.Row, r.Through.N, ms(r.Result.P50), ms(r.Result.P99), ms(r.Through.P50), ms(r.Through.P99),
			ms(r.Direct.P50), ms(r.Added.P50), ms(r.Added.P99), r.Errors)
		steps = append(steps, stepsRow{r.Row, r.Steps, r.Direct.P50})
	}
	pf("\nLatency in ms. Where a continue's time goes, as the server's means per continue: *claim* claims the run's step (one statement, which reads the run) and resolves its participant; the others are a generation's.\n\n")
	reportSteps(pf, toolStepsSteps, steps)
	pf("\nMean times in ms.\n\n")
}
