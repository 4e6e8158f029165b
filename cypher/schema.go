package cypher

import (
	"context"
)

// The statements that list the schema: SHOW commands cannot run inside a managed
// transaction, so they run in auto-commit ones (inSession).
var (
	showConstraints = newQuery[noParams, nameRow]("ShowConstraints")
	showIndexes     = newQuery[noParams, nameRow]("ShowIndexes")
)

type nameRow struct {
	Name string `col:"name"`
}

// Schema lists the names of the database's constraints and online indexes, so that tests
// and operators can check that the migrations took effect.
func (s *Store) Schema(ctx context.Context) (constraints, indexes []string, err error) {
	if constraints, err = s.showNames(ctx, showConstraints); err != nil {
		return nil, nil, err
	}
	indexes, err = s.showNames(ctx, showIndexes)
	return constraints, indexes, err
}

// showNames runs a SHOW statement and lists the names it answers.
func (s *Store) showNames(ctx context.Context, q *query[noParams, nameRow]) ([]string, error) {
	session := s.driver.NewSession(ctx, neo4jSessionConfig(s.database))
	defer session.Close(ctx)
	rows, err := q.inSession(ctx, session, noParams{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
	}
	return names, nil
}
