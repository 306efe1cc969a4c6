#!/usr/bin/env node
// The `tskernel` executable: runs the compiled CLI from dist/ (built by `npm run build`).
import { runCli } from "../dist/cli/main.js";

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
process.exitCode = code;
