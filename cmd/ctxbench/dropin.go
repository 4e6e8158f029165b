package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/dropin"
	"github.com/ctxgraph/ctxgraph/dropin/openaiwire"
)

// The drop-in path (DESIGN §9) beside the native one: an OpenAI SDK client's calls on the
// same branch, and the cost of reconciling a client list of 10,000 messages.

// dropInClient is an SDK application's list, sent whole every call to one branch.
type dropInClient struct {
	b                   *bench
	branch, participant string
	modelName           string
	messages            []map[string]any
}

// call appends a question, sends the list, appends the answer; it returns the call's time
// and its assembly.
func (d *dropInClient) call(ctx context.Context, question string) (time.Duration, string, error) {
	d.messages = append(d.messages, map[string]any{"role": "user", "content": question})
	body := mustJSON(map[string]any{"model": d.modelName, "messages": d.messages})
	c := d.b.api.WithKey(d.b.key)
	if d.branch != "" {
		c = c.WithHeader("X-Ctxgraph-Branch", d.branch)
	}
	if d.participant != "" {
		c = c.WithHeader("X-Ctxgraph-Participant", d.participant)
	}
	var resp client.Response
	start := time.Now()
	err := c.Do(ctx, http.MethodPost, "/v1/openai/chat/completions", body, &resp)
	took := time.Since(start)
	if err != nil {
		return took, "", fmt.Errorf("drop-in call: %w", err)
	}
	var completion openaiwire.Completion
	if err := json.Unmarshal(resp.Body, &completion); err != nil || len(completion.Choices) != 1 {
		return took, "", fmt.Errorf("drop-in call answered %s", clip(resp.Body))
	}
	var answer map[string]any
	_ = json.Unmarshal(mustJSON(completion.Choices[0].Message), &answer)
	d.messages = append(d.messages, answer)
	if d.branch == "" {
		d.branch = resp.Header.Get("X-Ctxgraph-Branch")
	}
	return took, resp.Header.Get("X-Ctxgraph-Assembly"), nil
}

// timeDropIn is the added time of one drop-in call: its time less llm-katan's own for the
// request the model received.
func (b *bench) timeDropIn(ctx context.Context, d *dropInClient, question string) (time.Duration, error) {
	took, asm, err := d.call(ctx, question)
	if err != nil {
		return 0, err
	}
	req, _, err := b.providerRequest(ctx, asm, "")
	if err != nil {
		return 0, err
	}
	direct, _, err := b.postKatan(ctx, req, false)
	if err != nil {
		return 0, fmt.Errorf("straight to llm-katan: %w", err)
	}
	return took - direct, nil
}

// reconcileResult is the cost of a client list of 10,000 messages.
type reconcileResult struct {
	Messages int
	// Parse is decoding and translating the body, Hash hashing its chain: in process, per call.
	Parse, Hash stats
	// Record is the first call, which records the whole list.
	Record time.Duration
	// Added is each later call's added time over llm-katan (the list grown by two
	// messages), NativeAdded a native generation's on the same branch, alternated.
	Added, NativeAdded stats
	Err                string
}

// reconcileLongList records a list of n messages as one client's first call, then times
// calls that extend it beside native generations on the same branch, alternated.
func (b *bench) reconcileLongList(ctx context.Context, n int, modelName string) *reconcileResult {
	out := &reconcileResult{Messages: n}
	d := &dropInClient{b: b, modelName: modelName}
	for i := 0; len(d.messages) < n-1; i++ {
		d.messages = append(d.messages,
			map[string]any{"role": "user", "content": fmt.Sprintf("Question %d: what did the Q%d run of region %d return?", i, i%4+1, i%17)},
			map[string]any{"role": "assistant", "content": fmt.Sprintf("Region %d returned %d.%02d M in Q%d, order ord_%06d.", i%17, i%9, i%100, i%4+1, i)})
	}
	start := time.Now()
	if _, _, err := d.call(ctx, "Summarise what we found so far."); err != nil {
		out.Err = err.Error()
		return out
	}
	out.Record = time.Since(start)
	var parse, hash, added, native []time.Duration
	for i := 0; i < 20; i++ {
		body := mustJSON(map[string]any{"model": modelName, "messages": d.messages})
		t0 := time.Now()
		r, err := openaiwire.Decode(body)
		var req dropin.Request
		if err == nil {
			req, err = openaiwire.Translate(r)
		}
		t1 := time.Now()
		dropin.Chain(req.Messages)
		parse, hash = append(parse, t1.Sub(t0)), append(hash, time.Since(t1))
		if err != nil {
			out.Err = err.Error()
			return out
		}
		a, err := b.timeDropIn(ctx, d, fmt.Sprintf("And region %d?", i))
		if err != nil {
			out.Err = err.Error()
			return out
		}
		added = append(added, a)
		nat, err := b.nativeAdded(ctx, d.branch, i)
		if err != nil {
			out.Err = err.Error()
			return out
		}
		native = append(native, nat)
	}
	out.Parse, out.Hash, out.Added, out.NativeAdded = summarize(parse), summarize(hash), summarize(added), summarize(native)
	logf("drop-in: a %d-message list recorded in %s; later calls parse %s ms, hash %s ms, added p50 %s ms against a native generation's %s ms on the same branch",
		n, out.Record.Round(time.Millisecond), ms(out.Parse.P50), ms(out.Hash.P50), ms(out.Added.P50), ms(out.NativeAdded.P50))
	return out
}

// nativeAdded is one native generation's added time on a branch, by its conversation's
// first participant.
func (b *bench) nativeAdded(ctx context.Context, branch string, i int) (time.Duration, error) {
	hist, err := b.api.WithKey(b.key).History(ctx, branch)
	if err != nil {
		return 0, err
	}
	participant := ""
	for j := len(hist.Items) - 1; j >= 0 && participant == ""; j-- {
		participant = hist.Items[j].ParticipantID
	}
	st, body, took, err := b.call(ctx, b.key, http.MethodPost, "/v1/generations", b.generationBody(branch, participant, 5000+i, false))
	if err != nil || st != http.StatusCreated {
		return 0, fmt.Errorf("native generation: %d %v %s", st, err, clip(body))
	}
	var ans client.Generation
	if err := json.Unmarshal(body, &ans); err != nil || len(ans.Runs) != 1 {
		return 0, fmt.Errorf("native generation answered %s", clip(body))
	}
	req, _, err := b.providerRequest(ctx, ans.Runs[0].AssemblyID, ans.Runs[0].Model)
	if err != nil {
		return 0, err
	}
	direct, _, err := b.postKatan(ctx, req, false)
	return took - direct, err
}

func (b *bench) reportDropIn(pf func(string, ...any)) {
	g := b.generation
	if g == nil {
		return
	}
	pf("### The drop-in path\n\n")
	pf("`POST /v1/openai/chat/completions` on the same branch as the generations above, alternated with them call by call: an OpenAI SDK application's list (its own questions and the answers it got, the history before it being the graph's), sent whole every call. *Added* is, pair by pair, the call's time less llm-katan's own for the request the model received.\n\n")
	pf("| conversation | n | native added p50 | p99 | drop-in added p50 | p99 | errors |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range g.Rows {
		if r.DropAdded.N == 0 {
			continue
		}
		pf("| %s | %d | %s | %s | %s | %s | %d |\n", r.Row, r.DropAdded.N, ms(r.Added.P50), ms(r.Added.P99), ms(r.DropAdded.P50), ms(r.DropAdded.P99), r.DropErrors)
	}
	if rr := g.Reconcile; rr != nil {
		if rr.Err != "" {
			pf("\nA list of %d messages: %s\n\n", rr.Messages, oneLine(clipS(rr.Err, 200)))
			return
		}
		pf("\nA client list of %d messages: the first call records it whole (%s); then 20 calls, each the list grown by the answer and a question, alternated with native generations on the same branch. Parsing the body and hashing its chain (in the client's process, as the server does them) take %s ms and %s ms p50; the drop-in call adds %s ms p50 (p99 %s) over llm-katan, a native generation %s ms (p99 %s): matching the list is one read of the branch heads, whatever its length.\n\n",
			rr.Messages, rr.Record.Round(time.Millisecond), ms(rr.Parse.P50), ms(rr.Hash.P50), ms(rr.Added.P50), ms(rr.Added.P99), ms(rr.NativeAdded.P50), ms(rr.NativeAdded.P99))
	}
}

// dropInModel is the drop-in model name of a run's provider and model.
func dropInModel(providerName, modelName string) string {
	if strings.Contains(modelName, "/") {
		return modelName
	}
	return providerName + "/" + modelName
}
