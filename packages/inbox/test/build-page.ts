import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Builds the page's script and style sheet before the tests serve them. */
export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL("../scripts/build-client.mjs", import.meta.url))], {
    stdio: "inherit",
  });
}
