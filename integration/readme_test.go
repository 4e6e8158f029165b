package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeSession is what the README's runnable blocks hold: the script they make when pasted
// one after another, and the sample output they show.
type readmeSession struct {
	script  string
	samples []string
}

// readSession collects every ```sh block of the README marked `<!-- session -->`. A `# `
// line right under a command (or under another such line) is what the command prints; a
// comment after a blank line is a note.
func readSession(t *testing.T, readme string) readmeSession {
	t.Helper()
	blocks := regexp.MustCompile("(?s)<!-- session -->\n```sh\n(.*?)```").FindAllStringSubmatch(readme, -1)
	if len(blocks) == 0 {
		t.Fatal("the README marks no block <!-- session -->")
	}
	var s readmeSession
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b[1])
		underCommand := false
		for _, line := range strings.Split(b[1], "\n") {
			switch {
			case strings.HasPrefix(line, "# ") && underCommand:
				s.samples = append(s.samples, strings.TrimPrefix(line, "# "))
			case strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#"):
				underCommand = false
			default:
				underCommand = true
			}
		}
	}
	s.script = strings.Join(parts, "\n")
	return s
}

// samplePattern reads a sample line as a pattern of the whole output line: `…` stands for
// anything (an id, a time, a count), the rest is literal.
func samplePattern(sample string) *regexp.Regexp {
	parts := strings.Split(sample, "…")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// The README's example sessions run when pasted: every marked block, in order, in one bash
// against ctxgraph built from cmd/ctxgraph and started as `make run` starts it (no keys
// configured, so it makes the development key in .ctxgraph/dev-api-key of its working
// directory, where the session reads it), with the echo provider. Each sample output line
// the README shows is matched, in order, by a line the session printed.
func TestREADMESessionRuns(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's session needs %s: %v", tool, err)
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	session := readSession(t, string(readme))
	if len(session.samples) < 10 {
		t.Fatalf("found %d sample output lines in the README's session; it shows more", len(session.samples))
	}
	const readmeBase = "B=http://127.0.0.1:8080"
	if !strings.Contains(session.script, readmeBase) {
		t.Fatalf("the session does not set %s", readmeBase)
	}

	dir := t.TempDir()
	h := newHarness(t)
	srv := h.startServerIn(dir, buildServer(t), "CTXGRAPH_API_KEYS=", "CTXGRAPH_BLOB_DIR="+filepath.Join(dir, "blobs"))
	if _, err := os.Stat(filepath.Join(dir, ".ctxgraph", "dev-api-key")); err != nil {
		t.Fatalf("the server kept no development key where the README reads it: %v", err)
	}
	script := "set -e -o pipefail\n" + strings.Replace(session.script, readmeBase, "B="+srv.base, 1)
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the README's session failed: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), out)
	}
	if _, err := os.Stat(filepath.Join(dir, "result.json")); err != nil {
		t.Errorf("the session wrote no result.json: %v", err)
	}

	// The README's OpenAI SDK example runs as shown, with the pinned SDK, against the
	// same server: its answer comes from ctxgraph's assembly, and its headers name it.
	python, _ := dropInClients(t)
	example := regexp.MustCompile("(?s)```python\n(.*?)```").FindStringSubmatch(string(readme))
	if example == nil {
		t.Fatal("the README shows no Python example")
	}
	py := exec.Command(python, "-c", strings.Replace(example[1], "http://127.0.0.1:8080", srv.base, 1))
	py.Dir = dir
	pyOut, err := py.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's Python example failed: %v\n%s", err, pyOut)
	}
	if !regexp.MustCompile(`(?m)^\[echo provider.*"Hello!"\n` + `asm_\S+ \d+/\d+$`).Match(pyOut) {
		t.Errorf("the README's Python example printed %q, want the echo answer, then its assembly and tokens", pyOut)
	}

	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	next := 0
	for _, sample := range session.samples {
		pattern := samplePattern(sample)
		found := -1
		for i := next; i < len(lines); i++ {
			if pattern.MatchString(lines[i]) {
				found = i
				break
			}
		}
		if found < 0 {
			t.Fatalf("the README shows\n  %s\nbut no later line of the session's output matches it; the output from line %d:\n%s",
				sample, next+1, strings.Join(lines[next:], "\n"))
		}
		next = found + 1
	}
}
