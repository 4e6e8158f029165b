package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

func TestResolve(t *testing.T) {
	all := Versions()
	if len(all) < 2 {
		t.Fatalf("got %d versions, want at least default and strict-freshness", len(all))
	}
	byName := map[string]Version{}
	for _, v := range all {
		byName[v.Name] = v
	}
	cases := []struct {
		name     string
		nameOrID string
		wantName string
	}{
		{"empty is the default", "", "default"},
		{"by name: default", "default", "default"},
		{"by name: strict-freshness", "strict-freshness", "strict-freshness"},
		{"by id: default", byName["default"].ID, "default"},
		{"by id: strict-freshness", byName["strict-freshness"].ID, "strict-freshness"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Resolve(tc.nameOrID)
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if v.Name != tc.wantName || v.ID != byName[tc.wantName].ID {
				t.Errorf("got %s (%s), want %s (%s)", v.Name, v.ID, tc.wantName, byName[tc.wantName].ID)
			}
		})
	}
}

func TestResolveUnknown(t *testing.T) {
	for _, nameOrID := range []string{"nope", "Default", "default@000000000000", " default"} {
		t.Run(nameOrID, func(t *testing.T) {
			v, err := Resolve(nameOrID)
			if err == nil {
				t.Fatalf("got %s and no error, want an invalid error", v.ID)
			}
			if got := model.KindOf(err); got != model.KindInvalid {
				t.Errorf("got kind %q, want %q", got, model.KindInvalid)
			}
			var e *model.Error
			if !errors.As(err, &e) || e.Field != "policyVersion" {
				t.Errorf("got error %#v, want field %q", err, "policyVersion")
			}
			if !reflect.DeepEqual(v, Version{}) {
				t.Errorf("got version %+v, want the zero version", v)
			}
		})
	}
}

func TestVersionIDs(t *testing.T) {
	all := Versions()
	if all[0].Name != "default" {
		t.Errorf("got first version %q, want %q", all[0].Name, "default")
	}
	seen := map[string]string{}
	for _, v := range all {
		pattern := regexp.MustCompile(`^` + regexp.QuoteMeta(v.Name) + `@[0-9a-f]{12}$`)
		if !pattern.MatchString(v.ID) {
			t.Errorf("%s: got id %q, want name@ and 12 hex digits of content hash", v.Name, v.ID)
		}
		if got := contentID(v); got != v.ID {
			t.Errorf("%s: got content id %q, want the version's id %q", v.Name, got, v.ID)
		}
		hash := v.ID[strings.Index(v.ID, "@")+1:]
		if prev, ok := seen[hash]; ok {
			t.Errorf("%s: got the same content hash as %s, want versions to differ", v.Name, prev)
		}
		seen[hash] = v.Name
	}
}

func TestContentIDFollowsContent(t *testing.T) {
	base := mustResolve(t, "")
	cases := []struct {
		name     string
		change   func(*Version)
		wantSame bool
	}{
		{"the id field itself is not content", func(v *Version) { v.ID = "something-else" }, true},
		{"window size", func(v *Version) { v.WindowMessages++ }, false},
		{"stale handling", func(v *Version) { v.StaleHandling = StaleOmit }, false},
		{"a provider's classes", func(v *Version) {
			v.ProviderClasses = defaultProviders()
			v.ProviderClasses["openrouter"] = append(v.ProviderClasses["openrouter"], "oauth_derived")
		}, false},
		{"a TTL", func(v *Version) {
			v.TTL = map[string]Duration{"volatile": Duration(2 * time.Hour), "bounded": Duration(7 * 24 * time.Hour)}
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := base
			tc.change(&v)
			got := contentID(v)
			if same := got == base.ID; same != tc.wantSame {
				t.Errorf("got id %q against %q (same %v), want same %v", got, base.ID, same, tc.wantSame)
			}
		})
	}
	if again := mustResolve(t, ""); !reflect.DeepEqual(again, base) {
		t.Errorf("got the default version changed by a test, want it immutable")
	}
}

func TestVersionsIsACopy(t *testing.T) {
	vs := Versions()
	vs[0] = Version{Name: "tampered"}
	if v := mustResolve(t, ""); v.Name != "default" {
		t.Errorf("got default %q after changing Versions()'s slice, want %q", v.Name, "default")
	}
}

func TestVersionSettings(t *testing.T) {
	cases := []struct {
		name      string
		wantStale string
	}{
		{"default", StaleMark},
		{"strict-freshness", StaleOmit},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := mustResolve(t, tc.name)
			if v.StaleHandling != tc.wantStale {
				t.Errorf("got stale handling %q, want %q", v.StaleHandling, tc.wantStale)
			}
			if v.RehydrationBytes != 32<<10 {
				t.Errorf("got rehydration bytes %d, want %d", v.RehydrationBytes, 32<<10)
			}
			if v.ConflictHandling != "separate" {
				t.Errorf("got conflict handling %q, want %q", v.ConflictHandling, "separate")
			}
			if v.WindowMessages <= 0 || v.DefaultTokenBudget <= 0 {
				t.Errorf("got window %d and default budget %d, want both positive", v.WindowMessages, v.DefaultTokenBudget)
			}
			ttls := []struct {
				class  string
				want   time.Duration
				wantOK bool
			}{
				{"volatile", time.Hour, true},
				{"bounded", 7 * 24 * time.Hour, true},
				{"session", 0, false},
				{"durable", 0, false},
				{"permanent", 0, false},
			}
			for _, tt := range ttls {
				if got, ok := v.TTLOf(tt.class); got != tt.want || ok != tt.wantOK {
					t.Errorf("TTLOf(%q): got (%v, %v), want (%v, %v)", tt.class, got, ok, tt.want, tt.wantOK)
				}
			}
		})
	}
}

func TestMayReceive(t *testing.T) {
	v := mustResolve(t, "")
	cases := []struct {
		provider, class string
		want            bool
	}{
		{"openai", "public", true},
		{"openai", "internal", true},
		{"openai", "user_private", true},
		{"openai", "oauth_derived", true},
		{"anthropic", "oauth_derived", true},
		{"openrouter", "oauth_derived", false},
		{"google", "oauth_derived", false},
		{"openrouter", "user_private", true},
		{"openai", "google_derived", false},
		{"openai", "secret", false},
		{"anthropic", "secret", false},
		{"openai", "unheard-of", false},
		{"openai", "", false},
		{"acme-llm", "public", false},
		{"", "public", false},
		{"OpenAI", "public", false},
	}
	for _, tc := range cases {
		t.Run(tc.provider+"/"+tc.class, func(t *testing.T) {
			if got := v.MayReceive(tc.provider, tc.class); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestZeroRetentionProvidersReceiveOAuth(t *testing.T) {
	for _, v := range Versions() {
		for _, p := range v.ZeroRetention {
			if !v.MayReceive(p, "oauth_derived") {
				t.Errorf("%s: got zero-retention provider %q refused oauth_derived, want it allowed", v.Name, p)
			}
		}
	}
}

func TestNeverSend(t *testing.T) {
	v := mustResolve(t, "")
	cases := []struct {
		class string
		want  bool
	}{
		{"secret", true},
		{"google_derived", false},
		{"public", false},
		{"", false},
	}
	for _, tc := range cases {
		t.Run(tc.class, func(t *testing.T) {
			if got := v.NeverSend(tc.class); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	for provider := range v.ProviderClasses {
		if v.MayReceive(provider, "secret") {
			t.Errorf("got provider %q allowed secret, want no provider to receive it", provider)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    Duration
		wantErr bool
	}{
		{"hours", `"1h0m0s"`, Duration(time.Hour), false},
		{"short form", `"168h"`, Duration(7 * 24 * time.Hour), false},
		{"not a string", `3600`, 0, true},
		{"not a duration", `"an hour"`, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var d Duration
			err := json.Unmarshal([]byte(tc.in), &d)
			if (err != nil) != tc.wantErr {
				t.Fatalf("got error %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && d != tc.want {
				t.Errorf("got %v, want %v", time.Duration(d), time.Duration(tc.want))
			}
		})
	}
	b, err := json.Marshal(Duration(90 * time.Minute))
	if err != nil || string(b) != `"1h30m0s"` {
		t.Errorf("got %s, %v, want %q, nil", b, err, `"1h30m0s"`)
	}
}

func TestVersionJSONRoundTrip(t *testing.T) {
	for _, v := range Versions() {
		t.Run(v.Name, func(t *testing.T) {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			var back Version
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if !reflect.DeepEqual(back, v) {
				t.Errorf("got %+v, want %+v", back, v)
			}
			if got := contentID(back); got != v.ID {
				t.Errorf("got content id %q after a round trip, want %q", got, v.ID)
			}
		})
	}
}

func TestVersionString(t *testing.T) {
	v := mustResolve(t, "strict-freshness")
	if s := v.String(); !strings.Contains(s, v.ID) || !strings.Contains(s, v.Description) {
		t.Errorf("got %q, want it to name %q and its description", s, v.ID)
	}
}

func TestDefine(t *testing.T) {
	base := mustResolve(t, "")
	rules := *base.Promotion
	rules.Summarizer = &Summarizer{Provider: "openai", Model: "gpt-4.1-mini"}
	v := base
	v.Name, v.ID, v.Promotion = "summarised", "", &rules
	got := Define(v)
	if want := contentID(got); got.ID != want || !strings.HasPrefix(got.ID, "summarised@") {
		t.Errorf("got id %q, want %q", got.ID, want)
	}
	v.Promotion = base.Promotion
	v.Name = base.Name
	if same := Define(v); same.ID != base.ID {
		t.Errorf("got id %q for the default's content, want the default's %q", same.ID, base.ID)
	}
	for _, e := range Versions() {
		if e.Promotion != nil && e.Promotion.Summarizer != nil {
			t.Errorf("%s: got a summarizer %v, want none in an embedded version", e.ID, e.Promotion.Summarizer)
		}
	}
}

func TestSummarizerFor(t *testing.T) {
	base := mustResolve(t, "")
	with := func(provider string) Version {
		v := base
		rules := *base.Promotion
		rules.Summarizer = &Summarizer{Provider: provider, Model: "m"}
		v.Promotion = &rules
		return v
	}
	noPromotion := base
	noPromotion.Promotion = nil
	cases := []struct {
		name  string
		v     Version
		class string
		want  bool
	}{
		{"no summarizer configured", base, "internal", false},
		{"no promotion rules", noPromotion, "internal", false},
		{"a class its provider receives", with("local"), "internal", true},
		{"a class its provider may not receive", with("local"), "oauth_derived", false},
		{"a zero-retention provider receives oauth-derived data", with("openai"), "oauth_derived", true},
		{"secret is never sent", with("openai"), "secret", false},
		{"an unknown class fails closed", with("openai"), "medical", false},
		{"a provider no version names receives nothing", with("somewhere"), "public", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := tc.v.SummarizerFor(tc.class)
			if ok != tc.want {
				t.Fatalf("got ok %v, want %v", ok, tc.want)
			}
			if ok && s != *tc.v.Promotion.Summarizer {
				t.Errorf("got summarizer %v, want %v", s, *tc.v.Promotion.Summarizer)
			}
		})
	}
}

// A version keeps every traced record, samples its sampleRate of the others by id (the same
// for every server), and keeps DESIGN's defaults when it names none.
func TestRecordKeeping(t *testing.T) {
	var v Version
	if k := v.RecordKeeping("asm_1", true); k.Kept != model.KeptTraced || k.KeepPerBranch != DefaultRecords.KeepPerBranch {
		t.Errorf("a traced record under the defaults: %+v", k)
	}
	sampled := 0
	for i := range 20_000 {
		k := v.RecordKeeping(fmt.Sprintf("asm_%d", i), false)
		if k.Kept == model.KeptSampled {
			sampled++
		}
		if again := v.RecordKeeping(fmt.Sprintf("asm_%d", i), false); again != k {
			t.Fatalf("asm_%d: %+v, then %+v", i, k, again)
		}
	}
	if rate := float64(sampled) / 20_000; rate < 0.045 || rate > 0.055 {
		t.Errorf("sampled %.4f of the records, want %.2f", rate, DefaultRecords.SampleRate)
	}
	v.Records = &Records{KeepPerBranch: 7, SampleRate: 0}
	for i := range 1000 {
		if k := v.RecordKeeping(fmt.Sprintf("asm_%d", i), false); k.Kept != "" || k.KeepPerBranch != 7 {
			t.Fatalf("sampleRate 0: %+v", k)
		}
	}
	v.Records.SampleRate = 1
	if k := v.RecordKeeping("asm_x", false); k.Kept != model.KeptSampled {
		t.Errorf("sampleRate 1: %+v", k)
	}
}

func TestDeriveChecksRecords(t *testing.T) {
	for _, bad := range []string{`{"keepPerBranch": -1, "sampleRate": 0.1}`, `{"keepPerBranch": 5, "sampleRate": 1.5}`, `{"keep": 5}`} {
		_, err := Derive(Embedded().Default(), "x", map[string]json.RawMessage{"records": json.RawMessage(bad)})
		var me *model.Error
		if !errors.As(err, &me) || me.Field != "records" {
			t.Errorf("records %s: got %v, want an error naming records", bad, err)
		}
	}
	v, err := Derive(Embedded().Default(), "x", map[string]json.RawMessage{"records": json.RawMessage(`{"keepPerBranch": 5, "sampleRate": 0.5}`)})
	if err != nil || v.Records == nil || *v.Records != (Records{KeepPerBranch: 5, SampleRate: 0.5}) || v.ID == Embedded().Default().ID {
		t.Errorf("records 5/0.5: %+v, %v", v.Records, err)
	}
}
