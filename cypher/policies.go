package cypher

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

var _ model.PolicyStore = (*Store)(nil)

// The statements of policy versions.
var (
	savePolicy       = newQuery[savePolicyParams, savePolicyRow]("SavePolicy")
	readPolicy       = newQuery[idParams, policyRow]("ReadPolicy")
	accountPolicies  = newQuery[accountPoliciesParams, policyRow]("AccountPolicies")
	setDefaultPolicy = newQuery[setDefaultPolicyParams, idRow]("SetDefaultPolicy")
	defaultPolicy    = newQuery[accountParams, idRow]("DefaultPolicy")
)

type savePolicyParams struct {
	AccountID  string    `param:"accountId"`
	ID         string    `param:"id"`
	Name       string    `param:"name"`
	Definition string    `param:"definition"`
	Origin     string    `param:"origin"`
	Now        time.Time `param:"now"`
}

type savePolicyRow struct {
	P       props `col:"p"`
	Created bool  `col:"created"`
}

type policyRow struct {
	P props `col:"p"`
}

type accountPoliciesParams struct {
	AccountID string `param:"accountId"`
	Origin    string `param:"origin"`
}

type setDefaultPolicyParams struct {
	AccountID string    `param:"accountId"`
	ID        string    `param:"id"`
	Now       time.Time `param:"now"`
}

type accountParams struct {
	AccountID string `param:"accountId"`
}

// SavePolicy stores a policy version of an account unless it holds that id already.
func (s *Store) SavePolicy(ctx context.Context, accountID string, p model.StoredPolicy) (model.StoredPolicy, bool, error) {
	row, found, err := savePolicy.autoOne(ctx, s, neo4j.AccessModeWrite, savePolicyParams{
		AccountID: accountID, ID: p.ID, Name: p.Name, Definition: p.Definition, Origin: p.Origin, Now: s.Now().UTC(),
	})
	if err != nil {
		return model.StoredPolicy{}, false, err
	}
	if !found {
		return model.StoredPolicy{}, false, accountErased(accountID)
	}
	return storedPolicyOf(row.P), row.Created, nil
}

// StoredPolicy reads one stored policy version of an account.
func (s *Store) StoredPolicy(ctx context.Context, accountID, id string) (model.StoredPolicy, error) {
	row, found, err := readPolicy.autoOne(ctx, s, neo4j.AccessModeRead, idParams{ID: id, AccountID: accountID})
	if err != nil {
		return model.StoredPolicy{}, err
	}
	if !found {
		return model.StoredPolicy{}, model.NotFound("policy version", id)
	}
	return storedPolicyOf(row.P), nil
}

// AccountPolicies lists the policy versions an account created, the oldest first.
func (s *Store) AccountPolicies(ctx context.Context, accountID string) ([]model.StoredPolicy, error) {
	rows, err := accountPolicies.autoAll(ctx, s, neo4j.AccessModeRead, accountPoliciesParams{AccountID: accountID, Origin: model.PolicyOriginAccount})
	if err != nil {
		return nil, err
	}
	out := make([]model.StoredPolicy, 0, len(rows))
	for _, r := range rows {
		out = append(out, storedPolicyOf(r.P))
	}
	return out, nil
}

// SetDefaultPolicy makes a stored version the account's default.
func (s *Store) SetDefaultPolicy(ctx context.Context, accountID, id string) error {
	_, found, err := setDefaultPolicy.autoOne(ctx, s, neo4j.AccessModeWrite, setDefaultPolicyParams{AccountID: accountID, ID: id, Now: s.Now().UTC()})
	if err != nil {
		return err
	}
	if !found {
		return model.NotFound("policy version", id)
	}
	return nil
}

// DefaultPolicy returns the id of the account's default version, "" when it set none.
func (s *Store) DefaultPolicy(ctx context.Context, accountID string) (string, error) {
	row, _, err := defaultPolicy.autoOne(ctx, s, neo4j.AccessModeRead, accountParams{AccountID: accountID})
	return row.ID, err
}

func storedPolicyOf(p props) model.StoredPolicy {
	return model.StoredPolicy{ID: p.str("id"), Name: p.str("name"), Definition: p.str("definition"),
		Origin: p.str("origin"), CreatedAt: p.time("createdAt")}
}
