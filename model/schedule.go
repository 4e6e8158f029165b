package model

import (
	"context"
	"time"
)

// Schedule statuses (lastStatus), besides the run statuses: a tick whose turn is running.
const ScheduleRunning = "running"

// NewSchedule is POST /v1/conversations/{id}/schedules: a turn the server starts itself
// at each tick of a cron expression (DESIGN §6 "Modes").
type NewSchedule struct {
	ConversationID string
	// BranchID is where the turns run; empty means the conversation's main branch.
	BranchID       string
	ParticipantIDs []string
	// Cron has five fields, or six with seconds first, or is a descriptor (@hourly,
	// @every 90s); Timezone is the IANA zone its fields are read in (UTC when empty).
	Cron          string
	Timezone      string
	Prompt        string
	PolicyVersion string
	TokenBudget   int
	Tools         []ToolSpec
	Enabled       bool
	// NextRunAt is the schedule's first tick, filled in by the service that checked Cron.
	NextRunAt *time.Time
	At        *time.Time
}

// Schedule is a schedule as GET lists it, with its next tick and how its last one went.
type Schedule struct {
	ID             string     `json:"id"`
	ConversationID string     `json:"conversationId"`
	BranchID       string     `json:"branchId"`
	ParticipantIDs []string   `json:"participantIds"`
	Cron           string     `json:"cron"`
	Timezone       string     `json:"timezone"`
	Prompt         string     `json:"prompt"`
	PolicyVersion  string     `json:"policyVersion,omitempty"`
	TokenBudget    int        `json:"tokenBudget,omitempty"`
	Tools          []ToolSpec `json:"tools"`
	Enabled        bool       `json:"enabled"`
	CreatedAt      time.Time  `json:"createdAt"`
	// NextRunAt is the next tick that fires (null when disabled).
	NextRunAt *time.Time `json:"nextRunAt"`
	// LastRunAt is when the last tick was claimed; LastStatus how its turn went (running,
	// completed, awaiting_tools or failed); LastRunIDs the runs it started; LastError why
	// it failed.
	LastRunAt  *time.Time     `json:"lastRunAt"`
	LastStatus string         `json:"lastStatus,omitempty"`
	LastRunIDs []string       `json:"lastRunIds"`
	LastError  *ProviderError `json:"lastError,omitempty"`
	// AccountID is the schedule's account: the scheduler runs its turns under it.
	AccountID string `json:"-"`
}

// TickClaim claims one due tick of a schedule for this process.
type TickClaim struct {
	AccountID  string
	ScheduleID string
	// At is the tick; NextRunAt the tick after it, from which the schedule goes on.
	At        time.Time
	NextRunAt time.Time
	// Claimant names the process, for the record.
	Claimant string
}

// TickResult is how a claimed tick's turn went.
type TickResult struct {
	Status        string
	UserMessageID string
	RunIDs        []string
	Error         *ProviderError
}

// ScheduleGraph is where schedules and their ticks are kept.
type ScheduleGraph interface {
	// CreateSchedule writes a schedule on a branch of its conversation.
	CreateSchedule(ctx context.Context, accountID string, in NewSchedule) (Schedule, error)
	// Schedules lists a conversation's schedules, oldest first (KindNotFound for an unknown
	// conversation).
	Schedules(ctx context.Context, accountID, conversationID string) ([]Schedule, error)
	// Schedule reads one schedule.
	Schedule(ctx context.Context, accountID, id string) (Schedule, error)
	// DeleteSchedule deletes a schedule: it fires no more.
	DeleteSchedule(ctx context.Context, accountID, id string) error
	// UpcomingSchedules lists the enabled schedules of every account, soonest tick first, at
	// most limit: what a scheduler reads to learn what is due and when to look again.
	UpcomingSchedules(ctx context.Context, limit int) ([]Schedule, error)
	// ClaimTick claims a due tick, once across every process sharing the graph: the
	// schedule and true when this claim won, false when the tick was claimed already, the
	// schedule has moved past it, or it is gone or disabled.
	ClaimTick(ctx context.Context, in TickClaim) (Schedule, bool, error)
	// FinishTick records how a claimed tick's turn went, on the tick and, when it is still
	// the schedule's last tick, on the schedule.
	FinishTick(ctx context.Context, in TickClaim, res TickResult) error
}

// Schedules is what the API offers of schedules.
type Schedules interface {
	// CreateSchedule checks a new schedule (its cron, time zone, branch and participants)
	// and writes it.
	CreateSchedule(ctx context.Context, accountID string, in NewSchedule) (Schedule, error)
	Schedules(ctx context.Context, accountID, conversationID string) ([]Schedule, error)
	Schedule(ctx context.Context, accountID, id string) (Schedule, error)
	DeleteSchedule(ctx context.Context, accountID, id string) error
}
