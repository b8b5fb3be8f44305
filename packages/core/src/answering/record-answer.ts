import { ReplyInterpreterMissingError, UnknownPauseError } from "../pauses/pause-errors.js";
import type { PauseAnswer, PauseRecord } from "../pauses/pause-record.js";
import { PauseResolution, PauseStatus } from "../pauses/pause-status.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import {
  checkAnswerKind,
  checkCredential,
  checkCredentialShape,
  checkResumeRequest,
  notPaused,
} from "./answer-checks.js";
import type { ResumeCredential, ResumeRequest } from "./answer-request.js";
import { validatePauseAnswer } from "./answer-validation.js";
import { toolOfPause, writeAudit } from "./pause-book.js";
import { interpretReply } from "./reply-reading.js";

/**
 * Phase 1 of an answer: checks the request and the credential, reads a reply, then records the answer
 * (Pending → Resolved) and its audit entry as one unit of work, with whatever `claim` writes after them
 * (phase 2's start: the tree's lease and its running mark) in the same commit. Nothing is stored unless
 * every check passed.
 * @internal
 */
export async function recordAnswer<TClaim = undefined>(
  services: RuntimeServices,
  request: ResumeRequest,
  options: ResumeCredential & { readonly tenantId?: string },
  claim?: (resolved: PauseRecord) => Promise<TClaim>,
): Promise<{ resolved: PauseRecord; responder: string; claimed: TClaim | undefined }> {
  const credential = checkCredentialShape(options);
  const shape = checkResumeRequest(request);
  const tenantId = credential.tenantId ?? "default";
  const { store, clock, assembled } = services;
  const pause = await store.pauses.findByTenantIdAndPauseId(tenantId, shape.pauseId);
  if (pause === undefined) throw new UnknownPauseError(shape.pauseId);
  const responder = checkCredential(pause, credential);
  if (pause.status !== PauseStatus.Pending) throw notPaused(pause);
  const tool = toolOfPause(assembled, pause);
  if (tool === undefined) throw new UnknownPauseError(shape.pauseId);
  let answer: PauseAnswer;
  if (shape.reply !== undefined) {
    const interpreter = tool.channel?.replyInterpreter;
    if (interpreter === undefined) throw new ReplyInterpreterMissingError(pause.pauseId, pause.channel);
    const read = await interpretReply(services, { pause, tool, interpreter, reply: shape.reply });
    answer = {
      ...read.value,
      responder,
      reply: shape.reply,
      ...(read.cost === undefined ? {} : { cost: read.cost }),
    };
  } else {
    checkAnswerKind(pause, tool, shape);
    answer = { ...validatePauseAnswer(tool, shape.decision ?? shape.answer), responder };
  }
  const at = clock.now();
  const stored = await store.atomically(async () => {
    const resolved = await store.pauses.resolve(tenantId, pause.pauseId, answer, at);
    if (resolved === undefined) return undefined;
    await writeAudit(services, { ...resolved, resolution: PauseResolution.Replied });
    return { resolved, claimed: claim === undefined ? undefined : await claim(resolved) };
  });
  if (stored === undefined) {
    throw notPaused((await store.pauses.findByTenantIdAndPauseId(tenantId, pause.pauseId)) ?? pause);
  }
  return { resolved: stored.resolved, responder, claimed: stored.claimed };
}
