package model

import (
	"context"
	"fmt"
	"time"
)

// Retention classes of an artifact's body (DESIGN §10): keep it; redact it after a while
// (the body goes; id, hashes, sizes, tool and arguments stay, and so do its memories, their
// provenance marked redacted); or delete the artifact after a while, with its body and the
// memories derived only from it.
const (
	RetentionKeep        = "keep"
	RetentionRedactAfter = "redact_after"
	RetentionDeleteAfter = "delete_after"
)

// Where an artifact's retention came from: the result itself, the tool's declaration where
// it was offered, or the policy by the tool's name.
const (
	RetentionFromResult = "result"
	RetentionFromTool   = "tool"
	RetentionFromPolicy = "policy"
)

// Retention is how long an artifact's body is kept: a class, and for redact_after and
// delete_after how long after the result is recorded (a Go duration such as 720h).
type Retention struct {
	Class string `json:"class"`
	After string `json:"after,omitempty"`
}

// maxRetention bounds After: a hundred years is as good as keep.
const maxRetention = 100 * 365 * 24 * time.Hour

// Check reports what is wrong with r as an *Error naming field.
func (r *Retention) Check(field string) error {
	if r == nil {
		return nil
	}
	switch r.Class {
	case RetentionKeep:
		if r.After != "" {
			return Invalid(field, "%s.after: keep keeps the body for good and takes no after", field)
		}
		return nil
	case RetentionRedactAfter, RetentionDeleteAfter:
		d, err := time.ParseDuration(r.After)
		if err != nil || d <= 0 || d > maxRetention {
			return Invalid(field, "%s.after: %q is not a positive duration such as 720h (at most 100 years)", field, r.After)
		}
		return nil
	}
	return Invalid(field, "%s.class: %q is not keep, redact_after or delete_after", field, r.Class)
}

// Until is when a body recorded at recordedAt goes under r; nil to keep it.
func (r *Retention) Until(recordedAt time.Time) *time.Time {
	if r == nil || r.Class == RetentionKeep || r.Class == "" {
		return nil
	}
	d, err := time.ParseDuration(r.After)
	if err != nil {
		return nil
	}
	t := recordedAt.Add(d)
	return &t
}

// String is the retention as a log or message names it.
func (r Retention) String() string {
	if r.After == "" {
		return r.Class
	}
	return fmt.Sprintf("%s %s", r.Class, r.After)
}

// DeclaredRetention is the retention the offered tool of that name declared for its
// results: nil when none of tools has the name or it declares none.
func DeclaredRetention(tools []ToolSpec, name string) *Retention {
	for _, t := range tools {
		if t.Name == name {
			return t.Retention
		}
	}
	return nil
}

// Erasure says what an artifact's erasure took, or with DryRun would take (DESIGN §10): the
// artifact with its body, the memories and reports derived only from it, the memories that
// keep other sources (marked provenance-broken), the assembly records that included the
// body raw (trimmed to their counts), the stored idempotent responses that carried any of
// them, and the blobs it held (removed unless another record references them).
type Erasure struct {
	ArtifactID        string   `json:"artifactId"`
	DryRun            bool     `json:"dryRun"`
	Memories          []string `json:"memories"`
	BrokenMemories    []string `json:"brokenMemories"`
	TrimmedAssemblies []string `json:"trimmedAssemblies"`
	Responses         int      `json:"responses"`
	Blobs             []string `json:"blobs"`
}

// AccountErasure answers DELETE /v1/account: when the account was erased and how many of
// its nodes went, by label (DESIGN §10). From then on the account's key answers 410.
type AccountErasure struct {
	AccountID string           `json:"accountId"`
	ErasedAt  time.Time        `json:"erasedAt"`
	Deleted   map[string]int64 `json:"deleted"`
}

// Accounts erases accounts, and says whether one is erased.
type Accounts interface {
	// EraseAccount erases everything of an account: its conversations with every record
	// under them, their blobs (unless another account's record holds the same body), its
	// idempotency records, schedules and policy versions. Asked again, it finishes an
	// erasure that stopped, and answers what went this time.
	EraseAccount(ctx context.Context, accountID string) (AccountErasure, error)
	// AccountErasedAt is when the account was erased; nil when it was not.
	AccountErasedAt(ctx context.Context, accountID string) (*time.Time, error)
}
