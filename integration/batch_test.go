package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

// TestConcurrentToolWrites: tool calls and tool results of concurrent requests are written in
// batches (group commit). The first two writes of each statement are held in their
// transactions, so that the requests made meanwhile queue and are written together; each
// request still gets its own answer: calls on two branches take distinct, gap-free seqs, a
// second call with a run's callId is a conflict, another account's run or call is not found,
// a request that ended before its batch is not written, and a second result for a call
// (in the same batch) is a conflict that writes no second artifact.
func TestConcurrentToolWrites(t *testing.T) {
	store := openStore(blobDir)
	defer store.Close(context.Background())
	h := newHarnessWith(t, store, "")
	w := h.world()
	fork := str(h.must(201, "POST", "/v1/conversations/"+w.conv+"/branches", map[string]any{
		"parentBranchId": w.branch, "forkAfterMessageId": w.message, "name": "batch-fork"}), "id")
	forkRun := str(h.must(201, "POST", "/v1/branches/"+fork+"/runs", map[string]any{
		"participantId": w.participant, "runtimeKind": "chat", "triggerMessageId": w.message}), "id")
	ended, cancel := context.WithCancel(t.Context())
	cancel()

	gate := gateStatements(store)
	// batched runs the requests with the first two held and the rest queued behind them,
	// and returns their errors.
	batched := func(statement string, requests []func() error) []error {
		t.Helper()
		gate.arm(statement, 2)
		errs := make([]error, len(requests))
		var wg sync.WaitGroup
		for i := range requests {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = requests[i]()
			}()
			if i < 2 {
				gate.waitHeld()
			}
		}
		waitUntil(t, "the requests to queue behind the two held", func() bool { return store.QueuedRows(statement) == len(requests)-2 })
		gate.release()
		wg.Wait()
		// The two held, then what queued behind them: in one or two batches (one per
		// writer).
		if n := gate.runs.Load(); n < 3 || n > 4 {
			t.Errorf("%s ran %d times for %d requests, want the two held and one or two batches", statement, n, len(requests))
		}
		return errs
	}

	type callReq struct {
		name, account, run, callID string
		ctx                        context.Context
		want                       model.Kind
	}
	reqs := []*callReq{
		{name: "first held", run: w.run, callID: "held-1"},
		{name: "second held", run: forkRun, callID: "held-2"},
		{name: "another account's run", account: "acct-other-" + randomHex(4), run: w.run, callID: "other", want: model.KindNotFound},
		{name: "an ended request", ctx: ended, run: w.run, callID: "ended", want: model.KindUnavailable},
	}
	for i := range 6 {
		run := w.run
		if i%2 == 1 {
			run = forkRun
		}
		reqs = append(reqs, &callReq{name: fmt.Sprintf("queued %d", i), run: run, callID: fmt.Sprintf("queued-%d", i)})
	}
	// Two calls with one callId on one run, queued together: one is written.
	reqs = append(reqs, &callReq{name: "dup a", run: w.run, callID: "dup"}, &callReq{name: "dup b", run: w.run, callID: "dup"})
	calls := make([]model.ToolCall, len(reqs))
	var fns []func() error
	for i, r := range reqs {
		if r.account == "" {
			r.account = h.account
		}
		if r.ctx == nil {
			r.ctx = t.Context()
		}
		fns = append(fns, func() (err error) {
			calls[i], err = store.RequestToolCall(r.ctx, r.account, model.NewToolCall{RunID: r.run, Tool: "web_search",
				CallID: r.callID, Arguments: json.RawMessage(fmt.Sprintf(`{"q":%q}`, r.name))})
			return err
		})
	}
	errs := batched("RequestToolCall", fns)
	dups := 0
	seqs := map[string][]int64{}
	var written []model.ToolCall
	for i, r := range reqs {
		got := model.KindOf(errs[i])
		if errs[i] == nil {
			got = ""
		}
		if r.callID == "dup" {
			if got == model.KindConflict {
				dups++
				continue
			}
		}
		if got != r.want {
			t.Errorf("%s: got %q (%v), want %q", r.name, got, errs[i], r.want)
			continue
		}
		if r.want != "" {
			continue
		}
		back, err := store.ToolCall(t.Context(), h.account, calls[i].ID)
		if err != nil || back.CallID != r.callID || back.RunID != r.run || string(back.Arguments) != fmt.Sprintf(`{"q":%q}`, r.name) {
			t.Errorf("%s: reading it back got %+v, %v", r.name, back, err)
			continue
		}
		seqs[back.BranchID] = append(seqs[back.BranchID], back.Seq)
		written = append(written, back)
	}
	if dups != 1 {
		t.Errorf("of two calls with one callId, %d answered conflict, want 1", dups)
	}
	// Each branch's seqs: distinct and consecutive (the world's main branch already holds
	// a message, a run and a call; the fork its run).
	for branch, s := range seqs {
		slices.Sort(s)
		for k := 1; k < len(s); k++ {
			if s[k] != s[k-1]+1 {
				t.Errorf("branch %s: tool call seqs %v, want distinct and consecutive", branch, s)
				break
			}
		}
	}
	if len(seqs) != 2 {
		t.Errorf("calls written on %d branches, want 2", len(seqs))
	}

	// Results: one for each written call, two for the first (one is a conflict), another
	// account's, an ended request.
	type resultReq struct {
		name, account, call string
		ctx                 context.Context
		want                model.Kind
	}
	var rreqs []*resultReq
	for _, c := range written {
		rreqs = append(rreqs, &resultReq{name: "result of " + c.CallID, call: c.ID})
	}
	rreqs = append(rreqs,
		&resultReq{name: "second result of " + written[0].CallID, call: written[0].ID, want: model.KindConflict},
		&resultReq{name: "another account's call", account: "acct-other-" + randomHex(4), call: written[1].ID, want: model.KindNotFound},
		&resultReq{name: "an ended request", ctx: ended, call: written[2].ID, want: model.KindUnavailable})
	var rfns []func() error
	artifacts := make([]string, len(rreqs))
	for i, r := range rreqs {
		if r.account == "" {
			r.account = h.account
		}
		if r.ctx == nil {
			r.ctx = t.Context()
		}
		rfns = append(rfns, func() error {
			out, err := store.RecordToolResult(r.ctx, r.account, model.ToolResult{ToolCallID: r.call, Status: "succeeded",
				Result: json.RawMessage(fmt.Sprintf(`{"for":%q}`, r.name))})
			artifacts[i] = out.ArtifactID
			return err
		})
	}
	// Of the two results of the first call, the one written first wins and the other is the
	// conflict.
	errs = batched("RecordToolResult", rfns)
	firstCallResults := 0
	for i, r := range rreqs {
		got := model.KindOf(errs[i])
		if errs[i] == nil {
			got = ""
		}
		if r.call == written[0].ID && r.account == h.account {
			if got == "" {
				firstCallResults++
			} else if got != model.KindConflict {
				t.Errorf("%s: got %q (%v), want written or conflict", r.name, got, errs[i])
			}
			continue
		}
		if got != r.want {
			t.Errorf("%s: got %q (%v), want %q", r.name, got, errs[i], r.want)
		}
	}
	if firstCallResults != 1 {
		t.Errorf("of two results for one call, %d were written, want 1", firstCallResults)
	}
	for _, c := range written {
		back, err := store.ToolCall(t.Context(), h.account, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if back.Status != "succeeded" || len(back.ArtifactIDs) != 1 {
			t.Errorf("call %s after the results: status %q, artifacts %v, want succeeded with one", c.CallID, back.Status, back.ArtifactIDs)
		}
	}
}

// TestWritesInSeparateTransactionsSeeEachOther: a batched write and a write made in a
// transaction of its own (a result shared with a participant, a retry) that race for the
// same call or callId, and two ends of a run or two forks of one name: the second waits for
// the first to commit and then sees it, so a call gets one result, a run one call per
// callId and one end, a conversation one branch per name. The first write is held inside
// its transaction, after its statement, while the other is sent.
func TestWritesInSeparateTransactionsSeeEachOther(t *testing.T) {
	store := openStore(blobDir)
	defer store.Close(context.Background())
	h := newHarnessWith(t, store, "")
	w := h.world()

	gate := gateStatements(store)
	// race runs held, waits until it is held in its transaction, then runs other, lets
	// held commit once other waits for its locks and returns both errors.
	race := func(statement string, held, other func() error) (error, error) {
		t.Helper()
		gate.arm(statement, 1)
		var heldErr, otherErr error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); heldErr = held() }()
		gate.waitHeld()
		go func() { defer wg.Done(); otherErr = other() }()
		waitUntil(t, "the other write to wait for the held one's locks", func() bool { return blockedOnLocks(t, h.account) > 0 })
		gate.release()
		wg.Wait()
		return heldErr, otherErr
	}
	conflictOne := func(what string, a, b error) {
		t.Helper()
		if (a == nil) == (b == nil) || model.KindOf(errors.Join(a, b)) != model.KindConflict {
			t.Errorf("%s: got %v and %v, want one written and one conflict", what, a, b)
		}
	}

	// Two results for one call: the batched one and one shared with a participant.
	result := func(shared []string) func() error {
		return func() error {
			_, err := store.RecordToolResult(t.Context(), h.account, model.ToolResult{ToolCallID: w.call, Status: "succeeded",
				Result: json.RawMessage(`{"rows":3}`), SharedWithParticipants: shared})
			return err
		}
	}
	a, b := race("RecordToolResult", result(nil), result([]string{w.participant}))
	conflictOne("two results for one call", a, b)
	back, err := store.ToolCall(t.Context(), h.account, w.call)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.ArtifactIDs) != 1 {
		t.Errorf("call after two racing results: artifacts %v, want one", back.ArtifactIDs)
	}

	// Two calls with one callId: the batched one and a retry of a failed call.
	failed, err := store.RequestToolCall(t.Context(), h.account, model.NewToolCall{RunID: w.run, Tool: "web_search", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.RecordToolResult(t.Context(), h.account, model.ToolResult{ToolCallID: failed.ID, Status: "failed",
		Error: &model.ToolError{Code: "timeout", Message: "no answer"}, Retryable: true}); err != nil {
		t.Fatal(err)
	}
	call := func(retryOf string) func() error {
		return func() error {
			_, err := store.RequestToolCall(t.Context(), h.account, model.NewToolCall{RunID: w.run, Tool: "web_search",
				CallID: "raced", RetryOf: retryOf, Arguments: json.RawMessage(`{"q":"again"}`)})
			return err
		}
	}
	a, b = race("RequestToolCall", call(""), call(failed.ID))
	conflictOne("two calls with one callId", a, b)

	// Two ends of one run.
	end := func(status string) func() error {
		return func() error {
			_, err := store.FinishRun(t.Context(), h.account, model.RunEnd{RunID: w.run, Status: status})
			return err
		}
	}
	a, b = race("FinishRun", end("succeeded"), end("failed"))
	conflictOne("two ends of one run", a, b)
	if b != nil && !strings.Contains(b.Error(), "succeeded") {
		t.Errorf("the second end of a run: %v, want it to name the status the first wrote", b)
	}

	// Two forks with one name.
	fork := func() error {
		_, err := store.ForkBranch(t.Context(), h.account, model.NewBranch{ConversationID: w.conv, ParentBranchID: w.branch,
			ForkAfterMessageID: w.message, Name: "raced"})
		return err
	}
	a, b = race("ForkBranch", fork, fork)
	conflictOne("two forks with one name", a, b)
}
