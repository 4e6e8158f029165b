package cypher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

// DefaultClaimHold is how long a claimed key of a write stays pending before a retry takes
// it over: longer than any write runs (the server's write timeout bounds them), so a live
// request is never overtaken; and if one were, its write would fail, since it stores its
// response only under its own claim. A generation holds its key longer (api's claimHold).
const DefaultClaimHold = 2 * time.Minute

// claimAttempts is how many times a claim is made while it races the release of its key.
const claimAttempts = 3

// releaseRetryEvery is how often a release that Neo4j did not answer is tried again.
const releaseRetryEvery = time.Second

// The statements of idempotency keys.
var (
	claimIdempotencyKey    = newQuery[claimKeyParams, keyRow]("ClaimIdempotencyKey")
	completeIdempotencyKey = newQuery[completeKeyParams, idRow]("CompleteIdempotencyKey")
	releaseIdempotencyKey  = newQuery[releaseKeyParams, noRows]("ReleaseIdempotencyKey")
	releaseIdempotencyKeys = newQuery[releaseKeysParams, noRows]("ReleaseIdempotencyKeys")
)

type releaseKeysParams struct {
	IDs        []string  `param:"ids"`
	AccountIDs []string  `param:"accountIds"`
	Claims     []string  `param:"claims"`
	Now        time.Time `param:"now"`
}

// releaseBatch is how many releases one ReleaseIdempotencyKeys statement makes.
const releaseBatch = 500

// pendingReleases are the releases of claims that Neo4j did not answer, each until its
// claim would be stale anyway. One goroutine at a time makes them, in batches: an outage
// leaves one behind every refused keyed try, and thousands of releases each retried on its
// own fired together when Neo4j came back, took the pool's connections and held the first
// requests after the outage near the acquisition timeout.
type pendingReleases struct {
	mu      sync.Mutex
	claims  map[string]pendingRelease
	running bool
}

type pendingRelease struct {
	claim *model.IdempotencyClaim
	until time.Time
}

type claimKeyParams struct {
	ID          string    `param:"id"`
	AccountID   string    `param:"accountId"`
	RequestHash string    `param:"requestHash"`
	Claim       string    `param:"claim"`
	Now         time.Time `param:"now"`
	StaleAt     time.Time `param:"staleAt"`
}

type keyRow struct {
	K props `col:"k"`
}

type completeKeyParams struct {
	ID             string    `param:"id"`
	AccountID      string    `param:"accountId"`
	Claim          string    `param:"claim"`
	Status         int       `param:"status"`
	Body           string    `param:"body"`
	Now            time.Time `param:"now"`
	ConversationID string    `param:"conversationId,null"`
	ArtifactID     string    `param:"artifactId,null"`
	RecordID       string    `param:"recordId,null"`
}

type releaseKeyParams struct {
	ID        string    `param:"id"`
	AccountID string    `param:"accountId"`
	Claim     string    `param:"claim"`
	Now       time.Time `param:"now"`
}

// idempotencyID scopes a client's key to its account.
func idempotencyID(accountID, key string) string {
	sum := sha256.Sum256([]byte(accountID + "\x00" + key))
	return "idem_" + hex.EncodeToString(sum[:16])
}

// ClaimIdempotencyKey reserves key for a request, or returns the response stored under it.
// MERGE on the uniquely constrained id serialises concurrent claims of one key.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, accountID, key, requestHash string, hold time.Duration) (*model.IdempotencyClaim, model.IdempotentResponse, error) {
	// A plain write's claim is held for DefaultClaimHold, far longer than the write runs: a
	// retry is told to come back in a second. A claim held for a chosen time (a turn's,
	// renewed under a lease) is told when that hold lapses.
	chosen := hold > 0
	if !chosen {
		hold = DefaultClaimHold
	}
	claim := &model.IdempotencyClaim{AccountID: accountID, Key: key, Claim: newID("claim"), Hold: hold}
	var row keyRow
	var err error
	for range claimAttempts {
		var found bool
		row, found, err = claimIdempotencyKey.autoOne(ctx, s, neo4j.AccessModeWrite, claimKeyParams{
			ID: idempotencyID(accountID, key), AccountID: accountID, RequestHash: requestHash,
			Claim: claim.Claim, Now: s.Now(), StaleAt: s.Now().Add(hold),
		})
		if err == nil && !found {
			return nil, model.IdempotentResponse{}, accountErased(accountID)
		}
		// A key that an earlier try's release deleted while this MERGE matched it comes back
		// without its properties: that is no answer about this request (it read as "used for a
		// different request"), and the claim is made again on a key that no longer exists.
		if err != nil || row.K.str("requestHash") != "" {
			break
		}
	}
	if err == nil && row.K.str("requestHash") == "" {
		err = model.Unavailable("the Idempotency-Key was being released as it was claimed; retry", nil)
	}
	if err != nil {
		// The claim may have committed with its answer lost on the way back: release it once
		// Neo4j answers again, so that the client's retry is not held off until the claim is
		// stale. Neo4j has just failed to answer, so the first try is not made now.
		s.releaseLater(claim)
		return nil, model.IdempotentResponse{}, err
	}
	k := row.K
	switch {
	case k.str("claim") == claim.Claim && k.str("state") == "pending":
		if runs := k.strs("runIds"); len(runs) > 0 {
			// Taken over from a generation whose server died after it began its turn.
			claim.Turn = &model.KeyedTurn{UserMessageID: k.str("userMessageId"), RunIDs: runs}
		}
		return claim, model.IdempotentResponse{}, nil
	case k.str("requestHash") != requestHash:
		return nil, model.IdempotentResponse{}, &model.Error{Kind: model.KindConflict, Field: "Idempotency-Key",
			Message: "this Idempotency-Key was used for a different request"}
	case k.str("state") == "erased":
		return nil, model.IdempotentResponse{}, &model.Error{Kind: model.KindNotFound, Field: "Idempotency-Key",
			Message: "what the first request with this Idempotency-Key wrote has been deleted"}
	case k.str("state") != "done":
		wait := 1
		if held := k.time("staleAt"); chosen && !held.IsZero() {
			wait = retryAfter(held, s.Now())
		}
		return nil, model.IdempotentResponse{}, &model.Error{Kind: model.KindConflict, Field: "Idempotency-Key",
			Message: "a request with this Idempotency-Key is still in progress; retry later", RetryAfter: wait}
	}
	return nil, model.IdempotentResponse{RequestHash: requestHash, Status: int(k.i64("status")), Body: []byte(k.str("body"))}, nil
}

// answer stores v, a write's result, as the response to the Idempotency-Key that the
// transaction's request claimed, if any, in the transaction itself: the write and its
// stored response commit together or not at all. conversationID and artifactID name what
// the response carries data of, so that deleting them erases it (empty when none).
func (t *tx) answer(v any, conversationID, artifactID string) error {
	return t.answerRecord(v, conversationID, artifactID, "")
}

// answerRecord is answer for a response that carries a record derived from artifacts
// (recordID: an assembly's record with the bodies it included raw, a memory, a report):
// trimming the assembly, or erasing the artifacts the memory derives from, erases the
// response too.
func (t *tx) answerRecord(v any, conversationID, artifactID, recordID string) error {
	claim := model.IdempotencyClaimOf(t.ctx)
	if claim == nil || claim.Status == 0 {
		return nil
	}
	body, err := responseBody(v)
	if err != nil {
		return err
	}
	_, found, err := completeIdempotencyKey.one(t, completeKeyParams{
		ID: idempotencyID(claim.AccountID, claim.Key), AccountID: claim.AccountID, Claim: claim.Claim,
		Status: claim.Status, Body: string(body), Now: t.store.Now(),
		ConversationID: conversationID, ArtifactID: artifactID, RecordID: recordID,
	})
	if err != nil {
		return err
	}
	if !found {
		return keyTakenOver()
	}
	t.answered = true
	return nil
}

// responseBody is a response as a keyed request's first answer is stored: v encoded as
// the API encodes it, nothing for nil.
func responseBody(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	encoded, err := model.EncodeJSON(v)
	if err != nil {
		return nil, model.Internal("encoding the response failed", err)
	}
	return append(encoded, '\n'), nil
}

// CompleteIdempotencyKey stores the response of a claimed request whose write did not.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, claim *model.IdempotencyClaim, resp model.IdempotentResponse) error {
	_, found, err := completeIdempotencyKey.autoOne(ctx, s, neo4j.AccessModeWrite, completeKeyParams{
		ID: idempotencyID(claim.AccountID, claim.Key), AccountID: claim.AccountID, Claim: claim.Claim,
		Status: resp.Status, Body: string(resp.Body), Now: s.Now(),
	})
	if err == nil && !found {
		err = model.Conflict("this request's hold on its Idempotency-Key was taken over by a retry")
	}
	return err
}

// ReleaseIdempotencyKey frees the key of a request that failed, if it still holds it; a
// generation's key that holds the turn it began lapses instead, for its retry to complete
// that turn (ReleaseIdempotencyKey.cypher). When Neo4j does not answer, the release is tried
// again every second, with the others pending (releaseLater), until it succeeds or the claim
// would be stale anyway, so that the client's retry does not wait for staleness.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, claim *model.IdempotencyClaim) {
	if s.release(context.WithoutCancel(ctx), claim) != nil {
		s.releaseLater(claim)
	}
}

func (s *Store) release(ctx context.Context, claim *model.IdempotencyClaim) error {
	_, err := releaseIdempotencyKey.autoAll(ctx, s, neo4j.AccessModeWrite, releaseKeyParams{
		ID: idempotencyID(claim.AccountID, claim.Key), AccountID: claim.AccountID, Claim: claim.Claim, Now: s.Now(),
	})
	return err
}

// releaseLater adds claim to the pending releases, starting their goroutine if none runs.
func (s *Store) releaseLater(claim *model.IdempotencyClaim) {
	p := &s.releases
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.claims == nil {
		p.claims = map[string]pendingRelease{}
	}
	p.claims[claim.Claim] = pendingRelease{claim: claim, until: time.Now().Add(claim.Hold)}
	if !p.running {
		p.running = true
		go s.releasePending()
	}
}

// releasePending makes the pending releases every releaseRetryEvery, in batches, until none
// is left: each is dropped once made, or once its claim would be stale anyway.
func (s *Store) releasePending() {
	p := &s.releases
	for {
		time.Sleep(releaseRetryEvery)
		p.mu.Lock()
		now := time.Now()
		var batch []*model.IdempotencyClaim
		for id, r := range p.claims {
			if now.After(r.until) {
				delete(p.claims, id)
			} else {
				batch = append(batch, r.claim)
			}
		}
		if len(batch) == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		for len(batch) > 0 {
			chunk := batch[:min(releaseBatch, len(batch))]
			batch = batch[len(chunk):]
			params := releaseKeysParams{Now: s.Now()}
			for _, c := range chunk {
				params.IDs = append(params.IDs, idempotencyID(c.AccountID, c.Key))
				params.AccountIDs, params.Claims = append(params.AccountIDs, c.AccountID), append(params.Claims, c.Claim)
			}
			if _, err := releaseIdempotencyKeys.autoAll(context.Background(), s, neo4j.AccessModeWrite, params); err != nil {
				break // Neo4j is still away: the rest wait for the next round
			}
			p.mu.Lock()
			for _, c := range chunk {
				delete(p.claims, c.Claim)
			}
			p.mu.Unlock()
		}
	}
}
