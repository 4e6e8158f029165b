package cypher

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestEveryQueryFileIsNamedAndParameterised(t *testing.T) {
	names := QueryNames()
	if len(names) == 0 {
		t.Fatal("no embedded queries")
	}
	for _, name := range names {
		text, err := queryText(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Account scoping: every query that touches tenant data names $accountId; the
		// exceptions are schema bookkeeping, blob reference counting (blobs are shared
		// content-addressed files, never returned to a client), the bare round trip and the
		// scheduler's read of what is due (ids and times of every account's schedules, each
		// then claimed and run under its own account, never returned to a client), and the
		// lease keeper's statements, which serve every account a process holds runs of:
		// renewing the runs and keys its own requests hold (found by their ids, under its
		// holder name or claim) and ending every account's runs whose lease lapsed (their
		// ids go to the log, never to a client); and the sweeps' leases and their finding of
		// the branches whose assembly records may be trimmed (each then trimmed under its
		// own account, TrimAssemblyRecords); and the list of erased accounts, which every
		// server refuses (ids, never returned to a client).
		switch name {
		case "MigrationApplied", "RecordMigration", "ForgetMigration", "ShowConstraints", "ShowIndexes", "UnreferencedBlobRefs", "RoundTrip",
			"UpcomingSchedules", "RenewLeases", "EndLapsedRuns", "TakeSweepLease", "AdvanceSweepLease", "ReleaseSweepLease", "BranchesWithNewAssemblies", "ExpiredArtifacts", "ErasedAccounts":
			continue
		}
		if !strings.Contains(text, "$accountId") {
			t.Errorf("%s does not filter by $accountId", name)
		}
	}
}

func TestMigrationsAreOrderedAndIdempotent(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if i > 0 && ms[i-1].Name >= m.Name {
			t.Errorf("migration %s is out of order", m.Name)
		}
		for _, stmt := range m.Statements {
			// Schema statements say IF NOT EXISTS; a data statement (a backfill) sets only
			// the property whose absence it matches on.
			if !strings.Contains(stmt, "IF NOT EXISTS") && !guardedBackfill(stmt) {
				t.Errorf("%s: statement is not idempotent: %s", m.Name, stmt)
			}
		}
	}
}

var backfill = regexp.MustCompile(`WHERE (\w+)\.(\w+) IS NULL .*\{ SET (\w+)\.(\w+) = [^,}]+(, (\w+)\.(\w+) = [^,}]+)? \}`)

// guardedBackfill reports whether stmt sets only properties that its WHERE requires to be
// absent (the first one) or that are set together with it.
func guardedBackfill(stmt string) bool {
	m := backfill.FindStringSubmatch(stmt)
	return m != nil && m[1] == m[3] && m[2] == m[4] && (m[6] == "" || m[6] == m[1])
}

// A query's `// include:` lines are replaced by their parts without their headers and
// comments (and a part's own includes in turn), so ConversationRecords and BeginTurn run the
// same read, the Whole* statements read each record as they do, and a part is no query of
// its own.
func TestQueryPartsAreIncluded(t *testing.T) {
	for _, name := range QueryNames() {
		text, err := queryText(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, line := range strings.Split(text, "\n") {
			if l := strings.TrimSpace(line); strings.HasPrefix(l, "// include:") || strings.HasPrefix(l, "// part:") {
				t.Errorf("%s still holds %q", name, line)
			}
		}
	}
	delta := []string{"ConversationRecords", "BeginTurn", "ClaimRunStep"}
	whole := []string{"WholeMessages", "WholeCalls", "WholeArtifacts", "WholeMemories", "WholeRuns"}
	parts := map[string][]string{
		"ConversationChanges":  delta,
		"HeldKey":              {"BeginTurn", "RecordChain"},
		"ConversationBranches": {"ConversationRecords", "ConversationHead"},
		"HeadRecord":           {"ConversationRecords", "ConversationHead"},
		"MessageRecords":       slices.Concat(delta, []string{"WholeMessages"}),
		"CallRecords":          slices.Concat(delta, []string{"WholeCalls"}),
		"ArtifactRecords":      slices.Concat(delta, []string{"WholeArtifacts"}),
		"MemoryRecords":        slices.Concat(delta, []string{"WholeMemories"}),
		"RunRecords":           slices.Concat(delta, []string{"WholeRuns"}),
		"CheckpointRecords":    slices.Concat(delta, []string{"WholeRuns"}),
		"SkillsRecords":        slices.Concat(delta, []string{"WholeRuns"}),
		"AccountBranches":      whole,
		"RecordBatches":        whole,
	}
	for part, users := range parts {
		text, err := queryFiles.ReadFile("queries/parts/" + part + ".cypher")
		if err != nil {
			t.Fatal(err)
		}
		body, err := withParts(partBody(string(text)))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range users {
			if q, _ := queryText(name); !strings.Contains(q, body) {
				t.Errorf("%s does not hold the part %s", name, part)
			}
		}
		if _, err := queryText(part); err == nil {
			t.Errorf("the part %s is a query of its own", part)
		}
	}
}
