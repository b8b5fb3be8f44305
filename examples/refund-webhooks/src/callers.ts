import type { HttpCaller } from "@agboss/http";

/**
 * The desk's demo credentials: a bearer token per person. A real server reads its session store or
 * verifies a signed token here; what matters is that who is calling comes from the credential, never
 * from the body.
 *
 * - `dana-token`: Dana, a customer of the shop (tenant `acme`). She starts refund requests, which makes
 *   her the owner of their threads: she can list her open questions, cancel a request and read its record.
 * - `manager-17-token`, `manager-99-token`: finance managers; they answer refund and credit approvals.
 * - `lead-4-token`: a warehouse lead; answers damage questions.
 * - `globex-manager-token`: a manager of another shop on the same desk (tenant `globex`).
 */
export const DEMO_CALLERS: Readonly<Record<string, HttpCaller>> = Object.freeze({
  "dana-token": { tenantId: "acme", ownerId: "dana" },
  "manager-17-token": { tenantId: "acme", answeredBy: "manager-17" },
  "manager-99-token": { tenantId: "acme", answeredBy: "manager-99" },
  "lead-4-token": { tenantId: "acme", answeredBy: "lead-4" },
  "globex-manager-token": { tenantId: "globex", answeredBy: "manager-1" },
});

/** The `authenticate` hook of the desk's routes: `Authorization: Bearer <token>`; anything else is 401. */
export function authenticateDemoCaller(request: Request): HttpCaller | undefined {
  const match = /^Bearer (\S+)$/.exec(request.headers.get("authorization") ?? "");
  return match?.[1] === undefined ? undefined : DEMO_CALLERS[match[1]];
}
