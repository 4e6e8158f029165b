package generation

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
	"go.uber.org/zap"

	"github.com/ctxgraph/ctxgraph/model"
)

// DefaultPoll is the longest a scheduler sleeps before it reads the schedules again: how
// soon it sees a schedule that another server made, or one whose tick another server left.
const DefaultPoll = time.Second

// scanLimit is how many of the soonest schedules one scan reads; a scan that finds them all
// due scans again at once.
const scanLimit = 64

// claimTimeout bounds a claim. A claim that has begun finishes even when the scheduler is
// stopping, so that no tick is claimed without its turn being run.
const claimTimeout = 30 * time.Second

// cronParser reads five fields, or six with seconds first, and the descriptors (@hourly,
// @every 90s).
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron reads a schedule's cron expression in its IANA time zone (UTC when empty).
func ParseCron(expr, timezone string) (cron.Schedule, error) {
	if timezone == "" {
		timezone = "UTC"
	}
	if timezone == "Local" {
		return nil, model.Invalid("timezone", "timezone is an IANA zone such as Europe/Berlin: Local would depend on the server")
	}
	loc, err := time.LoadLocation(timezone)
	if err != nil {
		return nil, model.Invalid("timezone", "timezone %q is not an IANA time zone such as Europe/Berlin", timezone)
	}
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return nil, model.Invalid("cron", "name the time zone in timezone, not in cron")
	}
	sched, err := cronParser.Parse(expr)
	if err != nil {
		return nil, model.Invalid("cron", "cron %q: %v (five fields, six with seconds first, or a descriptor such as @hourly)", expr, err)
	}
	if spec, ok := sched.(*cron.SpecSchedule); ok {
		spec.Location = loc
	}
	return sched, nil
}

// LatestTick is the tick a schedule fires at now when its next tick was next: the latest of
// its ticks from next up to now (ticks missed while no server ran fire once, as the latest),
// or the zero time when next is still to come.
func LatestTick(sched cron.Schedule, next, now time.Time) time.Time {
	if next.After(now) {
		return time.Time{}
	}
	// A dense schedule long missed has many ticks to walk: the last hour holds its latest.
	if recent := now.Add(-time.Hour); recent.After(next) {
		if t := lastTickIn(sched, recent, now); !t.IsZero() {
			return t
		}
	}
	if t := lastTickIn(sched, next, now); !t.IsZero() {
		return t
	}
	return next
}

// lastTickIn is the last tick after after and at or before until, zero when none.
func lastTickIn(sched cron.Schedule, after, until time.Time) time.Time {
	var last time.Time
	for t := sched.Next(after); !t.IsZero() && !t.After(until); t = sched.Next(t) {
		last = t
	}
	return last
}

// Scheduler keeps a server's schedules (DESIGN §6 "Modes"): it checks and writes them for
// the API, and runs in every server process, claiming each due tick once across processes
// in the graph and running the claimed tick's turn on the generation path as `scheduled`.
type Scheduler struct {
	Graph model.ScheduleGraph
	Turns *Service
	Log   *zap.Logger
	// Poll is the longest the scheduler sleeps between reads of the schedules (DefaultPoll
	// when zero).
	Poll time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	name       string
	wake       chan struct{}
	stopLoop   context.CancelFunc
	loopDone   chan struct{}
	runCtx     context.Context
	cancelRuns context.CancelFunc
	runs       sync.WaitGroup
}

func (s *Scheduler) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// CreateSchedule checks a schedule and writes it: its cron and time zone, its branch (the
// conversation's main branch when none is named) and its participants, each of whose
// provider must be configured. An enabled schedule's first tick is the first after now.
func (s *Scheduler) CreateSchedule(ctx context.Context, accountID string, in model.NewSchedule) (model.Schedule, error) {
	if in.Timezone == "" {
		in.Timezone = "UTC"
	}
	sched, err := ParseCron(in.Cron, in.Timezone)
	if err != nil {
		return model.Schedule{}, err
	}
	conv, err := s.Turns.Graph.Conversation(ctx, accountID, in.ConversationID)
	if err != nil {
		return model.Schedule{}, err
	}
	if in.BranchID == "" {
		for _, b := range conv.Branches {
			if b.ParentBranchID == "" {
				in.BranchID = b.ID
				break
			}
		}
	}
	onBranch := false
	for _, b := range conv.Branches {
		onBranch = onBranch || b.ID == in.BranchID
	}
	if !onBranch {
		return model.Schedule{}, model.Invalid("branchId", "branch %q is not a branch of conversation %s", in.BranchID, conv.ID)
	}
	if _, err := s.Turns.resolve(conv, in.ParticipantIDs); err != nil {
		return model.Schedule{}, err
	}
	if in.Enabled {
		next := sched.Next(s.now()).UTC()
		if next.IsZero() {
			return model.Schedule{}, model.Invalid("cron", "cron %q never fires", in.Cron)
		}
		in.NextRunAt = &next
	}
	out, err := s.Graph.CreateSchedule(ctx, accountID, in)
	if err == nil {
		s.poke()
	}
	return out, err
}

// Schedules lists a conversation's schedules.
func (s *Scheduler) Schedules(ctx context.Context, accountID, conversationID string) ([]model.Schedule, error) {
	return s.Graph.Schedules(ctx, accountID, conversationID)
}

// Schedule reads one schedule.
func (s *Scheduler) Schedule(ctx context.Context, accountID, id string) (model.Schedule, error) {
	return s.Graph.Schedule(ctx, accountID, id)
}

// DeleteSchedule deletes a schedule: from its commit on, no process claims its ticks.
func (s *Scheduler) DeleteSchedule(ctx context.Context, accountID, id string) error {
	return s.Graph.DeleteSchedule(ctx, accountID, id)
}

// poke wakes the scheduler's loop, when it runs, to read the schedules now.
func (s *Scheduler) poke() {
	if s.wake == nil {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start runs the scheduler in the background until Stop.
func (s *Scheduler) Start() {
	if s.Log == nil {
		s.Log = zap.NewNop()
	}
	s.name = processName()
	s.wake = make(chan struct{}, 1)
	s.loopDone = make(chan struct{})
	s.runCtx, s.cancelRuns = context.WithCancel(context.Background())
	var loopCtx context.Context
	loopCtx, s.stopLoop = context.WithCancel(context.Background())
	go s.loop(loopCtx)
}

// Stop claims no more ticks and waits for the turns of the ticks claimed so far until ctx
// is done; then it cancels those still running (each is recorded as failed, cancelled) and
// waits for their records. It says how many it cancelled.
func (s *Scheduler) Stop(ctx context.Context) error {
	if s.stopLoop == nil {
		return nil
	}
	s.stopLoop()
	<-s.loopDone
	done := make(chan struct{})
	go func() { s.runs.Wait(); close(done) }()
	select {
	case <-done:
		s.cancelRuns()
		return nil
	case <-ctx.Done():
	}
	s.cancelRuns()
	select {
	case <-done:
	case <-time.After(recordTimeout):
	}
	return errors.New("scheduled turns still running at shutdown were cancelled")
}

func (s *Scheduler) loop(ctx context.Context) {
	defer close(s.loopDone)
	for {
		wait := s.scan(ctx)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-s.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// scan claims the due ticks of the soonest schedules and says how long to sleep: until the
// next tick, at most Poll.
func (s *Scheduler) scan(ctx context.Context) time.Duration {
	wait := s.Poll
	if wait <= 0 {
		wait = DefaultPoll
	}
	upcoming, err := s.Graph.UpcomingSchedules(ctx, scanLimit)
	if err != nil {
		if ctx.Err() == nil {
			s.Log.Warn("reading the schedules failed", zap.Error(err))
		}
		return wait
	}
	now, failed := s.now(), false
	for _, sc := range upcoming {
		if sc.NextRunAt == nil {
			continue
		}
		if sc.NextRunAt.After(now) {
			return min(wait, sc.NextRunAt.Sub(now))
		}
		if ctx.Err() != nil {
			return 0
		}
		if err := s.claim(sc, now); err != nil {
			failed = true
			s.Log.Warn("claiming a schedule's tick failed", zap.String("scheduleId", sc.ID), zap.Error(err))
		}
	}
	if len(upcoming) == scanLimit && !failed {
		return 0 // all of them were due: there may be more
	}
	return wait
}

// claim claims the tick sc fires at now and, when this process won it, runs its turn.
func (s *Scheduler) claim(sc model.Schedule, now time.Time) error {
	sched, err := ParseCron(sc.Cron, sc.Timezone)
	if err != nil {
		return err
	}
	tick := LatestTick(sched, *sc.NextRunAt, now)
	c := model.TickClaim{AccountID: sc.AccountID, ScheduleID: sc.ID, At: tick.UTC(), NextRunAt: sched.Next(now).UTC(), Claimant: s.name}
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	full, won, err := s.Graph.ClaimTick(ctx, c)
	if err != nil || !won {
		return err
	}
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		s.fire(c, full)
	}()
	return nil
}

// fire runs a claimed tick's turn: the schedule's prompt as the user message, on the
// normal generation path, as `scheduled`; then records how it went.
func (s *Scheduler) fire(c model.TickClaim, sc model.Schedule) {
	gen, err := s.Turns.Generate(s.runCtx, sc.AccountID, model.GenerationRequest{
		BranchID: sc.BranchID, ParticipantIDs: sc.ParticipantIDs, UserMessage: &model.NewUserMessage{Content: sc.Prompt},
		RuntimeKind: model.RuntimeScheduled, PolicyVersion: sc.PolicyVersion, TokenBudget: sc.TokenBudget,
		Options: model.CallOptions{Tools: sc.Tools},
	})
	res := model.TickResult{Status: model.RunCompleted, UserMessageID: gen.UserMessageID, RunIDs: []string{}}
	for _, r := range gen.Runs {
		res.RunIDs = append(res.RunIDs, r.RunID)
		if r.Status == model.RunAwaitingTools {
			res.Status = model.RunAwaitingTools
		}
	}
	var pe *model.ProviderError
	switch {
	case errors.As(err, &pe):
		res.Status, res.Error = model.RunFailed, pe
		for _, r := range gen.Runs {
			if r.Error != nil {
				res.Error = r.Error
				break
			}
		}
	case err != nil:
		var me *model.Error
		message := "the turn could not run"
		if errors.As(err, &me) && me.Kind != model.KindInternal {
			message = me.Message
		}
		res.Status, res.Error = model.RunFailed, &model.ProviderError{Code: "turn_failed", Message: message}
		s.Log.Warn("a scheduled turn failed", zap.String("scheduleId", sc.ID), zap.Error(err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if err := s.Graph.FinishTick(ctx, c, res); err != nil {
		s.Log.Warn("recording a scheduled turn failed", zap.String("scheduleId", sc.ID), zap.Error(err))
	}
	s.Log.Info("scheduled turn", zap.String("scheduleId", sc.ID), zap.Time("tick", c.At), zap.String("status", res.Status),
		zap.Strings("runIds", res.RunIDs))
}
