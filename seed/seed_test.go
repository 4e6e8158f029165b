package seed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ctxgraph/ctxgraph/client"
)

// recorder is a stand-in server for unit tests of the generator: it answers every write
// with plausible JSON and fixed-width ids from counters, checks that the ids the generator
// sends are ones it issued, and records each request.
type recorder struct {
	mu       sync.Mutex
	next     map[string]int
	issued   map[string]bool
	requests []recorded
	errs     []string
}

// recorded is one request as the recorder saw it.
type recorded struct {
	method, path string
	bodyBytes    int
	bodySHA      string
}

func newRecorder() *recorder {
	return &recorder{next: map[string]int{}, issued: map[string]bool{}}
}

var idPattern = regexp.MustCompile(`\b(cnv|br|pt|msg|run|tc|art|mem)_[0-9]{6}\b`)

func (rec *recorder) newID(prefix string) string {
	rec.next[prefix]++
	id := fmt.Sprintf("%s_%06d", prefix, rec.next[prefix])
	rec.issued[id] = true
	return id
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	sum := sha256.Sum256(body)
	rec.requests = append(rec.requests, recorded{method: r.Method, path: r.URL.Path, bodyBytes: len(body), bodySHA: hex.EncodeToString(sum[:])})
	fail := func(format string, args ...any) {
		rec.errs = append(rec.errs, fmt.Sprintf("%s %s: ", r.Method, r.URL.Path)+fmt.Sprintf(format, args...))
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"code":"invalid","message":"rejected by the test recorder"}}`))
	}
	if r.Header.Get("Authorization") != "Bearer test-key" {
		fail("got Authorization %q, want the bearer key", r.Header.Get("Authorization"))
		return
	}
	var fields map[string]any
	if err := json.Unmarshal(body, &fields); err != nil {
		fail("body is not a JSON object: %v", err)
		return
	}
	for _, id := range idPattern.FindAllString(r.URL.Path+" "+string(body), -1) {
		if !rec.issued[id] {
			fail("names id %s, which was never issued", id)
			return
		}
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/"), "/")
	var answer any
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/conversations":
		answer = map[string]string{"id": rec.newID("cnv"), "branchId": rec.newID("br")}
	case r.Method == http.MethodPost && len(parts) == 3 && parts[2] == "participants":
		answer = map[string]string{"id": rec.newID("pt")}
	case r.Method == http.MethodPost && len(parts) == 3 && parts[2] == "branches":
		answer = map[string]string{"id": rec.newID("br")}
	case r.Method == http.MethodPost && len(parts) == 3 && parts[2] == "messages":
		answer = map[string]string{"id": rec.newID("msg")}
	case r.Method == http.MethodPost && len(parts) == 3 && parts[2] == "runs":
		answer = map[string]string{"id": rec.newID("run")}
	case r.Method == http.MethodPatch && len(parts) == 2 && parts[0] == "runs":
		answer = map[string]string{"id": parts[1], "status": fmt.Sprint(fields["status"])}
	case r.Method == http.MethodPost && len(parts) == 3 && parts[2] == "tool-calls":
		answer = map[string]string{"id": rec.newID("tc")}
	case r.Method == http.MethodPost && len(parts) == 3 && parts[2] == "result":
		mems, _ := fields["memories"].([]any)
		ids := []string{}
		for range mems {
			ids = append(ids, rec.newID("mem"))
		}
		answer = map[string]any{"artifactId": rec.newID("art"), "memoryIds": ids}
	default:
		fail("unexpected route")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(answer)
}

func generate(t *testing.T, cfg Config) (Summary, *recorder) {
	t.Helper()
	rec := newRecorder()
	sum, err := Generate(context.Background(), &client.Client{Handler: rec, Key: "test-key"}, cfg)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", cfg, err)
	}
	if len(rec.errs) > 0 {
		t.Fatalf("the recorder rejected %d requests, the first: %s", len(rec.errs), rec.errs[0])
	}
	return sum, rec
}

func TestGenerateIsDeterministic(t *testing.T) {
	cfg := Config{Rounds: 300, Branches: 6, Participants: 4, Seed: 42}
	first, a := generate(t, cfg)
	second, b := generate(t, cfg)

	if len(a.requests) != len(b.requests) {
		t.Fatalf("got %d requests, then %d, want the same sequence", len(a.requests), len(b.requests))
	}
	for i := range a.requests {
		if a.requests[i] != b.requests[i] {
			t.Fatalf("request %d: got %+v, then %+v, want the same", i, a.requests[i], b.requests[i])
		}
	}
	if first.BytesWritten != second.BytesWritten || first.Counts.ResultBytes != second.Counts.ResultBytes {
		t.Errorf("got %d and %d bytes written (%d and %d of results), want the same", first.BytesWritten, second.BytesWritten,
			first.Counts.ResultBytes, second.Counts.ResultBytes)
	}
	if fmt.Sprint(first.Branches) != fmt.Sprint(second.Branches) {
		t.Errorf("got branches %+v, then %+v, want the same", first.Branches, second.Branches)
	}

	cfg.Seed = 43
	_, other := generate(t, cfg)
	same := len(other.requests) == len(a.requests)
	for i := 0; same && i < len(a.requests); i++ {
		same = a.requests[i] == other.requests[i]
	}
	if same {
		t.Errorf("seeds 42 and 43 produced the same requests, want different ones")
	}
}

func TestGenerateCoversTheMix(t *testing.T) {
	cfg := Config{Rounds: 300, Branches: 6, Participants: 4, Seed: 7}
	sum, rec := generate(t, cfg)
	c := sum.Counts

	if got := int(c.Requests); got != len(rec.requests) {
		t.Errorf("got Counts.Requests %d, want the %d requests sent", got, len(rec.requests))
	}
	users := 0
	for _, r := range rec.requests {
		if strings.HasSuffix(r.path, "/runs") {
			users++
		}
	}
	if users != cfg.Rounds || c.Runs != cfg.Rounds {
		t.Errorf("got %d runs started (%d counted), want one per round: %d", users, c.Runs, cfg.Rounds)
	}
	if c.Messages != 2*cfg.Rounds {
		t.Errorf("got %d messages, want a user and an assistant message per round: %d", c.Messages, 2*cfg.Rounds)
	}
	if len(sum.Branches) != cfg.Branches || len(sum.ParticipantIDs) != cfg.Participants {
		t.Fatalf("got %d branches and %d participants, want %d and %d", len(sum.Branches), len(sum.ParticipantIDs), cfg.Branches, cfg.Participants)
	}
	rounds := 0
	for i, b := range sum.Branches {
		rounds += b.Rounds
		if (i == 0) != (b.ParentID == "") || (i == 0) != (b.Depth == 0) {
			t.Errorf("branch %d (%s): got parent %q at depth %d; only main has no parent", i, b.Name, b.ParentID, b.Depth)
		}
		if b.Rounds > 0 && (b.LastRunID == "" || b.LastRunParticipantID == "" || b.LastMessageID == "") {
			t.Errorf("branch %d has %d rounds but no last run, participant or message: %+v", i, b.Rounds, b)
		}
	}
	if rounds != cfg.Rounds {
		t.Errorf("got %d rounds over the branches, want %d", rounds, cfg.Rounds)
	}
	if d := sum.Deepest(); d.Depth < 2 {
		t.Errorf("got the deepest branch at depth %d, want forks of forks", d.Depth)
	}
	if c.Memories != c.Succeeded {
		t.Errorf("got %d memories for %d successful results, want one each", c.Memories, c.Succeeded)
	}
	for name, n := range map[string]int{
		"failed": c.Failed, "retries": c.Retries, "unretried failures": c.UnretriedFailures, "deferred": c.Deferred,
		"resolved deferred": c.DeferredResolved, "pending": c.Pending, "supersedes": c.Supersedes, "conflicts": c.Conflicts,
		"results over the blob threshold": int(c.BlobResults), "google_derived memories": c.MemoriesByPrivacy["google_derived"],
		"oauth_derived memories": c.MemoriesByPrivacy["oauth_derived"], "volatile memories": c.MemoriesByFreshness["volatile"],
		"durable memories": c.MemoriesByFreshness["durable"],
	} {
		if n == 0 {
			t.Errorf("got no %s in %d rounds, want some", name, cfg.Rounds)
		}
	}
	if c.Retries > c.FailedRetryable {
		t.Errorf("got %d retries of %d retryable failures, want at most one each", c.Retries, c.FailedRetryable)
	}
}

// TestGenerateInParallelSendsTheSameRequests checks that branch-parallel writing sends the
// same requests as plan order; only their interleaving, and so the ids, may differ.
func TestGenerateInParallelSendsTheSameRequests(t *testing.T) {
	cfg := Config{Rounds: 200, Branches: 5, Participants: 1, Seed: 9}
	seq, a := generate(t, cfg)
	cfg.Concurrency = 4
	par, b := generate(t, cfg)

	shape := func(rs []recorded) []string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%s %s %d", r.method, idPattern.ReplaceAllString(r.path, "ID"), r.bodyBytes))
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(shape(a.requests), shape(b.requests)) {
		t.Errorf("got different requests in parallel than in plan order")
	}
	if seq.BytesWritten != par.BytesWritten || fmt.Sprint(seq.Counts) != fmt.Sprint(par.Counts) {
		t.Errorf("got %d bytes and counts %+v in parallel, want %d and %+v", par.BytesWritten, par.Counts, seq.BytesWritten, seq.Counts)
	}
}

func TestGenerateRejectsABadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Rounds: 0, Branches: 1, Participants: 1},
		{Rounds: 5, Branches: 0, Participants: 1},
		{Rounds: 5, Branches: 1, Participants: 0},
		{Rounds: 5, Branches: 1, Participants: 5},
	} {
		if _, err := Generate(context.Background(), &client.Client{Handler: newRecorder()}, cfg); err == nil {
			t.Errorf("Generate(%+v): got no error, want one", cfg)
		}
	}
}

func TestGenerateWithFewRounds(t *testing.T) {
	for _, cfg := range []Config{
		{Rounds: 1, Branches: 3, Participants: 1, Seed: 1},
		{Rounds: 4, Branches: 10, Participants: 4, Seed: 2},
	} {
		sum, _ := generate(t, cfg)
		if len(sum.Branches) != cfg.Branches {
			t.Errorf("%+v: got %d branches, want %d", cfg, len(sum.Branches), cfg.Branches)
		}
	}
}
