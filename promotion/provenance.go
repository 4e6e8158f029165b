package promotion

import (
	"sort"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// Source is what the rules of a memory read of one of its source artifacts (DESIGN §2): the
// facts an adapter loads before it stores the memory.
type Source struct {
	ID                     string
	Seq                    int64
	CreatedAt              time.Time
	PrivacyClass           string
	Visibility             string
	SharedWithParticipants []string
	OwnerParticipantID     string
	OwnerRunID             string
}

// Inheritance is what a memory made from source artifacts takes from them and from its
// request: the fields an adapter stores beside the request's own.
type Inheritance struct {
	// Kind is the memory's kind: a report when the request's promotionPolicy names one,
	// otherwise a tool memory.
	Kind string
	// OwnerParticipantID and OwnerRunID are those of the newest source.
	OwnerParticipantID string
	OwnerRunID         string
	// PrivacyClass is the request's, otherwise the most restrictive of the sources'.
	PrivacyClass string
	// Visibility is the request's, otherwise the narrowest of the sources'.
	Visibility string
	// SharedWithParticipants is the request's list when it gives one (even empty),
	// otherwise the union of the sources' lists; never nil.
	SharedWithParticipants []string
	// ObservedAt is the request's observedAt, else its event time, else the latest
	// createdAt among the sources, in UTC.
	ObservedAt time.Time
	// FreshnessClass is the request's, otherwise the default class.
	FreshnessClass string
}

// Inherit decides what a memory takes from its sources (DESIGN §2, §3): owner and run from
// the newest source by seq (of sources of the same seq, the one named last), the most
// restrictive privacy class and the narrowest visibility among the sources unless the
// request names its own, the sources' shared participants unless the request lists its
// own, and the time the newest observation was made unless the request says when. Sources
// are in the order the request names them.
func Inherit(in model.NewMemory, sources []Source) Inheritance {
	bySeq := newestLast(sources)
	out := Inheritance{
		Kind: model.MemoryKindTool, PrivacyClass: in.PrivacyClass, Visibility: in.Visibility,
		SharedWithParticipants: append([]string{}, in.SharedWithParticipants...), FreshnessClass: in.FreshnessClass,
	}
	if in.PromotionPolicy == model.MemoryKindReport {
		out.Kind = model.MemoryKindReport
	}
	if out.FreshnessClass == "" {
		out.FreshnessClass = model.DefaultFreshnessClass
	}
	if len(bySeq) > 0 {
		newest := bySeq[len(bySeq)-1]
		out.OwnerParticipantID, out.OwnerRunID = newest.OwnerParticipantID, newest.OwnerRunID
	}
	privacy, visibility := make([]string, len(bySeq)), make([]string, len(bySeq))
	for i, src := range bySeq {
		privacy[i], visibility[i] = src.PrivacyClass, src.Visibility
		if in.SharedWithParticipants == nil {
			out.SharedWithParticipants = union(out.SharedWithParticipants, src.SharedWithParticipants)
		}
		if i == 0 || src.CreatedAt.After(out.ObservedAt) {
			out.ObservedAt = src.CreatedAt.UTC()
		}
	}
	if in.PrivacyClass == "" {
		out.PrivacyClass = strictest(privacy, model.PrivacyRank)
	}
	if in.Visibility == "" {
		out.Visibility = strictest(visibility, model.VisibilityRank)
	}
	switch {
	case in.ObservedAt != nil:
		out.ObservedAt = in.ObservedAt.UTC()
	case in.At != nil:
		out.ObservedAt = in.At.UTC()
	}
	return out
}

// ReportPrivacyClass is the privacy class of a promotion's report (DESIGN §4 promotion):
// the class the promotion names, otherwise the strictest class among the artifacts
// promoted with it (raw evidence the report may quote), otherwise (no artifacts, or none
// with a class) the default class.
// Memories promoted beside the report keep their own classes and do not count here.
func ReportPrivacyClass(named string, artifactClasses []string) string {
	switch {
	case named != "":
		return named
	}
	if class := strictest(artifactClasses, model.PrivacyRank); class != "" {
		return class
	}
	return model.DefaultPrivacyClass
}

// newestLast returns the sources ordered by seq, keeping the order given among sources of
// the same seq, so that the last is the newest.
func newestLast(sources []Source) []Source {
	out := append([]Source{}, sources...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// strictest returns the first of the values that ranks highest: the most restrictive
// privacy class under model.PrivacyRank, the narrowest visibility under
// model.VisibilityRank. An unknown value ranks above every known one, so it wins (fail
// closed). An empty value says nothing and is passed over; it returns "" when no value is
// given.
func strictest(values []string, rank func(string) int) string {
	out := ""
	for _, v := range values {
		if v != "" && (out == "" || rank(v) > rank(out)) {
			out = v
		}
	}
	return out
}

// union appends the values of b missing from a.
func union(a, b []string) []string {
	for _, v := range b {
		if !model.Contains(a, v) {
			a = append(a, v)
		}
	}
	return a
}
