// Builds the inbox page's script and style sheet into dist/client/, where the server reads them.
// The page is bundled whole (Preact included): nothing is fetched from elsewhere at run time.
import { build } from "esbuild";

const root = new URL("..", import.meta.url);

await build({
  absWorkingDir: root.pathname,
  entryPoints: { inbox: "client/main.tsx" },
  outdir: "dist/client",
  bundle: true,
  format: "esm",
  target: ["es2022", "chrome111", "firefox115", "safari16"],
  minify: true,
  sourcemap: false,
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  logLevel: "warning",
});
await build({
  absWorkingDir: root.pathname,
  entryPoints: { inbox: "client/styles.css" },
  outdir: "dist/client",
  bundle: true,
  minify: true,
  target: ["chrome111", "firefox115", "safari16"],
  logLevel: "warning",
});
