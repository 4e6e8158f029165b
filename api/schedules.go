package api

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ctxgraph/ctxgraph/model"
)

type scheduleRequest struct {
	Cron           string         `json:"cron" validate:"required,max=200"`
	Timezone       string         `json:"timezone" validate:"max=64"`
	BranchID       string         `json:"branchId" validate:"max=100"`
	ParticipantIDs []string       `json:"participantIds" validate:"required,min=1,max=8,unique,dive,required,max=100"`
	Prompt         string         `json:"prompt" validate:"required,maxbytes=1048576"`
	PolicyVersion  string         `json:"policyVersion" validate:"max=200"`
	TokenBudget    *int           `json:"tokenBudget" validate:"omitempty,gte=1,lte=2000000"`
	Tools          []toolSpecBody `json:"tools" validate:"omitempty,max=128,dive"`
	Enabled        *bool          `json:"enabled"`
	At             string         `json:"at" validate:"omitempty,datetime=2006-01-02T15:04:05Z07:00"`
}

// schedulesOrUnavailable answers 503 when the server keeps no schedules.
func (s *Server) schedulesOrUnavailable() (model.Schedules, error) {
	if s.schedules == nil {
		return nil, &httpError{status: http.StatusServiceUnavailable, message: "schedules are not configured on this server"}
	}
	return s.schedules, nil
}

func (s *Server) createSchedule(c echo.Context) error {
	var req scheduleRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	sched, err := s.schedulesOrUnavailable()
	if err != nil {
		return err
	}
	opts, err := callOptionsBody{Tools: req.Tools}.options()
	if err != nil {
		return err
	}
	in := model.NewSchedule{
		ConversationID: c.Param("id"), BranchID: req.BranchID, ParticipantIDs: req.ParticipantIDs, Cron: req.Cron,
		Timezone: req.Timezone, Prompt: req.Prompt, PolicyVersion: req.PolicyVersion, TokenBudget: derefInt(req.TokenBudget),
		Tools: opts.Tools, Enabled: req.Enabled == nil || *req.Enabled, At: timeOf(req.At),
	}
	return respond(c, http.StatusCreated, func(ctx context.Context) (any, error) {
		return sched.CreateSchedule(ctx, accountOf(c), in)
	})
}

func (s *Server) listSchedules(c echo.Context) error {
	sched, err := s.schedulesOrUnavailable()
	if err != nil {
		return err
	}
	list, err := sched.Schedules(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"schedules": list})
}

func (s *Server) readSchedule(c echo.Context) error {
	sched, err := s.schedulesOrUnavailable()
	if err != nil {
		return err
	}
	one, err := sched.Schedule(c.Request().Context(), accountOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, one)
}

func (s *Server) deleteSchedule(c echo.Context) error {
	sched, err := s.schedulesOrUnavailable()
	if err != nil {
		return err
	}
	return respond(c, http.StatusNoContent, func(ctx context.Context) (any, error) {
		return nil, sched.DeleteSchedule(ctx, accountOf(c), c.Param("id"))
	})
}
