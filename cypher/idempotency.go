package cypher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// staleClaim is how long a claimed key may stay pending before a retry takes it over: longer
// than any request runs, so a live request is never overtaken.
const staleClaim = 2 * time.Minute

// idempotencyID scopes a client's key to its account.
func idempotencyID(accountID, key string) string {
	sum := sha256.Sum256([]byte(accountID + "\x00" + key))
	return "idem_" + hex.EncodeToString(sum[:16])
}

// ClaimIdempotencyKey reserves key for a request, or returns the response stored under it.
// MERGE on the uniquely constrained id serialises concurrent claims of one key.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, accountID, key, requestHash string) (model.IdempotentResponse, bool, error) {
	claim := newID("claim")
	return writeTxPair(ctx, s, func(t *tx) (model.IdempotentResponse, bool, error) {
		rec, err := t.one("ClaimIdempotencyKey", map[string]any{
			"id": idempotencyID(accountID, key), "accountId": accountID, "requestHash": requestHash,
			"claim": claim, "now": s.Now(), "staleBefore": s.Now().Add(-staleClaim),
		})
		if err != nil {
			return model.IdempotentResponse{}, false, err
		}
		k := nodeProps(rec, "k")
		switch {
		case k.str("claim") == claim:
			return model.IdempotentResponse{}, false, nil
		case k.str("requestHash") != requestHash:
			return model.IdempotentResponse{}, false, &model.Error{Kind: model.KindConflict, Field: "Idempotency-Key",
				Message: "this Idempotency-Key was used for a different request"}
		case k.str("state") != "done":
			return model.IdempotentResponse{}, false, &model.Error{Kind: model.KindConflict, Field: "Idempotency-Key",
				Message: "a request with this Idempotency-Key is still in progress"}
		}
		return model.IdempotentResponse{RequestHash: requestHash, Status: int(k.i64("status")), Body: []byte(k.str("body"))}, true, nil
	})
}

// CompleteIdempotencyKey stores the response of the request that claimed key.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, accountID, key string, resp model.IdempotentResponse) error {
	_, err := writeTx(ctx, s, func(t *tx) (struct{}, error) {
		_, err := t.run("CompleteIdempotencyKey", map[string]any{
			"id": idempotencyID(accountID, key), "accountId": accountID, "status": resp.Status,
			"body": string(resp.Body), "now": s.Now(),
		})
		return struct{}{}, err
	})
	return err
}

// ReleaseIdempotencyKey frees a key whose request failed.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, accountID, key string) error {
	_, err := writeTx(ctx, s, func(t *tx) (struct{}, error) {
		_, err := t.run("ReleaseIdempotencyKey", map[string]any{"id": idempotencyID(accountID, key), "accountId": accountID})
		return struct{}{}, err
	})
	return err
}

// writeTxPair is writeTx for work that answers two values.
func writeTxPair[A, B any](ctx context.Context, s *Store, work func(t *tx) (A, B, error)) (A, B, error) {
	type pair struct {
		a A
		b B
	}
	p, err := writeTx(ctx, s, func(t *tx) (pair, error) {
		a, b, err := work(t)
		return pair{a, b}, err
	})
	return p.a, p.b, err
}
