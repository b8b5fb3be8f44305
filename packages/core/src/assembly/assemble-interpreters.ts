import { ComponentKind } from "../container/component-kind.js";
import { type AnyClass, componentOfKind, describeClass } from "../container/component-registry.js";
import type { DtoClass } from "../dto/dto.js";
import { DecidedBy, type ReplyInterpreterOptions } from "../interpreters/reply-interpreter.js";
import { decidesModel } from "../models/model-provider.js";
import type { AssemblyContext } from "./assembly-context.js";

/** A role's reply interpreter, as {@link checkInterpreter} reads it. */
export interface InterpreterUse {
  readonly interpreter: AnyClass;
  /** The role that names it. */
  readonly role: AnyClass;
  /** The question role's answer DTO; undefined for an approval role. */
  readonly answer: DtoClass | undefined;
  /** How assembly reached the role, for the container's messages. */
  readonly chain: readonly unknown[];
}

/**
 * Checks a role's reply interpreter: it is one, it belongs to this role only, and it can read replies
 * (by code: an `interpret` method and its dependencies; by a model: one that is served and, for a
 * question role, can give the answer). An interpreter already checked on its role is not checked again.
 */
export function checkInterpreter(ctx: AssemblyContext, use: InterpreterUse): void {
  const { interpreter, role, chain } = use;
  const im = componentOfKind<ReplyInterpreterOptions>(interpreter, ComponentKind.ReplyInterpreter);
  if (im === undefined) {
    ctx.add(
      "reply-interpreter.not-an-interpreter",
      `${describeClass(role)} names ${describeClass(interpreter)} as its replyInterpreter, but it has no @ReplyInterpreter({ … }) decorator.`,
    );
    return;
  }
  const owner = ctx.interpreterOwners.get(interpreter);
  if (owner !== undefined && owner !== role) {
    ctx.add(
      "channel.shared-interpreter",
      `${describeClass(interpreter)} is the replyInterpreter of both ${describeClass(owner)} and ${describeClass(role)}; one interpreter belongs to one role: give each role its own.`,
    );
  }
  ctx.interpreterOwners.set(interpreter, role);
  if (owner !== undefined) return;
  ctx.checkName(interpreter);
  if (im.options.decidedBy === DecidedBy.Code) {
    if (typeof (interpreter.prototype as { interpret?: unknown }).interpret !== "function") {
      ctx.add(
        "reply-interpreter.no-interpret-method",
        `${describeClass(interpreter)} is decided by code but has no interpret(input) method; implement ReplyInterpreterHandler<${interpreter.name}>.`,
      );
    }
    ctx.checkDeps(interpreter, [...chain, role]);
  } else if (im.options.decidedBy === DecidedBy.Model) {
    checkInterpreterModel(ctx, use, im.options.model);
  } else {
    ctx.add(
      "reply-interpreter.decided-by",
      `${describeClass(interpreter)} must say decidedBy: DecidedBy.Code or DecidedBy.Model.`,
    );
  }
}

/** Checks the model an interpreter decided by a model names: there is one, it is served, and it fits the role. */
function checkInterpreterModel(ctx: AssemblyContext, use: InterpreterUse, modelId: string | undefined): void {
  const { interpreter, role, answer } = use;
  if (modelId === undefined || modelId === "") {
    ctx.add(
      "reply-interpreter.no-model",
      `${describeClass(interpreter)} is decided by a model but names none: add model: "<provider>/<model>".`,
    );
  } else if (!ctx.isServed(modelId)) {
    ctx.add(
      "model.unserved",
      `${describeClass(interpreter)} uses model "${modelId}", which no @ModelProvider serves. Add a provider whose serves matches it to @Application({ providers }).`,
    );
  } else if (answer !== undefined && decidesModel(ctx.modelProviders, modelId)) {
    ctx.add(
      "reply-interpreter.decision-model",
      `${describeClass(interpreter)} reads replies for the question role ${describeClass(role)} with "${modelId}", a decision model: it can only say yes or no, but the answer must be a ${answer.name}. Give the interpreter a chat model (one its provider does not list in decides), or decide by code.`,
    );
  }
}
