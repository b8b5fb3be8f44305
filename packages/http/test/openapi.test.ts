import { createApp, memoryStore } from "@agboss/core";
import { describe, expect, test } from "vitest";
import { createAgbossHttp, openApiDocument } from "../src/index.js";
import { openApiErrors } from "./contract.js";
import { DeskApplication } from "./fixtures/desk.js";

describe("the OpenAPI document", () => {
  test("is generated from the application's DTOs and served by the handler", async () => {
    const app = await createApp(DeskApplication, { store: memoryStore() });
    try {
      const http = createAgbossHttp(app, {
        authenticate: () => undefined,
        basePath: "/agboss",
        openApi: {
          title: "Desk",
          version: "1.2.3",
          securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
        },
      });
      // Served without authentication: the document holds no data.
      const res = await http.request("/agboss/openapi.json");
      expect(res.status).toBe(200);
      // biome-ignore lint/suspicious/noExplicitAny: the test walks a JSON document
      const doc = (await res.json()) as Record<string, any>;
      expect(doc).toEqual(
        openApiDocument(app, {
          basePath: "/agboss",
          openApi: {
            title: "Desk",
            version: "1.2.3",
            securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
          },
        }),
      );
      expect(doc.openapi).toBe("3.1.0");
      expect(await openApiErrors(doc)).toEqual([]);
      expect(doc.info).toEqual({ title: "Desk", version: "1.2.3" });
      expect(doc.security).toEqual([{ bearer: [] }]);
      expect(Object.keys(doc.paths).sort()).toEqual([
        "/agboss/executions/{executionId}",
        "/agboss/executions/{executionId}/events",
        "/agboss/pauses",
        "/agboss/pauses/{pauseId}/answer",
        "/agboss/starts/desk-workflow-start",
        "/agboss/threads/{threadId}/cancel",
        "/agboss/threads/{threadId}/events",
      ]);
      // A follow is an event stream, refused as the other owner-only routes are.
      const follow = doc.paths["/agboss/threads/{threadId}/events"].get;
      expect(Object.keys(follow.responses["200"].content)).toEqual(["text/event-stream"]);
      expect(follow.responses["404"]).toBeDefined();
      expect(doc.paths["/agboss/executions/{executionId}/events"].get.operationId).toBe("follow-execution");
      // The start's input DTO, as JSON Schema.
      const start = doc.paths["/agboss/starts/desk-workflow-start"].post;
      expect(start.requestBody.content["application/json"].schema.properties.input).toEqual({
        $ref: "#/components/schemas/DeskWorkflowStartInput",
      });
      expect(doc.components.schemas.DeskWorkflowStartInput).toMatchObject({
        type: "object",
        properties: { text: { type: "string" } },
        required: ["text"],
      });
      expect(Object.keys(start.responses)).toEqual(
        expect.arrayContaining(["200", "202", "400", "401", "403", "409", "413", "422"]),
      );
      expect(start.responses["409"].content["application/problem+json"].schema).toEqual({
        $ref: "#/components/schemas/Problem",
      });
      // The answer takes the approval's decision, or a question role's answer DTO, or a reply.
      const answer =
        doc.paths["/agboss/pauses/{pauseId}/answer"].post.requestBody.content["application/json"].schema;
      expect(answer.oneOf).toHaveLength(3);
      expect(answer.oneOf[1].properties.answer).toEqual({
        oneOf: [{ $ref: "#/components/schemas/AssessmentDto" }],
      });
      expect(doc.components.schemas.AssessmentDto).toMatchObject({
        properties: { refundCents: { type: "integer" }, note: { type: "string" } },
        required: ["refundCents"],
      });
      expect(doc.components.schemas.Decision).toMatchObject({
        properties: { approved: { type: "boolean" } },
      });
      // Every $ref points at a schema the document has.
      const refs = JSON.stringify(doc).match(/#\/components\/schemas\/[A-Za-z0-9]+/g) ?? [];
      for (const ref of refs) expect(doc.components.schemas).toHaveProperty(ref.split("/").at(-1) as string);
    } finally {
      await app.close();
    }
  });

  test("openApi: false serves none, and starts narrows the served starts", async () => {
    const app = await createApp(DeskApplication, { store: memoryStore() });
    try {
      const http = createAgbossHttp(app, { authenticate: () => undefined, openApi: false });
      expect((await http.request("/openapi.json")).status).toBe(404);
      expect(() =>
        createAgbossHttp(app, { authenticate: () => undefined, starts: [class NotAStart {}] }),
      ).toThrow(/NotAStart/);
      expect(() => createAgbossHttp(app, { authenticate: () => undefined, maxBodyBytes: 0 })).toThrow(
        /maxBodyBytes/,
      );
    } finally {
      await app.close();
    }
  });
});
