package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/scenario"
)

// runCompare is `ctxgraph compare`: it plays scenario files against a running server and
// sends each assembly's lineage through every context strategy (history replay, LangChain's
// trim_messages, clear_tool_uses, LiteLLM's trim_messages, ctxgraph) at the assembly's
// budget (or -budget) and at exactly the tokens ctxgraph used, then prints the tokens each
// sent, the checks each passed, its leaks and orphaned tool pairs, and the targets.
func runCompare(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	url, key := serverFlags(fs)
	budget := fs.Int("budget", 0, "token budget of every assembly instead of the scenario's own (expectations written for that budget, such as what it omits for the budget, may then fail)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ctxgraph compare [-url URL] [-key KEY] [-budget N] [file.json ...]  (default: ../shared/scenarios/*.json)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *budget < 0 {
		return fmt.Errorf("-budget must be positive")
	}
	apiKey, err := keyOrDevKey(*key)
	if err != nil {
		return err
	}
	files, err := scenarioFiles(fs.Args())
	if err != nil {
		return err
	}
	runner := scenario.Runner{Client: scenarioClient(*url, apiKey)}
	tk := assembly.MustTokenizer("o200k_base")
	var comps []scenario.Comparison
	for _, file := range files {
		sc, err := scenario.Load(file)
		if err != nil {
			return err
		}
		if *budget > 0 {
			for i := range sc.Assemblies {
				sc.Assemblies[i].TokenBudget = *budget
			}
		}
		_, c, err := runner.Compare(context.Background(), sc, tk)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(file), err)
		}
		comps = append(comps, c...)
	}
	fmt.Fprintln(stdout, scenario.CompareSummary(comps))
	fmt.Fprintln(stdout, scenario.CompareLegend)
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, scenario.CompareTable(comps))
	if losses := scenario.CompareLosses(comps); losses != "" {
		fmt.Fprintln(stdout, "What each strategy lost:")
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, losses)
	}
	if refits := scenario.CompareRefits(comps); refits != "" {
		fmt.Fprintln(stdout, "ctxgraph assembled again with its own token count as the budget, where that changed what it sent:")
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, refits)
	}
	for _, t := range scenario.CompareTargets(comps) {
		status := "met"
		if !t.Met {
			status = "NOT MET"
		}
		fmt.Fprintf(stdout, "- %s: %s (%s)\n", t.Name, status, t.Detail)
	}
	return nil
}

// scenarioClient is the client the scenario and compare commands play files with.
func scenarioClient(url, key string) *client.Client {
	c := client.New(url, key)
	c.HTTP = &http.Client{Timeout: 60 * time.Second}
	return c
}

// serverFlags defines the flags that name the server and the key: -url and -key.
func serverFlags(fs *flag.FlagSet) (url, key *string) {
	url = fs.String("url", orDefault(os.Getenv("CTXGRAPH_URL"), "http://127.0.0.1:8080"), "ctxgraph base URL")
	key = fs.String("key", os.Getenv("CTXGRAPH_KEY"), "API key (default: CTXGRAPH_KEY, else .ctxgraph/dev-api-key)")
	return url, key
}

// keyOrDevKey is the API key given, else the development key `make run` made.
func keyOrDevKey(key string) (string, error) {
	if key != "" {
		return key, nil
	}
	b, err := os.ReadFile(DevKeyFile)
	if err != nil {
		return "", fmt.Errorf("no API key: pass -key, set CTXGRAPH_KEY, or run `make run` first to make .ctxgraph/dev-api-key")
	}
	return strings.TrimSpace(string(b)), nil
}

// scenarioFiles is the files given, else every scenario of ../shared/scenarios.
func scenarioFiles(args []string) ([]string, error) {
	if len(args) > 0 {
		return args, nil
	}
	files, _ := filepath.Glob(filepath.Join("..", "shared", "scenarios", "*.json"))
	if len(files) == 0 {
		return nil, fmt.Errorf("no scenario files given and none in ../shared/scenarios")
	}
	return files, nil
}
