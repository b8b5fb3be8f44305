export type {
  AnswerOptions,
  AnswerReceipt,
  AnswerResumeRequest,
  DecisionResumeRequest,
  ReplyResumeRequest,
  ResumeCredential,
  ResumeOptions,
  ResumeRequest,
} from "./answering/answer-request.js";
export type { PauseInboxQuery, PauseSummary } from "./answering/inbox.js";
export { App, type ExecuteOptions } from "./app/app.js";
export { type CreateAppOptions, createApp } from "./app/create-app.js";
export { type Budget, type BudgetLimits, type BudgetOptions, BudgetPer, budget } from "./budgets/budget.js";
export {
  type BudgetExceededDetails,
  BudgetExceededError,
  type BudgetLevel,
} from "./budgets/budget-exceeded-error.js";
export { ToolCallApprovalAskDto, ToolCallApprovalDecisionDto } from "./channels/approval-dtos.js";
export { AutoApproveChannel, AutoRejectChannel } from "./channels/auto-channels.js";
export type {
  ApprovalArguments,
  ChannelAsk,
  ChannelAskValue,
  ChannelReminder,
  ChannelWithdrawal,
} from "./channels/channel-ask.js";
export {
  type ApprovalRoleOptions,
  Channel,
  type ChannelOptions,
  ChannelRole,
  type ChannelRoleOptions,
  type QuestionRoleOptions,
} from "./channels/channel-decorators.js";
export { type ChannelHandler, ChannelOf } from "./channels/channel-of.js";
export {
  ChannelOutcome,
  type ChannelRef,
  MAX_CHANNEL_REF_BYTES,
  type RoleAnswer,
} from "./channels/channel-outcome.js";
export { ExpiryOutcome, type PauseDeadlines } from "./channels/pause-deadlines.js";
export { Agent, type AgentOptions } from "./components/agent.js";
export { Application, type ApplicationOptions } from "./components/application.js";
export { Tool, type ToolHandler, type ToolOptions } from "./components/tool.js";
export {
  Workflow,
  WorkflowFinish,
  type WorkflowFinishOptions,
  type WorkflowOptions,
  WorkflowStart,
  type WorkflowStartOptions,
} from "./components/workflow.js";
export { type WorkflowInput, type WorkflowOutput, WorkflowStartOf } from "./components/workflow-start-of.js";
export { ComponentKind } from "./container/component-kind.js";
export { type AnyClass, type ComponentMeta, componentOf } from "./container/component-registry.js";
export type { ComponentTypes } from "./container/component-types.js";
export { Container } from "./container/container.js";
export {
  ExecutionContext,
  type ExecutionFrame,
  type StepContext,
  type Tenant,
} from "./container/execution-context.js";
export { Injectable, type InjectableOptions } from "./container/injectable.js";
export { AmbiguousProviderError, MissingProviderError } from "./container/missing-provider-error.js";
export {
  InjectionToken,
  type OnInit,
  type OnStart,
  type OnStop,
  type Provider,
  type Token,
} from "./container/provider.js";
export { CLOCK, LOGGER } from "./container/well-known-tokens.js";
export { WorkflowFinishTextDto, WorkflowStartTextDto } from "./dto/builtin-dtos.js";
export {
  Dto,
  type DtoClass,
  type DtoSchema,
  type DtoValue,
  dtoJsonSchema,
  isDtoClass,
  parseDto,
} from "./dto/dto.js";
export { isSensitive, MASK, maskWith, sensitive } from "./dto/sensitive.js";
export * from "./errors/agboss-error.js";
export {
  InterpreterPromptError,
  StoreUnavailableError,
  UnknownWorkflowStartError,
} from "./errors/app-errors.js";
export { AssemblyError, type AssemblyViolation } from "./errors/assembly-error.js";
export { type DtoIssue, DtoValidationError } from "./errors/dto-validation-error.js";
export * from "./errors/error-codes.js";
export {
  AppClosedError,
  ChannelTimeoutError,
  ExecutionCancelledError,
  ExecutionIdTakenError,
  ModelUnservedError,
  NoExecutionContextError,
  ThreadBusyError,
  ThreadOwnerError,
  ToolTimeoutError,
} from "./errors/runtime-errors.js";
export { AgentFailedError, StepFailedError } from "./errors/step-failed-error.js";
export {
  ExecutionAbortedError,
  ExecutionEndedError,
  ExecutionInterruptedError,
  ExecutionUnknownError,
} from "./execution/execution-errors.js";
export type {
  ExecutionErrorEvent,
  ExecutionEvents,
  ExecutionFinishEvent,
  ExecutionPauseEvent,
  ExecutionResumeEvent,
  ExecutionStartEvent,
} from "./execution/execution-events.js";
export {
  DEFAULT_FOLLOW_POLL_MS,
  ExecutionFollow,
  type FollowOptions,
  type FollowTarget,
} from "./execution/execution-follow.js";
export type { ExecutionOutput } from "./execution/execution-output.js";
export {
  type ExecutionBeginEvent,
  type ExecutionRestEvent,
  ExecutionStream,
  type ExecutionStreamEvent,
} from "./execution/execution-stream.js";
export {
  BranchVerdict,
  type QuorumBranchResult,
  QuorumDecidedBy,
  type QuorumJoinOutput,
  QuorumOutcome,
} from "./flow/branch-verdict.js";
export { FailurePolicy } from "./flow/failure-policy.js";
export type { FlowDefinition, FlowStep, JoinErrorHandler, LaunchOptions } from "./flow/flow-definition.js";
export type {
  Quorum,
  QuorumBranch,
  QuorumGroupsOptions,
  QuorumOptions,
  QuorumPredicate,
} from "./flow/quorum-options.js";
export { FlowBuilder, start } from "./flow/start.js";
export { JoinDeadlineError } from "./graph/launch-errors.js";
export type {
  InputOf,
  OutputOf,
  ReplyInterpreterHandler,
  ReplyInterpreterInput,
} from "./interpreters/component-types.js";
export { ReplyInterpretation } from "./interpreters/reply-interpretation.js";
export {
  DecidedBy,
  ReplyInterpreter,
  type ReplyInterpreterOptions,
} from "./interpreters/reply-interpreter.js";
export * from "./logging/logger.js";
export {
  ANSWER_TOOL_NAME,
  type ChatMessage,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type ChatToolCall,
  type ChatToolSpec,
  type ModelUsage,
} from "./models/chat-model.js";
export {
  Decision,
  type DecisionModel,
  type DecisionQuestion,
  type DecisionRequest,
  type DecisionResponse,
} from "./models/decision-model.js";
export { fromLangChain } from "./models/langchain-chat-model.js";
export {
  ModelProvider,
  type ModelProviderHandler,
  type ModelProviderOptions,
  servesModel,
} from "./models/model-provider.js";
export {
  callTool,
  replyWith,
  ScriptExhaustedError,
  ScriptedChatModel,
  type ScriptedTurn,
} from "./models/scripted-chat-model.js";
export {
  NotPausedError,
  PauseAnswererError,
  PauseExpiredError,
  PauseIdTakenError,
  ReplyInterpreterMissingError,
  UninterpretableReplyError,
  UnknownPauseError,
} from "./pauses/pause-errors.js";
export * from "./pauses/pause-status.js";
export type { PendingPause } from "./pauses/pending-pause.js";
export { PiiDetector } from "./pii/pii-detector.js";
export { blockWithRefusal, PiiAction, type PiiPolicy, replaceWithToken } from "./pii/pii-policy.js";
export { PiiRefusedError } from "./pii/pii-refused-error.js";
export { PiiUnknownTokenError } from "./pii/pii-unknown-token-error.js";
export type { ChildExecutionRecord, ExecutionRecord, ExecutionStep } from "./records/execution-record.js";
export { ExecutionStatus } from "./records/execution-status.js";
export type { PauseEntry } from "./records/pause-entry.js";
export type { ComponentRecord, StepRecord } from "./records/step.js";
export type {
  ProgressEvent,
  StreamError,
  StreamEventBase,
  StreamToolCall,
} from "./services/progress.js";
// For applications, the store is something to configure; what a store author needs is in
// `@agboss/core/store`.
export { LeaseLostError } from "./store/fence.js";
export { MemoryStore, memoryStore } from "./store/memory/memory-store.js";
export type { Store, StoreContext, StoreFactory } from "./store/store.js";
export * from "./time/clock.js";
export * from "./time/duration.js";
