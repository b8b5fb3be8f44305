import type { Logger } from "../logging/logger.js";
import type { Clock } from "../time/clock.js";
import { InjectionToken } from "./provider.js";

/**
 * The application's Clock, injectable: `deps: [CLOCK]`. Code that waits or stamps time should read it,
 * so tests that move the clock move that code too.
 */
export const CLOCK = new InjectionToken<Clock>("Clock");

/** The application's Logger, injectable: `deps: [LOGGER]`. */
export const LOGGER = new InjectionToken<Logger>("Logger");
