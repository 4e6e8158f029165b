package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxgraph/ctxgraph/scenario"
)

// TestScenarios plays every scenario file of the shared scenario set through the API on a
// fresh account and checks every expectation of its assemblies. The directory is
// CTXGRAPH_SCENARIOS, else shared/scenarios beside the repository; the results table is
// logged and, when CTXGRAPH_SCENARIO_REPORT names a file, written there.
func TestScenarios(t *testing.T) {
	dir := os.Getenv("CTXGRAPH_SCENARIOS")
	if dir == "" {
		// The test runs in <repo>/integration; shared/ lives beside the repository.
		dir = filepath.Join("..", "..", "shared", "scenarios")
	}
	playScenarios(t, dir, os.Getenv("CTXGRAPH_SCENARIO_REPORT"))
}

// TestOwnScenarios plays the project's own scenario files (scenario/testdata): behaviours
// the shared set does not combine, in the same format.
func TestOwnScenarios(t *testing.T) {
	playScenarios(t, filepath.Join("..", "scenario", "testdata"), "")
}

// playScenarios plays every *.json file of dir and checks it; the results table is logged
// and, when report names a file, written there.
func playScenarios(t *testing.T, dir, report string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(abs, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scenario files (*.json) in %s; set CTXGRAPH_SCENARIOS to the scenario directory", abs)
	}

	var results []scenario.Result
	reasons := map[string]string{} // every omission rule seen, with the reason it gave
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			sc, err := scenario.Load(file)
			if err != nil {
				results = append(results, scenario.Result{Scenario: name, PlaybackError: err.Error()})
				t.Fatalf("loading: %v", err)
			}
			h := newHarness(t)
			runner := scenario.Runner{Client: h.client(), Explain: true}
			res, err := runner.Run(t.Context(), sc)
			results = append(results, res)
			if err != nil {
				t.Fatalf("playback: %v", err)
			}
			for _, a := range res.Assemblies {
				for _, f := range a.Failures {
					t.Errorf("assembly %s: %s", a.Key, f)
				}
				if a.AssemblyID != "" {
					checkExplainAndReplay(t, h, a.Key, a.AssemblyID, reasons)
				}
			}
		})
	}

	table := scenario.Table(results)
	t.Log("\n" + table)
	if report != "" {
		if err := os.WriteFile(report, []byte(table), 0o644); err != nil {
			t.Errorf("writing the scenario report: %v", err)
		}
	}
}

// checkExplainAndReplay asks explain about every record the assembly included or omitted
// (the runner has checked that explain agrees with the trace) and checks that it names
// the assembly's policy version and a provenance path, and that each omission rule gives
// one reason wherever it is used (reasons collects them across assemblies); then replays
// the assembly and checks that it is identical.
func checkExplainAndReplay(t *testing.T, h *harness, key, id string, reasons map[string]string) {
	t.Helper()
	rec := h.must(200, "GET", "/v1/assemblies/"+id, nil)
	var refs []string
	for _, v := range rec["included"].([]any) {
		refs = append(refs, str(v.(map[string]any), "ref"))
	}
	omitted, _ := rec["omittedRefs"].([]any)
	listed := map[string]float64{}
	for _, v := range omitted {
		listed[str(v.(map[string]any), "reason")]++
	}
	if counts, _ := rec["omitted"].(map[string]any); fmt.Sprint(counts) != fmt.Sprint(listed) {
		t.Errorf("assembly %s: the record counts omissions %v but its trace lists %v", key, counts, listed)
	}
	for _, v := range omitted {
		refs = append(refs, str(v.(map[string]any), "ref"))
	}
	for _, ref := range refs {
		ex := h.must(200, "GET", "/v1/assemblies/"+id+"/explain?ref="+ref, nil)
		if rule, reason := str(ex, "rule"), str(ex, "reason"); str(ex, "outcome") == "omitted" {
			if first, seen := reasons[rule]; seen && first != reason {
				t.Errorf("assembly %s: rule %s gave reason %s for %s and %s elsewhere, want one reason per rule", key, rule, reason, ref, first)
			}
			reasons[rule] = reason
		}
		if str(ex, "policyVersion") != str(rec, "policyVersion") {
			t.Errorf("assembly %s: explain %s got policy %q, want %q", key, ref, str(ex, "policyVersion"), str(rec, "policyVersion"))
		}
		if path, _ := ex["provenancePath"].([]any); len(path) == 0 {
			t.Errorf("assembly %s: explain %s has no provenance path", key, ref)
		}
	}
	rep := h.must(200, "POST", "/v1/assemblies/"+id+"/replay", nil)
	if rep["identical"] != true {
		t.Errorf("assembly %s: replay differs: %v", key, rep["differences"])
	}
}
