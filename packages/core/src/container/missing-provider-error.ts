import { AgbossError } from "../errors/agboss-error.js";
import { ErrorCode } from "../errors/error-codes.js";
import { tokenName } from "./provider.js";

/** A dependency could not be resolved. The message shows the chain and the argument that failed. */
export class MissingProviderError extends AgbossError {
  static override readonly kind: string = "MissingProviderError";
  readonly token: string;

  constructor(args: {
    token: unknown;
    owner?: unknown;
    deps?: readonly unknown[];
    index?: number;
    chain: readonly unknown[];
  }) {
    const name = tokenName(args.token);
    const path = args.chain.map(tokenName).join(" → ");
    const signature =
      args.owner === undefined || args.deps === undefined
        ? ""
        : `\n  ${tokenName(args.owner)}(${args.deps.map((d, i) => (i === args.index ? "?" : tokenName(d))).join(", ")})`;
    const where =
      args.owner === undefined ? "" : ` needed by ${tokenName(args.owner)} (argument ${String(args.index)})`;
    super(
      ErrorCode.MissingProvider,
      `No provider for ${name}${where}.${signature}\n  chain: ${path}\n` +
        `Add ${name} (or a class that extends it) to @Application({ providers: [...] })` +
        (args.owner === undefined ? "." : `, or remove it from ${tokenName(args.owner)}'s deps.`),
    );
    this.token = name;
  }
}

/** Several providers extend one contract, so the container cannot choose. */
export class AmbiguousProviderError extends AgbossError {
  static override readonly kind: string = "AmbiguousProviderError";
  constructor(token: unknown, candidates: readonly unknown[]) {
    super(
      ErrorCode.AmbiguousProvider,
      `${tokenName(token)} is provided by ${candidates.map(tokenName).join(" and ")}; keep one of them in @Application({ providers }).`,
    );
  }
}
