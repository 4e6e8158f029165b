package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/scenario"
)

// runScenarios is `ctxgraph scenario`: it plays scenario files against a running server,
// checks every expectation and prints the economy table. It exits non-zero when any
// assembly fails.
func runScenarios(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("scenario", flag.ContinueOnError)
	url, key := serverFlags(fs)
	show := fs.Bool("show", false, "print each assembly's messages")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ctxgraph scenario [-url URL] [-key KEY] [-show] [file.json ...]  (default: ../shared/scenarios/*.json)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if *key, err = keyOrDevKey(*key); err != nil {
		return err
	}
	files, err := scenarioFiles(fs.Args())
	if err != nil {
		return err
	}
	c := scenarioClient(*url, *key)
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
