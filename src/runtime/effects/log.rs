//! The effects-log contract, for servers that follow the article's recorder pattern.
//!
//! The guard creates an empty file and exports its path as `MCP_STDIO_GUARD_EFFECTS`. A server's
//! executor — the code right behind the last validation and authorization check that performs
//! the external action — appends one JSON object per action, on one line, when it acts:
//!
//! ```text
//! {"action": "http", "target": "https://api.example/deploy"}
//! {"action": "ssh", "target": "deploy@host", "command": "uptime"}
//! ```
//!
//! The guard tails the file while the server runs and attributes each complete line to the phase
//! and request current when it appeared. Any line counts as an effect, even one that is not JSON
//! (shown escaped). The file is deleted at the end of the run.

use super::{EffectKind, Recorder};
use crate::issue::escape_bytes;
use serde_json::{Value, json};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest entry kept (longer lines are cut, still counted).
const MAX_LINE: usize = 64 * 1024;

pub struct EffectsLog {
    path: PathBuf,
    file: File,
    partial: Vec<u8>,
}

/// Log files in use, to delete them if the guard is interrupted (it exits without unwinding).
fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    static LIVE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Deletes every log file still in use (the guard got SIGINT/SIGTERM).
pub fn remove_live_logs() {
    for path in live().drain(..) {
        let _ = std::fs::remove_file(path);
    }
}

impl EffectsLog {
    /// Creates a fresh, private, empty log file in the temporary directory.
    pub fn create() -> std::io::Result<EffectsLog> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let path = std::env::temp_dir().join(format!(
            "mcp-stdio-guard-effects-{}-{}.jsonl",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_file(&path);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        // Private to the user (Windows: the temporary folder is per user already).
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(&path)?;
        let file = File::open(&path)?;
        live().push(path.clone());
        Ok(EffectsLog {
            path,
            file,
            partial: Vec::new(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records every complete line appended since the last look. `last`: also the final line
    /// without a newline.
    pub fn drain(&mut self, recorder: &Recorder, start: Instant, last: bool) {
        let mut chunk = Vec::new();
        if self.file.read_to_end(&mut chunk).is_err() {
            return;
        }
        let at = start.elapsed();
        self.partial.extend_from_slice(&chunk);
        while let Some(end) = memchr::memchr(b'\n', &self.partial) {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            record(recorder, at, &line[..line.len() - 1]);
        }
        if last && !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            record(recorder, at, &line);
        }
        if self.partial.len() > MAX_LINE {
            let line = std::mem::take(&mut self.partial);
            record(recorder, at, &line);
        }
    }
}

impl Drop for EffectsLog {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        live().retain(|p| *p != self.path);
    }
}

fn record(recorder: &Recorder, at: Duration, line: &[u8]) {
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let (summary, detail) = describe(line);
    recorder.push(EffectKind::Logged, at, summary, detail);
}

/// A one-line summary of a log entry, and the entry itself. Pure.
pub fn describe(line: &[u8]) -> (String, Value) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(entry)) => {
            let pick = |keys: &[&str]| {
                keys.iter()
                    .find_map(|k| entry.get(*k).and_then(Value::as_str))
                    .map(str::to_string)
            };
            let what = pick(&["action", "kind", "type", "name"]);
            let target = pick(&["target", "url", "host", "command", "tool"]);
            let summary = match (what, target) {
                (Some(w), Some(t)) => format!("{w} {t}"),
                (Some(w), None) => w,
                (None, Some(t)) => t,
                (None, None) => {
                    crate::runtime::checks::initialize::short(&Value::Object(entry.clone()))
                }
            };
            (summary, Value::Object(entry))
        }
        Ok(other) => (
            format!(
                "entry {}",
                crate::runtime::checks::initialize::short(&other)
            ),
            json!({"entry": other}),
        ),
        Err(_) => {
            let shown = escape_bytes(line, 80);
            (format!("unparseable entry {shown}"), json!({"raw": shown}))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn complete_lines_are_effects_and_a_partial_one_waits() {
        let mut log = EffectsLog::create().unwrap();
        let start = Instant::now();
        let r = Recorder::new(start);
        let mut w = std::fs::OpenOptions::new()
            .append(true)
            .open(log.path())
            .unwrap();
        w.write_all(b"{\"action\":\"http\",\"target\":\"https://api.example/x\"}\n{\"act")
            .unwrap();
        log.drain(&r, start, false);
        assert_eq!(r.effects().len(), 1);
        assert_eq!(r.effects()[0].summary, "http https://api.example/x");
        w.write_all(b"ion\":\"ssh\"}\nnot json\n").unwrap();
        log.drain(&r, start, true);
        let e = r.effects();
        assert_eq!(e.len(), 3);
        assert_eq!(e[1].summary, "ssh");
        assert_eq!(e[2].summary, r#"unparseable entry b"not json""#);
        let path = log.path().to_path_buf();
        // The server's handle is closed by the time its log is dropped (it exited).
        drop(w);
        drop(log);
        assert!(!path.exists());
    }
}
