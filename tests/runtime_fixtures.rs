//! Every runtime issue code against a hermetic fixture server (standard-library Python scripts in
//! tests/fixtures/servers/), driven by the data in tests/fixtures/servers/cases.json: each case
//! names the server, extra guard flags and the exact issues expected (code, severity, detail code,
//! stdout line and byte offset). All cases run in parallel; every mismatch is reported at once.
//! After each run, no process that carries the case's environment marker may be left alive.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use support::*;

/// Flags every case gets: JSON output and short windows so the suite stays fast. These cases pin
/// the runtime core (one defect each), so the era probe and the capability probes are off here;
/// tests/protocol_fixtures.rs runs fixtures with every default probe on.
const BASE_ARGS: [&str; 9] = [
    "--json",
    "--no-discover",
    "--no-capability-probes",
    "--quiet-ms",
    "300",
    "--timeout",
    "3000",
    "--shutdown-grace",
    "1000",
];

#[test]
fn every_fixture_server_gets_exactly_its_expected_issues() {
    cases::run_cases(
        &repo().join("tests/fixtures/servers"),
        "cases.json",
        &BASE_ARGS,
        40,
    );
}

/// The late-output window runs from initialization beside the work: a line written 500 ms after
/// `initialized` is caught with the default 1 s window although the operations took 50 ms.
#[test]
fn the_late_output_window_overlaps_the_work_and_still_sees_a_late_line() {
    let args: Vec<String> = [
        "--json",
        "--no-discover",
        "--request",
        "tools/list",
        "--",
        "python3",
        "late_after_init.py",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let run = guard(
        &args,
        &repo().join("tests/fixtures/servers"),
        &[],
        &[],
        std::time::Duration::from_secs(60),
    );
    let json = run.json();
    let rows: Vec<_> = json["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(issue_row)
        .collect();
    assert_eq!(
        rows,
        [
            serde_json::json!({"code": "stdout-non-json", "severity": "error", "line": 4, "byteOffset": 265})
        ],
        "{}",
        json["issues"]
    );
}
