import {
  type App,
  type DtoClass,
  dtoJsonSchema,
  PauseResolution,
  PauseStatus,
  ToolCallApprovalDecisionDto,
} from "@agboss/core";
import { appInternals } from "@agboss/core/internal";
import type { AgbossHttpOptions } from "./agboss-http-options.js";
import { MAX_THREAD_ID_CHARS } from "./body-checks.js";
import { type HttpContext, httpContext } from "./http-context.js";
import { MAX_IDEMPOTENCY_KEY_CHARS } from "./idempotency.js";
import { DEFAULT_INBOX_LIMIT, MAX_INBOX_LIMIT } from "./inbox-route.js";
import { PROBLEM_JSON } from "./problem.js";

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema) => ({ "application/json": { schema } });
/** A run's events as server-sent events (`Accept: text/event-stream`): `event: <type>`, `data: <JSON>`. */
const EVENT_STREAM = {
  "text/event-stream": {
    schema: {
      type: "string",
      description:
        "With `Accept: text/event-stream`: the run's events, one `event: <type>` / `data: <JSON>` each (execution.started or execution.resumed, model.text, model.turn, budget.spent, tool.started, tool.returned, tool.failed, pause.asked, pause.answered, pause.withdrawn), and last execution.finished or execution.paused (`output`: the Execution) or execution.failed (`problem`: its problem document).",
    },
  },
};
/** A followed execution's events as server-sent events: always an event stream. */
const FOLLOWED_EVENTS = {
  "text/event-stream": {
    schema: {
      type: "string",
      description:
        "The followed execution's events, one `event: <type>` / `data: <JSON>` each, encoded as a start's stream: from a pass on the instance that serves the request, everything it does (model.text, model.turn, budget.spent, tool.started, tool.returned, tool.failed, pause.asked, pause.answered, pause.withdrawn); from other instances, read from the store every poll interval, pause.asked, pause.answered and pause.withdrawn. execution.paused (`output`: the Execution, sensitive fields masked) each time it rests on pauses; the stream ends after execution.finished (`output`) or execution.failed (`problem`), at once for an execution that had ended.",
    },
  },
};
const problem = (description: string) => ({
  description,
  content: { [PROBLEM_JSON]: { schema: ref("Problem") } },
});

/** A component name from a DTO or start name: letters and digits only. */
function componentName(name: string): string {
  return name.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_m, _s, c: string) => c.toUpperCase());
}

const COMMON_PROBLEMS = {
  "400": problem(
    "The body or a parameter is invalid (`dto.invalid`, every field in `issues`), or the body is not UTF-8 JSON",
  ),
  "401": problem("No caller was recognised"),
  "403": problem("The caller may not do this"),
  "413": problem("The body is larger than the limit"),
  "415": problem("The body is not declared as JSON"),
  "500": problem("The execution failed, or the server did"),
  "503": problem("The store is unavailable or the application is shutting down; retry"),
};

function staticSchemas(): Record<string, Schema> {
  return {
    Problem: {
      type: "object",
      description: "RFC 9457 problem details, with the AGBoss error code.",
      required: ["type", "title", "status", "detail", "code"],
      properties: {
        type: { type: "string", format: "uri-reference" },
        title: { type: "string" },
        status: { type: "integer" },
        detail: { type: "string" },
        code: { type: "string", examples: ["pause.unknown", "thread.busy", "dto.invalid"] },
        issues: { type: "array", items: ref("Issue") },
        reason: {
          type: "string",
          description: "Why a reply could not be read (`pause.uninterpretable-reply`).",
        },
      },
    },
    Issue: {
      type: "object",
      required: ["path", "message"],
      properties: { path: { type: "string" }, message: { type: "string" } },
    },
    PendingPause: {
      type: "object",
      required: ["answeredBy", "kind", "agent", "channel", "ask"],
      properties: {
        pauseId: { type: "string", description: "Only for a pause its thread's owner answers." },
        answeredBy: { enum: ["thread-owner", "channel"] },
        kind: { enum: ["approval", "question"] },
        agent: { type: "string" },
        channel: { type: "string" },
        ask: { description: "The question, sensitive fields masked." },
        childExecutionId: { type: "string" },
        itemIndex: { type: "integer" },
      },
    },
    Execution: {
      type: "object",
      required: ["status", "threadId", "executionId", "pending"],
      properties: {
        status: { enum: ["running", "paused", "completed", "failed", "cancelled"] },
        threadId: { type: "string" },
        executionId: { type: "string" },
        output: { description: "The finish's output, once completed." },
        pending: { type: "array", items: ref("PendingPause") },
      },
    },
    AnswerOutcome: {
      oneOf: [
        {
          type: "object",
          required: ["outcome", "pauseId", "execution"],
          properties: {
            outcome: { const: "answered" },
            pauseId: { type: "string" },
            execution: ref("Execution"),
          },
        },
        {
          type: "object",
          required: ["outcome", "pauseId", "threadId", "executionId", "resolvedAt"],
          properties: {
            outcome: { const: "recorded" },
            pauseId: { type: "string" },
            threadId: { type: "string" },
            executionId: { type: "string" },
            resolvedAt: { type: "string", format: "date-time" },
          },
        },
        {
          type: "object",
          required: ["outcome", "pauseId", "resolution"],
          properties: {
            outcome: { const: "already_resolved" },
            pauseId: { type: "string" },
            resolution: { enum: Object.values(PauseResolution) },
            by: { type: "string" },
            at: { type: "string", format: "date-time" },
          },
        },
      ],
    },
    PauseSummary: {
      type: "object",
      required: ["status", "channel", "answeredBy", "kind", "agent", "threadId", "executionId", "askedAt"],
      properties: {
        pauseId: { type: "string", description: "Only for a pause its thread's owner answers." },
        status: { enum: Object.values(PauseStatus) },
        resolution: { enum: Object.values(PauseResolution) },
        channel: { type: "string" },
        answeredBy: { enum: ["thread-owner", "channel"] },
        kind: { enum: ["approval", "question"] },
        agent: { type: "string" },
        threadId: { type: "string" },
        executionId: { type: "string" },
        ask: { description: "The question, sensitive fields masked." },
        askedAt: { type: "string", format: "date-time" },
        resolvedAt: { type: "string", format: "date-time" },
        responder: { type: "string" },
      },
    },
    Cancelled: {
      type: "object",
      required: ["threadId", "executionId", "status"],
      properties: {
        threadId: { type: "string" },
        executionId: { type: "string" },
        status: { type: "string" },
      },
    },
    ExecutionRecord: {
      type: "object",
      description: "The execution's history and its audit trail (`pauses`), sensitive fields masked.",
      required: ["executionId", "threadId", "ownerId", "status", "startedAt", "steps", "pauses"],
      properties: {
        executionId: { type: "string" },
        rootExecutionId: { type: "string" },
        threadId: { type: "string" },
        ownerId: { type: "string" },
        workflow: { type: "object", properties: { name: { type: "string" }, version: { type: "string" } } },
        start: { type: "string" },
        status: { type: "string" },
        startedAt: { type: "string", format: "date-time" },
        finishedAt: { type: "string", format: "date-time" },
        input: {},
        output: {},
        error: { type: "object" },
        steps: { type: "array", items: { type: "object" } },
        pauses: { type: "array", items: { type: "object" } },
        children: { type: "array", items: { type: "object" } },
      },
    },
  };
}

/** The answer DTOs of the application's question roles. */
function answerDtos(context: HttpContext): DtoClass[] {
  const found = new Set<DtoClass>();
  for (const agent of appInternals(context.app).assembled.agents.values()) {
    for (const tool of agent.tools.values()) {
      if (tool.channel?.answer !== undefined) found.add(tool.channel.answer);
    }
  }
  return [...found];
}

/** @internal The document for a handler's context. */
export function buildOpenApi(context: HttpContext): Record<string, unknown> {
  const { options } = context;
  const openApi = options.openApi === false ? {} : (options.openApi ?? {});
  const base = (options.basePath ?? "").replace(/\/+$/, "");
  const schemas = staticSchemas();
  const paths: Record<string, unknown> = {};

  const decisionName = "Decision";
  schemas[decisionName] = dtoJsonSchema(ToolCallApprovalDecisionDto);
  const answers = answerDtos(context).map((dto) => {
    const name = componentName(dto.name);
    schemas[name] = dtoJsonSchema(dto);
    return ref(name);
  });

  for (const start of context.starts.values()) {
    const input = `${componentName(start.name)}Input`;
    schemas[input] = dtoJsonSchema(start.input);
    paths[`${base}/starts/${start.name}`] = {
      post: {
        operationId: `start-${start.name}`,
        summary: `Start ${start.workflow} at ${start.name}`,
        tags: ["executions"],
        parameters: [
          {
            name: "Idempotency-Key",
            in: "header",
            required: false,
            description:
              "Starts one execution per key; a retry with the same key gets that execution's state (`Idempotent-Replayed: true`).",
            schema: { type: "string", minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_CHARS },
          },
        ],
        requestBody: {
          required: true,
          content: json({
            type: "object",
            required: ["input"],
            additionalProperties: false,
            properties: {
              input: ref(input),
              threadId: { type: "string", minLength: 1, maxLength: MAX_THREAD_ID_CHARS },
            },
          }),
        },
        responses: {
          "200": {
            description: "The execution ended; or, with `Accept: text/event-stream`, its events as it runs",
            content: { ...json(ref("Execution")), ...EVENT_STREAM },
          },
          "202": {
            description: "The execution rests paused; `pending` lists what it waits for",
            content: json(ref("Execution")),
          },
          ...COMMON_PROBLEMS,
          "409": problem("The thread is busy, or a start with this key still runs"),
          "422": problem("This Idempotency-Key started an execution with another input"),
        },
      },
    };
  }

  paths[`${base}/pauses/{pauseId}/answer`] = {
    post: {
      operationId: "answer-pause",
      summary: "Answer a pause with a decision, an answer or a reply",
      tags: ["pauses"],
      parameters: [
        { name: "pauseId", in: "path", required: true, schema: { type: "string" } },
        {
          name: "Prefer",
          in: "header",
          required: false,
          description:
            "`respond-async`: reply 202 as soon as the answer is recorded; the execution moves on in the background.",
          schema: { type: "string" },
        },
      ],
      requestBody: {
        required: true,
        content: json({
          oneOf: [
            {
              type: "object",
              required: ["decision"],
              additionalProperties: false,
              properties: { decision: ref(decisionName) },
            },
            {
              type: "object",
              required: ["answer"],
              additionalProperties: false,
              properties: { answer: answers.length === 0 ? { type: "object" } : { oneOf: answers } },
            },
            {
              type: "object",
              required: ["reply"],
              additionalProperties: false,
              properties: { reply: { type: "string", minLength: 1 } },
            },
          ],
        }),
      },
      responses: {
        "200": {
          description:
            "Answered, or already resolved (how, by whom, when); or, with `Accept: text/event-stream`, the execution's events from the answer on",
          content: { ...json(ref("AnswerOutcome")), ...EVENT_STREAM },
        },
        "202": { description: "Recorded (`Prefer: respond-async`)", content: json(ref("AnswerOutcome")) },
        ...COMMON_PROBLEMS,
        "404": problem("No such pause in the caller's tenant"),
        "409": problem("The execution ended in another call while this answer waited"),
        "422": problem("The reply could not be read; `reason` says why, and the pause keeps waiting"),
      },
    },
  };
  paths[`${base}/pauses`] = {
    get: {
      operationId: "list-pauses",
      summary: "The pauses of the caller's threads (the inbox)",
      tags: ["pauses"],
      parameters: [
        {
          name: "status",
          in: "query",
          schema: { type: "string", default: "pending" },
          description: `Comma-separated: ${Object.values(PauseStatus).join(", ")}`,
        },
        { name: "threadId", in: "query", schema: { type: "string" } },
        { name: "role", in: "query", schema: { type: "string" }, description: "The channel asked" },
        {
          name: "limit",
          in: "query",
          schema: { type: "integer", minimum: 1, maximum: MAX_INBOX_LIMIT, default: DEFAULT_INBOX_LIMIT },
        },
      ],
      responses: {
        "200": {
          description: "The pauses, oldest first",
          content: json({
            type: "object",
            required: ["pauses"],
            properties: { pauses: { type: "array", items: ref("PauseSummary") } },
          }),
        },
        ...COMMON_PROBLEMS,
      },
    },
  };
  paths[`${base}/threads/{threadId}/cancel`] = {
    post: {
      operationId: "cancel-thread",
      summary: "Cancel the caller's thread; its pending pauses are withdrawn",
      tags: ["threads"],
      parameters: [{ name: "threadId", in: "path", required: true, schema: { type: "string" } }],
      responses: {
        "200": { description: "Cancelled, or how it had ended", content: json(ref("Cancelled")) },
        ...COMMON_PROBLEMS,
        "404": problem("No such thread of the caller's"),
      },
    },
  };
  paths[`${base}/executions/{executionId}`] = {
    get: {
      operationId: "get-execution",
      summary: "An execution's record with its audit trail",
      tags: ["executions"],
      parameters: [{ name: "executionId", in: "path", required: true, schema: { type: "string" } }],
      responses: {
        "200": { description: "The record", content: json(ref("ExecutionRecord")) },
        ...COMMON_PROBLEMS,
        "404": problem("No such execution of the caller's"),
      },
    },
  };

  paths[`${base}/executions/{executionId}/events`] = {
    get: {
      operationId: "follow-execution",
      summary: "Follow an execution another request runs, as server-sent events",
      tags: ["executions"],
      parameters: [{ name: "executionId", in: "path", required: true, schema: { type: "string" } }],
      responses: {
        "200": { description: "The execution's events until it ends", content: FOLLOWED_EVENTS },
        ...COMMON_PROBLEMS,
        "404": problem("No such execution of the caller's"),
      },
    },
  };
  paths[`${base}/threads/{threadId}/events`] = {
    get: {
      operationId: "follow-thread",
      summary: "Follow the thread's latest execution, as server-sent events",
      tags: ["threads"],
      parameters: [{ name: "threadId", in: "path", required: true, schema: { type: "string" } }],
      responses: {
        "200": { description: "The execution's events until it ends", content: FOLLOWED_EVENTS },
        ...COMMON_PROBLEMS,
        "404": problem("No such thread of the caller's"),
      },
    },
  };

  const securitySchemes = openApi.securitySchemes;
  return {
    openapi: "3.1.0",
    info: { title: openApi.title ?? context.app.name, version: openApi.version ?? "0.0.0" },
    ...(openApi.servers === undefined ? {} : { servers: openApi.servers }),
    paths,
    components: {
      schemas,
      ...(securitySchemes === undefined ? {} : { securitySchemes }),
    },
    ...(securitySchemes === undefined
      ? {}
      : { security: Object.keys(securitySchemes).map((name) => ({ [name]: [] })) }),
  };
}

/**
 * The OpenAPI 3.1 document of the routes `createAgbossHttp(app, options)` serves: one start route per
 * workflow start with its input DTO's JSON Schema, the answer route with the approval decision and every
 * question role's answer DTO, and the problem documents.
 */
export function openApiDocument(
  app: App,
  options: Omit<AgbossHttpOptions, "authenticate">,
): Record<string, unknown> {
  return buildOpenApi(httpContext(app, { ...options, authenticate: () => undefined }));
}
