package promotion

import (
	"reflect"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// at is the n-th second of the day the sources are recorded.
func at(n int) time.Time { return time.Date(2026, 11, 1, 9, 0, n, 0, time.UTC) }

// src is an internal, participant-visible artifact of seq, recorded at second seq, owned by
// participant "p-<id>" and run "run-<id>"; opts change it.
func src(id string, seq int64, opts ...func(*Source)) Source {
	s := Source{
		ID: id, Seq: seq, CreatedAt: at(int(seq)), PrivacyClass: "internal", Visibility: "participant",
		OwnerParticipantID: "p-" + id, OwnerRunID: "run-" + id,
	}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func privacy(c string) func(*Source)        { return func(s *Source) { s.PrivacyClass = c } }
func visibility(v string) func(*Source)     { return func(s *Source) { s.Visibility = v } }
func created(t time.Time) func(*Source)     { return func(s *Source) { s.CreatedAt = t } }
func shared(ids ...string) func(*Source)    { return func(s *Source) { s.SharedWithParticipants = ids } }
func timePtr(t time.Time) *time.Time        { return &t }
func named(c, v string) model.NewMemory     { return model.NewMemory{PrivacyClass: c, Visibility: v} }
func sources(s ...Source) []Source          { return s }
func sharing(ids ...string) model.NewMemory { return model.NewMemory{SharedWithParticipants: ids} }

func TestInheritOwnerAndRun(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sources   []Source
		wantOwner string
	}{
		{"one source", sources(src("a", 3)), "a"},
		{"the newest by seq, named first", sources(src("b", 9), src("a", 3)), "b"},
		{"the newest by seq, named last", sources(src("a", 3), src("b", 9)), "b"},
		{"the newest by seq, not the latest createdAt", sources(src("a", 3, created(at(50))), src("b", 9)), "b"},
		{"a tie of seq: the one named last", sources(src("a", 5), src("b", 5)), "b"},
		{"a tie of seq named the other way", sources(src("b", 5), src("a", 5)), "a"},
		{"a tie below a newer source", sources(src("c", 7), src("a", 5), src("b", 5)), "c"},
		{"no sources", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Inherit(model.NewMemory{}, tc.sources)
			wantParticipant, wantRun := "", ""
			if tc.wantOwner != "" {
				wantParticipant, wantRun = "p-"+tc.wantOwner, "run-"+tc.wantOwner
			}
			if got.OwnerParticipantID != wantParticipant || got.OwnerRunID != wantRun {
				t.Errorf("got owner %q and run %q, want %q and %q", got.OwnerParticipantID, got.OwnerRunID, wantParticipant, wantRun)
			}
		})
	}
}

// inheritCase is a request, its sources and the value one field of their inheritance
// should take.
type inheritCase struct {
	name    string
	in      model.NewMemory
	sources []Source
	want    string
}

// testInherit runs cases against the field of the inheritance that get reads, named what.
func testInherit(t *testing.T, what string, get func(Inheritance) string, cases []inheritCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := get(Inherit(tc.in, tc.sources)); got != tc.want {
				t.Errorf("got %s %q, want %q", what, got, tc.want)
			}
		})
	}
}

func TestInheritPrivacyClass(t *testing.T) {
	testInherit(t, "privacy class", func(i Inheritance) string { return i.PrivacyClass }, []inheritCase{
		{"one source", model.NewMemory{}, sources(src("a", 1, privacy("oauth_derived"))), "oauth_derived"},
		{"the most restrictive, from the older source", model.NewMemory{},
			sources(src("a", 1, privacy("oauth_derived")), src("b", 2, privacy("internal"))), "oauth_derived"},
		{"the most restrictive, from the newer source", model.NewMemory{},
			sources(src("a", 1, privacy("public")), src("b", 2, privacy("secret"))), "secret"},
		{"equal classes", model.NewMemory{},
			sources(src("a", 1, privacy("user_private")), src("b", 2, privacy("user_private"))), "user_private"},
		{"an unknown class ranks above secret", model.NewMemory{},
			sources(src("a", 1, privacy("secret")), src("b", 2, privacy("medical"))), "medical"},
		{"an unknown class before secret", model.NewMemory{},
			sources(src("a", 1, privacy("medical")), src("b", 2, privacy("secret"))), "medical"},
		{"two unknown classes: the older by seq", model.NewMemory{},
			sources(src("b", 2, privacy("legal")), src("a", 1, privacy("medical"))), "medical"},
		{"two unknown classes of the same seq: the one named first", model.NewMemory{},
			sources(src("a", 1, privacy("legal")), src("b", 1, privacy("medical"))), "legal"},
		{"a source without a class says nothing", model.NewMemory{},
			sources(src("a", 1, privacy("")), src("b", 2, privacy("secret")), src("c", 3, privacy(""))), "secret"},
		{"no source with a class", model.NewMemory{}, sources(src("a", 1, privacy(""))), ""},
		{"the request names a wider class", named("public", ""),
			sources(src("a", 1, privacy("secret"))), "public"},
		{"the request names an unknown class", named("medical", ""),
			sources(src("a", 1, privacy("internal"))), "medical"},
		{"no sources and none named", model.NewMemory{}, nil, ""},
	})
}

func TestInheritVisibility(t *testing.T) {
	testInherit(t, "visibility", func(i Inheritance) string { return i.Visibility }, []inheritCase{
		{"one source", model.NewMemory{}, sources(src("a", 1, visibility("branch"))), "branch"},
		{"the narrowest, from the older source", model.NewMemory{},
			sources(src("a", 1, visibility("participant")), src("b", 2, visibility("conversation"))), "participant"},
		{"the narrowest, from the newer source", model.NewMemory{},
			sources(src("a", 1, visibility("conversation")), src("b", 2, visibility("branch"))), "branch"},
		{"audit is narrower than participant", model.NewMemory{},
			sources(src("a", 1, visibility("participant")), src("b", 2, visibility("audit"))), "audit"},
		{"audit and an unknown visibility tie: the older by seq", model.NewMemory{},
			sources(src("b", 2, visibility("audit")), src("a", 1, visibility("team"))), "team"},
		{"a source without a visibility says nothing", model.NewMemory{},
			sources(src("a", 1, visibility("")), src("b", 2, visibility("branch")), src("c", 3, visibility(""))), "branch"},
		{"no source with a visibility", model.NewMemory{}, sources(src("a", 1, visibility(""))), ""},
		{"the request names a wider visibility", named("", "conversation"),
			sources(src("a", 1, visibility("participant"))), "conversation"},
		{"the request names audit", named("", "audit"),
			sources(src("a", 1, visibility("branch"))), "audit"},
		{"a request naming privacy only still inherits visibility", named("secret", ""),
			sources(src("a", 1, visibility("branch"))), "branch"},
	})
}

func TestInheritSharedWithParticipants(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      model.NewMemory
		sources []Source
		want    []string
	}{
		{"no source shares", model.NewMemory{}, sources(src("a", 1), src("b", 2)), []string{}},
		{"inherited from one source", model.NewMemory{}, sources(src("a", 1, shared("p-x", "p-y"))), []string{"p-x", "p-y"}},
		{"the union of the sources, in seq order, without repeats", model.NewMemory{},
			sources(src("b", 2, shared("p-y", "p-z")), src("a", 1, shared("p-x", "p-y", "p-x"))), []string{"p-x", "p-y", "p-z"}},
		{"given by the request, the sources' ignored", sharing("p-q"),
			sources(src("a", 1, shared("p-x"))), []string{"p-q"}},
		{"given empty by the request: shared with no one", model.NewMemory{SharedWithParticipants: []string{}},
			sources(src("a", 1, shared("p-x"))), []string{}},
		{"given by the request, kept as given", sharing("p-q", "p-q"),
			sources(src("a", 1)), []string{"p-q", "p-q"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Inherit(tc.in, tc.sources).SharedWithParticipants
			if got == nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got sharedWithParticipants %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestInheritSharedWithParticipantsDoesNotAlias(t *testing.T) {
	given := []string{"p-q"}
	sourceList := []string{"p-x"}
	got := Inherit(model.NewMemory{SharedWithParticipants: given}, sources(src("a", 1, shared(sourceList...))))
	got.SharedWithParticipants[0] = "changed"
	inherited := Inherit(model.NewMemory{}, sources(src("a", 1, shared(sourceList...))))
	inherited.SharedWithParticipants[0] = "changed"
	if given[0] != "p-q" || sourceList[0] != "p-x" {
		t.Errorf("got request %v and source %v after changing the result, want them untouched", given, sourceList)
	}
}

func TestInheritObservedAt(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		name    string
		in      model.NewMemory
		sources []Source
		want    time.Time
	}{
		{"the newest source's createdAt", model.NewMemory{}, sources(src("a", 1), src("b", 2)), at(2)},
		{"the latest createdAt, even of an older seq", model.NewMemory{},
			sources(src("a", 1, created(at(40))), src("b", 2, created(at(30)))), at(40)},
		{"a createdAt in another zone, in UTC", model.NewMemory{},
			sources(src("a", 1, created(at(5).In(berlin)))), at(5)},
		{"the request's observedAt", model.NewMemory{ObservedAt: timePtr(at(20))}, sources(src("a", 1)), at(20)},
		{"the request's observedAt before its event time", model.NewMemory{ObservedAt: timePtr(at(20)), At: timePtr(at(25))},
			sources(src("a", 1)), at(20)},
		{"the request's event time", model.NewMemory{At: timePtr(at(25))}, sources(src("a", 1)), at(25)},
		{"the request's time in another zone, in UTC", model.NewMemory{ObservedAt: timePtr(at(20).In(berlin))},
			sources(src("a", 1)), at(20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Inherit(tc.in, tc.sources).ObservedAt
			if !got.Equal(tc.want) || got.Location() != time.UTC {
				t.Errorf("got observedAt %v, want %v in UTC", got, tc.want)
			}
		})
	}
}

func TestInheritFreshnessAndKind(t *testing.T) {
	for _, tc := range []struct {
		name          string
		in            model.NewMemory
		wantFreshness string
		wantKind      string
	}{
		{"the defaults", model.NewMemory{}, model.DefaultFreshnessClass, model.MemoryKindTool},
		{"the request's freshness class", model.NewMemory{FreshnessClass: "volatile"}, "volatile", model.MemoryKindTool},
		{"a derived memory is a tool memory", model.NewMemory{PromotionPolicy: model.PromotionStructural},
			model.DefaultFreshnessClass, model.MemoryKindTool},
		{"a promotion policy naming a report", model.NewMemory{PromotionPolicy: model.MemoryKindReport, FreshnessClass: "durable"},
			"durable", model.MemoryKindReport},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Inherit(tc.in, sources(src("a", 1)))
			if got.FreshnessClass != tc.wantFreshness || got.Kind != tc.wantKind {
				t.Errorf("got freshness %q and kind %q, want %q and %q", got.FreshnessClass, got.Kind, tc.wantFreshness, tc.wantKind)
			}
		})
	}
}

func TestReportPrivacyClass(t *testing.T) {
	for _, tc := range []struct {
		name    string
		named   string
		classes []string
		want    string
	}{
		{"nothing promoted: the default", "", nil, model.DefaultPrivacyClass},
		{"one artifact", "", []string{"internal"}, "internal"},
		{"the strictest of the artifacts", "", []string{"internal", "oauth_derived", "public"}, "oauth_derived"},
		{"an unknown class ranks above secret", "", []string{"secret", "medical"}, "medical"},
		{"two unknown classes: the one named first", "", []string{"legal", "secret", "medical"}, "legal"},
		{"artifacts without a class: the default", "", []string{"", ""}, model.DefaultPrivacyClass},
		{"an artifact without a class says nothing", "", []string{"", "secret", ""}, "secret"},
		{"the promotion names a wider class", "public", []string{"secret"}, "public"},
		{"the promotion names a class, nothing promoted", "internal", nil, "internal"},
		{"the promotion names an unknown class", "medical", []string{"internal"}, "medical"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReportPrivacyClass(tc.named, tc.classes); got != tc.want {
				t.Errorf("got report class %q, want %q", got, tc.want)
			}
		})
	}
}
