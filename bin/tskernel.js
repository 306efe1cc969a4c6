#!/usr/bin/env node
// The `tskernel` executable: runs the compiled CLI from dist/ (built by `npm run build`).
import { runCli } from "../dist/cli/main.js";

// A reader that stops early (`tskernel --help | head -3`) closes the pipe, and the next write fails with
// EPIPE. Stop quietly then, as a Unix tool that SIGPIPE ends does, with the status a shell shows for one
// (128 + 13), instead of an unhandled 'error' event's stack trace. Other stream errors stay errors.
const SIGPIPE_STATUS = 141;
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(SIGPIPE_STATUS);
  });
}

/** The width tables fit: the terminal's, else $COLUMNS, else none (a pipe or a file gets whole lines). */
function columns() {
  if (process.stdout.isTTY && process.stdout.columns > 0) return process.stdout.columns;
  const fromEnvironment = Number(process.env.COLUMNS);
  return Number.isInteger(fromEnvironment) && fromEnvironment > 0 ? fromEnvironment : undefined;
}

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  columns: columns(),
});
process.exitCode = code;
