import type { AnyClass } from "../components/component-registry.js";
import type { DtoClass } from "../dto/dto.js";

/** One step of a flow. Parallel launches and child workflows add kinds here. */
export type FlowStep = { readonly kind: "agent"; readonly agent: AnyClass };

/** A compiled-to-be flow: from a start, through steps, to a finish. Built with {@link start}. */
export interface FlowDefinition {
  readonly start: AnyClass;
  /** The DTO the start hands to the first step. */
  readonly returns: DtoClass | undefined;
  readonly steps: readonly FlowStep[];
  readonly finish: AnyClass;
}
