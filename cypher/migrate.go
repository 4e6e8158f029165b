package cypher

import (
	"context"
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
)

// migrationFiles are the schema migrations, applied in file-name order. Every statement is
// idempotent (IF NOT EXISTS), and an applied migration is recorded so that it is not re-run.
//
//go:embed migrations/*.cypher
var migrationFiles embed.FS

// Migration is one embedded schema migration.
type Migration struct {
	Name       string
	Statements []string
}

// Migrations returns the embedded migrations in the order they are applied.
func Migrations() ([]Migration, error) {
	entries, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var out []Migration
	for _, name := range names {
		body, err := migrationFiles.ReadFile(path.Join("migrations", name))
		if err != nil {
			return nil, err
		}
		m := Migration{Name: strings.TrimSuffix(name, ".cypher")}
		for _, stmt := range strings.Split(string(body), ";") {
			var lines []string
			for _, line := range strings.Split(stmt, "\n") {
				if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "//") {
					lines = append(lines, line)
				}
			}
			if len(lines) > 0 {
				m.Statements = append(m.Statements, strings.Join(lines, "\n"))
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// The statements of the migrations' bookkeeping.
var (
	migrationApplied = newQuery[migrationParams, idRow]("MigrationApplied")
	recordMigration  = newQuery[migrationParams, noRows]("RecordMigration")
	forgetMigration  = newQuery[migrationParams, struct {
		Forgotten int64 `col:"forgotten"`
	}]("ForgetMigration")
)

// migrationParams name a migration.
type migrationParams struct {
	ID string `param:"id"`
}

// Migrate applies the migrations that the database has not recorded yet. Schema statements
// cannot share a transaction with data writes, so each runs in its own auto-commit
// transaction, and the record of the migration is written last.
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	migrations, err := Migrations()
	if err != nil {
		return nil, err
	}
	session := s.driver.NewSession(ctx, neo4jSessionConfig(s.database))
	defer session.Close(ctx)
	var applied []string
	for _, m := range migrations {
		done, err := migrationApplied.inSession(ctx, session, migrationParams{ID: m.Name})
		if err != nil {
			return applied, err
		}
		if len(done) > 0 {
			continue
		}
		for _, stmt := range m.Statements {
			res, err := session.Run(ctx, stmt, nil)
			if err == nil {
				_, err = res.Consume(ctx)
			}
			if err != nil {
				return applied, fmt.Errorf("migration %s: %w", m.Name, translate(err))
			}
		}
		if _, err := recordMigration.inSession(ctx, session, migrationParams{ID: m.Name}); err != nil {
			return applied, err
		}
		applied = append(applied, m.Name)
	}
	return applied, nil
}

// ForgetMigration drops the record of an applied migration, so that the next Migrate
// re-applies it (its statements are idempotent). Operators use it to repair a schema object
// dropped by hand; it reports whether a record was removed.
func (s *Store) ForgetMigration(ctx context.Context, name string) (bool, error) {
	return writeTx(ctx, s, func(t *tx) (bool, error) {
		row, _, err := forgetMigration.one(t, migrationParams{ID: name})
		return row.Forgotten > 0, err
	})
}
