package policy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mutant is one rule of judge.go turned off: the text it replaces and what replaces it.
type mutant struct {
	name, from, to string
}

// The rules that keep data from a provider or a participant that may not see it, and that
// keep recovery and supersession state right. Each mutant fails open; the suite must notice.
var mutants = []mutant{
	{"a raw artifact ignores its privacy class",
		"\tcase !v.MayReceive(req.Provider, c.PrivacyClass):\n\t\tvd.Decision = omit(c, model.PolicyPrivacy",
		"\tcase false:\n\t\tvd.Decision = omit(c, model.PolicyPrivacy"},
	{"a memory ignores its privacy class",
		"\tif !v.MayReceive(req.Provider, c.PrivacyClass) {\n\t\tif c.Memory.SafeSummary",
		"\tif false {\n\t\tif c.Memory.SafeSummary"},
	{"a never-sent class goes as its safe summary",
		"\t\tif c.Memory.SafeSummary == \"\" || v.NeverSend(c.PrivacyClass) {",
		"\t\tif c.Memory.SafeSummary == \"\" {"},
	{"a recovery call's arguments are sent whatever their class",
		"\t\tif (c.PrivacyClass != \"\" || len(c.Call.ArtifactIDs) > 0) && !v.MayReceive(req.Provider, c.PrivacyClass) {",
		"\t\tif false {"},
	{"a recovery call's arguments with an unclassed outcome are sent",
		"(c.PrivacyClass != \"\" || len(c.Call.ArtifactIDs) > 0) && !v.MayReceive",
		"c.PrivacyClass != \"\" && !v.MayReceive"},
	{"another participant's unresolved call is shown",
		"\t\t\tvd.Decision = omit(c, model.PolicyRecovery, RuleOtherParticipant, model.ReasonParticipant)\n\t\t\treturn vd",
		"\t\t\t_ = 0"},
	{"participant-private records are shared",
		"\t\tif !shared {",
		"\t\tif !shared && false {"},
	{"a child's unpromoted state reaches its parent",
		"\tif c.OwnerRunParentID != \"\" && !c.Promoted && !ownRun",
		"\tif false && c.OwnerRunParentID != \"\" && !c.Promoted && !ownRun"},
	{"a superseded memory stays",
		"\t\tif eligible(newer) {",
		"\t\tif false && eligible(newer) {"},
	{"a failed call that was retried stays unresolved",
		"\t\treturn len(c.Call.RetriedBy) == 0",
		"\t\treturn true"},
}

// mutantEnv marks the test runs of a mutant, which must not start mutants of their own.
const mutantEnv = "CTXGRAPH_POLICY_MUTANT"

// Each mutant of judge.go, built with go's -overlay so that the tree is never touched, must
// make the package's other tests fail: a rule the tests would not miss is a rule that is not
// tested.
func TestEveryRuleMutantIsCaught(t *testing.T) {
	if os.Getenv(mutantEnv) != "" {
		t.Skip("running inside a mutant")
	}
	if testing.Short() {
		t.Skip("builds the package once per mutant")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build mutants with")
	}
	source, err := filepath.Abs("judge.go")
	if err != nil {
		t.Fatal(err)
	}
	original, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i, m := range mutants {
		t.Run(m.name, func(t *testing.T) {
			if strings.Count(string(original), m.from) != 1 {
				t.Fatalf("judge.go no longer holds the rule exactly once; update the mutant:\n%s", m.from)
			}
			mutated := filepath.Join(dir, "judge.go."+string(rune('a'+i)))
			if err := os.WriteFile(mutated, []byte(strings.Replace(string(original), m.from, m.to, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{source: mutated}})
			overlayFile := mutated + ".json"
			if err := os.WriteFile(overlayFile, overlay, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(goBin, "test", "-count=1", "-overlay="+overlayFile, ".")
			cmd.Env = append(os.Environ(), mutantEnv+"=1")
			out, err := cmd.CombinedOutput()
			switch {
			case err == nil:
				t.Errorf("the tests pass with this rule turned off")
			case strings.Contains(string(out), "[build failed]") || strings.Contains(string(out), "[setup failed]"):
				t.Errorf("the mutant does not build, so it proves nothing:\n%s", out)
			case !strings.Contains(string(out), "--- FAIL"):
				t.Errorf("the mutant's tests failed without a failing test:\n%s", out)
			}
		})
	}
}
