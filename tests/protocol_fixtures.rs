//! Every protocol-depth code (era probe, capability probes, pagination, tool, prompt and resource
//! metadata, tool results, undeclared notifications, repeat drift) against a hermetic fixture
//! server, with every default probe on: tests/fixtures/servers/protocol_cases.json, run by the
//! same harness as the runtime cases.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use support::*;

/// Flags every case gets: JSON output and short windows so the suite stays fast.
const BASE_ARGS: [&str; 7] = [
    "--json",
    "--quiet-ms",
    "300",
    "--timeout",
    "3000",
    "--shutdown-grace",
    "1000",
];

#[test]
fn every_protocol_fixture_gets_exactly_its_expected_issues() {
    cases::run_cases(
        &repo().join("tests/fixtures/servers"),
        "protocol_cases.json",
        &BASE_ARGS,
        40,
    );
}
