#!/usr/bin/env node
// Runs the mcp-stdio-guard binary of this platform (the esbuild/biome pattern): npm installs the
// one optional dependency whose `os`/`cpu` match, and this launcher finds its binary and runs it
// with the same arguments, stdio and exit status. It never writes to stdout itself: the guard's
// stdout may be a report another program parses.
"use strict";

const { spawnSync } = require("node:child_process");
const path = require("node:path");

const PLATFORMS = {
  "darwin-arm64": "@mcp-stdio-guard/darwin-arm64",
  "darwin-x64": "@mcp-stdio-guard/darwin-x64",
  "linux-arm64": "@mcp-stdio-guard/linux-arm64",
  "linux-x64": "@mcp-stdio-guard/linux-x64",
  "win32-x64": "@mcp-stdio-guard/win32-x64",
};

function fail(message) {
  process.stderr.write(`mcp-stdio-guard: ${message}\n`);
  process.exit(2);
}

function binaryPath() {
  // An explicit binary wins (a local build, or a platform npm has no package for).
  if (process.env.MCP_STDIO_GUARD_BINARY) {
    return process.env.MCP_STDIO_GUARD_BINARY;
  }
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    fail(
      `no prebuilt binary for ${key} (there are: ${Object.keys(PLATFORMS).join(", ")}); ` +
        "install it with `cargo install --locked mcp-stdio-guard` and set MCP_STDIO_GUARD_BINARY",
    );
  }
  const exe = process.platform === "win32" ? "mcp-stdio-guard.exe" : "mcp-stdio-guard";
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    fail(
      `the package ${pkg} that holds the binary for ${key} is not installed. ` +
        "It is an optional dependency of mcp-stdio-guard: reinstall without --omit=optional " +
        "(or --no-optional), and make sure the lockfile was not written on another platform",
    );
  }
}

const binary = binaryPath();
const result = spawnSync(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
if (result.error) {
  fail(`cannot run ${path.basename(binary)} (${binary}): ${result.error.message}`);
}
if (result.signal) {
  // Die of the same signal, so callers see what the guard saw.
  process.kill(process.pid, result.signal);
}
process.exit(result.status ?? 1);
