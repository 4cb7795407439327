//! Hostile input, the no-effect proof and the buffering diagnosis against hermetic fixture
//! servers: tests/fixtures/servers/adversarial_cases.json, run by the shared case harness (exact
//! issues, JSON pointers, nothing left running). One fixture per probe outcome — handles it,
//! closes cleanly, crashes, hangs, answers with a success, pollutes stdout, keeps state — plus
//! the article's gateway in a build that validates before acting and one that acts first.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use support::*;

/// Flags every case gets: JSON output and short windows so the suite stays fast. The timeout and
/// the shutdown grace are longer than the runtime cases': each case here starts several server
/// processes at once (one per probe, up to two per core), and a loaded machine must not turn a
/// slow start or a slow exit into a finding.
const BASE_ARGS: [&str; 8] = [
    "--json",
    "--no-capability-probes",
    "--quiet-ms",
    "300",
    "--timeout",
    "5000",
    "--shutdown-grace",
    "2000",
];

#[test]
fn every_adversarial_fixture_gets_exactly_its_expected_issues() {
    cases::run_cases_with(
        &repo().join("tests/fixtures/servers"),
        "adversarial_cases.json",
        &BASE_ARGS,
        20,
        4,
    );
}
