//! mcp-stdio-guard: a strict MCP stdio client that checks every byte a server writes, plus a
//! static scan for code that writes to stdout, and reports for people and CI.
//!
//! The library never prints: renderers in `report/` return text, and only `main.rs` writes it to
//! stdout (this tool of all tools must keep stdout clean). See ARCHITECTURE.md for the map.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod catalog;
pub(crate) mod cli;
#[cfg(test)]
mod code_rules;
pub mod exit;
pub(crate) mod fingerprint;
pub(crate) mod input;
#[doc(hidden)] // public for the integration tests and fuzz targets
pub mod issue;
#[doc(hidden)] // public for the integration tests
pub mod protocol;
#[cfg(test)]
mod readme;
#[doc(hidden)] // public for the property tests
pub mod redact;
pub mod report;
pub mod run;
pub mod runtime;
pub mod scan;
pub mod settings;
pub mod shard;
pub mod trace;

/// The guard's version (also in JSON fingerprints, SARIF and `--version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the project and its rule docs live (SARIF `informationUri`, `helpUri`).
pub const REPOSITORY_URL: &str = "https://github.com/mcp-stdio-guard/mcp-stdio-guard";
