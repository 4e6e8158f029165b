// Package policy holds ctxgraph's assembly policies: immutable, named versions and the pure
// functions that judge each candidate record of an assembly. Nothing here reads a clock,
// the graph or the network: the same version over the same snapshot decides the same way,
// which is what makes an assembly replayable.
package policy

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// Stale handling settings.
const (
	StaleMark = "mark"
	StaleOmit = "omit"
)

// Version is one immutable policy definition. Its ID carries a hash of its content, so two
// different definitions never share an id.
type Version struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Description says what the version is for.
	Description string `json:"description"`
	// ProviderClasses lists the privacy classes each provider may receive in full. A
	// provider or class not listed is restricted (fail closed).
	ProviderClasses map[string][]string `json:"providerClasses"`
	// ZeroRetention names the providers trusted with oauth-derived data.
	ZeroRetention []string `json:"zeroRetentionProviders"`
	// NeverSent lists classes that reach no provider in any form, not even a safe summary.
	NeverSent []string `json:"neverSent"`
	// TTL is the default time to live of each freshness class; a class absent here never
	// goes stale by age (durable, permanent; session ends with its run).
	TTL map[string]Duration `json:"ttl"`
	// StaleHandling is "mark" (include with a stale marker) or "omit".
	StaleHandling string `json:"staleHandling"`
	// WindowMessages is how many of the lineage's latest user/assistant messages stay as
	// messages.
	WindowMessages int `json:"windowMessages"`
	// RehydrationBytes caps the raw artifact bytes one assembly may include.
	RehydrationBytes int64 `json:"rehydrationBytes"`
	// ConflictHandling is "separate": conflicting memories stay separate records, each
	// marked, never resolved by recency.
	ConflictHandling string `json:"conflictHandling"`
	// DefaultTokenBudget applies when a request names none.
	DefaultTokenBudget int `json:"defaultTokenBudget"`
	// BudgetPriorities is the order in which the budget is filled.
	BudgetPriorities []string `json:"budgetPriorities"`
	// Promotion decides the memories the runtime derives (DESIGN §7); nil derives none.
	// It is left out of the content when nil, so that versions defined before it keep
	// their ids and the assemblies recorded under them keep replaying.
	Promotion *Promotion `json:"promotion,omitempty"`
	// Recall offers the built-in ctxgraph_recall tool on the generation path; nil offers
	// nothing.
	Recall *Recall `json:"recall,omitempty"`
	// Records says how much of the assemblies' records the store keeps (DESIGN §10); nil
	// keeps DefaultRecords. It decides nothing an assembly sends, and is left out of the
	// content when nil, so that the versions defined before it keep their ids.
	Records *Records `json:"records,omitempty"`
	// Retention gives the retention of a tool's results by the tool's name, where neither
	// the result nor the tool's declaration names one (DESIGN §10); nil keeps every body.
	// Left out of the content when nil, as Records.
	Retention *RetentionRules `json:"retention,omitempty"`
}

// RetentionRules are a version's retention classes by tool name.
type RetentionRules struct {
	Tools map[string]model.Retention `json:"tools"`
}

// RetentionFor is the version's retention for the results of tool; nil keeps them.
func (v Version) RetentionFor(tool string) *model.Retention {
	if v.Retention == nil {
		return nil
	}
	if r, ok := v.Retention.Tools[tool]; ok {
		return &r
	}
	return nil
}

// Records is a version's keeping of assembly records: every assembly keeps its counts; the
// full record is kept for the latest KeepPerBranch assemblies of each branch and for a
// SampleRate fraction of the others (traced assemblies and those of failed runs whole).
type Records struct {
	KeepPerBranch int     `json:"keepPerBranch"`
	SampleRate    float64 `json:"sampleRate"`
}

// DefaultRecords is the keeping of a version that names none (DESIGN §10).
var DefaultRecords = Records{KeepPerBranch: 20, SampleRate: 0.05}

// RecordKeeping is what the store keeps of the record of the assembly id made under v:
// whole when traced or sampled (a fraction SampleRate of ids, by their sha256, so that
// every server decides the same for one id), else while among its branch's latest.
func (v Version) RecordKeeping(id string, traced bool) model.RecordKeeping {
	r := DefaultRecords
	if v.Records != nil {
		r = *v.Records
	}
	k := model.RecordKeeping{KeepPerBranch: r.KeepPerBranch}
	sum := sha256.Sum256([]byte(id))
	switch {
	case traced:
		k.Kept = model.KeptTraced
	case float64(binary.BigEndian.Uint64(sum[:8]))/(1<<64) < r.SampleRate:
		k.Kept = model.KeptSampled
	}
	return k
}

// Promotion is a version's promotion rules: when and how a memory is derived from a tool
// result recorded without client memories, and from a user message that left the window.
type Promotion struct {
	// Extractor names the extractor that derives memories, as name/version.
	Extractor string `json:"extractor"`
	// VerbatimTokens: a result whose memory line fits this many tokens is quoted whole.
	VerbatimTokens int `json:"verbatimTokens"`
	// DigestTokens bounds the digest of a larger result.
	DigestTokens int `json:"digestTokens"`
	// FreshnessClass is the class of a derived memory whose tool declares none.
	FreshnessClass string `json:"freshnessClass"`
	// ToolFreshness gives the class by tool name, where the tool's declaration gives none.
	ToolFreshness map[string]string `json:"toolFreshness,omitempty"`
	// UserMessageValues is how many values stated in a user message that left the window
	// stand in for it (identifiers, figures, names); 0 derives nothing from messages.
	UserMessageValues int `json:"userMessageValues"`
	// Summarizer, when set, names a configured provider and model that summarises derived
	// memories as memory_extraction runs.
	Summarizer *Summarizer `json:"summarizer,omitempty"`
}

// Summarizer is the provider and model of the optional model summariser.
type Summarizer struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// Recall is a version's recall settings.
type Recall struct {
	// MaxRounds is how many recalls in a row a run may make before the tool is withdrawn
	// for that model call.
	MaxRounds int `json:"maxRounds"`
}

// PromotionRule is the promotionPolicy a derived memory records: the rule that made it.
const PromotionRule = model.PromotionStructural

// FreshnessFor is the freshness class of a memory derived from a result of tool, when the
// tool declared none.
func (p *Promotion) FreshnessFor(tool string) string {
	if c, ok := p.ToolFreshness[tool]; ok {
		return c
	}
	return p.FreshnessClass
}

// Duration is a time.Duration that reads and writes as a Go duration string.
type Duration time.Duration

// MarshalJSON writes the duration as a string such as "1h0m0s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// defaultProviders are the providers the default policy knows; every other is restricted.
func defaultProviders() map[string][]string {
	base := []string{"public", "internal", "user_private"}
	zero := append(append([]string{}, base...), "oauth_derived")
	m := map[string][]string{"openai": zero, "anthropic": zero}
	for _, p := range []string{"google", "openrouter", "mistral", "cohere", "groq", "deepseek", "xai", "azure_openai", "bedrock", "together", "fireworks", "ollama", "local"} {
		m[p] = base
	}
	return m
}

func baseVersion(name, description, stale string) Version {
	return Version{
		Name:            name,
		Description:     description,
		ProviderClasses: defaultProviders(),
		ZeroRetention:   []string{"anthropic", "openai"},
		NeverSent:       []string{"secret"},
		TTL: map[string]Duration{
			"volatile": Duration(time.Hour),
			"bounded":  Duration(7 * 24 * time.Hour),
		},
		StaleHandling:      stale,
		WindowMessages:     8,
		RehydrationBytes:   32 << 10,
		ConflictHandling:   "separate",
		DefaultTokenBudget: 8000,
		BudgetPriorities: []string{"instructions", "recovery", "current_message", "window_messages",
			"exact_evidence", "checkpoint", "skills", "memories"},
	}
}

// derived is the promotion and recall of the embedded versions: memories derived from every
// result recorded without client memories, and recall offered. docs/assembly.md says how the
// token settings were chosen.
func derived(v Version) Version {
	v.Promotion = &Promotion{Extractor: "structural/1", VerbatimTokens: 160, DigestTokens: 240,
		FreshnessClass: model.DefaultFreshnessClass, UserMessageValues: 12}
	v.Recall = &Recall{MaxRounds: 3}
	return v
}

// EchoClasses are the classes the built-in echo provider receives: every class but secret,
// since it sends nothing anywhere (DESIGN §8).
var EchoClasses = []string{"public", "internal", "user_private", "oauth_derived", "google_derived"}

// withEcho lists the built-in echo provider in v: it receives every class but secret and,
// retaining nothing, is a zero-retention provider.
func withEcho(v Version) Version {
	v.ProviderClasses["echo"] = append([]string(nil), EchoClasses...)
	v.ZeroRetention = []string{"anthropic", "echo", "openai"}
	return v
}

// versions are the embedded policy versions, by name. The first is the default.
var versions = defined(
	withEcho(derived(baseVersion("default", "Stale memories are included with a stale marker naming their revalidation tools; memories are derived from tool results and recall is offered; the built-in echo provider receives every class but secret.", StaleMark))),
	withEcho(derived(baseVersion("strict-freshness", "Stale memories are omitted (reason stale) instead of marked; memories are derived from tool results and recall is offered; the built-in echo provider receives every class but secret.", StaleOmit))),
)

// retired are versions that were once embedded under a name that now names another: they
// resolve by their full id only, so that the assemblies recorded under them still replay
// (and every version an assembly recorded is stored with it as well: DESIGN §8). The
// oldest come first.
var retired = defined(
	// Until memories were derived and recall offered.
	baseVersion("default", "Stale memories are included with a stale marker naming their revalidation tools.", StaleMark),
	baseVersion("strict-freshness", "Stale memories are omitted (reason stale) instead of marked.", StaleOmit),
	// Until echo was listed: it received nothing in full.
	derived(baseVersion("default", "Stale memories are included with a stale marker naming their revalidation tools; memories are derived from tool results and recall is offered.", StaleMark)),
	derived(baseVersion("strict-freshness", "Stale memories are omitted (reason stale) instead of marked; memories are derived from tool results and recall is offered.", StaleOmit)),
)

// defined names each version by its content.
func defined(vs ...Version) []Version {
	for i := range vs {
		vs[i] = Define(vs[i])
	}
	return vs
}

// contentID names a version by its name and a hash of its content.
func contentID(v Version) string {
	v.ID = ""
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return v.Name + "@" + hex.EncodeToString(sum[:6])
}

// Define names a version by its content: it returns v with the id contentID gives it, so
// that a version a caller builds (a test's, or later an account's) is named as an embedded
// one would be and two different definitions never share an id.
func Define(v Version) Version {
	v.ID = contentID(v)
	return v
}

// embedded is the catalog of the embedded versions as written.
var embedded = Embedded()

// Versions lists every embedded version as written, the default first.
func Versions() []Version { return embedded.Versions() }

// Resolve returns the embedded version named by a name or a full id, or the retired one of
// that id; "" is the default. An unknown version is a KindInvalid error naming the
// policyVersion field. A server resolves through a Resolver, which knows the accounts' own
// versions and the configured providers' trust.
func Resolve(nameOrID string) (Version, error) {
	return embedded.Resolve(context.Background(), "", nameOrID)
}

// Receives lists the privacy classes provider may receive in full, least restricted first;
// empty (never nil) when it receives none.
func (v Version) Receives(provider string) []string {
	return append([]string{}, v.ProviderClasses[provider]...)
}

// RetainsNothing reports whether the version lists provider as zero-retention.
func (v Version) RetainsNothing(provider string) bool {
	return model.Contains(v.ZeroRetention, provider)
}

// MayReceive reports whether provider may receive data of privacy class in full.
func (v Version) MayReceive(provider, class string) bool {
	return model.Contains(v.ProviderClasses[provider], class)
}

// SummarizerFor returns the model summariser of the version's promotion rules that may
// summarise a result of privacy class (DESIGN §7): only when one is configured and its
// provider may receive the class in full; a class that is never sent is never summarised.
func (v Version) SummarizerFor(class string) (Summarizer, bool) {
	if v.Promotion == nil || v.Promotion.Summarizer == nil || v.NeverSend(class) {
		return Summarizer{}, false
	}
	s := *v.Promotion.Summarizer
	return s, s.Provider != "" && v.MayReceive(s.Provider, class)
}

// NeverSend reports whether a class may not reach any provider in any form.
func (v Version) NeverSend(class string) bool { return model.Contains(v.NeverSent, class) }

// TTLOf returns the default time to live of a freshness class, and whether it has one.
func (v Version) TTLOf(class string) (time.Duration, bool) {
	d, ok := v.TTL[class]
	return time.Duration(d), ok
}

// String names the version.
func (v Version) String() string { return fmt.Sprintf("%s (%s)", v.ID, v.Description) }
