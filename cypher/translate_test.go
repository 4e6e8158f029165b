package cypher

import (
	"errors"
	"fmt"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

func TestTranslateSaysWhyRetriesRanOut(t *testing.T) {
	memory := &neo4j.Neo4jError{Code: "Neo.TransientError.General.MemoryPoolOutOfMemoryError", Msg: "dbms.memory.transaction.total.max threshold reached"}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"transient error after retries", &neo4j.TransactionExecutionLimit{Cause: "timeout", Errors: []error{memory}}, "Neo4j could not complete the transaction in time; try again"},
		{"lost connection after retries", &neo4j.TransactionExecutionLimit{Cause: "timeout", Errors: []error{&neo4j.ConnectivityError{}}}, "Neo4j is unreachable"},
		{"transient error directly", memory, "Neo4j is temporarily unavailable"},
	}
	for _, tc := range cases {
		var me *model.Error
		if err := translate(tc.err); !errors.As(err, &me) || me.Kind != model.KindUnavailable || me.Message != tc.want {
			t.Errorf("%s: got %v, want unavailable %q", tc.name, err, tc.want)
		}
	}
}

func TestRetriesOnlyWhatWasRolledBack(t *testing.T) {
	deadlock := &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected", Msg: "deadlock"}
	constraint := &neo4j.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed", Msg: "exists"}
	lost := &neo4j.ConnectivityError{}
	cases := []struct {
		name      string
		mode      neo4j.AccessMode
		err       error
		ambiguous bool
		want      bool
	}{
		{"read, lost connection", neo4j.AccessModeRead, lost, true, true},
		{"read, deadlock", neo4j.AccessModeRead, deadlock, false, true},
		{"read, constraint", neo4j.AccessModeRead, constraint, false, false},
		{"write, deadlock", neo4j.AccessModeWrite, deadlock, true, true},
		{"write, lost connection at commit (may have committed)", neo4j.AccessModeWrite, lost, true, false},
		{"write, lost connection before commit", neo4j.AccessModeWrite, lost, false, true},
		{"write, constraint", neo4j.AccessModeWrite, constraint, false, false},
		{"write, constraint before commit", neo4j.AccessModeWrite, constraint, true, false},
	}
	for _, tc := range cases {
		if got := retrySafe(tc.mode, tc.err, tc.ambiguous); got != tc.want {
			t.Errorf("%s: got retry %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestLockConflictSeesThroughTheDriversRetries(t *testing.T) {
	deadlock := &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected", Msg: "deadlock"}
	timeout := &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.LockAcquisitionTimeout", Msg: "timeout"}
	if !lockConflict(deadlock) || !lockConflict(&neo4j.TransactionExecutionLimit{Errors: []error{timeout, deadlock}}) {
		t.Error("a deadlock is not seen as a lock conflict")
	}
	if lockConflict(timeout) || lockConflict(&neo4j.TransactionExecutionLimit{Errors: []error{deadlock, timeout}}) || lockConflict(&neo4j.ConnectivityError{}) {
		t.Error("a failure other than a deadlock is seen as a lock conflict")
	}
}

func TestOutOfTransactionMemory(t *testing.T) {
	for code, want := range map[string]bool{
		"Neo.TransientError.General.MemoryPoolOutOfMemoryError":  true, // all transactions together
		"Neo.ClientError.General.TransactionOutOfMemoryError":    true, // db.memory.transaction.max
		"Neo.TransientError.General.TransactionOutOfMemoryError": true,
		"Neo.TransientError.Transaction.DeadlockDetected":        false,
		"Neo.TransientError.General.OutOfMemoryError":            false, // the JVM's heap, not a transaction limit
	} {
		err := fmt.Errorf("commit: %w", &neo4j.Neo4jError{Code: code})
		if got := outOfTransactionMemory(err); got != want {
			t.Errorf("%s: got %v, want %v", code, got, want)
		}
	}
	if outOfTransactionMemory(errors.New("MemoryPoolOutOfMemoryError")) {
		t.Error("text alone counted as Neo4j's refusal")
	}
}

// A bookmark Neo4j refuses is the client's fault when the client sent one back (400 naming
// the header, the process's own kept); otherwise it is this process's own, naming writes
// the database lost (a restore): the process forgets its bookmarks and the request may be
// retried.
func TestRefusedBookmarks(t *testing.T) {
	invalid := &neo4j.Neo4jError{Code: "Neo.ClientError.Transaction.InvalidBookmark", Msg: "parsing failed"}
	timeout := &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.BookmarkTimeout", Msg: "not applied"}
	cases := []struct {
		name      string
		err       error
		sent      bool
		wantKind  model.Kind
		wantField string
	}{
		{"a client's bookmark of another database", invalid, true, model.KindInvalid, model.BookmarkField},
		{"a client's bookmark not applied in time", timeout, true, model.KindUnavailable, ""},
		{"the process's bookmark of another database", invalid, false, model.KindUnavailable, ""},
		{"the process's bookmark ahead of a restored database", timeout, false, model.KindUnavailable, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &Store{written: model.NewCausalChain([]string{"FB:ahead"})}
			ctx := t.Context()
			if tc.sent {
				ctx = model.WithCausalChain(ctx, model.NewCausalChain([]string{"FB:sent"}))
			}
			var me *model.Error
			if err := s.translate(ctx, tc.err); !errors.As(err, &me) || me.Kind != tc.wantKind || me.Field != tc.wantField {
				t.Errorf("got %v, want kind %s field %q", err, tc.wantKind, tc.wantField)
			}
			if b := s.written.Bookmarks(); tc.sent != (len(b) == 1) {
				t.Errorf("after a refusal of bookmarks the client sent (%v), the process holds %q", tc.sent, b)
			}
		})
	}
}
