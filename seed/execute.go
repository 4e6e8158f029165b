package seed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ctxgraph/ctxgraph/client"
)

// executor sends a plan's requests and fills the keys' slots with the ids the server
// answers.
type executor struct {
	client      *client.Client
	slots       map[string]*slot
	bytes       atomic.Int64
	requests    atomic.Int64
	blobs       atomic.Int64
	resultBytes atomic.Int64
}

// id is a key's server id, or "" when it was never filled.
func (e *executor) id(key string) string {
	s, ok := e.slots[key]
	if !ok {
		return ""
	}
	select {
	case <-s.done:
		return s.id
	default:
		return ""
	}
}

func (e *executor) sequential(ctx context.Context, ops []*op) error {
	for _, o := range ops {
		if err := e.run(ctx, o, false, nil); err != nil {
			return err
		}
	}
	return nil
}

// parallel runs one writer per branch; a writer waits for the keys it needs from other
// branches. The plan's order is a valid order of every key's creation, so the earliest
// unsent request never waits and the writers cannot deadlock.
func (e *executor) parallel(ctx context.Context, ops []*op, branches, limit int) error {
	queues := make([][]*op, branches)
	for _, o := range ops {
		queues[o.branch] = append(queues[o.branch], o)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, q := range queues {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, o := range q {
				if err := e.run(ctx, o, true, sem); err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// resolver turns keys into ids for one request, waiting for them when wait is set.
type resolver struct {
	ctx  context.Context
	e    *executor
	wait bool
	err  error
}

func (r *resolver) id(key string) string {
	s, ok := r.e.slots[key]
	if !ok {
		r.fail(fmt.Errorf("seed: internal error: unknown key %q", key))
		return ""
	}
	if r.wait {
		select {
		case <-s.done:
		case <-r.ctx.Done():
			r.fail(context.Cause(r.ctx))
			return ""
		}
		return s.id
	}
	select {
	case <-s.done:
		return s.id
	default:
		r.fail(fmt.Errorf("seed: internal error: key %q used before it was created", key))
		return ""
	}
}

func (r *resolver) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// answer is the part of a create response the generator needs: a record's id (and a new
// conversation's branch), or a tool result's artifact and memories.
type answer struct {
	client.Created
	client.RecordedResult
}

func (e *executor) run(ctx context.Context, o *op, wait bool, sem chan struct{}) error {
	res := &resolver{ctx: ctx, e: e, wait: wait}
	path := o.path
	if o.pathKey != "" {
		path = strings.Replace(path, "{}", res.id(o.pathKey), 1)
	}
	body := o.body(res.id)
	if res.err != nil {
		return res.err
	}
	payload, err := client.Marshal(body)
	if err != nil {
		return fmt.Errorf("seed: %s %s: encoding the body: %w", o.method, o.path, err)
	}
	if tr, ok := body.(client.ToolResult); ok {
		e.resultBytes.Add(int64(len(tr.Result)))
		if len(tr.Result) > BlobThreshold {
			e.blobs.Add(1)
		}
	}
	if sem != nil {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	var answered client.Response
	err = e.client.Do(ctx, o.method, path, payload, &answered)
	if sem != nil {
		<-sem
	}
	var refused *client.Error
	if err != nil && !errors.As(err, &refused) {
		return fmt.Errorf("seed: %w", err)
	}
	e.requests.Add(1)
	e.bytes.Add(int64(len(payload)))
	if refused != nil {
		return refused
	}
	status, resp := answered.Status, answered.Body
	if o.idKey == "" && o.branchKey == "" && len(o.memKeys) == 0 {
		return nil
	}
	var a answer
	if err := json.Unmarshal(resp, &a); err != nil {
		return fmt.Errorf("seed: %s %s answered %d with a body that is not the expected JSON (%v): %s", o.method, path, status, err, clip(resp, 2000))
	}
	if o.idKey != "" {
		id := a.ID
		if id == "" {
			id = a.ArtifactID
		}
		if id == "" {
			return fmt.Errorf("seed: %s %s answered %d without an id: %s", o.method, path, status, clip(resp, 2000))
		}
		e.fill(o.idKey, id)
	}
	if o.branchKey != "" {
		if a.BranchID == "" {
			return fmt.Errorf("seed: %s %s answered %d without a branchId: %s", o.method, path, status, clip(resp, 2000))
		}
		e.fill(o.branchKey, a.BranchID)
	}
	if len(o.memKeys) > 0 {
		if len(a.MemoryIDs) != len(o.memKeys) {
			return fmt.Errorf("seed: %s %s answered %d memoryIds, want %d: %s", o.method, path, len(a.MemoryIDs), len(o.memKeys), clip(resp, 2000))
		}
		for i, k := range o.memKeys {
			e.fill(k, a.MemoryIDs[i])
		}
	}
	return nil
}

func (e *executor) fill(key, id string) {
	s := e.slots[key]
	s.id = id
	close(s.done)
}

// mustJSON encodes a generated value as the client sends it.
func mustJSON(v any) json.RawMessage {
	b, err := client.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func clip(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
