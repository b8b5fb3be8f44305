#!/usr/bin/env node
import { runCli } from "./cli.js";

// Exit at once: the application's modules may have left timers or handles open while loading.
process.exit(await runCli(process.argv.slice(2)));
