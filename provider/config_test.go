package provider

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestParseValidEntries(t *testing.T) {
	cfgs, err := Parse([]byte(`providers:
  - {name: openai, kind: openai, baseURL: "https://api.openai.com/v1", apiKeyEnv: OAI, models: [gpt-4.1]}
  - {name: anthropic, kind: anthropic, baseURL: "https://api.anthropic.com", apiKeyEnv: ANT, timeout: 30s, maxRetries: 0}
`), env(map[string]string{"OAI": "k1", "ANT": "k2"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 2 || cfgs[0].Key != "k1" || cfgs[0].Timeout != DefaultTimeout || cfgs[0].MaxRetries != DefaultMaxRetries {
		t.Fatalf("defaults: %+v", cfgs[0])
	}
	if cfgs[1].Timeout != 30*time.Second || cfgs[1].MaxRetries != 0 {
		t.Fatalf("explicit settings: %+v", cfgs[1])
	}
	trusted, err := Parse([]byte(`providers:
  - {name: vllm, kind: openai, baseURL: "http://127.0.0.1:8000/v1", receives: [public, internal], zeroRetention: true}
  - {name: echo, kind: echo}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := trusted[0]; !reflect.DeepEqual(got.Receives, []string{"public", "internal"}) || !got.ZeroRetention {
		t.Errorf("got receives %v, zero retention %v; want public, internal and true", got.Receives, got.ZeroRetention)
	}
	if got := trusted[1]; got.Receives != nil || got.ZeroRetention {
		t.Errorf("got receives %#v, zero retention %v for an entry naming neither; want nil and false", got.Receives, got.ZeroRetention)
	}
	// JSON is YAML.
	if _, err := Parse([]byte(`{"providers":[{"name":"vllm","kind":"openai","baseURL":"http://127.0.0.1:8000/v1"}]}`), env(nil)); err != nil {
		t.Fatal(err)
	}
}

// Each mistake is reported with the entry and the field it is in.
func TestParseNamesTheEntryAndField(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{`providers: []`, "providers: the list is empty"},
		{`provider: []`, "field provider not found"},
		{`providers: [{name: x, kind: openai, baseURL: "http://h/v1", apikey: K}]`, "field apikey not found"},
		{`providers: [{kind: openai, baseURL: "http://h/v1"}]`, "providers[0].name"},
		{`providers: [{name: a, kind: gemini, baseURL: "http://h"}]`, `providers[0] (a).kind: "gemini" is not one of`},
		{`providers: [{name: a, kind: openai}]`, "providers[0] (a).baseURL: is required"},
		{`providers: [{name: a, kind: openai, baseURL: "ftp://h"}]`, "providers[0] (a).baseURL"},
		{`providers: [{name: a, kind: openai, baseURL: "http://h/v1", apiKeyEnv: MISSING}]`, "providers[0] (a).apiKeyEnv: the environment variable MISSING is not set"},
		{`providers: [{name: a, kind: openai, baseURL: "http://h/v1", timeout: soon}]`, "providers[0] (a).timeout"},
		{`providers: [{name: a, kind: openai, baseURL: "http://h/v1", maxRetries: 11}]`, "providers[0] (a).maxRetries"},
		{`providers: [{name: a, kind: echo}, {name: a, kind: echo}]`, `providers[1] (a).name: "a" is given twice`},
		{`providers: [{name: a, kind: echo, receives: [public, secret]}]`, "providers[0] (a).receives: secret is never sent to a provider"},
		{`providers: [{name: a, kind: echo, receives: [confidential]}]`, `providers[0] (a).receives: "confidential" is not a privacy class`},
		{`providers: [{name: a, kind: echo, receives: [public, public]}]`, "providers[0] (a).receives: public is given twice"},
		{`providers: [{name: a, kind: echo, zeroRetention: maybe}]`, "cannot unmarshal"},
	} {
		_, err := Parse([]byte(c.file), env(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.file, err, c.want)
		}
	}
}

func TestRegistryDefaultsToEcho(t *testing.T) {
	r := NewRegistry(nil)
	p, ok := r.Provider(EchoName)
	if !ok || p.Kind() != KindEcho || r.Default() != EchoName {
		t.Fatalf("no echo provider without a file")
	}
	if m, ok := r.Model(EchoName, ""); !ok || m != "echo" {
		t.Fatalf("echo's model: %q %v", m, ok)
	}
	if _, ok := r.Provider("openai"); ok {
		t.Fatal("an unconfigured provider was found")
	}
}
