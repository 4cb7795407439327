//! Random bytes as a source file of every language the scan supports. The first byte picks the
//! file name (its extension picks the language; an extension-less name goes by the shebang) and
//! the size from which the plan parses statement by statement; the rest is the file.
//! Invariants: nothing panics or overflows the stack of a scan worker; every finding has a
//! location inside the file (line ≥ 1, column ≥ 1, start before end, columns within the line);
//! and the prefilter and the plan change no finding (the same file scanned with them off gives
//! the same findings, parse-error notes aside: the plan keeps some bytes from the parser).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_stdio_guard::issue::Location;
use mcp_stdio_guard::scan::{self, ScanOptions};
use std::path::Path;

const NAMES: [&str; 10] = scan::FUZZ_FILE_NAMES;

fn findings(path: &Path, bytes: &[u8], opts: &ScanOptions) -> Vec<(&'static str, u32, u32)> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.split('\n').collect();
    let issues = scan::scan_source(path, bytes.to_vec(), opts);
    let mut out = Vec::new();
    for issue in &issues {
        let Some(Location::Source {
            line,
            column,
            end_line,
            end_column,
            ..
        }) = &issue.location
        else {
            panic!("{} has no source location", issue.code());
        };
        let (line, column, end_line, end_column) = (*line, *column, *end_line, *end_column);
        assert!(
            line >= 1 && column >= 1,
            "{}: {line}:{column}",
            issue.code()
        );
        assert!(
            (line, column) <= (end_line, end_column),
            "{}: {line}:{column} after {end_line}:{end_column}",
            issue.code()
        );
        for (l, c) in [(line, column), (end_line, end_column)] {
            let row = lines.get(l as usize - 1);
            assert!(
                row.is_some(),
                "{}: line {l} of {}",
                issue.code(),
                lines.len()
            );
            let width = row.map_or(0, |r| r.chars().count()) as u32;
            assert!(
                c <= width + 1,
                "{}: column {c} of a {width}-char line {l}",
                issue.code()
            );
        }
        if issue.code() != "static-parse-error" {
            out.push((issue.code(), line, column));
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, source)) = data.split_first() else {
        return;
    };
    let path = Path::new(NAMES[pick as usize % NAMES.len()]);
    let mut opts = ScanOptions::new(Vec::new(), "/".into());
    // Small region thresholds reach the statement-by-statement plan on small inputs.
    opts.region_min_bytes = [0, 16, 64, 256, 4096, usize::MAX][(pick as usize / 10) % 6];
    let source = source.to_vec();
    // A scan worker's stack, as in production.
    std::thread::Builder::new()
        .stack_size(scan::WORKER_STACK_BYTES)
        .spawn(move || {
            let planned = findings(path, &source, &opts);
            opts.prefilter = false;
            let whole = findings(path, &source, &opts);
            assert_eq!(
                planned, whole,
                "the prefilter or the plan changed a finding"
            );
        })
        .expect("spawn")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
});
