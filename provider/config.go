// Package provider calls model providers for the generation path (DESIGN §6 "Providers"):
// OpenAI-compatible chat completions and Anthropic Messages through the vendors' own Go
// SDKs, which bring their timeouts, retries (429, 5xx and dropped connections, honouring
// Retry-After) and streaming, and the built-in echo provider for offline development.
package provider

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// Kinds of provider: the wire protocol each speaks.
const (
	KindOpenAI    = "openai"
	KindAnthropic = "anthropic"
	KindEcho      = "echo"
)

// EchoName is the provider built in when no providers file is given.
const EchoName = "echo"

// Defaults of a provider entry.
const (
	DefaultTimeout    = 120 * time.Second
	DefaultMaxRetries = 2
)

// Entry is one provider of the providers file, as written.
type Entry struct {
	Name       string   `yaml:"name"`
	Kind       string   `yaml:"kind"`
	BaseURL    string   `yaml:"baseURL"`
	APIKeyEnv  string   `yaml:"apiKeyEnv"`
	Timeout    string   `yaml:"timeout"`
	MaxRetries *int     `yaml:"maxRetries"`
	Models     []string `yaml:"models"`
	// Receives lists the privacy classes the provider may receive in full (DESIGN §8); an
	// entry without it keeps what the policy version lists for the provider, or receives
	// public only when the version lists nothing.
	Receives []string `yaml:"receives"`
	// ZeroRetention says the provider retains nothing it is sent.
	ZeroRetention bool `yaml:"zeroRetention"`
}

// File is the providers file: YAML (or JSON) with a top-level `providers` list.
type File struct {
	Providers []Entry `yaml:"providers"`
}

// Config is one provider, validated: what the adapters are built from. Key is the value of
// its apiKeyEnv variable, read once at start; it is never logged or recorded.
type Config struct {
	Name       string
	Kind       string
	BaseURL    string
	Key        string
	Timeout    time.Duration
	MaxRetries int
	Models     []string
	// Receives is the entry's receives, nil when it names none.
	Receives      []string
	ZeroRetention bool
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// Load reads and validates a providers file; getenv resolves each entry's apiKeyEnv. Its
// errors name the file, the entry and the field.
func Load(path string, getenv func(string) string) ([]Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("providers file: %w", err)
	}
	cfgs, err := Parse(data, getenv)
	if err != nil {
		return nil, fmt.Errorf("providers file %s: %w", path, err)
	}
	return cfgs, nil
}

// Parse validates a providers file's contents.
func Parse(data []byte, getenv func(string) string) ([]Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a providers file: %w", err)
	}
	if len(f.Providers) == 0 {
		return nil, errors.New("providers: the list is empty; give at least one provider")
	}
	seen := map[string]bool{}
	out := make([]Config, 0, len(f.Providers))
	for i, e := range f.Providers {
		at := fmt.Sprintf("providers[%d]", i)
		if e.Name != "" {
			at = fmt.Sprintf("providers[%d] (%s)", i, e.Name)
		}
		c, err := validate(e, getenv)
		if err != nil {
			return nil, fmt.Errorf("%s.%w", at, err)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("%s.name: %q is given twice", at, c.Name)
		}
		seen[c.Name] = true
		out = append(out, c)
	}
	return out, nil
}

// fieldError names the field of an entry that is wrong.
func fieldError(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
}

func validate(e Entry, getenv func(string) string) (Config, error) {
	c := Config{Name: e.Name, Kind: e.Kind, BaseURL: e.BaseURL, Timeout: DefaultTimeout, MaxRetries: DefaultMaxRetries, Models: e.Models,
		Receives: e.Receives, ZeroRetention: e.ZeroRetention}
	if !namePattern.MatchString(e.Name) {
		return c, fieldError("name", "%q must be 1 to 64 lower-case letters, digits, '_', '.' or '-'", e.Name)
	}
	switch e.Kind {
	case KindOpenAI, KindAnthropic, KindEcho:
	case "":
		return c, fieldError("kind", "is required: openai, anthropic or echo")
	default:
		return c, fieldError("kind", "%q is not one of openai, anthropic, echo", e.Kind)
	}
	if e.BaseURL != "" {
		u, err := url.Parse(e.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fieldError("baseURL", "%q is not an http(s) URL", e.BaseURL)
		}
	} else if e.Kind != KindEcho {
		return c, fieldError("baseURL", "is required: up to and including /v1 for openai (e.g. https://api.openai.com/v1), the origin for anthropic (e.g. https://api.anthropic.com)")
	}
	if e.APIKeyEnv != "" {
		c.Key = getenv(e.APIKeyEnv)
		if c.Key == "" {
			return c, fieldError("apiKeyEnv", "the environment variable %s is not set or empty", e.APIKeyEnv)
		}
	}
	if e.Timeout != "" {
		d, err := time.ParseDuration(e.Timeout)
		if err != nil || d <= 0 {
			return c, fieldError("timeout", "%q is not a positive duration such as 60s", e.Timeout)
		}
		c.Timeout = d
	}
	if e.MaxRetries != nil {
		if *e.MaxRetries < 0 || *e.MaxRetries > 10 {
			return c, fieldError("maxRetries", "%d is not between 0 and 10", *e.MaxRetries)
		}
		c.MaxRetries = *e.MaxRetries
	}
	for j, m := range e.Models {
		if m == "" {
			return c, fieldError(fmt.Sprintf("models[%d]", j), "is empty")
		}
	}
	if err := policy.Receivable(e.Receives); err != nil {
		return c, fieldError("receives", "%v", err)
	}
	return c, nil
}

// Builtin is the provider configuration used when none is given: the echo provider.
func Builtin() []Config { return []Config{{Name: EchoName, Kind: KindEcho}} }

// Trust is what the providers say of their trust, for the policy versions to fold in
// (policy.Trusted).
func Trust(cfgs []Config) []policy.ProviderTrust {
	out := make([]policy.ProviderTrust, 0, len(cfgs))
	for _, c := range cfgs {
		out = append(out, policy.ProviderTrust{Name: c.Name, Receives: c.Receives, ZeroRetention: c.ZeroRetention})
	}
	return out
}

// Describe is each provider as GET /v1/providers and the start-up log show it: its name,
// kind, base URL host and models, never its key.
func Describe(cfgs []Config) []model.ProviderInfo {
	out := make([]model.ProviderInfo, 0, len(cfgs))
	for _, c := range cfgs {
		info := model.ProviderInfo{Name: c.Name, Kind: c.Kind, Models: append([]string{}, c.Models...)}
		if u, err := url.Parse(c.BaseURL); err == nil {
			info.Host = u.Host
		}
		out = append(out, info)
	}
	return out
}

// Registry holds the configured providers by name.
type Registry struct {
	byName map[string]model.Provider
	models map[string][]string
	first  string
}

// NewRegistry builds every configured provider; without configs it holds the echo provider.
func NewRegistry(cfgs []Config) *Registry {
	if len(cfgs) == 0 {
		cfgs = Builtin()
	}
	r := &Registry{byName: map[string]model.Provider{}, models: map[string][]string{}, first: cfgs[0].Name}
	for _, c := range cfgs {
		var p model.Provider
		switch c.Kind {
		case KindOpenAI:
			p = NewOpenAI(c)
		case KindAnthropic:
			p = NewAnthropic(c)
		default:
			p = Echo{name: c.Name}
		}
		r.byName[c.Name] = p
		r.models[c.Name] = c.Models
	}
	return r
}

// Provider returns the named provider.
func (r *Registry) Provider(name string) (model.Provider, bool) {
	p, ok := r.byName[name]
	return p, ok
}

// Default is the provider of participants that name none: the first configured.
func (r *Registry) Default() string { return r.first }

// Model resolves the model a participant of provider asks for: its own, else the first of
// the provider's allow-list; ok is false when the allow-list does not hold it or no model
// can be named.
func (r *Registry) Model(provider, asked string) (string, bool) {
	allowed := r.models[provider]
	if asked == "" {
		if len(allowed) > 0 {
			return allowed[0], true
		}
		if p, ok := r.byName[provider]; ok && p.Kind() == KindEcho {
			return "echo", true
		}
		return "", false
	}
	return asked, len(allowed) == 0 || model.Contains(allowed, asked)
}
