// `@agboss/core/internal`: what AGBoss's own packages (the testing kit, the CLI) reach into. No
// semver promise: anything here may change in any release. Applications use `@agboss/core`.
export { type AppInternals, appInternals } from "./app/app.js";
export { SWEEP_INTERVAL_MS } from "./execution/recovery.js";
export { ModelRegistry } from "./models/model-registry.js";
export { LEASE_RENEW_MS, LEASE_TTL_MS } from "./services/tree-lease.js";
