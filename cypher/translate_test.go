package cypher

import (
	"errors"
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

func TestAutoCommitRetriesOnlyWhatWasRolledBack(t *testing.T) {
	deadlock := &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected", Msg: "deadlock"}
	constraint := &neo4j.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed", Msg: "exists"}
	lost := &neo4j.ConnectivityError{}
	cases := []struct {
		name string
		mode neo4j.AccessMode
		err  error
		want bool
	}{
		{"read, lost connection", neo4j.AccessModeRead, lost, true},
		{"read, deadlock", neo4j.AccessModeRead, deadlock, true},
		{"read, constraint", neo4j.AccessModeRead, constraint, false},
		{"write, deadlock", neo4j.AccessModeWrite, deadlock, true},
		{"write, lost connection (may have committed)", neo4j.AccessModeWrite, lost, false},
		{"write, constraint", neo4j.AccessModeWrite, constraint, false},
	}
	for _, tc := range cases {
		if got := retrySafe(tc.mode, tc.err); got != tc.want {
			t.Errorf("%s: got retry %v, want %v", tc.name, got, tc.want)
		}
	}
}
