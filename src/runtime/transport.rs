//! The byte pipes between the guard and a server, as one stream of [`Event`]s.
//!
//! A reader task turns stdout into frames (via the [`Framer`]) and a writer task feeds stdin, both
//! generic over `AsyncRead`/`AsyncWrite`, so the same code serves a real child process and an
//! in-process `tokio::io::duplex` pair in tests. The session only ever sees `Event`s and never
//! blocks on a write: a server that stops reading stdin cannot stall the guard.

use super::framing::{Framer, FramerLimits, PushOutcome, RawFrame};
use super::transcript::{Dir, ProcTap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitInfo {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl ExitInfo {
    pub fn is_clean(&self) -> bool {
        self.code == Some(0)
    }

    /// `exit code 1`, `signal 9 (SIGKILL)`.
    pub fn describe(&self) -> String {
        match (self.code, self.signal) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(sig)) => format!("signal {sig} ({})", signal_name(sig)),
            (None, None) => "an unknown status".to_string(),
        }
    }
}

pub fn signal_name(sig: i32) -> &'static str {
    #[cfg(unix)]
    {
        nix::sys::signal::Signal::try_from(sig)
            .map(|s| s.as_str())
            .unwrap_or("unknown signal")
    }
    // Windows processes do not end on signals: no exit carries one.
    #[cfg(not(unix))]
    {
        let _ = sig;
        "unknown signal"
    }
}

/// Everything the session learns about the server, in arrival order.
#[derive(Debug)]
pub enum Event {
    /// A complete stdout line (or the unterminated tail at EOF).
    Frame(RawFrame),
    /// A partial line (bytes without their newline) that no byte followed for [`STALL`]: a copy
    /// of it, still held by the framer (the same line comes later as a `Frame`, once its newline
    /// or EOF arrives). A reply written without its newline is judged from it at once.
    Stalled(RawFrame),
    /// stdout reached EOF.
    StdoutEof { at: Duration },
    /// The total stdout limit was crossed; the guard stopped reading stdout.
    StdoutLimit { at: Duration, total: u64 },
    /// The process exited.
    Exited { at: Duration, exit: ExitInfo },
    /// Writing to stdin failed (the server closed it or exited).
    StdinError { at: Duration, error: String },
}

/// Counters shared with the reader tasks, readable at any time.
#[derive(Debug, Default)]
pub struct Counters {
    pub stdout_bytes: AtomicU64,
    pub stdout_lines: AtomicU64,
    pub stdin_bytes: AtomicU64,
    /// Bytes queued for stdin and not yet written into the pipe.
    pub stdin_queued: AtomicU64,
    /// True while a partial stdout line is buffered (written without its newline yet).
    pub stdout_partial: AtomicBool,
}

/// The guard's end of the pipes.
pub struct Link {
    pub events: mpsc::Receiver<Event>,
    pub start: Instant,
    pub counters: Arc<Counters>,
    stdin: Option<mpsc::UnboundedSender<Vec<u8>>>,
    writer: Option<JoinHandle<()>>,
    reader: Option<JoinHandle<()>>,
    /// The stdin pipe's descriptor while the writer owns it (cleared, under the lock, before it is
    /// closed), to ask the kernel how many bytes the server has not read yet.
    stdin_fd: StdinFd,
}

/// See [`Link::stdin_unread`].
pub type StdinFd = Arc<std::sync::Mutex<Option<RawPipe>>>;

/// The descriptor of the stdin pipe's write end (Unix); Windows has none to ask.
#[cfg(unix)]
pub type RawPipe = std::os::fd::RawFd;
#[cfg(not(unix))]
pub type RawPipe = std::convert::Infallible;

/// The sending half of the event stream, for whoever watches the process exit.
pub type EventSender = mpsc::Sender<Event>;

const EVENT_BUFFER: usize = 256;

/// How long a partial stdout line must sit without a further byte before it is reported as
/// [`Event::Stalled`] (a complete reply written without its newline settles its request then,
/// not at the request's timeout).
pub const STALL: Duration = Duration::from_millis(250);
const READ_CHUNK: usize = 64 * 1024;

impl Link {
    /// Starts the reader and writer tasks over the given pipes.
    pub fn new<R, W>(
        stdout: R,
        stdin: W,
        limits: FramerLimits,
        start: Instant,
    ) -> (Link, EventSender)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Link::with_stdin_fd(stdout, stdin, None, limits, start)
    }

    /// Like [`Link::new`], for a real pipe whose descriptor can be asked for unread bytes.
    pub fn with_stdin_fd<R, W>(
        stdout: R,
        stdin: W,
        fd: Option<RawPipe>,
        limits: FramerLimits,
        start: Instant,
    ) -> (Link, EventSender)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Link::with_tap(stdout, stdin, fd, limits, start, None)
    }

    /// Like [`Link::with_stdin_fd`], recording every byte both ways into a transcript.
    pub fn with_tap<R, W>(
        stdout: R,
        stdin: W,
        fd: Option<RawPipe>,
        limits: FramerLimits,
        start: Instant,
        tap: Option<ProcTap>,
    ) -> (Link, EventSender)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::channel(EVENT_BUFFER);
        let counters = Arc::new(Counters::default());
        let reader = tokio::spawn(read_stdout(
            stdout,
            limits,
            start,
            tx.clone(),
            counters.clone(),
            tap.clone(),
        ));
        let (in_tx, in_rx) = mpsc::unbounded_channel();
        let stdin_fd: StdinFd = Arc::new(std::sync::Mutex::new(fd));
        let writer = tokio::spawn(write_stdin(
            stdin,
            in_rx,
            start,
            tx.clone(),
            counters.clone(),
            stdin_fd.clone(),
            tap,
        ));
        (
            Link {
                events: rx,
                start,
                counters,
                stdin: Some(in_tx),
                writer: Some(writer),
                reader: Some(reader),
                stdin_fd,
            },
            tx,
        )
    }

    /// Time since the run started.
    pub fn now(&self) -> Duration {
        self.start.elapsed()
    }

    /// Queues bytes for stdin. Never blocks; returns false when stdin is already closed.
    pub fn send(&self, bytes: Vec<u8>) -> bool {
        match &self.stdin {
            Some(tx) => {
                self.counters
                    .stdin_queued
                    .fetch_add(bytes.len() as u64, Ordering::Relaxed);
                tx.send(bytes).is_ok()
            }
            None => false,
        }
    }

    /// Bytes sent to the server that it has not read yet: still queued in the guard, or sitting
    /// in the pipe (Linux `FIONREAD`). `None` when unknown (no pipe descriptor, stdin closed).
    /// A request the server has not read cannot have been ignored: it is still starting.
    pub fn stdin_unread(&self) -> Option<u64> {
        let queued = self.counters.stdin_queued.load(Ordering::Relaxed);
        let guard = self.stdin_fd.lock().ok()?;
        let fd = (*guard)?;
        #[cfg(unix)]
        {
            let mut in_pipe: nix::libc::c_int = 0;
            // SAFETY: `fd` is the open write end of the stdin pipe: the writer clears it under
            // this lock before closing it, so it cannot be closed or reused while we hold the
            // lock. FIONREAD writes one c_int.
            let rc = unsafe { nix::libc::ioctl(fd, nix::libc::FIONREAD, &mut in_pipe) };
            if rc != 0 {
                return None;
            }
            Some(queued + in_pipe.max(0) as u64)
        }
        #[cfg(not(unix))]
        {
            let _ = queued;
            match fd {}
        }
    }

    /// Closes stdin once what was queued is written, or after `grace` if the server is not
    /// reading (the pending write is abandoned so the pipe closes anyway).
    pub async fn close_stdin(&mut self, grace: Duration) {
        self.stdin = None;
        if let Some(mut writer) = self.writer.take()
            && tokio::time::timeout(grace, &mut writer).await.is_err()
        {
            writer.abort();
            let _ = writer.await;
        }
    }

    /// Stops reading stdout (the read end is dropped: a server still writing gets EPIPE).
    pub fn stop_reading(&mut self) {
        if let Some(reader) = self.reader.take() {
            reader.abort();
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(w) = self.writer.take() {
            w.abort();
        }
        if let Some(r) = self.reader.take() {
            r.abort();
        }
    }
}

async fn read_stdout<R: AsyncRead + Unpin>(
    mut stdout: R,
    limits: FramerLimits,
    start: Instant,
    tx: EventSender,
    counters: Arc<Counters>,
    tap: Option<ProcTap>,
) {
    let mut framer = Framer::new(limits);
    let mut buf = vec![0u8; READ_CHUNK];
    let mut frames = Vec::new();
    // The partial line (number, length) last reported as stalled: each state of a partial line
    // is reported at most once.
    let mut stalled: Option<(u64, u64)> = None;
    loop {
        let read = stdout.read(&mut buf);
        let n = if framer.partial().is_some() && framer.partial() != stalled {
            match tokio::time::timeout(STALL, read).await {
                Ok(Ok(0) | Err(_)) => break,
                Ok(Ok(n)) => n,
                Err(_) => {
                    if let Some(partial) = framer.peek_partial(start.elapsed()) {
                        stalled = framer.partial();
                        if tx.send(Event::Stalled(partial)).await.is_err() {
                            return;
                        }
                    }
                    continue;
                }
            }
        } else {
            match read.await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            }
        };
        let at = start.elapsed();
        if let Some(tap) = &tap {
            tap.bytes(Dir::Out, &buf[..n]);
        }
        let outcome = framer.push(&buf[..n], at, &mut frames);
        counters
            .stdout_bytes
            .store(framer.total_bytes(), Ordering::Relaxed);
        counters
            .stdout_lines
            .store(framer.lines(), Ordering::Relaxed);
        counters
            .stdout_partial
            .store(framer.has_partial_line(), Ordering::Relaxed);
        for frame in frames.drain(..) {
            if tx.send(Event::Frame(frame)).await.is_err() {
                return;
            }
        }
        if outcome == PushOutcome::TotalLimitExceeded {
            if let Some(tail) = framer.take_oversized_tail(at)
                && tx.send(Event::Frame(tail)).await.is_err()
            {
                return;
            }
            let _ = tx
                .send(Event::StdoutLimit {
                    at,
                    total: framer.total_bytes(),
                })
                .await;
            return;
        }
    }
    let at = start.elapsed();
    if let Some(tail) = framer.finish(at) {
        counters.stdout_partial.store(false, Ordering::Relaxed);
        let _ = tx.send(Event::Frame(tail)).await;
    }
    let _ = tx.send(Event::StdoutEof { at }).await;
}

async fn write_stdin<W: AsyncWrite + Unpin>(
    mut stdin: W,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    start: Instant,
    tx: EventSender,
    counters: Arc<Counters>,
    fd: StdinFd,
    tap: Option<ProcTap>,
) {
    while let Some(bytes) = rx.recv().await {
        if let Some(tap) = &tap {
            tap.bytes(Dir::In, &bytes);
        }
        let result = async {
            stdin.write_all(&bytes).await?;
            stdin.flush().await
        }
        .await;
        counters
            .stdin_queued
            .fetch_sub(bytes.len() as u64, Ordering::Relaxed);
        match result {
            Ok(()) => {
                counters
                    .stdin_bytes
                    .fetch_add(bytes.len() as u64, Ordering::Relaxed);
            }
            Err(err) => {
                forget_fd(&fd);
                let _ = tx
                    .send(Event::StdinError {
                        at: start.elapsed(),
                        error: err.to_string(),
                    })
                    .await;
                return;
            }
        }
    }
    forget_fd(&fd);
    let _ = stdin.shutdown().await;
}

/// Clears the descriptor before the pipe is closed (see [`Link::stdin_unread`]).
fn forget_fd(fd: &StdinFd) {
    if let Ok(mut fd) = fd.lock() {
        *fd = None;
    }
}
