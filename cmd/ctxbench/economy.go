package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ctxgraph/ctxgraph/scenario"
)

// The economy phase: the shared scenarios, each on an account of its own, with the table
// of replay against assembled tokens.

type economyResult struct {
	Files   int
	Results []scenario.Result
	Table   string
	Errors  []string
	Elapsed time.Duration
}

func (b *bench) runEconomy(ctx context.Context) {
	start := time.Now()
	files, err := filepath.Glob(filepath.Join(b.o.scenarios, "*.json"))
	e := &economyResult{Files: len(files)}
	b.economy = e
	if err != nil || len(files) == 0 {
		e.Errors = append(e.Errors, fmt.Sprintf("no scenario files in %s (%v)", b.o.scenarios, err))
		b.failures = append(b.failures, "economy: no scenario files")
		return
	}
	for _, f := range files {
		name := filepath.Base(f)
		sc, err := scenario.Load(f)
		if err != nil {
			e.Results = append(e.Results, scenario.Result{Scenario: name, PlaybackError: err.Error()})
			e.Errors = append(e.Errors, name+": loading: "+err.Error())
			continue
		}
		runner := scenario.Runner{Client: b.api.WithKey(b.scKeys[f])}
		res, err := runner.Run(ctx, sc)
		e.Results = append(e.Results, res)
		if err != nil {
			e.Errors = append(e.Errors, name+": playback: "+err.Error())
		}
		for _, a := range res.Assemblies {
			for _, fl := range a.Failures {
				e.Errors = append(e.Errors, fmt.Sprintf("%s %s: %s", name, a.Key, fl))
			}
		}
		if res.ConversationID != "" {
			b.convs = append(b.convs, b.scKeys[f]+"|"+res.ConversationID)
		}
	}
	e.Table = scenario.Table(e.Results)
	e.Elapsed = time.Since(start)
	if len(e.Errors) > 0 {
		b.failures = append(b.failures, fmt.Sprintf("economy: %d scenario expectation or playback failures", len(e.Errors)))
	}
	logf("economy: %d scenario files in %s, %d failures", len(files), e.Elapsed.Round(time.Millisecond), len(e.Errors))
}
