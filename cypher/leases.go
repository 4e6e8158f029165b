package cypher

import (
	"context"
	"math"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

// interruptedMessage is the error message of a run whose lease lapsed (EndLapsedRuns).
const interruptedMessage = "the server serving this run's model call stopped before it was recorded: continue the run, or retry the generation with its Idempotency-Key"

// unrecordedMessage is the error message of a run whose model call could not be recorded
// because Neo4j was unavailable (EndUnrecordedRun).
const unrecordedMessage = "the database was unavailable when this run's model call was to be recorded: continue the run, or retry the generation with its Idempotency-Key"

// The statements of leases.
var (
	renewLeases      = newQuery[renewLeasesParams, noRows]("RenewLeases")
	endLapsedRuns    = newQuery[endLapsedParams, idRow]("EndLapsedRuns")
	endUnrecordedRun = newQuery[endUnrecordedParams, idRow]("EndUnrecordedRun")
	recordKeyedTurn  = newQuery[keyedTurnParams, idRow]("RecordKeyedTurn")
)

type renewLeasesParams struct {
	Holder    string    `param:"holder"`
	Until     time.Time `param:"until"`
	RunIDs    []string  `param:"runIds"`
	KeyIDs    []string  `param:"keyIds"`
	KeyClaims []string  `param:"keyClaims"`
}

type endLapsedParams struct {
	Now     time.Time `param:"now"`
	Limit   int       `param:"limit"`
	Message string    `param:"message"`
}

type endUnrecordedParams struct {
	AccountID     string    `param:"accountId"`
	RunID         string    `param:"runId"`
	Claim         string    `param:"claim"`
	ModelCalls    int64     `param:"modelCalls"`
	Interruptions int64     `param:"interruptions"`
	Now           time.Time `param:"now"`
	Message       string    `param:"message"`
}

type keyedTurnParams struct {
	ID            string   `param:"id"`
	AccountID     string   `param:"accountId"`
	Claim         string   `param:"claim"`
	UserMessageID string   `param:"userMessageId,null"`
	RunIDs        []string `param:"runIds"`
}

// leaseEnd is when lease, taken now, lapses, and its holder; zero values for no lease.
func (s *Store) leaseEnd(lease model.RunLease) (time.Time, string) {
	if lease.For <= 0 {
		return time.Time{}, ""
	}
	return s.Now().UTC().Add(lease.For), lease.Holder
}

// retryAfter is the Retry-After, in whole seconds and at least one, of a request refused
// until held lapses.
func retryAfter(held, now time.Time) int {
	return max(1, int(math.Ceil(held.Sub(now).Seconds())))
}

// RenewLeases extends the leases lease.Holder holds on runIDs and the holds of keys: see
// model.LeaseGraph.
func (s *Store) RenewLeases(ctx context.Context, lease model.RunLease, runIDs []string, keys []*model.IdempotencyClaim) error {
	p := renewLeasesParams{Holder: lease.Holder, Until: s.Now().UTC().Add(lease.For), RunIDs: runIDs,
		KeyIDs: []string{}, KeyClaims: []string{}}
	if p.RunIDs == nil {
		p.RunIDs = []string{}
	}
	for _, k := range keys {
		p.KeyIDs, p.KeyClaims = append(p.KeyIDs, idempotencyID(k.AccountID, k.Key)), append(p.KeyClaims, k.Claim)
	}
	_, err := renewLeases.autoAll(ctx, s, neo4j.AccessModeWrite, p)
	return err
}

// EndLapsedRuns ends the running runs whose lease lapsed as failed, interrupted: see
// model.LeaseGraph.
func (s *Store) EndLapsedRuns(ctx context.Context, limit int) ([]string, error) {
	return writeTx(ctx, s, func(t *tx) ([]string, error) {
		rows, err := endLapsedRuns.all(t, endLapsedParams{Now: s.Now().UTC(), Limit: limit, Message: interruptedMessage})
		if err != nil {
			return nil, err
		}
		ids := make([]string, 0, len(rows))
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		return ids, nil
	})
}

// EndUnrecordedRun ends the run of a model call that could not be recorded as failed,
// database_unavailable, if the call left it as it is or a sweep ended it interrupted
// since: see model.LeaseGraph.
func (s *Store) EndUnrecordedRun(ctx context.Context, call model.UnrecordedCall) (bool, error) {
	return writeTx(ctx, s, func(t *tx) (bool, error) {
		_, ended, err := endUnrecordedRun.one(t, endUnrecordedParams{AccountID: call.AccountID, RunID: call.RunID,
			Claim: call.Claim, ModelCalls: call.ModelCalls, Interruptions: call.Interruptions, Now: s.Now().UTC(), Message: unrecordedMessage})
		return ended, err
	})
}

// recordKeyedTurn keeps turn under claim's key inside t (RecordKeyedTurn); KindConflict
// when a retry has taken the key over.
func (t *tx) recordKeyedTurn(claim *model.IdempotencyClaim, turn model.KeyedTurn) error {
	_, found, err := recordKeyedTurn.one(t, keyedTurnParams{
		ID: idempotencyID(claim.AccountID, claim.Key), AccountID: claim.AccountID, Claim: claim.Claim,
		UserMessageID: turn.UserMessageID, RunIDs: turn.RunIDs,
	})
	if err == nil && !found {
		err = keyTakenOver()
	}
	return err
}

// keyTakenOver is the error of a write refused because a retry took its request's
// Idempotency-Key over.
func keyTakenOver() error {
	return &model.Error{Kind: model.KindConflict, Field: "Idempotency-Key",
		Message: "this request's hold on its Idempotency-Key was taken over by a retry"}
}

// keyHeld reads whether claim still holds its key (IdempotencyKeyHeld).
var keyHeld = newQuery[keyHeldParams, struct {
	Held bool `col:"held"`
}]("IdempotencyKeyHeld")

type keyHeldParams struct {
	ID        string `param:"id"`
	AccountID string `param:"accountId"`
	Claim     string `param:"claim"`
}

// keyHeldOr says why a statement that writes only while claim holds its key wrote nothing:
// keyTakenOver when it no longer holds it, otherwise err.
func (s *Store) keyHeldOr(ctx context.Context, claim *model.IdempotencyClaim, err error) error {
	row, found, rerr := keyHeld.autoOne(ctx, s, neo4j.AccessModeRead, keyHeldParams{
		ID: idempotencyID(claim.AccountID, claim.Key), AccountID: claim.AccountID, Claim: claim.Claim})
	switch {
	case rerr != nil:
		return rerr
	case !found || !row.Held:
		return keyTakenOver()
	}
	return err
}
