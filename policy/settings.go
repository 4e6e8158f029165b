package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ctxgraph/ctxgraph/extract"
	"github.com/ctxgraph/ctxgraph/model"
)

// NamePattern is what a version's name, a provider's name and a summariser's model must
// match: a version's id is its name, '@' and a hash, so a name holds no '@'.
var NamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// settingFields maps each setting's JSON name, as GET /v1/policies shows it, to its field
// of Version: every field but id and name.
var settingFields = func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeFor[Version]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "id" && name != "name" {
			m[name] = i
		}
	}
	return m
}()

// Settings lists the names of the settings a new version may change, sorted.
func Settings() []string {
	out := make([]string, 0, len(settingFields))
	for name := range settingFields {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Derive defines the version named name that is base with the given settings changed
// (POST /v1/policies, DESIGN §8): each setting replaces the base's value whole, `null`
// turns an optional one (promotion, recall) off. It returns the version with its content
// id, or a KindInvalid error naming the field that is wrong: name, an unknown setting or a
// setting whose value is not valid.
func Derive(base Version, name string, settings map[string]json.RawMessage) (Version, error) {
	if !NamePattern.MatchString(name) {
		return Version{}, model.Invalid("name", "%q must be 1 to 64 lower-case letters, digits, '_', '.' or '-'", name)
	}
	v := base
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		i, ok := settingFields[k]
		if !ok {
			return Version{}, model.Invalid(k, "%q is not a policy setting (settings: %s)", k, strings.Join(Settings(), ", "))
		}
		// The field is replaced, not merged into: decoding into a map or a pointer the base
		// shares would add to it, and change the base.
		f := reflect.ValueOf(&v).Elem().Field(i)
		f.Set(reflect.Zero(f.Type()))
		dec := json.NewDecoder(bytes.NewReader(settings[k]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(f.Addr().Interface()); err != nil {
			return Version{}, model.Invalid(k, "%s: %v", k, strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	v.Name = name
	if v.ProviderClasses != nil {
		for p, cs := range v.ProviderClasses {
			v.ProviderClasses[p] = byRank(cs)
		}
	}
	if err := Validate(v); err != nil {
		return Version{}, err
	}
	return Define(v), nil
}

// Validate checks every setting of v, returning a KindInvalid error naming the first that
// is wrong.
func Validate(v Version) error {
	invalid := model.Invalid
	if len(v.Description) > 1000 {
		return invalid("description", "description: at most 1000 bytes")
	}
	if !slices.Contains(v.NeverSent, "secret") {
		return invalid("neverSent", "neverSent: secret reaches no provider in any form, and must be listed")
	}
	for _, c := range v.NeverSent {
		if model.PrivacyRank(c) == len(model.PrivacyClasses) {
			return invalid("neverSent", "neverSent: %q is not a privacy class (%s)", c, strings.Join(model.PrivacyClasses, ", "))
		}
	}
	if len(v.ProviderClasses) == 0 {
		return invalid("providerClasses", "providerClasses: name at least one provider and the classes it receives")
	}
	for p, cs := range v.ProviderClasses {
		if !NamePattern.MatchString(p) {
			return invalid("providerClasses", "providerClasses: %q is not a provider name", p)
		}
		for _, c := range cs {
			if err := receivable(c); err != nil {
				return invalid("providerClasses", "providerClasses.%s: %v", p, err)
			}
			if slices.Contains(v.NeverSent, c) {
				return invalid("providerClasses", "providerClasses.%s: %s is never sent (neverSent)", p, c)
			}
		}
	}
	for _, p := range v.ZeroRetention {
		if !NamePattern.MatchString(p) {
			return invalid("zeroRetentionProviders", "zeroRetentionProviders: %q is not a provider name", p)
		}
	}
	for class, d := range v.TTL {
		if class != "volatile" && class != "bounded" {
			return invalid("ttl", "ttl: %q has no time to live; only volatile and bounded go stale by age", class)
		}
		if d <= 0 {
			return invalid("ttl", "ttl.%s: %s is not a positive duration", class, time.Duration(d))
		}
	}
	if v.StaleHandling != StaleMark && v.StaleHandling != StaleOmit {
		return invalid("staleHandling", "staleHandling: %q is not mark or omit", v.StaleHandling)
	}
	if v.WindowMessages < 1 || v.WindowMessages > 1000 {
		return invalid("windowMessages", "windowMessages: %d is not between 1 and 1000", v.WindowMessages)
	}
	if v.RehydrationBytes < 0 || v.RehydrationBytes > 16<<20 {
		return invalid("rehydrationBytes", "rehydrationBytes: %d is not between 0 and 16 MiB", v.RehydrationBytes)
	}
	if v.ConflictHandling != "separate" {
		return invalid("conflictHandling", "conflictHandling: %q is not separate, the only handling (never last-write-wins)", v.ConflictHandling)
	}
	if v.DefaultTokenBudget < 1 || v.DefaultTokenBudget > 2_000_000 {
		return invalid("defaultTokenBudget", "defaultTokenBudget: %d is not between 1 and 2000000", v.DefaultTokenBudget)
	}
	if fixed := versions[0].BudgetPriorities; !slices.Equal(v.BudgetPriorities, fixed) {
		return invalid("budgetPriorities", "budgetPriorities: the assembler fills the budget in one order, %s", strings.Join(fixed, ", "))
	}
	if err := validPromotion(v.Promotion); err != nil {
		return err
	}
	if v.Recall != nil && (v.Recall.MaxRounds < 1 || v.Recall.MaxRounds > 10) {
		return invalid("recall", "recall.maxRounds: %d is not between 1 and 10", v.Recall.MaxRounds)
	}
	if r := v.Retention; r != nil {
		for tool, rule := range r.Tools {
			if err := rule.Check("retention"); err != nil {
				e := err.(*model.Error)
				e.Message = "retention.tools." + tool + ": " + e.Message
				return e
			}
		}
	}
	if r := v.Records; r != nil {
		if r.KeepPerBranch < 0 || r.KeepPerBranch > 100_000 {
			return invalid("records", "records.keepPerBranch: %d is not between 0 and 100000", r.KeepPerBranch)
		}
		if !(r.SampleRate >= 0 && r.SampleRate <= 1) {
			return invalid("records", "records.sampleRate: %v is not between 0 and 1", r.SampleRate)
		}
	}
	return nil
}

// receivable reports why a provider may not be trusted with class in full: an unknown
// class, or secret, which no provider receives.
func receivable(class string) error {
	switch {
	case class == "secret":
		return errors.New("secret is never sent to a provider")
	case model.PrivacyRank(class) == len(model.PrivacyClasses):
		return fmt.Errorf("%q is not a privacy class (%s)", class, strings.Join(model.PrivacyClasses[:len(model.PrivacyClasses)-1], ", "))
	}
	return nil
}

// Receivable checks the classes a provider is said to receive (a providers file's
// `receives`): each a known privacy class, none secret, none twice.
func Receivable(classes []string) error {
	for i, c := range classes {
		if err := receivable(c); err != nil {
			return err
		}
		if slices.Contains(classes[:i], c) {
			return fmt.Errorf("%s is given twice", c)
		}
	}
	return nil
}

func validPromotion(p *Promotion) error {
	if p == nil {
		return nil
	}
	bad := func(format string, args ...any) error {
		return model.Invalid("promotion", "promotion."+format, args...)
	}
	switch {
	case p.Extractor != versions[0].Promotion.Extractor:
		return bad("extractor: %q is not %s, the extractor ctxgraph has", p.Extractor, versions[0].Promotion.Extractor)
	case p.VerbatimTokens < 1 || p.VerbatimTokens > 4096:
		return bad("verbatimTokens: %d is not between 1 and 4096", p.VerbatimTokens)
	case p.DigestTokens < 1 || p.DigestTokens > 8192:
		return bad("digestTokens: %d is not between 1 and 8192", p.DigestTokens)
	case !slices.Contains(model.FreshnessClasses, p.FreshnessClass):
		return bad("freshnessClass: %q is not one of %s", p.FreshnessClass, strings.Join(model.FreshnessClasses, ", "))
	case p.UserMessageValues < 0 || p.UserMessageValues > extract.MaxStatedValues:
		return bad("userMessageValues: %d is not between 0 and %d", p.UserMessageValues, extract.MaxStatedValues)
	}
	for tool, class := range p.ToolFreshness {
		if !slices.Contains(model.FreshnessClasses, class) {
			return bad("toolFreshness.%s: %q is not one of %s", tool, class, strings.Join(model.FreshnessClasses, ", "))
		}
	}
	if s := p.Summarizer; s != nil && (!NamePattern.MatchString(s.Provider) || s.Model == "" || len(s.Model) > 200) {
		return bad("summarizer: name a configured provider and a model")
	}
	return nil
}
