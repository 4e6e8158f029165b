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

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/scenario"
)

// runScenarios is `ctxgraph scenario`: it plays scenario files against a running server,
// checks every expectation and prints the economy table. It exits non-zero when any
// assembly fails.
func runScenarios(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("scenario", flag.ContinueOnError)
	url := fs.String("url", orDefault(os.Getenv("CTXGRAPH_URL"), "http://127.0.0.1:8080"), "ctxgraph base URL")
	key := fs.String("key", os.Getenv("CTXGRAPH_KEY"), "API key (default: CTXGRAPH_KEY, else .ctxgraph/dev-api-key)")
	show := fs.Bool("show", false, "print each assembly's messages")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ctxgraph scenario [-url URL] [-key KEY] [-show] [file.json ...]  (default: ../shared/scenarios/*.json)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *key == "" {
		b, err := os.ReadFile(DevKeyFile)
		if err != nil {
			return fmt.Errorf("no API key: pass -key, set CTXGRAPH_KEY, or run `make run` first to make .ctxgraph/dev-api-key")
		}
		*key = strings.TrimSpace(string(b))
	}
	files := fs.Args()
	if len(files) == 0 {
		files, _ = filepath.Glob(filepath.Join("..", "shared", "scenarios", "*.json"))
	}
	if len(files) == 0 {
		return fmt.Errorf("no scenario files given and none in ../shared/scenarios")
	}
	c := client.New(strings.TrimRight(*url, "/"), *key)
	c.HTTP = &http.Client{Timeout: 60 * time.Second}
	runner := scenario.Runner{Client: c}
	var results []scenario.Result
	failed := false
	for _, file := range files {
		sc, err := scenario.Load(file)
		if err != nil {
			return err
		}
		res, err := runner.Run(context.Background(), sc)
		results = append(results, res)
		if err != nil {
			fmt.Fprintf(stdout, "%s: playback failed: %v\n", filepath.Base(file), err)
			failed = true
			continue
		}
		for _, a := range res.Assemblies {
			for _, f := range a.Failures {
				fmt.Fprintf(stdout, "%s %s: %s\n", filepath.Base(file), a.Key, f)
				failed = true
			}
			if *show && a.AssemblyID != "" {
				showAssembly(stdout, c, a.AssemblyID)
			}
		}
	}
	fmt.Fprintln(stdout, scenario.Table(results))
	if failed {
		return fmt.Errorf("some scenario expectations failed")
	}
	return nil
}

// showAssembly prints the messages of a recorded assembly.
func showAssembly(w io.Writer, c *client.Client, id string) {
	a, err := c.GetAssembly(context.Background(), id)
	if err != nil {
		fmt.Fprintln(w, "  (cannot read the assembly:", err, ")")
		return
	}
	tokens := map[string]int{"assembled": a.Tokens.Assembled, "baseline": a.Tokens.Baseline, "budget": a.Tokens.Budget}
	if a.Tokens.Protected != 0 {
		tokens["protected"] = a.Tokens.Protected
	}
	fmt.Fprintf(w, "--- assembly %s (tokens %v)\n", id, tokens)
	for _, m := range a.Messages {
		fmt.Fprintf(w, "[%s %s]\n%s\n", m.Role, m.Name, m.Content)
	}
}
