import { type AnyClass, componentOf } from "@agboss/core";

/** `RefundAgent ("refund-agent")`: a class and its component name, for messages. @internal */
export function componentLabel(cls: AnyClass): string {
  const name = componentOf<{ name?: unknown }>(cls)?.options.name;
  const className = cls.name || "(anonymous class)";
  return typeof name === "string" ? `${className} ("${name}")` : className;
}
