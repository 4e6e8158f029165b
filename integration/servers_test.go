package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/blob"
	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/integration/s3test"
	"github.com/ctxgraph/ctxgraph/model"
)

// rotation sends each request to the next of several ctxgraph servers, as a load balancer
// without affinity does, with the bookmark of the answer before (one causal chain). It
// fails the test on an answer it did not expect, and counts what it sent.
type rotation struct {
	h       *harness
	servers []serverProcess
	chain   *model.CausalChain
	sent    int
	// by is how many requests each server answered.
	by []int
}

// do sends a request to the next server and returns its body; it fails the test unless the
// answer is want and carries a bookmark.
func (r *rotation) do(want int, method, path string, body any, headers ...string) (map[string]any, client.Response) {
	r.h.t.Helper()
	i := r.sent % len(r.servers)
	r.sent++
	r.by[i]++
	c := client.New(r.servers[i].base, r.h.key)
	c.Chain = r.chain
	for j := 0; j+1 < len(headers); j += 2 {
		c = c.WithHeader(headers[j], headers[j+1])
	}
	var resp client.Response
	if err := c.Do(context.Background(), method, path, body, &resp); err != nil && resp.Status == 0 {
		r.h.t.Fatalf("server %d: %s %s: %v", i, method, path, err)
	}
	if resp.Status != want {
		r.h.t.Fatalf("server %d: %s %s answered %d, want %d: %s", i, method, path, resp.Status, want, resp.Body)
	}
	if resp.Header.Get(model.BookmarkField) == "" {
		r.h.t.Fatalf("server %d: %s %s answered no bookmark", i, method, path)
	}
	var out map[string]any
	if len(resp.Body) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(resp.Body, &out); err != nil {
			r.h.t.Fatalf("server %d: %s %s: %v", i, method, path, err)
		}
	}
	return out, resp
}

// toolLoopProvider is an OpenAI-compatible model that asks for sheet_read when the request
// ends with a user message and, when it ends with a tool result, answers the marker the
// result holds: an answer that names the marker proves the request held the result.
func toolLoopProvider(t *testing.T) (*protocolServer, string) {
	t.Helper()
	markerRe := regexp.MustCompile(`R[0-9]+-[0-9a-f]{8}`)
	p := newProtocolServer(t, "/v1/chat/completions", func(n int, req map[string]any) (int, map[string]string, any) {
		raw, _ := req["messages"].([]any)
		last, _ := raw[len(raw)-1].(map[string]any)
		if last["role"] == "tool" {
			content, _ := last["content"].(string)
			return 200, nil, openAIText("the sheet says " + markerRe.FindString(content))
		}
		return 200, nil, openAIToolCall(fmt.Sprintf("call_%d", n), "sheet_read", `{"sheet":"q3"}`)
	})
	return p, echoAndOpenAIProviders(t, p.URL)
}

// Three ctxgraph processes on one Neo4j (through a routing URI, reads on any member) and
// one blob store share nothing else. A client sends each request of a conversation to the
// next server in turn, sending back the bookmark of the answer before: generations with
// tool loops whose results go to the blob store, retries, assemblies and their replays,
// raw reads, an artifact's erasure, a schedule and the conversation's deletion. Every
// model call sees the result recorded through another server, replay is identical, no
// message or run is written twice, no blob is lost, and no request answers 5xx.
func TestThreeServers(t *testing.T) {
	provider, file := toolLoopProvider(t)
	blobEnv, payloads := objectStoreOfItsOwn(t)
	h := newProviderHarness(t)
	bin := buildServer(t)
	_, rest, _ := strings.Cut(neo4jServer.URI, "://")
	env := append([]string{"CTXGRAPH_PROVIDERS_FILE=" + file, "OPENAI_KEY=sk-test",
		"NEO4J_URI=neo4j://" + rest, "CTXGRAPH_NEO4J_READS=any"}, blobEnv...)
	r := &rotation{h: h, chain: model.NewCausalChain(nil), by: make([]int, 3)}
	for range 3 {
		r.servers = append(r.servers, h.startServer(bin, env...))
	}

	conv, _ := r.do(201, "POST", "/v1/conversations", map[string]any{"title": "three servers"})
	convID, branch := str(conv, "id"), str(conv, "branchId")
	gpt, _ := r.do(201, "POST", "/v1/conversations/"+convID+"/participants", map[string]any{"kind": "model", "name": "gpt", "provider": "openai", "model": "gpt-4.1"})
	echo, _ := r.do(201, "POST", "/v1/conversations/"+convID+"/participants", map[string]any{"kind": "model", "name": "echo-bot", "provider": "echo"})

	const turns = 3
	type turn struct{ marker, artifact, body string }
	var done []turn
	for n := 1; n <= turns; n++ {
		key := fmt.Sprintf("turn-%d-%s", n, randomHex(4))
		body := map[string]any{"branchId": branch, "participantIds": []string{str(gpt, "id")},
			"userMessage": map[string]any{"content": fmt.Sprintf("turn %d: read the sheet", n)}, "tools": []any{sheetTool}}
		gen, _ := r.do(201, "POST", "/v1/generations", body, "Idempotency-Key", key)
		run := first(gen, "runs")
		if str(run, "status") != "awaiting_tools" {
			t.Fatalf("turn %d: the run is %v, want awaiting_tools", n, run)
		}
		again, resp := r.do(201, "POST", "/v1/generations", body, "Idempotency-Key", key)
		if resp.Header.Get("Idempotent-Replayed") != "true" || str(first(again, "runs"), "runId") != str(run, "runId") {
			t.Fatalf("turn %d: the retry on another server answered %v", n, again)
		}

		// A result over the inline limit goes to the blob store.
		marker := fmt.Sprintf("R%d-%s", n, randomHex(4))
		result := map[string]any{"marker": marker, "rows": strings.Repeat("north,4.2;", 8000)}
		rec, _ := r.do(201, "POST", "/v1/tool-calls/"+str(first(run, "toolCalls"), "id")+"/result",
			map[string]any{"status": "succeeded", "result": result, "privacyClass": "internal"})
		raw, _ := json.Marshal(result)
		artifact := str(rec, "artifactId")

		fin, _ := r.do(200, "POST", "/v1/runs/"+str(run, "runId")+"/continue", map[string]any{"tools": []any{sheetTool}})
		answer, _ := first(fin, "runs")["message"].(map[string]any)
		if want := "the sheet says " + marker; str(answer, "content") != want {
			t.Fatalf("turn %d: the model answered %q, want %q: the call on one server missed the result written on another", n, str(answer, "content"), want)
		}
		done = append(done, turn{marker, artifact, string(raw)})

		asm, _ := r.do(201, "POST", "/v1/assemblies", map[string]any{"branchId": branch, "participantId": str(gpt, "id"), "runtimeKind": "chat"})
		if !slices.ContainsFunc(asm["messages"].([]any), func(m any) bool {
			return strings.Contains(fmt.Sprint(m.(map[string]any)["content"]), str(answer, "content"))
		}) {
			t.Fatalf("turn %d: the assembly misses the answer just written: %v", n, asm["messages"])
		}
		replay, _ := r.do(200, "POST", "/v1/assemblies/"+str(asm, "id")+"/replay", nil)
		if replay["identical"] != true {
			t.Fatalf("turn %d: replay on another server differs: %v", n, replay)
		}
	}
	if provider.count() != 2*turns {
		t.Fatalf("the provider got %d calls, want %d", provider.count(), 2*turns)
	}

	// Every body is read back whole through every server.
	for _, d := range done {
		for range r.servers {
			raw, _ := r.do(200, "GET", "/v1/artifacts/"+d.artifact+"/raw", nil)
			if got, _ := json.Marshal(raw["result"]); !sameJSONBytes(got, []byte(d.body)) {
				t.Fatalf("artifact %s reads back a result of %d bytes (sha256 %s), want its %d", d.artifact, len(got), shortSum(got), len(d.body))
			}
		}
	}

	// A schedule created through one server ticks once per tick, whichever server claims it.
	sched, _ := r.do(201, "POST", "/v1/conversations/"+convID+"/schedules", map[string]any{
		"cron": "* * * * * *", "participantIds": []string{str(echo, "id")}, "prompt": "every second: say the time"})
	waitWithin(t, time.Minute, 100*time.Millisecond, "three ticks", func() error {
		if n := endedTicks(t, str(sched, "id")); n < 3 {
			return fmt.Errorf("%d ticks have ended, want 3", n)
		}
		return nil
	})
	r.do(204, "DELETE", "/v1/schedules/"+str(sched, "id"), nil)
	time.Sleep(1500 * time.Millisecond) // a tick claimed before the deletion ends
	ticks := cypherCount(t, `MATCH (t:ScheduleTick {scheduleId: $id}) RETURN count(t)`, map[string]any{"id": str(sched, "id")})

	// The first turn's artifact is erased through one server; the next reads nothing of it.
	erased, _ := r.do(200, "POST", "/v1/artifacts/"+done[0].artifact+"/erase", map[string]any{})
	if !strings.Contains(fmt.Sprint(erased), done[0].artifact) {
		t.Fatalf("the erasure lists %v, not the artifact", erased)
	}
	r.do(404, "GET", "/v1/artifacts/"+done[0].artifact+"/raw", nil)
	for _, d := range done[1:] {
		raw, _ := r.do(200, "GET", "/v1/artifacts/"+d.artifact+"/raw", nil)
		if got, _ := json.Marshal(raw["result"]); !sameJSONBytes(got, []byte(d.body)) {
			t.Fatalf("artifact %s lost its body after another's erasure", d.artifact)
		}
	}

	// Nothing written twice: each turn one user message, one run and one answer; each tick
	// one of each too.
	count := func(q string) int64 { return cypherCount(t, q, map[string]any{"b": branch}) }
	users := count(`MATCH (m:Message {branchId: $b, role: 'user'}) RETURN count(m)`)
	answers := count(`MATCH (m:Message {branchId: $b, role: 'assistant'}) RETURN count(m)`)
	runs := count(`MATCH (r:ModelRun {branchId: $b}) RETURN count(r)`)
	calls := count(`MATCH (r:ModelRun {branchId: $b})-[:REQUESTED]->(c:ToolCall) RETURN count(c)`)
	if want := turns + ticks; users != want || answers != want || runs != want || calls != turns {
		t.Fatalf("the branch holds %d user messages, %d answers, %d runs and %d tool calls; want %d, %d, %d and %d",
			users, answers, runs, calls, want, want, want, turns)
	}

	// The bucket holds the bodies of the artifacts that remain, and no other.
	var refs []string
	for _, d := range done[1:] {
		art, _ := r.do(200, "GET", "/v1/artifacts/"+d.artifact, nil)
		refs = append(refs, str(art, "resultRef"))
	}
	if got := payloads(); !sameSet(got, refs) {
		t.Fatalf("the object store holds payloads %v, want the remaining artifacts' %v", got, refs)
	}

	r.do(204, "DELETE", "/v1/conversations/"+convID, nil)
	for range r.servers {
		r.do(404, "GET", "/v1/conversations/"+convID, nil)
	}
	waitWithin(t, 30*time.Second, 200*time.Millisecond, "the deleted conversation's payloads to go", func() error {
		if left := payloads(); len(left) > 0 {
			return fmt.Errorf("the object store still holds %v", left)
		}
		return nil
	})
	t.Logf("%d requests, %v per server, %d schedule ticks; no 5xx", r.sent, r.by, ticks)
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// sameJSONBytes reports whether two JSON documents hold the same value.
func sameJSONBytes(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	return sameJSON(va, vb)
}

// shortSum is the first bytes of data's sha256, for a failure message.
func shortSum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:6])
}

// objectStoreOfItsOwn is a prefix of the test run's S3 bucket (SeaweedFS under `make
// test`) for a test's servers, with the environment that gives it to them, and a function
// that lists the payloads it holds (the claims' and removals' bookkeeping left out).
func objectStoreOfItsOwn(t *testing.T) (env []string, payloads func() []string) {
	t.Helper()
	srv, err := s3test.Find()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := srv.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	location := srv.NewLocation("servers")
	_, prefix, err := blob.ParseS3URL(location)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.DeleteAll(context.Background(), cli, prefix) })
	// The last value of a variable wins: the blob directory the harness gives is unset.
	env = append(srv.Env(), "AWS_ENDPOINT_URL=", "AWS_PROFILE=", "CTXGRAPH_BLOB_DIR=", "CTXGRAPH_BLOB_URL="+location)
	payloads = func() []string {
		keys, err := srv.Keys(t.Context(), cli, prefix)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, k := range keys {
			if rest := strings.TrimPrefix(k, prefix); len(rest) == 67 && rest[2] == '/' {
				out = append(out, "sha256:"+rest[3:])
			}
		}
		return out
	}
	return env, payloads
}
