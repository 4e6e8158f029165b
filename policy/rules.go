package policy

import "github.com/ctxgraph/ctxgraph/model"

// The rule ids of the decisions the policies make (docs/assembly.md explains them). Each
// names its policy, then the case; a decision that later rules refined joins them with
// model.Rule.And. Their text is part of the contract: API responses and the graph carry
// it. model.RuleBranchLineage is the rule of branch_ineligible omissions.
const (
	RuleInstructionsConversation model.Rule = "instructions.conversation"
	RuleInstructionsParticipant  model.Rule = "instructions.participant"

	RuleAuditOnly          model.Rule = "visibility.audit_only"
	RuleParticipantPrivate model.Rule = "visibility.participant_private"
	RuleChildNotPromoted   model.Rule = "visibility.child_not_promoted"

	RuleRawRestricted       model.Rule = "privacy.raw_restricted_for_provider"
	RuleNoSafeSummary       model.Rule = "privacy.restricted_no_safe_summary"
	RuleNeverSent           model.Rule = "privacy.never_sent"
	RuleSafeSummaryOnly     model.Rule = "privacy.safe_summary_only"
	RulePrivacyArgsWithheld model.Rule = "privacy.arguments_withheld"

	RuleSourceMissing       model.Rule = "provenance.source_missing"
	RuleBodyRedacted        model.Rule = "provenance.body_redacted"
	RuleSourceMissingMarked model.Rule = "provenance.source_missing_marked"

	RuleReplacedByEligible model.Rule = "supersession.replaced_by_eligible"

	RuleStaleOmitted model.Rule = "freshness.stale_omitted"
	RuleStaleMarked  model.Rule = "freshness.stale_marked"

	RuleMemoryCurrent model.Rule = "memory.current"

	RuleBothSidesIncluded model.Rule = "conflict.both_sides_included"
	RuleLoneSurvivor      model.Rule = "conflict.lone_survivor"

	RuleCheckpointLatest   model.Rule = "checkpoint.latest_of_run"
	RuleCheckpointEarlier  model.Rule = "checkpoint.earlier_of_run"
	RuleCheckpointOtherRun model.Rule = "checkpoint.other_run"

	RuleSkillsLatest   model.Rule = "skills.latest_of_run"
	RuleSkillsEarlier  model.Rule = "skills.earlier_of_run"
	RuleSkillsOtherRun model.Rule = "skills.other_run"

	RuleUnresolvedPending    model.Rule = "recovery.unresolved_pending"
	RuleUnresolvedDeferred   model.Rule = "recovery.unresolved_deferred"
	RuleUnresolvedFailed     model.Rule = "recovery.unresolved_failed"
	RuleChildFailed          model.Rule = "recovery.child_failed"
	RuleChildTimedOut        model.Rule = "recovery.child_timed_out"
	RuleOtherParticipant     model.Rule = "recovery.other_participant"
	RuleResolvedByRetry      model.Rule = "recovery.resolved_by_retry"
	RuleRepresentedByCall    model.Rule = "recovery.represented_by_call"
	RuleHandleRaw            model.Rule = "recovery.handle_raw"
	RuleHandleOverByteBudget model.Rule = "recovery.handle_over_byte_budget"
	RuleHandleRestricted     model.Rule = "recovery.handle_restricted"

	RuleCurrentRunRound          model.Rule = "rehydration.current_run_round"
	RuleCurrentRunCallInArtifact model.Rule = "rehydration.current_run_call_in_artifact"
	RuleCurrentRunResult         model.Rule = "rehydration.current_run_result"
	RuleExactRequested           model.Rule = "rehydration.exact_requested"
	RuleOverByteBudget           model.Rule = "rehydration.over_byte_budget"
	RuleMemoryStandsIn           model.Rule = "rehydration.memory_stands_in"
	RuleRawSourceIncluded        model.Rule = "rehydration.raw_source_included"
	RuleRawSourceTrimmed         model.Rule = "rehydration.raw_source_trimmed"
	RuleLatestRound              model.Rule = "rehydration.latest_round"
	RuleModelRequested           model.Rule = "rehydration.model_requested"
	RuleRecallRefused            model.Rule = "rehydration.recall_refused"

	RuleCurrentMessage      model.Rule = "window.current_message"
	RuleDiscussionDirective model.Rule = "window.discussion_directive"
	RuleRecentTurn          model.Rule = "window.recent_turn"
	RuleOlderTurn           model.Rule = "window.older_turn"
	RuleCompletedToolRound  model.Rule = "window.completed_tool_round"
	RuleRawNotReplayed      model.Rule = "window.raw_not_replayed"
	RuleRoundReference      model.Rule = "window.round_reference"
	RuleOlderTurnValues     model.Rule = "window.older_turn_values"

	RuleBudgetWindow       model.Rule = "budget.tier_window"
	RuleBudgetEvidence     model.Rule = "budget.tier_evidence"
	RuleBudgetRuntimeState model.Rule = "budget.tier_runtime_state"
	RuleBudgetMemories     model.Rule = "budget.tier_memories"
	RuleBudgetFinalFit     model.Rule = "budget.final_fit"
	RuleRecoveryCompacted  model.Rule = "budget.recovery_compacted"
	RuleRecoveryAggregated model.Rule = "budget.recovery_aggregated"
)
