package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/peers"
	"github.com/ctxgraph/ctxgraph/scenario"
)

// conformanceCount is the deterministic token counter the conformance test gives both the
// real libraries and their Go ports (peers/testdata/conformance.py has the same): a
// quarter token per character, rounded up, in the shape of a chat count (per-message
// overhead, names, tool calls, call ids, reply priming).
func conformanceCount(msgs []peers.Message) int {
	toks := func(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }
	n := 3
	for _, m := range msgs {
		n += 3 + toks(m.Role) + toks(m.Content)
		if m.Name != "" {
			n += toks(m.Name) + 1
		}
		for _, c := range m.ToolCalls {
			n += 3 + toks(c.ID) + toks(c.Name) + toks(c.Arguments)
		}
		if m.ToolCallID != "" {
			n += toks(m.ToolCallID)
		}
	}
	return n
}

// conformanceCase is one message list under one budget, as conformance.py reads it.
type conformanceCase struct {
	Name             string          `json:"name"`
	Messages         []peers.Message `json:"messages"`
	Budget           int             `json:"budget"`
	LiteLLMMaxTokens int             `json:"liteLLMMaxTokens"`
	Model            string          `json:"model"`
}

// TestPeerPortsMatchTheLibraries plays every shared scenario (CTXGRAPH_SCENARIOS, as for
// TestScenarios), replays each assembly's
// lineage through the API, and runs the real LangChain trim_messages, ClearToolUsesEdit and
// LiteLLM trim_messages (pinned, installed by scripts/peers-venv) and their Go ports over
// every replayed list and every ctxgraph request, at the scenario's budget, at ctxgraph's
// token count and at shares of the whole list, with one counter: the outputs must be
// identical. It also holds the replay to the server's baseline: the same records, the same
// count.
func TestPeerPortsMatchTheLibraries(t *testing.T) {
	python := peersPython(t)
	dir := os.Getenv("CTXGRAPH_SCENARIOS")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "scenarios")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files in %s (%v); set CTXGRAPH_SCENARIOS to the scenario directory", dir, err)
	}
	tk := assembly.MustTokenizer("o200k_base")
	var cases []conformanceCase
	for _, file := range files {
		sc, err := scenario.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(t)
		runner := scenario.Runner{Client: h.client()}
		_, comps, err := runner.Compare(t.Context(), sc, tk)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(file), err)
		}
		for _, c := range comps {
			name := filepath.Base(file) + " " + c.Assembly
			if c.ReplayBaseline != c.Baseline {
				t.Errorf("%s: the replay counts %d tokens the baseline's way, want the server's baseline %d", name, c.ReplayBaseline, c.Baseline)
			}
			lists := map[string][]peers.Message{"replay": c.Replay, "ctxgraph": c.Requests[scenario.BudgetOwn][peers.StrategyCtxgraph]}
			for what, msgs := range lists {
				full := conformanceCount(msgs)
				budgets := []int{c.OwnBudget, c.CtxgraphTokens}
				for _, share := range []float64{0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 0.9, 1, 1.1} {
					budgets = append(budgets, int(float64(full)*share))
				}
				for _, b := range budgets {
					cases = append(cases, conformanceCase{Name: name + " " + what, Messages: msgs, Budget: b,
						LiteLLMMaxTokens: peers.LiteLLMMaxTokens(b), Model: c.Model})
				}
			}
		}
	}

	input, err := json.Marshal(map[string]any{"cases": cases})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, filepath.Join("..", "peers", "testdata", "conformance.py"))
	cmd.Env = append(os.Environ(), "LITELLM_LOCAL_MODEL_COST_MAP=True")
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("conformance.py: %v\n%s", err, stderr.String())
	}
	var got struct {
		Results []map[string][]peers.Message `json:"results"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("conformance.py answered %s: %v", out, err)
	}
	if len(got.Results) != len(cases) {
		t.Fatalf("conformance.py answered %d results for %d cases", len(got.Results), len(cases))
	}
	changed := map[string]int{}
	for i, c := range cases {
		// The ports as the benchmark runs them.
		requests := peers.PeerRequests(c.Messages, c.Budget, c.Model, conformanceCount)
		ports := map[string][]peers.Message{"langchain": requests[peers.StrategyLangChain],
			"clear": requests[peers.StrategyClear], "litellm": requests[peers.StrategyLiteLLM]}
		for lib, port := range ports {
			want, have := encode(t, got.Results[i][lib]), encode(t, port)
			if have != want {
				t.Errorf("%s, budget %d, %s: the port sends\n%s\nthe library\n%s", c.Name, c.Budget, lib, have, want)
			}
			if have != encode(t, c.Messages) {
				changed[lib]++
			}
		}
	}
	// A sweep in which no strategy ever cut anything would prove nothing.
	for _, lib := range []string{"langchain", "clear", "litellm"} {
		if changed[lib] == 0 {
			t.Errorf("%s changed none of the %d lists: the budgets never made it cut", lib, len(cases))
		}
	}
	t.Logf("%d cases; lists changed by langchain %d, clear %d, litellm %d", len(cases), changed["langchain"], changed["clear"], changed["litellm"])
}

func encode(t *testing.T, msgs []peers.Message) string {
	t.Helper()
	if msgs == nil {
		msgs = []peers.Message{}
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// peersPython installs the pinned peer libraries (scripts/peers-venv, a no-op once they
// are) and returns the virtual environment's python.
func peersPython(t *testing.T) string {
	t.Helper()
	script := filepath.Join("..", "scripts", "peers-venv")
	if out, err := exec.Command(script, "install").CombinedOutput(); err != nil {
		t.Fatalf("scripts/peers-venv install: %v\n%s", err, out)
	}
	out, err := exec.Command(script, "python").Output()
	if err != nil {
		t.Fatalf("scripts/peers-venv python: %v", err)
	}
	return strings.TrimSpace(string(out))
}
