package cypher

import (
	"context"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// What the store keeps of assembly records (DESIGN §10): every assembly keeps its counts;
// its full record while it is among the latest of its branch, or when it is kept (traced,
// sampled, of a failed run). The sweeper trims the rest in the background, so that the
// record stage an assembly waits for writes what it always wrote.

// The states of an assembly's record (ContextAssembly.recordState).
const (
	recordFull    = "full"
	recordKept    = "kept"
	recordTrimmed = "trimmed"
)

// recordState is the state an assembly's record starts in.
func recordState(k model.RecordKeeping) string {
	if k.Kept != "" {
		return recordKept
	}
	return recordFull
}

// The statements of the sweeps.
var (
	takeSweepLease            = newQuery[sweepLeaseParams, cursorRow]("TakeSweepLease")
	advanceSweepLease         = newQuery[advanceParams, cursorRow]("AdvanceSweepLease")
	releaseSweepLease         = newQuery[releaseParams, noRows]("ReleaseSweepLease")
	branchesWithNewAssemblies = newQuery[newAssembliesParams, newAssembliesRow]("BranchesWithNewAssemblies")
	trimAssemblyRecords       = newQuery[trimParams, trimRow]("TrimAssemblyRecords")
)

type sweepLeaseParams struct {
	Name   string    `param:"name"`
	Holder string    `param:"holder"`
	Now    time.Time `param:"now"`
	Until  time.Time `param:"until"`
}

type releaseParams struct {
	Name   string    `param:"name"`
	Holder string    `param:"holder"`
	Now    time.Time `param:"now"`
}

// takeLease takes the lease of the sweep name for sw.Holder (TakeSweepLease): held is false
// while another server holds it; cursor is how far that sweep has got.
func (s *Store) takeLease(ctx context.Context, name string, sw Sweep) (cursor time.Time, held bool, err error) {
	now := s.Now().UTC()
	row, held, err := takeSweepLease.autoOne(ctx, s, neo4j.AccessModeWrite, sweepLeaseParams{Name: name, Holder: sw.Holder, Now: now, Until: now.Add(sw.Lease)})
	return row.Cursor, held, err
}

// releaseLease gives a finished sweep's lease up, so that the next server's need not wait for
// it to lapse; a failure leaves it to lapse.
func (s *Store) releaseLease(ctx context.Context, name, holder string) {
	_, _ = releaseSweepLease.autoAll(ctx, s, neo4j.AccessModeWrite, releaseParams{Name: name, Holder: holder, Now: s.Now().UTC()})
}

type advanceParams struct {
	Name   string    `param:"name"`
	Holder string    `param:"holder"`
	Cursor time.Time `param:"cursor"`
}

type cursorRow struct {
	Cursor time.Time `col:"cursor"`
}

type newAssembliesParams struct {
	Cursor time.Time `param:"cursor"`
	UpTo   time.Time `param:"upTo"`
	Limit  int       `param:"limit"`
}

type newAssembliesRow struct {
	AccountID string    `col:"accountId"`
	BranchID  string    `col:"branchId"`
	Last      time.Time `col:"last"`
	Keep      int64     `col:"keep"`
}

type trimParams struct {
	AccountID string    `param:"accountId"`
	BranchID  string    `param:"branchId"`
	Keep      int64     `param:"keep"`
	Skip      int64     `param:"skip"`
	Limit     int       `param:"limit"`
	Now       time.Time `param:"now"`
}

type trimRow struct {
	Trimmed []string `col:"trimmed"`
	Kept    []string `col:"kept"`
}

// recordSweep is the name of the assembly records' sweep lease.
const recordSweep = "assembly-records"

// Sweep bounds one sweep (of assembly records, or of artifacts whose retention ran out):
// who sweeps, how long its lease holds, how long after an assembly is recorded it is looked
// at (records in flight have committed by then), how many branches one read finds and how
// many records one transaction handles.
type Sweep struct {
	Holder   string
	Lease    time.Duration
	Grace    time.Duration
	Branches int
	Records  int
}

// DefaultSweep is what servers sweep with.
var DefaultSweep = Sweep{Lease: time.Minute, Grace: time.Minute, Branches: 200, Records: 50}

// SweepAssemblyRecords trims the records of the assemblies that have fallen out of their
// branch's latest since the last sweep (TrimAssemblyRecords), under the sweep's lease so
// that two servers never sweep at once (a server that dies leaves a lease that lapses). It
// reports how many records it trimmed, and held false when another server holds the lease.
// A branch is looked at once an assembly newer than the sweep's cursor was recorded on it
// at least Grace ago; records of runs that had not ended then are looked at again with the
// branch's next assembly.
func (s *Store) SweepAssemblyRecords(ctx context.Context, sw Sweep) (trimmed int, held bool, err error) {
	lease := func() (time.Time, bool, error) { return s.takeLease(ctx, recordSweep, sw) }
	cursor, held, err := lease()
	if err != nil || !held {
		return 0, held, err
	}
	defer s.releaseLease(ctx, recordSweep, sw.Holder)
	start := time.Now()
	upTo := s.Now().UTC().Add(-sw.Grace)
	for {
		branches, err := branchesWithNewAssemblies.autoAll(ctx, s, neo4j.AccessModeWrite, newAssembliesParams{Cursor: cursor, UpTo: upTo, Limit: sw.Branches})
		if err != nil {
			return trimmed, true, err
		}
		for _, b := range branches {
			for {
				p := trimParams{AccountID: b.AccountID, BranchID: b.BranchID, Keep: b.Keep, Skip: max(b.Keep-1, 0), Limit: sw.Records, Now: s.Now().UTC()}
				row, _, err := trimAssemblyRecords.autoOne(ctx, s, neo4j.AccessModeWrite, p)
				if err != nil {
					return trimmed, true, err
				}
				trimmed += len(row.Trimmed)
				if len(row.Trimmed)+len(row.Kept) < sw.Records {
					break
				}
			}
		}
		next := upTo
		if len(branches) == sw.Branches {
			next = branches[len(branches)-1].Last
		}
		if _, found, err := advanceSweepLease.autoOne(ctx, s, neo4j.AccessModeWrite, advanceParams{Name: recordSweep, Holder: sw.Holder, Cursor: next}); err != nil || !found {
			return trimmed, found, err
		}
		cursor = next
		if len(branches) < sw.Branches || next.Equal(upTo) {
			return trimmed, true, nil
		}
		if time.Since(start) > sw.Lease/2 {
			// Renew before the lease could lapse under a long sweep.
			if cursor, held, err = lease(); err != nil || !held {
				return trimmed, held, err
			}
			start = time.Now()
		}
	}
}

// conversationFootprint estimates what a conversation takes in the store, by label.
var conversationFootprint = newQuery[conversationParams, FootprintRow]("ConversationFootprint")

type conversationParams struct {
	AccountID      string `param:"accountId"`
	ConversationID string `param:"conversationId"`
}

// FootprintRow is what the nodes of one label of a conversation take, with their outgoing
// relationships, in Neo4j's record format (ConversationFootprint.cypher says how).
type FootprintRow struct {
	Label         string `col:"label"`
	Nodes         int64  `col:"nodes"`
	Relationships int64  `col:"relationships"`
	Bytes         int64  `col:"bytes"`
}

// ConversationFootprint estimates what a conversation's nodes and relationships take in the
// store, by label: for the benchmark's bytes per generation. It reads every node of the
// conversation.
func (s *Store) ConversationFootprint(ctx context.Context, accountID, conversationID string) ([]FootprintRow, error) {
	return conversationFootprint.autoAll(ctx, s, neo4j.AccessModeRead, conversationParams{AccountID: accountID, ConversationID: conversationID})
}

// The statements of the retention sweep (DESIGN §10).
var (
	expiredArtifacts = newQuery[expiredParams, expiredRow]("ExpiredArtifacts")
	redactArtifact   = newQuery[expireParams, redactRow]("RedactArtifact")
)

type expiredParams struct {
	Now   time.Time `param:"now"`
	Limit int       `param:"limit"`
}

type expiredRow struct {
	AccountID string `col:"accountId"`
	ID        string `col:"id"`
	Class     string `col:"class"`
}

type expireParams struct {
	AccountID string    `param:"accountId"`
	ID        string    `param:"id"`
	Now       time.Time `param:"now"`
}

type redactRow struct {
	Refs    []string `col:"refs"`
	Trimmed []string `col:"trimmed"`
}

// retentionSweep is the name of the retention sweep's lease.
const retentionSweep = "artifact-retention"

// Retained counts what one retention sweep did.
type Retained struct {
	Redacted, Deleted, Memories, Assemblies int
}

// SweepRetention redacts or deletes the artifacts whose retention ran out (RedactArtifact,
// EraseArtifact), at most sw.Records a round until none is due, under the sweep's lease
// so that two servers never sweep at once. held is false when another server holds it.
// Each artifact goes in a transaction of its own, with everything that carried its body;
// the blobs it held are removed after, unless a record still references them.
func (s *Store) SweepRetention(ctx context.Context, sw Sweep) (done Retained, held bool, err error) {
	if _, held, err = s.takeLease(ctx, retentionSweep, sw); err != nil || !held {
		return done, held, err
	}
	defer s.releaseLease(ctx, retentionSweep, sw.Holder)
	start := time.Now()
	for time.Since(start) < sw.Lease/2 {
		due, err := expiredArtifacts.autoAll(ctx, s, neo4j.AccessModeWrite, expiredParams{Now: s.Now().UTC(), Limit: sw.Records})
		if err != nil || len(due) == 0 {
			return done, true, err
		}
		before := done
		for _, a := range due {
			p := expireParams{AccountID: a.AccountID, ID: a.ID, Now: s.Now().UTC()}
			var refs []string
			switch a.Class {
			case model.RetentionDeleteAfter:
				// Deleting an artifact whose time is up is erasing it (EraseArtifact).
				row, found, err := eraseArtifact.autoOne(ctx, s, neo4j.AccessModeWrite,
					eraseParams{AccountID: a.AccountID, ID: a.ID, Now: p.Now, TrimmedAs: "deleted_artifact"})
				if err != nil {
					return done, true, err
				}
				if found {
					done.Deleted++
					done.Memories += len(row.MemoryIDs)
					done.Assemblies += len(row.AssemblyIDs)
					refs = row.Refs
				}
			default:
				row, found, err := redactArtifact.autoOne(ctx, s, neo4j.AccessModeWrite, p)
				if err != nil {
					return done, true, err
				}
				if found {
					done.Redacted++
					done.Assemblies += len(row.Trimmed)
					refs = row.Refs
				}
			}
			s.removeBlobs(ctx, refs)
		}
		if done == before {
			// Nothing of what was due could go (its branch or conversation is being
			// deleted): the next round looks again.
			return done, true, nil
		}
	}
	return done, true, nil
}

// RunSweeps runs the servers' sweeps every `every` until ctx ends: assembly records
// (SweepAssemblyRecords) and artifacts whose retention ran out (SweepRetention). Failures
// wait for the next round.
func (s *Store) RunSweeps(ctx context.Context, sw Sweep, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		_, _, _ = s.SweepAssemblyRecords(ctx, sw)
		_, _, _ = s.SweepRetention(ctx, sw)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// eraseArtifact erases an artifact and what derives only from it (EraseArtifact.cypher).
var eraseArtifact = newQuery[eraseParams, eraseRow]("EraseArtifact")

type eraseParams struct {
	AccountID string    `param:"accountId"`
	ID        string    `param:"id"`
	Now       time.Time `param:"now"`
	DryRun    bool      `param:"dryRun"`
	TrimmedAs string    `param:"trimmedAs"`
}

type eraseRow struct {
	Refs            []string `col:"refs"`
	MemoryIDs       []string `col:"memoryIds"`
	BrokenMemoryIDs []string `col:"brokenMemoryIds"`
	AssemblyIDs     []string `col:"assemblyIds"`
	Responses       int64    `col:"responses"`
}

// EraseArtifact erases an artifact and everything derived only from it, or with dryRun says
// what would go: see model.Erasure. The blobs it held are removed after the erasure commits,
// unless another record (of any account) references them.
func (s *Store) EraseArtifact(ctx context.Context, accountID, id string, dryRun bool) (model.Erasure, error) {
	row, found, err := eraseArtifact.autoOne(ctx, s, neo4j.AccessModeWrite, eraseParams{AccountID: accountID, ID: id, Now: s.Now().UTC(), DryRun: dryRun, TrimmedAs: "erased_artifact"})
	if err != nil {
		return model.Erasure{}, err
	}
	if !found {
		return model.Erasure{}, model.NotFound("artifact", id)
	}
	if !dryRun {
		s.removeBlobs(ctx, row.Refs)
	}
	return model.Erasure{ArtifactID: id, DryRun: dryRun, Memories: orEmpty(row.MemoryIDs), BrokenMemories: orEmpty(row.BrokenMemoryIDs),
		TrimmedAssemblies: orEmpty(row.AssemblyIDs), Responses: int(row.Responses), Blobs: orEmpty(row.Refs)}, nil
}
