//! The process watch: new descendants of the server, with their argv.
//!
//! Linux only: every 10 ms the guard lists `/proc` and examines each pid it has not seen before;
//! a process belongs to the run when it is in the server's process group or carries the run's
//! marker in its environment (descendants that left the group). Each new one is an effect, stamped
//! with the tag current when it was first seen; its argv is re-read while it lives, so a
//! fork-then-exec shows the program it became. A zombie still counts (its name from
//! `/proc/<pid>/stat`). A process that starts and exits between two looks (under ~10 ms) can be
//! missed: use the effects log for actions that must never go unseen.
//!
//! On Windows the run's Job object holds every process the server starts: the watch polls the
//! job's process list every 10 ms and names each newcomer by its program (Windows keeps no argv
//! another process can read cheaply).
//!
//! Elsewhere (macOS, BSD) there is no `/proc`: the watch is unavailable and reported as such;
//! the canary and the effects log still work.

use super::{EffectKind, Recorder};
#[cfg(not(windows))]
use crate::runtime::process::{carries_marker, read_argv, read_stat};
use serde_json::json;
use std::collections::HashMap;
#[cfg(not(windows))]
use std::time::Duration;
use std::time::Instant;

pub fn available() -> bool {
    cfg!(any(target_os = "linux", windows))
}

#[derive(Debug)]
#[cfg_attr(windows, allow(dead_code))]
enum Seen {
    NotOurs,
    /// The server process itself (not an effect).
    Server,
    Ours {
        index: usize,
        argv: Vec<String>,
    },
}

pub struct Watch {
    pgid: i32,
    #[cfg_attr(windows, allow(dead_code))]
    needle: Vec<u8>,
    known: HashMap<i32, Seen>,
}

impl Watch {
    pub fn new(server_pid: i32, marker: String) -> Watch {
        Watch {
            pgid: server_pid,
            needle: format!("{}={marker}\0", crate::runtime::process::RUN_MARKER_ENV).into_bytes(),
            known: HashMap::new(),
        }
    }

    /// One look at the run's job (Windows).
    #[cfg(windows)]
    pub fn tick(&mut self, recorder: &Recorder, start: Instant) {
        let at = start.elapsed();
        let procs = crate::runtime::process::descendants(self.pgid as u32, "");
        for p in &procs {
            if p.pid == self.pgid {
                continue;
            }
            if let Some(Seen::Ours { index, argv }) = self.known.get_mut(&p.pid) {
                // Named late: it was listed in the job before the process table showed it.
                if argv.is_empty() && !p.argv.is_empty() {
                    *argv = p.argv.clone();
                    let (summary, detail) = describe(p.pid, argv, None);
                    recorder.update(*index, summary, detail);
                }
                continue;
            }
            let (summary, mut detail) = describe(p.pid, &p.argv, None);
            detail["ppid"] = json!(p.ppid);
            let index = recorder.push(EffectKind::Process, at, summary, detail);
            let argv = p.argv.clone();
            self.known.insert(p.pid, Seen::Ours { index, argv });
        }
        // A pid that is gone may be reused: forget it.
        self.known
            .retain(|pid, _| procs.iter().any(|p| p.pid == *pid));
    }

    /// One look at the process table.
    #[cfg(not(windows))]
    pub fn tick(&mut self, recorder: &Recorder, start: Instant) {
        let Some(pids) = crate::runtime::process::other_pids() else {
            return;
        };
        let at = start.elapsed();
        let mut alive = Vec::new();
        for pid in pids {
            alive.push(pid);
            match self.known.get_mut(&pid) {
                Some(Seen::Ours { index, argv }) => {
                    let now = read_argv(pid);
                    if !now.is_empty() && now != *argv {
                        *argv = now;
                        let (summary, detail) = describe(pid, argv, None);
                        recorder.update(*index, summary, detail);
                    }
                }
                Some(_) => {}
                None => {
                    let seen = self.examine(pid, recorder, at);
                    self.known.insert(pid, seen);
                }
            }
        }
        // A pid that is gone may be reused: forget it.
        alive.sort_unstable();
        self.known.retain(|pid, _| alive.binary_search(pid).is_ok());
    }

    #[cfg(not(windows))]
    fn examine(&self, pid: i32, recorder: &Recorder, at: Duration) -> Seen {
        if pid == self.pgid {
            return Seen::Server;
        }
        let Some(stat) = read_stat(pid) else {
            return Seen::NotOurs;
        };
        let ours = stat.pgrp == self.pgid || carries_marker(pid, &self.needle);
        if !ours {
            return Seen::NotOurs;
        }
        let argv = read_argv(pid);
        let (summary, mut detail) = describe(pid, &argv, Some(&stat.name));
        detail["ppid"] = json!(stat.ppid);
        let index = recorder.push(EffectKind::Process, at, summary, detail);
        Seen::Ours { index, argv }
    }
}

/// The summary and facts of a process: its argv (secret-looking arguments redacted), or its name
/// when it exited before its argv could be read.
fn describe(pid: i32, argv: &[String], name: Option<&str>) -> (String, serde_json::Value) {
    let shown = crate::redact::argv(argv);
    if shown.is_empty() {
        let name = name.unwrap_or("?");
        (
            format!("({name}), exited before its argv could be read"),
            json!({"pid": pid, "name": name, "argv": []}),
        )
    } else {
        (
            format!("`{}`", shown.join(" ")),
            json!({"pid": pid, "argv": shown}),
        )
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_child_in_the_group_is_seen_with_its_argv_and_the_leader_is_not() {
        let mut leader = std::process::Command::new("sleep")
            .arg("5")
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = leader.id() as i32;
        let start = Instant::now();
        let r = Recorder::new(start);
        let mut w = Watch::new(pgid, "none".into());
        w.tick(&r, start);
        assert!(r.effects().is_empty(), "{:?}", r.effects());
        let mut child = std::process::Command::new("sleep")
            .arg("4.5")
            .process_group(pgid)
            .spawn()
            .unwrap();
        // The watch ticks every 10 ms; a look may come before the kernel shows the new argv (the
        // effect is then named `(sleep)` and renamed at a later look).
        for _ in 0..100 {
            w.tick(&r, start);
            if r.effects()
                .first()
                .is_some_and(|e| e.summary == "`sleep 4.5`")
            {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let e = r.effects();
        let _ = child.kill();
        let _ = leader.kill();
        let _ = child.wait();
        let _ = leader.wait();
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].summary, "`sleep 4.5`");
        assert_eq!(e[0].kind, EffectKind::Process);
    }
}
