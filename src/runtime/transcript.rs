//! `--transcript <file>`: the raw exchange of every process of a run (the main run, the era
//! processes, the adversarial probes' processes, the buffering rerun), both directions and stderr,
//! as JSON lines, timestamped on one clock.
//!
//! Records are written while the run goes (never held in memory) to a temporary file next to the
//! destination, renamed onto it when the run ends ([`Transcript::finish`]), or when the guard is
//! interrupted (what happened up to the signal, beside the partial report). Each record is one
//! line:
//!
//! - `{"transcript": 1, "guard": VERSION, "started": RFC 3339}` first;
//! - `{"t": ms, "proc": n, "event": "spawn", "target": name, "role": "run 1", "pid": p, "argv": [...]}`
//!   (`"event": "spawn-error"` with `error` when the command could not start);
//! - `{"t": ms, "proc": n, "dir": "in"|"out"|"err", "text": "..."}`: bytes as sent (`in`, to the
//!   server's stdin) or received (`out` stdout, `err` stderr), exactly: `text` when they are UTF-8,
//!   else `bytes`, escaped as the reports show bytes (`b"..."`, `\xNN` for every other byte);
//! - `{"t": ms, "proc": n, "event": "exit", "code": c, "signal": s}`;
//! - `{"t": ms, "proc": n, "event": "stderr-cut", "dropped": bytes}` when stderr passed its limit.
//!
//! Bounded by the run's own limits: stdout is recorded as far as the guard reads it
//! (`--max-stdout-bytes`), stderr up to `--max-stderr-bytes` per process (the rest is counted),
//! stdin is what the guard sends. Secrets are scrubbed from every record as from the reports.

use crate::redact::{self, Redactor};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub const FORMAT_VERSION: u64 = 1;

/// One run's transcript file.
#[derive(Debug)]
pub struct Transcript {
    out: Mutex<Option<std::io::BufWriter<std::fs::File>>>,
    start: Instant,
    next_proc: AtomicU32,
    /// Where it goes, and the temporary file it is written to first (None: written in place).
    target: PathBuf,
    temporary: Option<PathBuf>,
    error: Mutex<Option<String>>,
}

impl Transcript {
    /// Starts a transcript for `target` into `file`: the file itself (a device such as
    /// `/dev/stderr` is written in place), or `temporary`, renamed onto `target` when the run
    /// ends (the report layer opens it: [`crate::report`] decides where report files go).
    /// `started`: the UTC time the run started, as the reports write it.
    pub fn create(
        target: &Path,
        file: std::fs::File,
        temporary: Option<PathBuf>,
        started: &str,
    ) -> Arc<Transcript> {
        let t = Transcript {
            out: Mutex::new(Some(std::io::BufWriter::with_capacity(256 * 1024, file))),
            start: Instant::now(),
            next_proc: AtomicU32::new(1),
            target: target.to_path_buf(),
            temporary,
            error: Mutex::new(None),
        };
        t.write(&json!({
            "transcript": FORMAT_VERSION,
            "guard": crate::VERSION,
            "started": started,
        }));
        Arc::new(t)
    }

    /// The file the transcript goes to.
    pub fn path(&self) -> &Path {
        &self.target
    }

    fn ms(&self) -> f64 {
        (self.start.elapsed().as_micros() as f64) / 1000.0
    }

    /// Writes one record, stamped with the time under the lock: the file's order is the
    /// order of the times.
    fn write(&self, record: &Value) {
        let Ok(mut out) = self.out.lock() else { return };
        let Some(w) = out.as_mut() else { return };
        let mut record = record.clone();
        if record.get("t").is_some() {
            record["t"] = Value::from(self.ms());
        }
        let mut line = serde_json::to_vec(&record).expect("JSON values serialize");
        line.push(b'\n');
        if let Err(e) = w.write_all(&line)
            && let Ok(mut err) = self.error.lock()
        {
            err.get_or_insert(e.to_string());
        }
    }

    /// Flushes and moves the transcript into place. Returns its path, or why it failed.
    pub fn finish(&self) -> Result<PathBuf, String> {
        let writer = self.out.lock().ok().and_then(|mut o| o.take());
        let flushed = match writer {
            Some(mut w) => w.flush().map_err(|e| e.to_string()),
            None => Ok(()),
        };
        let failed = self.error.lock().ok().and_then(|e| e.clone());
        let result = match (flushed, failed) {
            (Err(e), _) | (Ok(()), Some(e)) => Err(e),
            (Ok(()), None) => match &self.temporary {
                Some(tmp) => std::fs::rename(tmp, &self.target).map_err(|e| e.to_string()),
                None => Ok(()),
            },
        };
        if result.is_err()
            && let Some(tmp) = &self.temporary
        {
            let _ = std::fs::remove_file(tmp);
        }
        result.map(|()| self.target.clone()).map_err(|e| {
            format!(
                "cannot write the transcript {} ({e})",
                self.target.display()
            )
        })
    }
}

/// What a target's processes record into: the transcript, the target's name, the role of the
/// processes spawned with it (`run 1`, `probe crlf`, `buffering rerun`) and the target's secrets.
#[derive(Clone)]
pub struct Tap {
    transcript: Arc<Transcript>,
    target: Arc<str>,
    role: String,
    secrets: Arc<Redactor>,
}

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tap").field("role", &self.role).finish()
    }
}

impl Tap {
    pub fn new(transcript: Arc<Transcript>, target: &str, secrets: Redactor) -> Tap {
        Tap {
            transcript,
            target: Arc::from(target),
            role: String::new(),
            secrets: Arc::new(secrets),
        }
    }

    /// The same tap for processes of another role.
    pub fn role(&self, role: impl Into<String>) -> Tap {
        Tap {
            role: role.into(),
            ..self.clone()
        }
    }

    pub fn role_name(&self) -> &str {
        &self.role
    }

    /// Records a process start; its bytes go to the returned [`ProcTap`].
    pub fn spawned(&self, pid: u32, argv: &[String], max_stderr: u64) -> ProcTap {
        let proc = self.transcript.next_proc.fetch_add(1, Ordering::Relaxed);
        let argv: Vec<String> = redact::argv(argv)
            .iter()
            .map(|a| self.secrets.scrub(a))
            .collect();
        self.transcript.write(&json!({
            "t": self.transcript.ms(),
            "proc": proc,
            "event": "spawn",
            "target": self.secrets.scrub(&self.target),
            "role": self.role,
            "pid": pid,
            "argv": argv,
        }));
        ProcTap(Arc::new(ProcInner {
            tap: self.clone(),
            proc,
            stderr_left: AtomicU64::new(max_stderr),
            stderr_dropped: AtomicU64::new(0),
        }))
    }

    /// Records a command that could not start.
    pub fn spawn_failed(&self, argv: &[String], error: &str) {
        let proc = self.transcript.next_proc.fetch_add(1, Ordering::Relaxed);
        self.transcript.write(&json!({
            "t": self.transcript.ms(),
            "proc": proc,
            "event": "spawn-error",
            "target": self.secrets.scrub(&self.target),
            "role": self.role,
            "argv": redact::argv(argv).iter().map(|a| self.secrets.scrub(a)).collect::<Vec<_>>(),
            "error": self.secrets.scrub(error),
        }));
    }
}

/// One process's share of the transcript.
#[derive(Clone, Debug)]
pub struct ProcTap(Arc<ProcInner>);

#[derive(Debug)]
struct ProcInner {
    tap: Tap,
    proc: u32,
    stderr_left: AtomicU64,
    stderr_dropped: AtomicU64,
}

/// A direction of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// To the server's stdin.
    In,
    /// From its stdout.
    Out,
    /// From its stderr.
    Err,
}

impl Dir {
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::In => "in",
            Dir::Out => "out",
            Dir::Err => "err",
        }
    }
}

impl ProcTap {
    pub fn proc(&self) -> u32 {
        self.0.proc
    }

    /// Records bytes in one direction (stderr only within its limit).
    pub fn bytes(&self, dir: Dir, data: &[u8]) {
        let inner = &self.0;
        let mut data = data;
        if dir == Dir::Err {
            let left = inner.stderr_left.load(Ordering::Relaxed);
            let keep = (data.len() as u64).min(left);
            inner.stderr_left.fetch_sub(keep, Ordering::Relaxed);
            inner
                .stderr_dropped
                .fetch_add(data.len() as u64 - keep, Ordering::Relaxed);
            data = &data[..keep as usize];
        }
        if data.is_empty() {
            return;
        }
        let t = &inner.tap.transcript;
        let mut record = json!({"t": t.ms(), "proc": inner.proc, "dir": dir.as_str()});
        let secrets = &inner.tap.secrets;
        match std::str::from_utf8(data) {
            Ok(text) if secrets.is_empty() => record["text"] = Value::from(text),
            Ok(text) => record["text"] = Value::from(secrets.scrub(text)),
            Err(_) => {
                let lossy = String::from_utf8_lossy(data);
                let shown = if !secrets.is_empty() && secrets.scrub(&lossy) != lossy {
                    crate::issue::escape_bytes(secrets.scrub(&lossy).as_bytes(), usize::MAX)
                } else {
                    crate::issue::escape_bytes(data, usize::MAX)
                };
                record["bytes"] = Value::from(shown);
            }
        }
        t.write(&record);
    }

    /// Records the end of stderr: how much of it was over the limit.
    pub fn stderr_done(&self) {
        let dropped = self.0.stderr_dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            let t = &self.0.tap.transcript;
            t.write(&json!({"t": t.ms(), "proc": self.0.proc, "event": "stderr-cut", "dropped": dropped}));
        }
    }

    /// Records the process's exit.
    pub fn exited(&self, code: Option<i32>, signal: Option<i32>) {
        let t = &self.0.tap.transcript;
        t.write(&json!({
            "t": t.ms(),
            "proc": self.0.proc,
            "event": "exit",
            "code": code,
            "signal": signal.map(crate::runtime::transport::signal_name),
        }));
    }
}

/// `mcp-stdio-guard replay`: a transcript made readable, line by line. It remembers which
/// streams stopped in the middle of a line, so the bytes that end that line are shown as its
/// continuation (`stdout ..`) rather than as a line of their own.
#[derive(Debug, Default)]
pub struct Replay {
    open: std::collections::HashSet<(u64, &'static str)>,
}

impl Replay {
    /// One transcript line: the time, the process, then what happened, one output line per line
    /// of bytes. Bytes outside printable text are shown escaped, so the terminal never
    /// interprets them. `Err` names what is wrong with the line.
    pub fn line(&mut self, line: &str) -> Result<String, String> {
        replay_line(line, &mut self.open)
    }
}

fn replay_line(
    line: &str,
    open: &mut std::collections::HashSet<(u64, &'static str)>,
) -> Result<String, String> {
    use std::fmt::Write as _;
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not a JSON line ({e})"))?;
    if let Some(version) = v.get("transcript") {
        return Ok(format!(
            "transcript {version} of mcp-stdio-guard {}, started {}\n",
            v.get("guard").and_then(Value::as_str).unwrap_or("?"),
            v.get("started").and_then(Value::as_str).unwrap_or("?")
        ));
    }
    let t = v
        .get("t")
        .and_then(Value::as_f64)
        .ok_or("a record without its time \"t\"")?;
    let proc = v.get("proc").and_then(Value::as_u64).unwrap_or(0);
    let head = format!("{t:>11.3} ms  #{proc:<3}");
    let mut out = String::new();
    if let Some(dir) = v.get("dir").and_then(Value::as_str) {
        let (dir, arrow, more) = match dir {
            "in" => ("in", "stdin  ->", "stdin  .."),
            "out" => ("out", "stdout <-", "stdout .."),
            "err" => ("err", "stderr  !", "stderr .."),
            other => return Err(format!("unknown direction {other:?}")),
        };
        let bytes: Vec<u8> = match (v.get("text"), v.get("bytes")) {
            (Some(Value::String(s)), _) => s.clone().into_bytes(),
            (_, Some(Value::String(b))) => crate::issue::unescape_evidence(b)
                .map(|(bytes, _)| bytes)
                .ok_or("bytes that are not an escaped b\"...\" string")?,
            _ => return Err("a bytes record without \"text\" or \"bytes\"".into()),
        };
        let ends = bytes.ends_with(b"\n");
        let body = if ends {
            &bytes[..bytes.len() - 1]
        } else {
            &bytes[..]
        };
        let lines: Vec<&[u8]> = body.split(|b| *b == b'\n').collect();
        let continued = open.remove(&(proc, dir));
        for (i, l) in lines.iter().enumerate() {
            let shown = match std::str::from_utf8(l) {
                Ok(s) if !s.chars().any(|c| c.is_control() && c != '\t') => s.to_string(),
                _ => crate::issue::escape_bytes(l, usize::MAX),
            };
            let (arrow, shown) = match (i, continued, shown.is_empty()) {
                (0, true, true) => (more, "(end of line)".to_string()),
                (0, true, false) => (more, shown),
                _ => (arrow, shown),
            };
            let _ = writeln!(out, "{head} {arrow} {shown}");
        }
        if !ends {
            open.insert((proc, dir));
        }
        return Ok(out);
    }
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let what = match v.get("event").and_then(Value::as_str) {
        Some("spawn") => format!(
            "spawn {}{} (pid {}): {}",
            s("role"),
            of_target(&s("target")),
            v.get("pid").and_then(Value::as_u64).unwrap_or(0),
            argv_text(&v)
        ),
        Some("spawn-error") => format!(
            "spawn {}{} failed: {}: {}",
            s("role"),
            of_target(&s("target")),
            argv_text(&v),
            s("error")
        ),
        Some("exit") => match (v.get("code").and_then(Value::as_i64), s("signal")) {
            (Some(code), _) => format!("exit code {code}"),
            (None, sig) if !sig.is_empty() => format!("exit by signal {sig}"),
            _ => "exit".to_string(),
        },
        Some("stderr-cut") => format!(
            "stderr past --max-stderr-bytes: {} more bytes not recorded",
            v.get("dropped").and_then(Value::as_u64).unwrap_or(0)
        ),
        Some(other) => other.to_string(),
        None => return Err("a record without \"dir\" or \"event\"".into()),
    };
    let _ = writeln!(out, "{head} {what}");
    Ok(out)
}

fn of_target(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!(" of {name}")
    }
}

fn argv_text(v: &Value) -> String {
    v.get("argv")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}
