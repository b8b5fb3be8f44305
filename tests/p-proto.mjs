import { pathToFileURL } from "node:url";
import { register } from "tsx/esm/api";

const loaded = [];
const api = register({ namespace: "agboss-types", onImport: (u) => loaded.push(u) });
const entry = pathToFileURL(process.argv[2]).href;
const ns = await api.import(entry, import.meta.url);
await new Promise((r) => setImmediate(r));
console.log(Object.keys(ns));
console.log(loaded.length, loaded.filter((u) => !u.includes("node_modules")).slice(0, 40));
const again = await api.import(
  loaded.find((u) => u.includes("interpreter-app")),
  entry,
);
console.log(again.DeskApplication === ns.DeskApplication);
const core = await api.import("@agboss/core", entry);
console.log(typeof core.componentOf, core.componentOf(ns.DeskApplication)?.kind);
