// Package policies keeps the policy versions of accounts (DESIGN §8): it resolves a
// request's version for an account through the versions the account created and stored,
// the effective embedded versions (policy.Catalog) and the retired ones; it stores every
// version an assembly records under, so that a replay does not depend on the binary still
// holding it; and it creates versions and sets an account's default.
package policies

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// Service resolves and keeps accounts' policy versions over a store (policy.Library).
type Service struct {
	Store   model.PolicyStore
	Catalog policy.Catalog

	mu sync.Mutex
	// stored holds the versions known to be stored, by account and id: a version is
	// immutable, so what was stored once is read or written once per process.
	stored map[[2]string]policy.Version
	// defaults holds each account's default as last read or set, for DefaultTTL: every
	// assembly and every tool result resolves it, and a read each time doubled the cost of
	// a result's write. A default set on another server is seen within DefaultTTL.
	defaults map[string]cachedDefault
}

// DefaultTTL is how long a server trusts the account default it read last.
const DefaultTTL = 2 * time.Second

type cachedDefault struct {
	id   string
	read time.Time
}

var _ policy.Library = (*Service)(nil)

// New returns a service over store and the catalog of the effective embedded versions.
func New(store model.PolicyStore, catalog policy.Catalog) *Service {
	return &Service{Store: store, Catalog: catalog, stored: map[[2]string]policy.Version{}, defaults: map[string]cachedDefault{}}
}

// Resolve returns the version nameOrID names for the account: see policy.Resolver.
func (s *Service) Resolve(ctx context.Context, accountID, nameOrID string) (policy.Version, error) {
	switch {
	case nameOrID == "":
		id, err := s.accountDefault(ctx, accountID)
		if err != nil || id == "" {
			return s.Catalog.Default(), err
		}
		return s.Recorded(ctx, accountID, id)
	case strings.Contains(nameOrID, "@"):
		// An id names one content wherever it is found: the catalog's, without a read.
		if v, ok := s.Catalog.Lookup(nameOrID); ok {
			return v, nil
		}
		return s.Recorded(ctx, accountID, nameOrID)
	}
	own, err := s.Store.AccountPolicies(ctx, accountID)
	if err != nil {
		return policy.Version{}, err
	}
	for i := len(own) - 1; i >= 0; i-- {
		if own[i].Name == nameOrID {
			return s.decode(accountID, own[i])
		}
	}
	if v, ok := s.Catalog.Lookup(nameOrID); ok {
		return v, nil
	}
	return policy.Version{}, s.Catalog.Unknown("policyVersion", nameOrID)
}

// Recorded returns the version of a recorded id, from the account's stored versions first.
func (s *Service) Recorded(ctx context.Context, accountID, id string) (policy.Version, error) {
	if v, ok := s.known(accountID, id); ok {
		return v, nil
	}
	p, err := s.Store.StoredPolicy(ctx, accountID, id)
	switch {
	case err == nil:
		return s.decode(accountID, p)
	case model.KindOf(err) != model.KindNotFound:
		return policy.Version{}, err
	}
	if v, ok := s.Catalog.Lookup(id); ok && v.ID == id {
		return v, nil
	}
	return policy.Version{}, s.Catalog.Unknown("policyVersion", id)
}

// Keep stores v for the account, once.
func (s *Service) Keep(ctx context.Context, accountID string, v policy.Version) error {
	if _, ok := s.known(accountID, v.ID); ok {
		return nil
	}
	if _, _, err := s.save(ctx, accountID, v, model.PolicyOriginEmbedded); err != nil {
		return err
	}
	s.remember(accountID, v)
	return nil
}

// List lists the versions the account sees: see policy.Library.
func (s *Service) List(ctx context.Context, accountID string) ([]policy.Listed, error) {
	def, err := s.Resolve(ctx, accountID, "")
	if err != nil {
		return nil, err
	}
	own, err := s.Store.AccountPolicies(ctx, accountID)
	if err != nil {
		return nil, err
	}
	var out []policy.Listed
	listed := false
	add := func(v policy.Version, source string) {
		out = append(out, policy.Listed{Version: v, Source: source, Default: v.ID == def.ID})
		listed = listed || v.ID == def.ID
	}
	for _, v := range s.Catalog.Versions() {
		add(v, policy.SourceEmbedded)
	}
	for _, p := range own {
		v, err := s.decode(accountID, p)
		if err != nil {
			return nil, err
		}
		add(v, policy.SourceAccount)
	}
	if !listed {
		add(def, policy.SourceStored)
	}
	return out, nil
}

// Create defines and stores a version of the account: see policy.Library.
func (s *Service) Create(ctx context.Context, accountID, name, basedOn string, settings map[string]json.RawMessage) (policy.Listed, bool, error) {
	base, err := s.Resolve(ctx, accountID, basedOn)
	if err != nil {
		return policy.Listed{}, false, renamed(err, "basedOn")
	}
	v, err := policy.Derive(base, name, settings)
	if err != nil {
		return policy.Listed{}, false, err
	}
	created, err := s.saveAccount(ctx, accountID, v)
	if err != nil {
		return policy.Listed{}, false, err
	}
	def, err := s.Resolve(ctx, accountID, "")
	if err != nil {
		return policy.Listed{}, false, err
	}
	return policy.Listed{Version: v, Source: policy.SourceAccount, Default: def.ID == v.ID}, created, nil
}

// SetDefault makes a version the account's default: see policy.Library.
func (s *Service) SetDefault(ctx context.Context, accountID, nameOrID string) (policy.Listed, error) {
	v, err := s.Resolve(ctx, accountID, nameOrID)
	if err != nil {
		return policy.Listed{}, err
	}
	// An embedded version is stored first: the default must resolve after an upgrade or a
	// change of the providers file, which change the embedded ids.
	if err := s.Keep(ctx, accountID, v); err != nil {
		return policy.Listed{}, err
	}
	if err := s.Store.SetDefaultPolicy(ctx, accountID, v.ID); err != nil {
		return policy.Listed{}, err
	}
	s.mu.Lock()
	s.defaults[accountID] = cachedDefault{id: v.ID, read: time.Now()}
	s.mu.Unlock()
	source := policy.SourceStored
	if p, err := s.Store.StoredPolicy(ctx, accountID, v.ID); err == nil && p.Origin == model.PolicyOriginAccount {
		source = policy.SourceAccount
	} else if c, ok := s.Catalog.Lookup(v.Name); ok && c.ID == v.ID {
		source = policy.SourceEmbedded
	}
	return policy.Listed{Version: v, Source: source, Default: true}, nil
}

// saveAccount stores a version the account created; created is false when the account
// held that content already.
func (s *Service) saveAccount(ctx context.Context, accountID string, v policy.Version) (bool, error) {
	_, created, err := s.save(ctx, accountID, v, model.PolicyOriginAccount)
	if err == nil {
		s.remember(accountID, v)
	}
	return created, err
}

func (s *Service) save(ctx context.Context, accountID string, v policy.Version, origin string) (model.StoredPolicy, bool, error) {
	def, err := json.Marshal(v)
	if err != nil {
		return model.StoredPolicy{}, false, model.Internal("encoding a policy version", err)
	}
	return s.Store.SavePolicy(ctx, accountID, model.StoredPolicy{ID: v.ID, Name: v.Name, Definition: string(def), Origin: origin})
}

// decode reads a stored version. Its id is the one it was stored under, whatever a later
// ctxgraph would hash its definition to: that is the id its assemblies recorded.
func (s *Service) decode(accountID string, p model.StoredPolicy) (policy.Version, error) {
	if v, ok := s.known(accountID, p.ID); ok {
		return v, nil
	}
	var v policy.Version
	if err := json.Unmarshal([]byte(p.Definition), &v); err != nil {
		return policy.Version{}, model.Internal("decoding the stored policy version "+p.ID, err)
	}
	v.ID = p.ID
	s.remember(accountID, v)
	return v, nil
}

// accountDefault is the id of the account's default version ("" when it set none), read at
// most once per DefaultTTL.
func (s *Service) accountDefault(ctx context.Context, accountID string) (string, error) {
	s.mu.Lock()
	c, ok := s.defaults[accountID]
	s.mu.Unlock()
	if ok && time.Since(c.read) < DefaultTTL {
		return c.id, nil
	}
	id, err := s.Store.DefaultPolicy(ctx, accountID)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.defaults[accountID] = cachedDefault{id: id, read: time.Now()}
	s.mu.Unlock()
	return id, nil
}

func (s *Service) known(accountID, id string) (policy.Version, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.stored[[2]string{accountID, id}]
	return v, ok
}

func (s *Service) remember(accountID string, v policy.Version) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stored[[2]string{accountID, v.ID}] = v
}

// renamed is err naming field when it is an invalid error naming policyVersion: a
// version named by basedOn is unknown as basedOn.
func renamed(err error, field string) error {
	var e *model.Error
	if errors.As(err, &e) && e.Kind == model.KindInvalid && e.Field == "policyVersion" {
		c := *e
		c.Field = field
		return &c
	}
	return err
}
