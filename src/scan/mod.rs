//! The static scan: source files → tree-sitter trees → findings (`Issue`s with a
//! `Location::Source`). Synchronous and parallel over files; nothing here prints.
//!
//! Per file: read (size and binary checks first), a byte prefilter (a file with none of its
//! language's candidate tokens is never parsed), parse with a per-thread parser, run the
//! language's analyzer, report the first parse error as a note (the rest of the tree is still
//! analyzed), apply inline suppressions, and lower the severity in test files and dev scripts.
//! Workers hold one file at a time and keep only findings, so memory is bounded by the largest
//! file, whatever the size of the tree.

pub mod lang;
pub mod plan;
pub mod sinks;
pub mod suppress;
pub mod walk;

use crate::catalog::scan::{STATIC_FILE_SKIPPED, STATIC_PARSE_ERROR};
use crate::catalog::{Check, Rule, Severity};
use crate::exit::Failure;
use crate::issue::{Issue, Location};
use lang::{Condition, Finding, Lang};
use plan::Plan;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use walk::{Candidate, Context};

/// Files larger than this are skipped with a note (minified bundles, generated code).
pub const DEFAULT_MAX_FILE_SIZE: u64 = 2 * 1024 * 1024;

/// The stack of each scan worker: analyzers recurse along nested expressions.
pub const WORKER_STACK_BYTES: usize = 16 << 20;

/// What to scan and how.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Files or folders as given; relative paths are taken from `cwd`.
    pub paths: Vec<PathBuf>,
    pub cwd: PathBuf,
    pub include_vendored: bool,
    pub force_exclude: bool,
    /// Only these rules (empty: all).
    pub select: Vec<&'static Rule>,
    /// Never these rules.
    pub ignore: Vec<&'static Rule>,
    pub max_file_size: u64,
    /// Worker threads; 0 means one per core.
    pub threads: usize,
    /// The byte prefilter and the lexer plan; always on except in the test that proves they
    /// lose nothing.
    pub prefilter: bool,
    /// Files larger than this are parsed statement by statement (see `plan`).
    pub region_min_bytes: usize,
}

impl ScanOptions {
    pub fn new(paths: Vec<PathBuf>, cwd: PathBuf) -> ScanOptions {
        ScanOptions {
            paths,
            cwd,
            include_vendored: false,
            force_exclude: false,
            select: Vec::new(),
            ignore: Vec::new(),
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            threads: 0,
            prefilter: true,
            region_min_bytes: plan::DEFAULT_REGION_MIN_BYTES,
        }
    }

    /// Whether this scan reports `rule` (`--select`/`--ignore`).
    pub fn wants(&self, rule: &Rule) -> bool {
        (self.select.is_empty() || self.select.contains(&rule)) && !self.ignore.contains(&rule)
    }
}

/// Counters of one scan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Files the walk found in a supported language (or named explicitly).
    pub files: usize,
    /// Files parsed and analyzed.
    pub parsed: usize,
    /// Files the prefilter ruled out without parsing.
    pub prefiltered: usize,
    /// Binary, oversized, unreadable or unsupported files.
    pub skipped: usize,
    /// Bytes read.
    pub bytes: u64,
    /// Bytes handed to the parser (whole files, or the planned statements of large ones).
    pub parsed_bytes: u64,
    pub duration: Duration,
    /// Files parsed per language.
    pub languages: Vec<(&'static str, usize)>,
}

/// The result of a scan: findings in file order, then line and column.
#[derive(Debug, Clone, Default)]
pub struct ScanResult {
    pub issues: Vec<Issue>,
    pub stats: ScanStats,
}

/// What one worker made of one file.
#[derive(Default)]
struct FileOutcome {
    /// Findings with their 1-based (line, column, end line, end column), columns in
    /// characters: computed while the file's text is at hand, so no text outlives its file.
    findings: Vec<(Finding, Severity, [u32; 4])>,
    satisfies: Vec<Condition>,
    lang: Option<Lang>,
    parsed: bool,
    prefiltered: bool,
    skipped: bool,
    bytes: u64,
    parsed_bytes: u64,
}

/// The file names the `scan_source` fuzz target picks from its input's first byte (the name's
/// extension picks the language; `bin/server` goes by its shebang), shared with the test that
/// replays the saved fuzz inputs so both decode them alike.
pub const FUZZ_FILE_NAMES: [&str; 10] = [
    "server.js",
    "server.ts",
    "view.tsx",
    "server.py",
    "main.go",
    "main.rs",
    "Main.java",
    "Main.kt",
    "Program.cs",
    "bin/server",
];

/// Scans one file's contents from memory exactly as [`run`] scans a file it finds: the binary
/// check, the language (from `path`'s extension, else the shebang), prefilter and plan, parse,
/// analysis, parse-error note, suppressions and the severity of `path`'s context, with the
/// same 1-based locations. There is no walk, no size limit and no thread pool, and, unlike
/// [`run`], a panic in an analyzer is not caught: this is the entry point of the scanner's fuzz
/// target and property tests, which must see one. Analyzers recurse along nested expressions:
/// call it on a thread with a stack as large as `run`'s workers' ([`WORKER_STACK_BYTES`]).
pub fn scan_source(path: &Path, bytes: Vec<u8>, opts: &ScanOptions) -> Vec<Issue> {
    let file = Candidate {
        path: path.to_path_buf(),
        display: path.to_path_buf(),
        explicit: true,
        lang: path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(Lang::from_file_name),
    };
    let o = scan_bytes(&file, bytes, opts);
    let satisfied: HashSet<Condition> = o.satisfies.iter().copied().collect();
    let mut issues = Vec::new();
    source_issues(&file, o.lang, o.findings, &satisfied, &mut issues);
    issues
}

/// Scans the given paths. Errors are failures of the tool (a missing path, an unreadable
/// explicit file), never findings.
pub fn run(opts: &ScanOptions) -> Result<ScanResult, Failure> {
    let started = Instant::now();
    let files = walk::discover(
        &opts.paths,
        &opts.cwd,
        opts.include_vendored,
        opts.force_exclude,
    )?;
    // Explicit files must be readable: pre-commit passing a broken path is a usage error.
    for f in files.iter().filter(|f| f.explicit) {
        if let Err(e) = std::fs::File::open(&f.path) {
            return Err(Failure::usage(format!(
                "cannot read {}: {e}; check the path and its permissions",
                f.display.display()
            )));
        }
    }
    let threads = if opts.threads > 0 {
        opts.threads
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
    .min(files.len().max(1));

    // Largest files first, so no thread is left parsing one big file while the others idle.
    let mut order: Vec<(u64, usize)> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (std::fs::metadata(&f.path).map_or(0, |m| m.len()), i))
        .collect();
    order.sort_by(|a, b| b.cmp(a));
    let next = AtomicUsize::new(0);
    let budget = Budget::new(LARGE_PARSES_IN_FLIGHT_BYTES);
    let mut outcomes: Vec<Option<FileOutcome>> = Vec::new();
    outcomes.resize_with(files.len(), || None);
    let results: Vec<Vec<(usize, FileOutcome)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .filter_map(|_| {
                // Generous stacks: analyzers recurse along nested expressions.
                std::thread::Builder::new()
                    .stack_size(WORKER_STACK_BYTES)
                    .spawn_scoped(s, || {
                        let mut mine = Vec::new();
                        let finish = |i: usize, ready: Ready, room: Room| {
                            guarded(|| finish(&files[i], ready, opts, Some(room)))
                        };
                        loop {
                            // A deferred parse that fits now goes first.
                            if let Some((i, ready, room)) = budget.deferred_that_fits() {
                                mine.push((i, finish(i, ready, room)));
                                continue;
                            }
                            let k = next.fetch_add(1, Ordering::Relaxed);
                            let Some(&(size, i)) = order.get(k) else {
                                break;
                            };
                            let ready = match guarded(|| scan_file(&files[i], size, opts)) {
                                Step::Done(o) => {
                                    mine.push((i, o));
                                    continue;
                                }
                                Step::Ready(ready) => ready,
                            };
                            // A large parse waits for memory: meanwhile, the next files.
                            match budget.take_or_defer(i, ready) {
                                Some((ready, room)) => mine.push((i, finish(i, ready, room))),
                                None => continue,
                            }
                        }
                        while let Some((i, ready, room)) = budget.next_deferred() {
                            mine.push((i, finish(i, ready, room)));
                        }
                        mine
                    })
                    .ok()
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    for (i, o) in results.into_iter().flatten() {
        outcomes[i] = Some(o);
    }

    let satisfied: HashSet<Condition> = outcomes
        .iter()
        .flatten()
        .flat_map(|o| o.satisfies.iter().copied())
        .collect();
    let mut stats = ScanStats {
        files: files.len(),
        ..ScanStats::default()
    };
    let mut languages: HashMap<&'static str, usize> = HashMap::new();
    let mut issues = Vec::new();
    for (file, outcome) in files.iter().zip(outcomes) {
        let Some(o) = outcome else {
            stats.skipped += 1; // a worker panicked on this file: never take the scan down
            continue;
        };
        stats.bytes += o.bytes;
        stats.parsed_bytes += o.parsed_bytes;
        stats.parsed += o.parsed as usize;
        stats.prefiltered += o.prefiltered as usize;
        stats.skipped += o.skipped as usize;
        if o.parsed
            && let Some(l) = o.lang
        {
            *languages.entry(l.name()).or_default() += 1;
        }
        source_issues(file, o.lang, o.findings, &satisfied, &mut issues);
    }
    let mut langs: Vec<(&'static str, usize)> = languages.into_iter().collect();
    langs.sort();
    stats.languages = langs;
    stats.duration = started.elapsed();
    Ok(ScanResult { issues, stats })
}

/// Parses of at least this many bytes (what the plan hands to the parser) count against
/// [`LARGE_PARSES_IN_FLIGHT_BYTES`]; smaller ones never wait (their trees are small).
const LARGE_PARSE_BYTES: u64 = 64 * 1024;

/// The most bytes of large parses at once: a tree and its analysis cost about 35 bytes per
/// parsed byte (Playwright's 3.3 MB `utilsBundle.js`, 1.6 MB of it parsed, peaks at 60 MB), so
/// two such parses side by side would take over 100 MB. A parse larger than this runs when no
/// other large one does. Counted in parsed bytes, after the plan: a large file the prefilter or
/// the plan rules out, or mostly out, never waits.
const LARGE_PARSES_IN_FLIGHT_BYTES: u64 = 1792 * 1024;

/// The most text of planned files held while they wait for room: beyond it, a worker waits
/// instead of going on with other files.
const DEFERRED_TEXT_BYTES: usize = 8 * 1024 * 1024;

/// The memory budget of the workers: the parsed bytes of large parses in flight, and the
/// planned files deferred until the budget has room (so no worker idles while one waits).
struct Budget {
    state: std::sync::Mutex<BudgetState>,
    freed: std::sync::Condvar,
    limit: u64,
}

#[derive(Default)]
struct BudgetState {
    used: u64,
    /// Planned files waiting for room (file index, the file), and the bytes of their text.
    deferred: Vec<(usize, Ready)>,
    deferred_text: usize,
}

/// Room taken in the [`Budget`] for one parse; given back when dropped (also when an analyzer
/// panics).
struct Room<'b> {
    budget: &'b Budget,
    bytes: u64,
}

impl Budget {
    fn new(limit: u64) -> Budget {
        Budget {
            state: std::sync::Mutex::new(BudgetState::default()),
            freed: std::sync::Condvar::new(),
            limit,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BudgetState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The bytes a parse of `bytes` counts for.
    fn cost(bytes: u64) -> u64 {
        if bytes < LARGE_PARSE_BYTES { 0 } else { bytes }
    }

    fn fits(&self, used: u64, cost: u64) -> bool {
        cost == 0 || used == 0 || used + cost <= self.limit
    }

    fn room(&self, st: &mut BudgetState, cost: u64) -> Room<'_> {
        st.used += cost;
        Room {
            budget: self,
            bytes: cost,
        }
    }

    /// Room for `ready` now; else it waits among the deferred files (`None`), or, when they
    /// hold too much text already, this worker waits for room.
    fn take_or_defer(&self, i: usize, ready: Ready) -> Option<(Ready, Room<'_>)> {
        let cost = Budget::cost(ready.out.parsed_bytes);
        let mut st = self.lock();
        if self.fits(st.used, cost) {
            let room = self.room(&mut st, cost);
            return Some((ready, room));
        }
        if st.deferred_text + ready.text.len() <= DEFERRED_TEXT_BYTES {
            st.deferred_text += ready.text.len();
            st.deferred.push((i, ready));
            return None;
        }
        while !self.fits(st.used, cost) {
            st = self.freed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        let room = self.room(&mut st, cost);
        Some((ready, room))
    }

    /// A deferred file the budget has room for now, with the room taken.
    fn deferred_that_fits(&self) -> Option<(usize, Ready, Room<'_>)> {
        let mut st = self.lock();
        let k = st
            .deferred
            .iter()
            .position(|(_, r)| self.fits(st.used, Budget::cost(r.out.parsed_bytes)))?;
        let (i, ready) = st.deferred.swap_remove(k);
        st.deferred_text -= ready.text.len();
        let room = self.room(&mut st, Budget::cost(ready.out.parsed_bytes));
        Some((i, ready, room))
    }

    /// A deferred file with room taken for it, waiting for room when needed; `None` when none
    /// is left.
    fn next_deferred(&self) -> Option<(usize, Ready, Room<'_>)> {
        loop {
            if let Some(found) = self.deferred_that_fits() {
                return Some(found);
            }
            let st = self.lock();
            if st.deferred.is_empty() {
                return None;
            }
            // Room is held (deferred files only wait on room some parse holds): wait for it.
            if st
                .deferred
                .iter()
                .any(|(_, r)| self.fits(st.used, Budget::cost(r.out.parsed_bytes)))
            {
                continue;
            }
            drop(self.freed.wait(st).unwrap_or_else(|e| e.into_inner()));
        }
    }
}

impl Room<'_> {
    /// Room for a parse of `bytes` instead (the whole file, after a partial tree with a syntax
    /// error): given back first, then taken again, waiting if needed (never holding room while
    /// waiting, so two workers never wait on each other).
    fn grow(&mut self, bytes: u64) {
        let cost = Budget::cost(bytes);
        if cost <= self.bytes {
            return;
        }
        let budget = self.budget;
        let mut st = budget.lock();
        st.used -= self.bytes;
        self.bytes = 0;
        while !budget.fits(st.used, cost) {
            st = budget.freed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.used += cost;
        self.bytes = cost;
    }
}

impl Drop for Room<'_> {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return;
        }
        let mut st = self.budget.lock();
        st.used -= self.bytes;
        self.budget.freed.notify_all();
    }
}

/// Hands the memory a large file's tree used back to the system. glibc keeps what a thread
/// freed in that thread's arena: without this, each worker's arena stays as large as the
/// largest tree it ever built, and the peak RSS is their sum, not the largest file's.
fn return_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's arenas to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// One file's findings → `Issue`s with 1-based `Location::Source` positions (character
/// columns), dropping those a condition met elsewhere in the scan cancels.
fn source_issues(
    file: &Candidate,
    lang: Option<Lang>,
    findings: Vec<(Finding, Severity, [u32; 4])>,
    satisfied: &HashSet<Condition>,
    issues: &mut Vec<Issue>,
) {
    for (f, severity, [line, column, end_line, end_column]) in findings {
        if f.unless.is_some_and(|c| satisfied.contains(&c)) {
            continue;
        }
        let mut issue = Issue::new(f.rule, f.message)
            .severity(severity)
            .at(Location::Source {
                file: file.display.clone(),
                line,
                column,
                end_line,
                end_column,
            });
        if let Some(h) = f.help {
            issue = issue.help(h);
        }
        if let Some(l) = lang {
            issue = issue.field("language", l.name());
        }
        let ctx = if f.test {
            Context::Test
        } else {
            Context::of(&file.display)
        };
        if let Some(label) = ctx.label() {
            issue = issue.field("context", label);
        }
        issues.push(issue);
    }
}

thread_local! {
    static PARSERS: RefCell<HashMap<Lang, tree_sitter::Parser>> = RefCell::new(HashMap::new());
}

/// A bug in an analyzer must cost one file, never the scan: the file counts as skipped and its
/// parser is rebuilt.
fn guarded<T: From<FileOutcome>>(scan: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(scan)) {
        Ok(outcome) => outcome,
        Err(_) => {
            PARSERS.with(|cell| cell.borrow_mut().clear());
            T::from(FileOutcome {
                skipped: true,
                ..FileOutcome::default()
            })
        }
    }
}

/// A file read and planned, waiting to be parsed.
struct Ready {
    /// The outcome so far; `parsed_bytes`: what the plan hands to the parser.
    out: FileOutcome,
    lang: Lang,
    text: String,
    plan: Plan,
}

/// A file done with before the parse (binary, no language, ruled out), or ready for it.
enum Step {
    Done(FileOutcome),
    Ready(Ready),
}

impl From<FileOutcome> for Step {
    fn from(o: FileOutcome) -> Step {
        Step::Done(o)
    }
}

/// Reads and plans one file of `size` bytes (as the walk saw it: the file is looked at once).
fn scan_file(file: &Candidate, size: u64, opts: &ScanOptions) -> Step {
    let mut out = FileOutcome::default();
    if size > opts.max_file_size {
        out.skipped = true;
        note(
            &mut out,
            opts,
            &STATIC_FILE_SKIPPED,
            format!(
                "{} bytes is over the {}-byte limit; the file was not scanned",
                size, opts.max_file_size
            ),
        );
        return Step::Done(out);
    }
    let Ok(bytes) = read(&file.path, size) else {
        out.skipped = true;
        return Step::Done(out);
    };
    prepare(file, bytes, opts)
}

/// Reads a file whose size the walk knows (`std::fs::read` would look it up again); a file
/// that grew since is read to its end.
fn read(path: &Path, size: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Everything after the read: binary check, language, prefilter and plan, parse, analysis,
/// parse-error note, suppressions, severity in context.
fn scan_bytes(file: &Candidate, bytes: Vec<u8>, opts: &ScanOptions) -> FileOutcome {
    match prepare(file, bytes, opts) {
        Step::Done(out) => out,
        Step::Ready(ready) => finish(file, ready, opts, None),
    }
}

/// Up to the parse: binary check, language, prefilter and plan.
fn prepare(file: &Candidate, bytes: Vec<u8>, opts: &ScanOptions) -> Step {
    let mut out = FileOutcome {
        bytes: bytes.len() as u64,
        ..FileOutcome::default()
    };
    let head = &bytes[..bytes.len().min(8192)];
    if memchr::memchr(0, head).is_some() {
        out.skipped = true;
        if file.explicit {
            note(
                &mut out,
                opts,
                &STATIC_FILE_SKIPPED,
                "the file looks binary (it contains NUL bytes); it was not scanned".to_string(),
            );
        }
        return Step::Done(out);
    }
    let Some(lang) = file.lang.or_else(|| Lang::from_shebang(head)) else {
        out.skipped = true;
        return Step::Done(out);
    };
    out.lang = Some(lang);
    let Some((text, plan)) = planned(lang, bytes, opts) else {
        out.prefiltered = true;
        return Step::Done(out);
    };
    out.parsed_bytes = match &plan {
        Plan::Ranges(r) => r.iter().map(|(r, _)| r.len() as u64).sum(),
        _ => text.len() as u64,
    };
    Step::Ready(Ready {
        out,
        lang,
        text,
        plan,
    })
}

/// From the parse on: parse (in the room taken for it, if any), analysis, parse-error note,
/// suppressions, severity in context.
fn finish(
    file: &Candidate,
    ready: Ready,
    opts: &ScanOptions,
    mut room: Option<Room>,
) -> FileOutcome {
    let Ready {
        mut out,
        lang,
        text,
        plan,
    } = ready;
    let Some((tree, parsed_whole)) = parse(lang, &text, &plan, |whole| {
        if let Some(room) = room.as_mut() {
            room.grow(whole);
        }
    }) else {
        out.skipped = true;
        return out;
    };
    if parsed_whole {
        out.parsed_bytes += text.len() as u64;
    }
    out.parsed = true;
    let facts = lang::analyze(lang, &tree, &text);
    out.satisfies = facts.satisfies;
    let text = text.into_bytes();
    let findings = checked(lang, &tree, &text, facts.findings, opts);
    let ctx = Context::of(&file.display);
    let starts = if findings.is_empty() {
        Vec::new()
    } else {
        row_starts(&text)
    };
    out.findings = findings
        .into_iter()
        .map(|f| {
            let sev = lowered(f.rule, if f.test { Context::Test } else { ctx });
            let at = [
                f.start.0 as u32 + 1,
                char_column(&text, &starts, f.start) + 1,
                f.end.0 as u32 + 1,
                char_column(&text, &starts, f.end) + 1,
            ];
            (f, sev, at)
        })
        .collect();
    drop((tree, room));
    if out.parsed_bytes >= TRIM_AFTER_PARSE_BYTES {
        return_free_memory();
    }
    out
}

/// After a parse of at least this many bytes, the memory its tree used goes back to the system
/// (see [`return_free_memory`]; a tree of 64 KB is about 2 MB).
const TRIM_AFTER_PARSE_BYTES: u64 = 64 * 1024;

/// The prefilter and the plan: `None` when the file holds no candidate; else its text (lossy
/// for non-UTF-8 files) and what to parse of it.
fn planned(lang: Lang, bytes: Vec<u8>, opts: &ScanOptions) -> Option<(String, Plan)> {
    if opts.prefilter && !lang.prefilter_matches(&bytes) {
        return None;
    }
    let plan_of = |text: &[u8]| {
        if !opts.prefilter {
            return Plan::Whole;
        }
        match lang {
            Lang::Python => plan::python(text, opts.region_min_bytes),
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
                plan::javascript_planned(text, opts.region_min_bytes)
            }
            _ => Plan::Whole,
        }
    };
    // The plan runs on the raw bytes, so a file ruled out is never even validated.
    let plan = plan_of(&bytes);
    if plan == Plan::Skip {
        return None;
    }
    // Non-UTF-8 text is scanned with replacement characters (planned again, since offsets
    // move): positions before the first bad byte are exact, and nothing crashes.
    match String::from_utf8(bytes) {
        Ok(text) => Some((text, plan)),
        Err(e) => {
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let plan = plan_of(text.as_bytes());
            (plan != Plan::Skip).then_some((text, plan))
        }
    }
}

/// Parses the planned ranges with the thread's parser of the language, or the whole text; true
/// when the whole text was parsed after a planned parse (whose tree had a syntax error that
/// may come from the cut, or whose ranges the parser refused); `whole` is called with the
/// text's size first (the room to take for it).
fn parse(
    lang: Lang,
    text: &str,
    plan: &Plan,
    whole: impl FnOnce(u64),
) -> Option<(tree_sitter::Tree, bool)> {
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let parser = parsers.entry(lang).or_insert_with(|| {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&lang.grammar())
                .expect("bundled grammars match the tree-sitter core");
            p
        });
        // Whether the file is parsed whole after all: the partial tree has a syntax error, or
        // the parser refused the ranges (the stats then count the whole file, as parsed).
        let mut again = false;
        if let Plan::Ranges(ranges) = plan {
            let ranges = ts_ranges(text.as_bytes(), ranges);
            again = true;
            if parser.set_included_ranges(&ranges).is_ok() {
                let partial = parser.parse(text.as_bytes(), None);
                let _ = parser.set_included_ranges(&[]);
                if let Some(t) = partial.filter(|t| !t.root_node().has_error()) {
                    return Some((t, false));
                }
            }
            whole(text.len() as u64);
        }
        parser.parse(text.as_bytes(), None).map(|t| (t, again))
    })
}

/// The analyzer's findings the options want, the parse-error note, inline suppressions applied,
/// sorted and without duplicates.
fn checked(
    lang: Lang,
    tree: &tree_sitter::Tree,
    text: &[u8],
    findings: Vec<Finding>,
    opts: &ScanOptions,
) -> Vec<Finding> {
    let mut findings: Vec<Finding> = findings
        .into_iter()
        .filter(|f| opts.wants(f.rule))
        .collect();
    if tree.root_node().has_error()
        && opts.wants(&STATIC_PARSE_ERROR)
        && let Some(err) = first_error(tree.root_node())
    {
        let s = err.start_position();
        let what = if err.is_missing() {
            format!("a missing `{}`", err.kind())
        } else {
            "syntax it cannot read".to_string()
        };
        findings.push(Finding {
            rule: &STATIC_PARSE_ERROR,
            start: (s.row, s.column),
            end: (s.row, s.column),
            message: format!(
                "the {} parser met {what} at line {}; the rest of the file was still scanned",
                lang.name(),
                s.row + 1
            ),
            help: None,
            unless: None,
            test: false,
        });
    }
    if !findings.is_empty() && suppress::may_have_markers(text) {
        let sups = suppress::collect(lang, tree, text);
        findings.retain(|f| {
            !sups
                .iter()
                .any(|s| s.covers(f.rule.code, f.start.0, f.end.0))
        });
    }
    findings.sort_by_key(|f| (f.start, f.end, f.rule.code));
    findings.dedup_by(|a, b| a.start == b.start && a.rule == b.rule);
    findings
}

/// Severity in context: write findings in tests and dev scripts are warnings (they do not run
/// in the server), notes stay notes, and replacing stdout stays an error everywhere.
fn lowered(rule: &'static Rule, ctx: Context) -> Severity {
    if ctx == Context::Source
        || rule.severity != Severity::Error
        || rule == &crate::catalog::scan::STATIC_STDOUT_REDIRECT
    {
        rule.severity
    } else {
        Severity::Warning
    }
}

fn note(out: &mut FileOutcome, opts: &ScanOptions, rule: &'static Rule, message: String) {
    if opts.wants(rule) {
        out.findings.push((
            Finding {
                rule,
                start: (0, 0),
                end: (0, 0),
                message,
                help: None,
                unless: None,
                test: false,
            },
            rule.severity,
            [1, 1, 1, 1],
        ));
    }
}

/// The first ERROR or MISSING node in document order.
fn first_error(root: tree_sitter::Node) -> Option<tree_sitter::Node> {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            return Some(node);
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return None;
            }
        }
    }
}

/// Byte ranges with their start rows → tree-sitter ranges.
fn ts_ranges(text: &[u8], ranges: &[(std::ops::Range<usize>, usize)]) -> Vec<tree_sitter::Range> {
    // Where the line of the last position looked at starts: ranges are in order, so each byte
    // is searched once (a minified line holds hundreds of ranges).
    let (mut seen, mut line_start) = (0usize, 0usize);
    ranges
        .iter()
        .map(|(r, row)| {
            if let Some(p) = memchr::memrchr(b'\n', &text[seen.min(r.start)..r.start]) {
                line_start = seen + p + 1;
            }
            seen = r.end;
            let body = &text[r.clone()];
            let newlines = memchr::memchr_iter(b'\n', body).count();
            let start_col = r.start - line_start;
            let end_col = match memchr::memrchr(b'\n', body) {
                Some(p) => {
                    line_start = r.start + p + 1;
                    body.len() - p - 1
                }
                None => start_col + body.len(),
            };
            tree_sitter::Range {
                start_byte: r.start,
                end_byte: r.end,
                start_point: tree_sitter::Point {
                    row: *row,
                    column: start_col,
                },
                end_point: tree_sitter::Point {
                    row: row + newlines,
                    column: end_col,
                },
            }
        })
        .collect()
}

fn row_starts(text: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(memchr::memchr_iter(b'\n', text).map(|i| i + 1));
    starts
}

/// A 0-based character column from a 0-based (row, byte column).
fn char_column(text: &[u8], starts: &[usize], (row, col): (usize, usize)) -> u32 {
    let Some(&start) = starts.get(row) else {
        return col as u32;
    };
    let end = (start + col).min(text.len());
    match std::str::from_utf8(&text[start..end]) {
        Ok(s) => s.chars().count() as u32,
        Err(_) => col as u32,
    }
}

/// Every rule of the static scan, for `--select/--ignore` validation and docs.
pub fn rules() -> impl Iterator<Item = &'static Rule> {
    crate::catalog::all().filter(|r| r.check == Check::StaticScan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready(parsed: u64) -> Ready {
        Ready {
            out: FileOutcome {
                parsed_bytes: parsed,
                ..FileOutcome::default()
            },
            lang: Lang::JavaScript,
            text: "x".repeat(16),
            plan: Plan::Whole,
        }
    }

    #[test]
    fn large_parses_share_the_budget_and_wait_deferred_small_ones_never_wait() {
        let big = LARGE_PARSES_IN_FLIGHT_BYTES * 3 / 4;
        let budget = Budget::new(LARGE_PARSES_IN_FLIGHT_BYTES);
        let (_, first) = budget
            .take_or_defer(0, ready(big))
            .expect("room when none is used");
        // A second large parse does not fit: deferred, not run, and nothing waits.
        assert!(budget.take_or_defer(1, ready(big)).is_none());
        assert!(budget.deferred_that_fits().is_none());
        // Small parses never count.
        let (_, small) = budget
            .take_or_defer(2, ready(LARGE_PARSE_BYTES - 1))
            .expect("a small parse runs");
        assert_eq!(small.bytes, 0);
        // A parse larger than the whole budget runs alone, once the room is free.
        assert!(
            budget
                .take_or_defer(3, ready(LARGE_PARSES_IN_FLIGHT_BYTES * 2))
                .is_none()
        );
        drop(first);
        let (i, _, room) = budget.deferred_that_fits().expect("room given back");
        assert!(i == 1 || i == 3);
        assert!(budget.deferred_that_fits().is_none(), "one at a time");
        drop(room);
        let (j, _, room) = budget.next_deferred().expect("the other one");
        assert_ne!(i, j);
        drop(room);
        assert!(budget.next_deferred().is_none());
        assert_eq!(budget.lock().used, 0);
        assert_eq!(budget.lock().deferred_text, 0);
    }

    #[test]
    fn a_room_grows_for_the_whole_file_and_is_given_back_when_dropped() {
        let budget = Budget::new(LARGE_PARSES_IN_FLIGHT_BYTES);
        let (_, mut room) = budget
            .take_or_defer(0, ready(LARGE_PARSE_BYTES))
            .expect("room");
        room.grow(LARGE_PARSES_IN_FLIGHT_BYTES / 2);
        assert_eq!(budget.lock().used, LARGE_PARSES_IN_FLIGHT_BYTES / 2);
        // Growing to less keeps what it has.
        room.grow(LARGE_PARSE_BYTES);
        assert_eq!(budget.lock().used, LARGE_PARSES_IN_FLIGHT_BYTES / 2);
        drop(room);
        assert_eq!(budget.lock().used, 0);
    }

    #[test]
    fn a_worker_waits_for_room_when_the_deferred_files_hold_too_much_text() {
        let budget = std::sync::Arc::new(Budget::new(LARGE_PARSES_IN_FLIGHT_BYTES));
        let big = LARGE_PARSES_IN_FLIGHT_BYTES;
        let (_, first) = budget.take_or_defer(0, ready(big)).expect("room");
        let mut held = ready(big);
        held.text = "x".repeat(DEFERRED_TEXT_BYTES);
        assert!(budget.take_or_defer(1, held).is_none(), "deferred");
        let waiter = {
            let budget = budget.clone();
            std::thread::spawn(move || {
                let (_, room) = budget
                    .take_or_defer(2, ready(big))
                    .expect("waits, then runs");
                room.bytes
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!waiter.is_finished(), "it waits while the room is taken");
        drop(first);
        assert_eq!(waiter.join().expect("no panic"), big);
    }
}
