//! `--transcript`: every byte of every process of a run, in order, with its direction and its
//! process, within the run's own limits; `replay` prints it; a broken file is a one-line error.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use support::*;

fn s(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// The bytes of a record: `text` as it is, else `bytes` (`b"..."`, `\xNN` escapes) decoded.
fn record_bytes(r: &Value) -> Vec<u8> {
    if let Some(t) = r["text"].as_str() {
        return t.as_bytes().to_vec();
    }
    let e = r["bytes"]
        .as_str()
        .expect("a bytes record has text or bytes");
    let body = e
        .strip_prefix("b\"")
        .and_then(|b| b.strip_suffix('"'))
        .unwrap();
    let mut out = Vec::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match chars.next().unwrap() {
            'n' => out.push(b'\n'),
            'r' => out.push(b'\r'),
            't' => out.push(b'\t'),
            '\\' => out.push(b'\\'),
            '"' => out.push(b'"'),
            'x' => {
                let hex: String = chars.by_ref().take(2).collect();
                out.push(u8::from_str_radix(&hex, 16).unwrap());
            }
            other => panic!("unknown escape \\{other}"),
        }
    }
    out
}

fn read_transcript(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no transcript at {}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect()
}

/// Per process: its spawn record and its streams, each the concatenation of its records.
struct Process {
    role: String,
    streams: BTreeMap<String, Vec<u8>>,
    exited: bool,
}

fn processes(records: &[Value]) -> BTreeMap<u64, Process> {
    let mut out: BTreeMap<u64, Process> = BTreeMap::new();
    let mut last_t = 0.0;
    for r in &records[1..] {
        let t = r["t"].as_f64().expect("every record has its time");
        assert!(t >= last_t, "records out of time order: {r}");
        last_t = t;
        let proc = r["proc"].as_u64().unwrap();
        match (r["event"].as_str(), r["dir"].as_str()) {
            (Some("spawn"), _) => {
                assert!(!out.contains_key(&proc), "process {proc} spawned twice");
                out.insert(
                    proc,
                    Process {
                        role: r["role"].as_str().unwrap().to_string(),
                        streams: BTreeMap::new(),
                        exited: false,
                    },
                );
            }
            (Some("exit"), _) => {
                let p = out.get_mut(&proc).expect("exit of a process never spawned");
                p.exited = true;
            }
            (Some(_), _) => {}
            (None, Some(dir)) => {
                let p = out
                    .get_mut(&proc)
                    .unwrap_or_else(|| panic!("bytes of process {proc} before its spawn: {r}"));
                p.streams
                    .entry(dir.to_string())
                    .or_default()
                    .extend(record_bytes(r));
            }
            _ => panic!("a record that is neither bytes nor an event: {r}"),
        }
    }
    out
}

#[test]
fn every_byte_of_every_process_is_recorded_in_order() {
    let scratch = Scratch::new("transcript-bytes");
    let dir = scratch.0.clone();
    let file = dir.join("run.jsonl");
    let servers = repo().join("tests/fixtures/servers");
    let run = guard(
        &s(&[
            "--json",
            "--transcript",
            file.to_str().unwrap(),
            "--request",
            "tools/list",
            "--adversarial-probe",
            "invalid-method",
            "--quiet-ms",
            "300",
            "--",
            "python3",
            "transcript_bytes.py",
        ]),
        &servers,
        &[],
        &[],
        Duration::from_secs(120),
    );
    let report = run.json();
    assert_eq!(
        report["transcript"],
        file.to_str().unwrap(),
        "the report names the file"
    );
    let records = read_transcript(&file);
    assert_eq!(
        records[0]["transcript"], 1,
        "a header first: {}",
        records[0]
    );
    let procs = processes(&records);
    let roles: Vec<&str> = procs.values().map(|p| p.role.as_str()).collect();
    assert!(roles.contains(&"run 1"), "{roles:?}");
    assert!(
        roles
            .iter()
            .any(|r| r.starts_with("probes from invalid-method")),
        "{roles:?}"
    );
    for (n, p) in &procs {
        assert!(p.exited, "process {n} ({}) has no exit record", p.role);
        if p.role.ends_with("(legacy era, started early)") {
            // A legacy-only server's early process (machine idle, or MCP_GUARD_EARLY_LEGACY=1):
            // never sent a byte, ended all the same.
            assert!(!p.streams.contains_key("in"), "process {n} was sent bytes");
            continue;
        }
        let out = &p.streams["out"];
        // Exactly what the server wrote: the banner with its raw bytes, then JSON lines.
        let banner: &[u8] = b"banner \xff\xfe \x1b[31mred\x1b[0m\n";
        assert!(
            out.starts_with(banner),
            "process {n}: stdout starts {:?}",
            &out[..out.len().min(40)]
        );
        for line in out[banner.len()..]
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
        {
            let v: Value = serde_json::from_slice(line).unwrap_or_else(|e| {
                panic!("process {n}: a stdout line that is not the server's JSON ({e})")
            });
            assert_eq!(v["jsonrpc"], "2.0");
        }
        assert_eq!(
            p.streams["err"], b"stderr: starting\n\xc3\x28 not utf-8\n",
            "process {n}: stderr exactly"
        );
        // Everything the guard sent: JSON-RPC lines, the probe's frame among them.
        let sent = String::from_utf8_lossy(&p.streams["in"]).to_string();
        assert!(sent.contains("\"method\":\"initialize\""), "{sent}");
    }
    let main = procs.values().find(|p| p.role == "run 1").unwrap();
    let sent = String::from_utf8_lossy(&main.streams["in"]);
    let methods: Vec<String> = sent
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|v| v["method"].as_str().map(str::to_string))
        .collect();
    let at = |m: &str| {
        methods
            .iter()
            .position(|x| x == m)
            .unwrap_or_else(|| panic!("{m} not sent: {methods:?}"))
    };
    assert!(at("initialize") < at("notifications/initialized"));
    assert!(at("notifications/initialized") < at("tools/list"));

    // `replay` prints it readably: directions, processes, the raw bytes escaped.
    let replay = guard(
        &s(&["replay", file.to_str().unwrap()]),
        &servers,
        &[],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(replay.status, Some(0), "{}", replay.stderr);
    for want in [
        "spawn run 1",
        "stdin  ->",
        "stdout <-",
        "stderr  !",
        "\\xff\\xfe",
        "\\x1b[31m",
        "exit code",
    ] {
        assert!(
            replay.stdout.contains(want),
            "replay lacks {want:?}:\n{}",
            replay.stdout
        );
    }
    assert!(
        !replay.stdout.contains('\x1b'),
        "a terminal escape reached the terminal"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_flood_transcript_stays_within_the_limits() {
    let scratch = Scratch::new("transcript-flood");
    let dir = scratch.0.clone();
    let file = dir.join("flood.jsonl");
    // The 1 GiB flood, read up to an 8 MiB stdout limit; stderr limited to 64 KiB.
    let max_stdout: u64 = 8 << 20;
    let max_stderr: u64 = 64 << 10;
    let run = guard(
        &s(&[
            "--transcript",
            file.to_str().unwrap(),
            "--no-capability-probes",
            "--max-stdout-bytes",
            &max_stdout.to_string(),
            "--max-stderr-bytes",
            &max_stderr.to_string(),
            "--",
            "python3",
            "flood_gib.py",
        ]),
        &repo().join("tests/fixtures/servers"),
        &[],
        &[],
        Duration::from_secs(120),
    );
    assert_eq!(run.status, Some(1), "{}", run.stderr);
    assert!(
        run.stdout.contains("transcript: "),
        "the failing text report names the file"
    );
    let size = std::fs::metadata(&file).unwrap().len();
    let records = read_transcript(&file);
    let out: u64 = records
        .iter()
        .filter(|r| r["dir"] == "out")
        .map(|r| record_bytes(r).len() as u64)
        .sum();
    // The guard stops reading at the limit (one read may cross it by a chunk of 64 KiB).
    assert!(
        out <= max_stdout + (64 << 10),
        "{out} stdout bytes recorded"
    );
    assert!(out >= max_stdout / 2, "the flood was recorded: {out} bytes");
    // 'x' is one byte escaped; each 64 KiB record adds tens of bytes.
    let bound = max_stdout + (64 << 10) + max_stderr + (1 << 20);
    assert!(size <= bound, "transcript of {size} bytes, over {bound}");
    if let Some(rss) = run.peak_rss_kib {
        assert!(
            rss < 64 * 1024,
            "peak RSS {rss} KiB: the transcript is streamed, not held"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_transcripts_and_paths_are_one_line_errors() {
    let scratch = Scratch::new("transcript-bad");
    let dir = scratch.0.clone();
    let broken = dir.join("broken.jsonl");
    std::fs::write(&broken, "{\"transcript\":1}\nnot json\n").unwrap();
    let run = guard(
        &s(&["replay", broken.to_str().unwrap()]),
        &dir,
        &[],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(run.status, Some(2));
    assert!(
        run.stdout.is_empty(),
        "nothing half-printed: {}",
        run.stdout
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("broken.jsonl:2"), "{}", run.stderr);
    let missing = guard(
        &s(&["replay", "nope.jsonl"]),
        &dir,
        &[],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(missing.status, Some(2), "{}", missing.stderr);
    for (args, says) in [
        (
            vec!["--transcript", "/nonexistent-dir-xyz/t.jsonl", "--", "true"],
            "does not exist",
        ),
        (
            vec!["--transcript", "/dev/stdout", "--", "true"],
            "stdout carries the report",
        ),
        (
            vec![
                "--transcript",
                "same.json",
                "--json-file",
                "same.json",
                "--",
                "true",
            ],
            "its own file",
        ),
    ] {
        let run = guard(&s(&args), &dir, &[], &[], Duration::from_secs(30));
        assert_eq!(run.status, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
