export * from "./conformance/index.js";
