package cypher

import (
	"context"
)

// Schema lists the names of the database's constraints and online indexes, so that tests
// and operators can check that the migrations took effect.
func (s *Store) Schema(ctx context.Context) (constraints, indexes []string, err error) {
	if constraints, err = s.showNames(ctx, "ShowConstraints"); err != nil {
		return nil, nil, err
	}
	indexes, err = s.showNames(ctx, "ShowIndexes")
	return constraints, indexes, err
}

// showNames runs a SHOW query; SHOW commands cannot run inside a managed transaction, so it
// uses an auto-commit one.
func (s *Store) showNames(ctx context.Context, query string) ([]string, error) {
	session := s.driver.NewSession(ctx, neo4jSessionConfig(s.database))
	defer session.Close(ctx)
	res, err := session.Run(ctx, mustQuery(query), nil)
	if err != nil {
		return nil, translate(err)
	}
	records, err := res.Collect(ctx)
	if err != nil {
		return nil, translate(err)
	}
	coverage.mark(query)
	var names []string
	for _, r := range records {
		names = append(names, strValue(r, "name"))
	}
	return names, nil
}
