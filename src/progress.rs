//! (binary) The progress of a run of several servers on a terminal: one status line on stderr,
//! redrawn in place five times a second (`[12/50] 4 running: a, b, ... · 2 failed · 0:37`), then
//! one line per server, failures first. Shown only when several servers are checked, stderr is a
//! terminal and `CI` is not set: a log or a pipe gets nothing of it (the reports are unchanged).

use mcp_stdio_guard::report::{Report, text};
use mcp_stdio_guard::run::Observer;
use mcp_stdio_guard::settings::Settings;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const REDRAW: Duration = Duration::from_millis(200);

pub struct Display {
    total: usize,
    start: Instant,
    state: Mutex<State>,
    stop: AtomicBool,
    ticker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

#[derive(Default)]
struct State {
    done: usize,
    failed: usize,
    running: Vec<String>,
}

impl Display {
    /// A display for this run, if it is one to show: several servers, stderr a terminal, no
    /// `CI` variable (CI logs are not terminals, but some runners fake one).
    pub fn start(settings: &Settings) -> Option<Arc<Display>> {
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        let several = settings.targets.len() > 1 || settings.shard.is_some();
        if ci || !several || !std::io::stderr().is_terminal() {
            return None;
        }
        let display = Arc::new(Display {
            total: settings.targets.len(),
            start: Instant::now(),
            state: Mutex::new(State::default()),
            stop: AtomicBool::new(false),
            ticker: Mutex::new(None),
        });
        let ticking = display.clone();
        let handle = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                while !ticking.stop.load(Ordering::Relaxed) {
                    ticking.draw();
                    std::thread::sleep(REDRAW);
                }
            })
            .ok();
        if let Ok(mut t) = display.ticker.lock() {
            *t = handle;
        }
        Some(display)
    }

    /// The status line, cut to the terminal's width.
    fn line(&self) -> String {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let secs = self.start.elapsed().as_secs();
        let mut line = format!("[{}/{}] {} running", s.done, self.total, s.running.len());
        if !s.running.is_empty() {
            line.push_str(": ");
            line.push_str(&s.running.join(", "));
        }
        let tail = format!(" · {} failed · {}:{:02}", s.failed, secs / 60, secs % 60);
        let width = terminal_width().saturating_sub(1);
        let room = width.saturating_sub(tail.chars().count());
        if line.chars().count() > room {
            line = line.chars().take(room.saturating_sub(1)).collect();
            line.push('…');
        }
        line + &tail
    }

    fn draw(&self) {
        let line = self.line();
        let mut err = std::io::stderr().lock();
        // Carriage return, the line, clear to the end of the line.
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
    }

    /// Stops the status line and prints one line per server, failures first.
    pub fn finish(&self, report: &Report) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.lock().ok().and_then(|mut t| t.take()) {
            let _ = t.join();
        }
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K");
        let _ = err.write_all(text::servers_table(report, true).as_bytes());
        let _ = err.flush();
    }
}

impl Observer for Display {
    fn started(&self, name: &str) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.running.push(printable(name));
    }

    fn finished(&self, name: &str, failed: bool) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let shown = printable(name);
        if let Some(i) = s.running.iter().position(|r| *r == shown) {
            s.running.remove(i);
        }
        s.done += 1;
        s.failed += usize::from(failed);
    }
}

/// A server name without control characters (it is drawn on the terminal as it is).
fn printable(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// The terminal's width: `COLUMNS`, else the kernel's idea of stderr's size, else 80.
fn terminal_width() -> usize {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
        .filter(|n| *n > 10)
    {
        return n;
    }
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let mut size = nix::libc::winsize {
            ws_row: 0,
            ws_col: 0,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we own; fd 2 is stderr.
        let rc = unsafe {
            nix::libc::ioctl(
                std::io::stderr().as_raw_fd(),
                nix::libc::TIOCGWINSZ,
                &mut size,
            )
        };
        if rc == 0 && size.ws_col > 10 {
            return usize::from(size.ws_col);
        }
    }
    80
}
