package policy

import (
	"context"
	"encoding/json"
	"slices"
	"sort"

	"github.com/ctxgraph/ctxgraph/model"
)

// ProviderTrust is what the providers file says of one configured provider (DESIGN §8):
// the privacy classes it may receive in full (Receives; nil when the entry names none) and
// whether it retains nothing it is sent.
type ProviderTrust struct {
	Name          string
	Receives      []string
	ZeroRetention bool
}

// Trusted is v with the configured providers' trust folded in, named by its new content
// (the same id when nothing changed). A provider whose entry names `receives` receives
// exactly those classes; one that names none keeps what v lists for it, or receives
// `public` only when v lists nothing (a provider that nothing names fails closed, DESIGN
// §8). A zero-retention provider joins v's zero-retention list.
func Trusted(v Version, trust []ProviderTrust) Version {
	if len(trust) == 0 {
		return v
	}
	classes := make(map[string][]string, len(v.ProviderClasses)+len(trust))
	for p, cs := range v.ProviderClasses {
		classes[p] = slices.Clone(cs)
	}
	zero := slices.Clone(v.ZeroRetention)
	for _, t := range trust {
		switch {
		case t.Receives != nil:
			classes[t.Name] = byRank(t.Receives)
		case classes[t.Name] == nil:
			classes[t.Name] = []string{"public"}
		}
		if t.ZeroRetention && !slices.Contains(zero, t.Name) {
			zero = append(zero, t.Name)
		}
	}
	sort.Strings(zero)
	v.ProviderClasses, v.ZeroRetention = classes, zero
	return Define(v)
}

// byRank orders classes from the least restricted to the most, as model.PrivacyClasses
// does, so that the same classes written in another order make the same version.
func byRank(classes []string) []string {
	out := slices.Clone(classes)
	sort.SliceStable(out, func(i, j int) bool { return model.PrivacyRank(out[i]) < model.PrivacyRank(out[j]) })
	return slices.Compact(out)
}

// Catalog is what a server resolves without reading the graph: the embedded versions with
// the configured providers' trust folded in (the effective versions, the default first),
// the embedded versions as written, and the retired ones. It is a value: build it once at
// start with NewCatalog.
type Catalog struct {
	effective []Version
	byID      map[string]Version
}

// NewCatalog folds the providers' trust into the embedded versions.
func NewCatalog(trust []ProviderTrust) Catalog {
	c := Catalog{byID: map[string]Version{}}
	for _, v := range versions {
		c.effective = append(c.effective, Trusted(v, trust))
	}
	for _, list := range [][]Version{retired, versions, c.effective} {
		for _, v := range list {
			c.byID[v.ID] = v
		}
	}
	return c
}

// Embedded is the catalog of the embedded versions as written, with no provider trust
// folded in.
func Embedded() Catalog { return NewCatalog(nil) }

// Versions lists the effective versions, the default first.
func (c Catalog) Versions() []Version { return slices.Clone(c.effective) }

// Default is the effective default version.
func (c Catalog) Default() Version { return c.effective[0] }

// Lookup finds an effective version by name or id, or any version the catalog holds (an
// embedded one as written, a retired one) by its full id.
func (c Catalog) Lookup(nameOrID string) (Version, bool) {
	if nameOrID == "" {
		return c.Default(), true
	}
	if v, ok := c.byID[nameOrID]; ok {
		return v, true
	}
	for _, v := range c.effective {
		if v.Name == nameOrID {
			return v, true
		}
	}
	return Version{}, false
}

// Unknown is the error of a version that does not resolve, naming field (policyVersion,
// basedOn).
func (c Catalog) Unknown(field, nameOrID string) error {
	names := make([]string, 0, len(c.effective))
	for _, v := range c.effective {
		names = append(names, v.Name)
	}
	sort.Strings(names)
	return model.Invalid(field, "unknown policy version %q (known: %v, and the account's own: GET /v1/policies)", nameOrID, names)
}

// Resolve returns the catalog's version of nameOrID for any account: a catalog knows no
// account's own versions and stores nothing (see Resolver).
func (c Catalog) Resolve(_ context.Context, _ string, nameOrID string) (Version, error) {
	if v, ok := c.Lookup(nameOrID); ok {
		return v, nil
	}
	return Version{}, c.Unknown("policyVersion", nameOrID)
}

// Recorded resolves a recorded version id as Resolve does.
func (c Catalog) Recorded(ctx context.Context, accountID, id string) (Version, error) {
	return c.Resolve(ctx, accountID, id)
}

// Keep stores nothing: a catalog's versions are in the binary.
func (c Catalog) Keep(context.Context, string, Version) error { return nil }

// Resolver resolves the policy version of a request for an account (DESIGN §4 step 1, §8).
// The assembler, the generation path, the promoter and the summariser go through it.
type Resolver interface {
	// Resolve returns the version nameOrID names for the account: one of the account's own
	// versions by name or id, else an embedded one by name or id, else a retired one by id;
	// "" is the account's default (PUT /v1/policies/default), else the embedded default.
	// An unknown version is KindInvalid naming policyVersion; a store that does not answer
	// is KindUnavailable.
	Resolve(ctx context.Context, accountID, nameOrID string) (Version, error)
	// Recorded returns the version of the id an assembly recorded, from the versions stored
	// for the account first, so that a replay does not depend on the binary still holding
	// it. Its errors are Resolve's.
	Recorded(ctx context.Context, accountID, id string) (Version, error)
	// Keep stores v for the account unless it is stored already: an assembly keeps the
	// version it records under (KindUnavailable, KindInternal).
	Keep(ctx context.Context, accountID string, v Version) error
}

var _ Resolver = Catalog{}

// Sources of a listed version.
const (
	// SourceEmbedded: one of the effective embedded versions.
	SourceEmbedded = "embedded"
	// SourceAccount: a version the account created (POST /v1/policies).
	SourceAccount = "account"
	// SourceStored: a version the account stored by using it, no longer embedded (listed
	// only when it is the account's default).
	SourceStored = "stored"
)

// Listed is a version as GET /v1/policies shows it: where it comes from, and whether it is
// the account's default.
type Listed struct {
	Version
	Source  string `json:"source"`
	Default bool   `json:"default"`
}

// Library is the policy versions an account sees and makes: the routes of /v1/policies
// (DESIGN §8).
type Library interface {
	Resolver
	// List lists the effective embedded versions, then the account's own, the oldest first,
	// and the account's default if it is neither (KindUnavailable).
	List(ctx context.Context, accountID string) ([]Listed, error)
	// Create defines the version named name that is the version basedOn names ("" is the
	// account's default) with settings changed, and stores it; created is false when the
	// account holds that content already. KindInvalid names name, basedOn or the setting
	// that is wrong.
	Create(ctx context.Context, accountID, name, basedOn string, settings map[string]json.RawMessage) (v Listed, created bool, err error)
	// SetDefault makes the version nameOrID names the account's default, storing it.
	// KindInvalid names policyVersion.
	SetDefault(ctx context.Context, accountID, nameOrID string) (Listed, error)
}
