export { describeStoreConformance } from "./describe-store-conformance.js";
export type { StoreConformanceOptions, StoreConformanceSkip } from "./store-conformance-options.js";
