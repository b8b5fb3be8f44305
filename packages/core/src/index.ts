export * from "./errors/agboss-error.js";
export * from "./errors/error-codes.js";
export * from "./logging/logger.js";
export * from "./pauses/pause-status.js";
export * from "./store/index.js";
export * from "./time/clock.js";
export * from "./time/duration.js";
export * from "./store/memory/index.js";
