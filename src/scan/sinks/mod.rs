//! What the scan knows about stdout, as data: per language, one table of sink rows (a function,
//! method, constructor, macro, property or reference that can write to stdout), the values that
//! mean stdout/stderr, and the configuration rows of loggers. The analyzers resolve names to
//! qualified paths; [`check`] applies the row of a path to one call site, whatever the
//! language. The prefilter words and the plan's vocabulary are derived from the same rows
//! ([`vocabulary`]), and `docs/scan.md`'s lists are generated from them ([`markdown`]).

mod csharp;
mod go;
mod java;
pub mod javascript;
mod python;
mod rust;

use super::lang::Lang;
use crate::catalog::Rule;

/// What kind of code a row names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Function,
    Method,
    Constructor,
    Macro,
    /// An assignment or a field of an object literal (`cmd.Stdout = os.Stdout`).
    Property,
    /// A value passed or stored as a function (`forEach(System.out::println)`).
    Reference,
}

impl Form {
    pub fn name(self) -> &'static str {
        match self {
            Form::Function => "function",
            Form::Method => "method",
            Form::Constructor => "constructor",
            Form::Macro => "macro",
            Form::Property => "property",
            Form::Reference => "reference",
        }
    }
}

/// Where output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dest {
    Stdout,
    Stderr,
    /// A file, a buffer, a pipe, nothing: not the protocol channel.
    Other,
    /// A value the scan cannot know (a parameter, a computed value): never a finding.
    Unknown,
}

impl Dest {
    pub fn name(self) -> &'static str {
        match self {
            Dest::Stdout => "stdout",
            Dest::Stderr => "stderr",
            Dest::Other => "elsewhere",
            Dest::Unknown => "unknown",
        }
    }
}

/// How the stream-selecting argument is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Means {
    /// A stream or writer object (`file=sys.stderr`, `os.Stdout`).
    Stream,
    /// This argument and every one after it are streams written alike (a tee:
    /// `io.MultiWriter(os.Stderr, os.Stdout)`); stdout among them is stdout.
    Streams,
    /// A file descriptor number (`os.write(1, ...)`).
    Fd,
    /// A path or a file descriptor (`open("/dev/stdout", "w")`, `open(1, "w")`).
    FileOrFd,
    /// Any value given at all sends the output elsewhere (`console=`, `logger_factory=`).
    Presence,
    /// A log sink: a stream, a function that writes, or a `ext://sys.stdout` string.
    Sink,
    /// A child's stdout option: `None`, `1` or stdout itself inherit, anything else captures.
    ChildStdout,
    /// A flag: true sends output to stderr (`err=True`, `stderr=True`).
    StderrFlag,
    /// A level threshold: any value given sends (some) records to stderr.
    Threshold,
}

/// The argument that selects the stream: by position and/or keyword (or option/property name),
/// what its absence means, and how its value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arg {
    pub pos: Option<u8>,
    pub kw: Option<&'static str>,
    pub default: Dest,
    pub means: Means,
}

/// No argument selects the stream: the row always writes where `default` says.
pub const fn always(default: Dest) -> Arg {
    Arg {
        pos: None,
        kw: None,
        default,
        means: Means::Stream,
    }
}

pub const fn arg(pos: Option<u8>, kw: Option<&'static str>, default: Dest, means: Means) -> Arg {
    Arg {
        pos,
        kw,
        default,
        means,
    }
}

/// Extra conditions of a row, checked by the language's call site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    /// The write goes through the process's current stdout object, so a redirection in force
    /// (`sys.stdout = sys.stderr`, `redirect_stdout`, `Console.SetOut`, `os.Stdout = ...`)
    /// sends it elsewhere.
    FollowsRedirect,
    /// This flag must be known to be off (absent counts as off): `err=True` sends to stderr,
    /// a value the scan cannot know is not a finding.
    FlagOff(&'static str),
    /// A `**kwargs`/spread argument may carry the stream option: unknown.
    NoSplat,
    /// The argument at this position or keyword must be given (`input(prompt)`).
    Given(Option<u8>, Option<&'static str>),
    /// The mode argument (position, keyword) must open for writing (or be absent).
    WriteMode(u8, &'static str),
    /// The payload at this position is not a single-line JSON serialization (the hand-written
    /// transport).
    NotPayload(u8),
    /// Not a print of a JSON-RPC message or inside a function that sends messages.
    NotJsonRpc,
    /// `capture_output=` (or the language's equivalent) must be known to be off.
    NotCaptured(&'static str),
    /// File descriptor 1 is not saved with `dup` first.
    FdNotSaved,
    /// The file's code does not mention this name (a threshold or option set elsewhere in it,
    /// `LogToStandardErrorThreshold`).
    FileLacks(&'static str),
    /// The call's own text does not mention this name (an option set in its arguments).
    CallLacks(&'static str),
    /// The outermost function around the call (the method a lambda is in; the whole file for
    /// top-level code) does not mention this name: an option configured for the same host
    /// (`services.Configure<ConsoleLoggerOptions>(...)`), not for another one in another method.
    ScopeLacks(&'static str),
    /// No later call of this name on the same object: further along the call's chain
    /// (`inheritIO().redirectOutput(PIPE)`) or on the variable it was called on in the same
    /// method (`pb.inheritIO(); pb.redirectOutput(PIPE)`).
    ThenLacks(&'static str),
    /// The argument at this position is this string (`System.setProperty(
    /// "org.slf4j.simpleLogger.logFile", ...)`), or after `|`, a named constant that holds it
    /// (`SimpleLogger.LOG_FILE_KEY`).
    ArgIs(u8, &'static str),
    /// The redirection is no finding of its own (the SDK's transport does not use the
    /// redirected object).
    Quiet,
    /// Not a filter of this name: a replacement that still calls the original (a filter passing
    /// protocol lines through) is no redirection, and calls of the original inside it are the
    /// filter's own.
    NotFilter,
    /// The file satisfies this cross-file condition (for other rows' `Unless`).
    Satisfies(super::lang::Condition),
    /// Dropped when a scanned file satisfies the condition.
    Unless(super::lang::Condition),
}

/// One sink row.
#[derive(Debug)]
pub struct Sink {
    /// The qualified name the resolver produces (`builtins.print`, `fmt.Println`,
    /// `System.out.println`, `std::println`).
    pub name: &'static str,
    pub form: Form,
    pub rule: &'static Rule,
    pub arg: Arg,
    pub conds: &'static [Cond],
    /// `{name}` is the call as written, `{why}` what made it go to stdout.
    pub message: &'static str,
}

/// A value that is a stream, with its destination (`sys.stdout`, `os.Stdout`, `System.err`).
#[derive(Debug)]
pub struct StreamValue {
    pub name: &'static str,
    pub dest: Dest,
    /// Writes through it follow a redirection of the process's stdout object (`System.out`
    /// after `System.setOut`), unlike the raw descriptor (`FileDescriptor.out`).
    pub follows: bool,
    /// Only a child process's output option reads it as the server's stream
    /// (`Redirect.INHERIT`): handed to anything else (`redirectError(Redirect.INHERIT)`), it is
    /// no stdout.
    pub child: bool,
}

pub const fn stream(name: &'static str, dest: Dest, follows: bool) -> StreamValue {
    StreamValue {
        name,
        dest,
        follows,
        child: false,
    }
}

/// A value that means "the server's own stdout" to a child process's output option only.
pub const fn inherit(name: &'static str) -> StreamValue {
    StreamValue {
        name,
        dest: Dest::Stdout,
        follows: false,
        child: true,
    }
}

/// A function or constructor that returns a value writing where one of its arguments points
/// (`bufio.NewWriter(os.Stdout)`, `new PrintStream(System.out)`), or to a fixed destination
/// (a console logger), so stream facts flow through it.
#[derive(Debug)]
pub struct Wrapper {
    pub name: &'static str,
    pub form: Form,
    /// Which argument is wrapped; `None`: the result writes to `arg.default`.
    pub arg: Arg,
}

/// A configuration row: building a logger, an appender or a child process whose target,
/// threshold or default decides whether output reaches stdout. The target may be given when
/// it is built (`arg`), set later by a method or property (`setters`), or left to the default.
#[derive(Debug)]
pub struct Config {
    pub name: &'static str,
    pub form: Form,
    pub library: &'static str,
    /// Conditions checked where it is built, as for a sink row.
    pub conds: &'static [Cond],
    /// For a nested configuration (form `Property`): the properties of an options literal whose
    /// string value names this row (`target: 'pino-pretty'`, `type: 'stdout'`). It is read
    /// inside its library's rows' options.
    pub keys: &'static [&'static str],
    pub rule: &'static Rule,
    /// The argument, option or property that selects the target, and the default.
    pub arg: Arg,
    /// Methods or properties that set the target later (`setTarget`, `with_writer`,
    /// `stdout`), read as `arg.means` says.
    pub setters: &'static [&'static str],
    /// Methods that act on the configuration (`status`, `spawn`): the finding is reported
    /// there. Empty: reported where it is built.
    pub triggers: &'static [&'static str],
    /// Values of the target that mean stdout / stderr, as written in code (a string, or the
    /// last segments of a path).
    pub stdout_values: &'static [&'static str],
    pub stderr_values: &'static [&'static str],
    pub message: &'static str,
}

/// Everything one language knows.
pub struct Table {
    pub lang: Lang,
    pub sinks: &'static [Sink],
    pub streams: &'static [StreamValue],
    pub wrappers: &'static [Wrapper],
    pub configs: &'static [Config],
    /// Methods of a stdout stream that print (`println`) and that write (`write`).
    pub print_methods: &'static [&'static str],
    pub write_methods: &'static [&'static str],
    /// Redirections: calls or assignments that change where later writes through the current
    /// stdout object go, with the argument that says where.
    pub redirects: &'static [Sink],
    /// Segments of qualified names too common to anchor the prefilter (`sys`, `os`, `System`).
    pub ubiquitous: &'static [&'static str],
    /// Tokens the prefilter needs beyond the rows' names (fd writes, `/dev/stdout`).
    pub extra_words: &'static [&'static str],
    /// (method that makes a stdout encoder pretty-print, method that then writes): after
    /// `enc.SetIndent(...)` on an encoder over stdout, `enc.Encode(x)` writes multi-line JSON,
    /// never a protocol frame (unindented, the encoder is the usual hand-written transport).
    pub pretty: &'static [(&'static str, &'static str)],
    /// Other spellings of a name's start, rewritten before a lookup (`pino.pino` → `pino`,
    /// `require('pino').default`).
    pub aliases: &'static [(&'static str, &'static str)],
    /// A table whose rows hold here too (Kotlin runs on the JVM: Java's rows).
    pub base: Option<&'static Table>,
}

/// The table of a language (TypeScript and TSX share JavaScript's).
pub fn table(lang: Lang) -> Option<&'static Table> {
    let family = match lang {
        Lang::TypeScript | Lang::Tsx => Lang::JavaScript,
        l => l,
    };
    tables().into_iter().find(|t| t.lang == family)
}

/// Every table.
pub fn tables() -> Vec<&'static Table> {
    vec![
        &python::TABLE,
        &javascript::TABLE,
        &go::TABLE,
        &java::TABLE,
        &java::KOTLIN,
        &csharp::TABLE,
        &rust::TABLE,
    ]
}

impl Table {
    /// The row of a qualified name.
    pub fn sink(&self, name: &str) -> Option<&'static Sink> {
        (self.sinks.iter().find(|s| s.name == name)).or_else(|| self.base?.sink(name))
    }

    pub fn redirect(&self, name: &str) -> Option<&'static Sink> {
        (self.redirects.iter().find(|s| s.name == name)).or_else(|| self.base?.redirect(name))
    }

    pub fn stream(&self, name: &str) -> Option<Dest> {
        self.stream_value(name).map(|s| s.dest)
    }

    pub fn wrapper(&self, name: &str) -> Option<&'static Wrapper> {
        (self.wrappers.iter().find(|s| s.name == name)).or_else(|| self.base?.wrapper(name))
    }

    /// The configuration row built by a call or constructor of this name.
    pub fn config(&self, name: &str) -> Option<&'static Config> {
        (self.configs.iter())
            .find(|s| s.name == name && s.form != Form::Property)
            .or_else(|| self.base?.config(name))
    }

    /// The nested configuration an options literal of `library` names with `key: value`.
    pub fn target(&self, library: &str, key: &str, value: &str) -> Option<&'static Config> {
        self.configs.iter().find(|c| {
            c.form == Form::Property
                && c.library == library
                && c.name == value
                && c.keys.contains(&key)
        })
    }

    /// A function or method whose every call writes to stdout, whatever its arguments: passed
    /// or stored as a value (`arr.forEach(console.log)`), each call of it does.
    pub fn writes_when_called(&self, name: &str) -> Option<&'static Sink> {
        self.sink(name).filter(|s| {
            matches!(s.form, Form::Function | Form::Method)
                && s.arg.pos.is_none()
                && s.arg.kw.is_none()
                && s.arg.default == Dest::Stdout
        })
    }

    pub fn stream_value(&self, name: &str) -> Option<&'static StreamValue> {
        (self.streams.iter().find(|s| s.name == name)).or_else(|| self.base?.stream_value(name))
    }

    /// Every qualified name any row of this table knows.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.sinks
            .iter()
            .map(|s| s.name)
            .chain(self.redirects.iter().map(|s| s.name))
            .chain(self.streams.iter().map(|s| s.name))
            .chain(self.wrappers.iter().map(|s| s.name))
            .chain(self.configs.iter().map(|s| s.name))
    }

    /// The word of a qualified name that must occur in a file that uses it: the first segment
    /// that is not ubiquitous (`subprocess.run` → `subprocess`, `sys.stdout.write` → `stdout`,
    /// `builtins.print` → `print`, `fmt.Println` → `fmt`).
    pub fn anchor(&self, name: &'static str) -> &'static str {
        // Go import paths: the package's own name (`github.com/sirupsen/logrus` → `logrus`).
        let name: &'static str = if self.lang == Lang::Go {
            name.rsplit('/').next().unwrap_or(name)
        } else {
            name
        };
        let segments: Vec<&'static str> = name
            .split(['.', ':'])
            .filter(|s| !s.is_empty())
            .map(|s| s.trim_end_matches("()"))
            .collect();
        segments
            .iter()
            .copied()
            .find(|s| !self.ubiquitous.contains(s) && !s.starts_with('<'))
            .or_else(|| segments.last().copied())
            .unwrap_or(name)
    }
}

/// The words at least one of which a file of this language must contain to hold a finding:
/// the anchor of every row that can report without being handed a stdout value (its default is
/// stdout, or it is a redirection), the anchors of the stdout values, and the extra tokens.
/// Rows that report only when given stdout are covered by the stdout values' words.
pub fn vocabulary(lang: Lang) -> Vec<&'static str> {
    let Some(t) = table(lang) else {
        return Vec::new();
    };
    let mut out: Vec<&'static str> = Vec::new();
    let mut add = |w: &'static str| {
        if !out.contains(&w) {
            out.push(w);
        }
    };
    let base = t.base.map(|b| vocabulary(b.lang)).unwrap_or_default();
    for w in base {
        add(w);
    }
    // A row that reports only when handed a stdout value is found through that value's word.
    let reports_alone =
        |a: &Arg| a.default == Dest::Stdout || !matches!(a.means, Means::Stream | Means::Streams);
    for s in t.sinks.iter().chain(t.redirects) {
        if reports_alone(&s.arg) {
            add(t.anchor(s.name));
        }
    }
    for s in t.streams.iter().filter(|s| s.dest == Dest::Stdout) {
        add(t.anchor(s.name));
    }
    for w in t.wrappers.iter().filter(|w| w.arg.default == Dest::Stdout) {
        add(t.anchor(w.name));
    }
    // A nested configuration is read only inside its library's rows, found by their words.
    for c in t.configs.iter().filter(|c| c.form != Form::Property) {
        add(t.anchor(c.name));
    }
    for w in t.extra_words {
        add(w);
    }
    out
}

/// What a call site tells the generic checker.
pub trait Site<'t> {
    /// The node of the argument at this position or keyword (option, property), if given.
    fn arg(&self, pos: Option<u8>, kw: Option<&str>) -> Option<tree_sitter::Node<'t>>;
    /// Where a value sends output, read as `means` says; `default` is what an explicit
    /// `None`/`null` means.
    fn dest(&self, value: tree_sitter::Node<'t>, means: Means, default: Dest) -> Dest;
    /// A language-specific condition.
    fn holds(&self, cond: Cond) -> bool;
}

/// The verdict of a row at a call site: the destination and the words for the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub dest: Dest,
    /// The stream argument was given explicitly.
    pub explicit: bool,
}

/// Where a row's stream argument sends output at a call site, and whether it was given.
pub fn destination<'t>(arg: &Arg, site: &impl Site<'t>) -> (Dest, bool) {
    let given = if arg.pos.is_some() || arg.kw.is_some() {
        site.arg(arg.pos, arg.kw)
    } else {
        None
    };
    match given {
        None => (arg.default, false),
        Some(v) => (site.dest(v, arg.means, arg.default), true),
    }
}

/// Applies a row's stream argument and conditions: `Some` when the call writes to stdout.
pub fn check<'t>(arg: &Arg, conds: &[Cond], site: &impl Site<'t>) -> Option<Verdict> {
    let (dest, given) = destination(arg, site);
    if dest != Dest::Stdout {
        return None;
    }
    // A `**kwargs` spread only hides the stream argument when it is not given explicitly.
    conds
        .iter()
        .all(|c| (*c == Cond::NoSplat && given) || site.holds(*c))
        .then_some(Verdict {
            dest,
            explicit: given,
        })
}

/// The message of a row at a call site.
pub fn message(template: &str, name: &str, why: &str) -> String {
    template.replace("{name}", name).replace("{why}", why)
}

/// `docs/scan.md`'s generated part: every row of every table.
pub fn markdown() -> String {
    let mut out = String::new();
    for t in tables() {
        out.push_str(&format!("\n### {}\n\n", title(t.lang)));
        if !t.sinks.is_empty() {
            out.push_str("| sink | form | rule | stream argument | default | also needs |\n");
            out.push_str("| --- | --- | --- | --- | --- | --- |\n");
            for s in t.sinks {
                out.push_str(&format!(
                    "| `{}` | {} | `{}` | {} | {} | {} |\n",
                    s.name,
                    s.form.name(),
                    s.rule.code,
                    arg_doc(&s.arg),
                    s.arg.default.name(),
                    conds_doc(s.conds)
                ));
            }
        }
        if !t.redirects.is_empty() {
            out.push_str("\nRedirections (later writes through the current stdout go where the argument says):\n\n");
            out.push_str(
                "| redirection | form | rule | target argument |\n| --- | --- | --- | --- |\n",
            );
            for s in t.redirects {
                out.push_str(&format!(
                    "| `{}` | {} | {} | {} |\n",
                    s.name,
                    s.form.name(),
                    if s.conds.is_empty() {
                        "—".to_string()
                    } else {
                        format!("`{}`", s.rule.code)
                    },
                    arg_doc(&s.arg)
                ));
            }
        }
        if !t.configs.is_empty() {
            out.push_str("\nConfiguration (loggers, appenders, child processes: reported when the target ends up stdout):\n\n");
            out.push_str("| configuration | library | form | rule | target | set later by | default | stdout values | stderr values | also needs | reported at |\n");
            out.push_str("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
            for c in t.configs {
                let name = match c.keys {
                    [] => format!("`{}`", c.name),
                    keys => format!("`{}: '{}'`", keys.join("|"), c.name),
                };
                out.push_str(&format!(
                    "| {} | {} | {} | `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
                    name,
                    c.library,
                    c.form.name(),
                    c.rule.code,
                    arg_doc(&c.arg),
                    values_doc(c.setters),
                    c.arg.default.name(),
                    values_doc(c.stdout_values),
                    values_doc(c.stderr_values),
                    conds_doc(c.conds),
                    if c.form == Form::Property {
                        "inside its library's options".to_string()
                    } else if c.triggers.is_empty() {
                        "construction".to_string()
                    } else {
                        values_doc(c.triggers)
                    }
                ));
            }
        }
        if !t.wrappers.is_empty() {
            out.push_str("\nWrappers (the result writes where the wrapped argument points):\n\n");
            let names: Vec<String> = t.wrappers.iter().map(|w| format!("`{}`", w.name)).collect();
            out.push_str(&names.join(", "));
            out.push('\n');
        }
        let streams: Vec<String> = t
            .streams
            .iter()
            .map(|s| {
                let follows = if s.follows && s.dest == Dest::Stdout {
                    ", follows redirection"
                } else if s.child {
                    ", to a child's output option only"
                } else {
                    ""
                };
                format!("`{}` ({}{follows})", s.name, s.dest.name())
            })
            .collect();
        out.push_str(&format!("\nStream values: {}.\n", streams.join(", ")));
        for (indent, writes) in t.pretty {
            out.push_str(&format!(
                "\nAfter `{indent}(...)` on a stdout value (an encoder over stdout), its `{writes}(...)` writes multi-line JSON (`static-stdout-write`); without it, `{writes}` is the transport's.\n"
            ));
        }
        if !t.print_methods.is_empty() || !t.write_methods.is_empty() {
            out.push_str(&format!(
                "\nMethods of a stdout stream value (or a writer wrapping one): {} (`static-print-call`); {} (`static-stdout-write`).\n",
                values_doc(t.print_methods),
                values_doc(t.write_methods)
            ));
        }
    }
    out
}

fn title(lang: Lang) -> &'static str {
    match lang {
        Lang::Python => "Python",
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => "JavaScript, TypeScript, TSX",
        Lang::Go => "Go",
        Lang::Rust => "Rust",
        Lang::Java => "Java",
        Lang::Kotlin => "Kotlin",
        Lang::CSharp => "C#",
    }
}

fn arg_doc(a: &Arg) -> String {
    let what = match a.means {
        Means::Stream => "stream",
        Means::Streams => "streams from",
        Means::Fd => "fd",
        Means::FileOrFd => "path or fd",
        Means::Presence => "any value",
        Means::Sink => "sink",
        Means::ChildStdout => "child stdout",
        Means::StderrFlag => "stderr flag",
        Means::Threshold => "stderr threshold",
    };
    match (a.pos, a.kw) {
        (None, None) => "—".to_string(),
        (Some(p), None) => format!("{what} #{p}"),
        (None, Some(k)) => format!("{what} `{k}`"),
        (Some(p), Some(k)) => format!("{what} #{p} / `{k}`"),
    }
}

fn values_doc(v: &[&str]) -> String {
    if v.is_empty() {
        "—".to_string()
    } else {
        v.iter()
            .map(|x| format!("`{x}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn conds_doc(conds: &[Cond]) -> String {
    if conds.is_empty() {
        return "—".to_string();
    }
    conds
        .iter()
        .map(|c| match c {
            Cond::FollowsRedirect => "no redirection in force".to_string(),
            Cond::FlagOff(k) => format!("`{k}` off"),
            Cond::NoSplat => "no `**kwargs` or options it cannot read".to_string(),
            Cond::Given(p, k) => match (p, k) {
                (Some(p), Some(k)) => format!("arg #{p}/`{k}` given"),
                (Some(p), None) => format!("arg #{p} given"),
                (None, Some(k)) => format!("`{k}` given"),
                (None, None) => "an argument".to_string(),
            },
            Cond::WriteMode(p, k) => format!("mode #{p}/`{k}` writes"),
            Cond::NotPayload(p) => format!("arg #{p} not a JSON message"),
            Cond::NotJsonRpc => "not a JSON-RPC message".to_string(),
            Cond::NotCaptured(k) => format!("`{k}` off"),
            Cond::FdNotSaved => "fd 1 not saved".to_string(),
            Cond::FileLacks(n) => format!("no `{n}` in the file"),
            Cond::CallLacks(n) => format!("no `{n}` in the call"),
            Cond::ScopeLacks(n) => format!("no `{n}` in the enclosing method"),
            Cond::ThenLacks(n) => format!("no `{n}` on the same object after it"),
            Cond::ArgIs(p, v) => {
                let (literal, constants) = v.split_once('|').unwrap_or((v, ""));
                let mut s = format!("arg #{p} is `\"{literal}\"`");
                for c in constants.split('|').filter(|c| !c.is_empty()) {
                    s.push_str(&format!(" or `{c}`"));
                }
                s
            }
            Cond::Quiet => "no finding of its own".to_string(),
            Cond::NotFilter => "not a filter that calls the original".to_string(),
            Cond::Satisfies(_) => "configures".to_string(),
            Cond::Unless(_) => "not configured in any scanned file".to_string(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The prefilter's byte strings: the vocabulary without words that contain a shorter one
/// (`print` finds `pprint` too), so each file is searched as few times as possible.
pub fn prefilter_words(lang: Lang) -> Vec<&'static str> {
    let words = vocabulary(lang);
    words
        .iter()
        .copied()
        .filter(|w| !words.iter().any(|o| o != w && w.contains(o)))
        .collect()
}

/// The identifiers of the vocabulary (the plan's candidate words): tokens with punctuation
/// (`open(`, `/dev/`) are the plan's own lexers' business.
pub fn identifier_words(lang: Lang) -> Vec<&'static str> {
    vocabulary(lang)
        .into_iter()
        .filter(|w| w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .collect()
}

/// The segments written before a row's anchor (`sys` in `sys.stdout`, `builtins` in
/// `builtins.print`): an anchor word after a dot counts only on these owners.
pub fn owners(lang: Lang) -> Vec<&'static str> {
    let Some(t) = table(lang) else {
        return Vec::new();
    };
    let mut out: Vec<&'static str> = Vec::new();
    for name in t.names() {
        let anchor = t.anchor(name);
        let segments: Vec<&'static str> =
            name.split(['.', ':']).filter(|s| !s.is_empty()).collect();
        if let Some(i) = segments
            .iter()
            .position(|s| s.trim_end_matches("()") == anchor)
            && i > 0
        {
            let owner = segments[i - 1].trim_end_matches("()");
            if !out.contains(&owner) {
                out.push(owner);
            }
        }
    }
    out
}

/// The plan's candidate identifiers: the vocabulary without the anchors of rows whose stream
/// argument is a file descriptor or a path (`write`, `open`: the plan finds those with their
/// `1` argument, or a bare `write`/`open` would keep most statements of most files).
pub fn plan_words(lang: Lang) -> Vec<&'static str> {
    let Some(t) = table(lang) else {
        return Vec::new();
    };
    let fd_anchors: Vec<&'static str> = t
        .sinks
        .iter()
        .chain(t.redirects)
        .filter(|s| matches!(s.arg.means, Means::Fd | Means::FileOrFd) && s.arg.pos == Some(0))
        .map(|s| t.anchor(s.name))
        .collect();
    identifier_words(lang)
        .into_iter()
        .filter(|w| !fd_anchors.contains(w))
        .collect()
}

/// Where each anchor word may go on after a dot: `console` → `log`, `info`, ...; `stdout` →
/// `write`, `end`, `fd`. A word followed by `.other` is a member of it no row names
/// (`process.stdout.isTTY`, `util.inspect`), not a candidate. Alias spellings count
/// (`pino.default`).
pub fn continuations(lang: Lang) -> Vec<(&'static str, Vec<&'static str>)> {
    let Some(t) = table(lang) else {
        return Vec::new();
    };
    let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    let names = t.names().chain(t.aliases.iter().map(|(from, _)| *from));
    for name in names {
        let anchor = t.anchor(name);
        let segments: Vec<&'static str> = name.split('.').collect();
        let Some(i) = segments.iter().position(|s| *s == anchor) else {
            continue;
        };
        let entry = match out.iter().position(|(w, _)| *w == anchor) {
            Some(k) => &mut out[k].1,
            None => {
                out.push((anchor, Vec::new()));
                &mut out.last_mut().expect("just pushed").1
            }
        };
        if let Some(next) = segments.get(i + 1)
            && !entry.contains(next)
        {
            entry.push(next);
        }
    }
    out
}

/// Every member a row or an alias names after its first segment (`console.log` → `log`;
/// `consola.withTag()` → `withTag`; `pino.default` → `default`): a module object read as
/// `m.other` with `other` not among them reaches no row.
pub fn member_words(lang: Lang) -> Vec<&'static str> {
    let Some(t) = table(lang) else {
        return Vec::new();
    };
    let aliases = t.aliases.iter().flat_map(|(from, to)| [*from, *to]);
    let mut out: Vec<&'static str> = Vec::new();
    for name in t.names().chain(aliases) {
        for seg in name.split('.').skip(1) {
            let seg = seg.trim_end_matches("()");
            if !seg.is_empty() && !out.contains(&seg) {
                out.push(seg);
            }
        }
    }
    out
}

/// How a plan recognizes a write to file descriptor 1 spelled without a candidate word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FdWord {
    /// A call whose first argument is the descriptor, found after its owner or in an import
    /// (`os.write(fd, ...)`, `from os import write`).
    AfterOwner(&'static str),
    /// A call whose first argument is a literal `1` (`open(1, "w")`, `writeSync(1, ...)`).
    ArgOne,
    /// An option set to a literal `1` (`{ fd: 1 }`, `destination: 1`).
    OptionOne,
}

/// The words of file-descriptor writes: the last segment of every row whose first argument is
/// a descriptor or a path (a descriptor argument proper is found after its owner; a path-or-fd
/// argument when it is `1`), and the last segment of every option that takes a descriptor.
pub fn fd_words(lang: Lang) -> Vec<(&'static str, FdWord)> {
    let Some(t) = table(lang) else {
        return Vec::new();
    };
    let args = t
        .sinks
        .iter()
        .chain(t.redirects)
        .map(|s| (s.name, s.arg))
        .chain(t.wrappers.iter().map(|w| (w.name, w.arg)))
        .chain(t.configs.iter().map(|c| (c.name, c.arg)));
    let mut out: Vec<(&'static str, FdWord)> = Vec::new();
    let mut add = |w: (&'static str, FdWord)| {
        if !out.contains(&w) {
            out.push(w);
        }
    };
    for (name, a) in args {
        if !matches!(a.means, Means::Fd | Means::FileOrFd) {
            continue;
        }
        if a.pos == Some(0) {
            let mut segments = name.rsplit(['.', ':']).filter(|s| !s.is_empty());
            let last = segments.next().unwrap_or(name);
            match (a.means, segments.next()) {
                (Means::Fd, Some(owner)) => add((last, FdWord::AfterOwner(owner))),
                _ => add((last, FdWord::ArgOne)),
            }
        }
        for alt in a.kw.into_iter().flat_map(|k| k.split('|')) {
            let last = alt.rsplit('.').next().unwrap_or(alt);
            add((last, FdWord::OptionOne));
        }
    }
    out
}

/// Words that make a short string literal a candidate: the stdout values' words and paths
/// (`'/dev/stdout'`, `getattr(sys, "stdout")`, `"ext://sys.stdout"`), the option values that
/// mean stdout (`stdio: 'inherit'`, `target: 'pino-pretty'`, `type: 'stdout'`), and in
/// JavaScript, whose modules are named by strings, every word (`require('pino')`,
/// `console['log']`).
pub fn string_words(lang: Lang) -> Vec<&'static str> {
    let Some(t) = table(lang) else {
        return Vec::new();
    };
    let mut out: Vec<&'static str> = Vec::new();
    let mut add = |w: &'static str| {
        if !out.contains(&w) {
            out.push(w);
        }
    };
    if matches!(lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx) {
        vocabulary(lang).into_iter().for_each(&mut add);
    }
    let streams = t
        .streams
        .iter()
        .chain(t.base.map_or(&[][..], |b| b.streams));
    let js = matches!(lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx);
    for s in streams.filter(|s| s.dest == Dest::Stdout) {
        add(t.anchor(s.name));
        // The module a stream belongs to, imported under a name of the program's choosing
        // (`import proc from 'node:process'` … `proc.stdout`): its string is the only word.
        if js && let Some((root, _)) = s.name.split_once('.') {
            add(root);
        }
    }
    // Paths and option values (`'/dev/stdout'`, `stdio: 'inherit'`, `target: 'pino-pretty'`).
    string_values(lang).into_iter().for_each(|(w, _)| add(w));
    out
}

/// The string words that are values (`stdio: 'inherit'`, `'/dev/stdout'`, `type: 'console'`),
/// each with a key it is a value of (`stdio`, `type`), if any (one entry per key). In
/// JavaScript the other string words are module and member names, which are strings only where
/// a module or member is named (`require('pino')`, `console['log']`, a quoted key).
pub fn string_values(lang: Lang) -> Vec<(&'static str, Option<&'static str>)> {
    let Some(t) = table(lang) else {
        return Vec::new();
    };
    let mut out: Vec<(&'static str, Option<&'static str>)> = Vec::new();
    let mut add = |w: (&'static str, Option<&'static str>)| {
        if !out.contains(&w) {
            out.push(w);
        }
    };
    t.extra_words
        .iter()
        .chain(
            t.streams
                .iter()
                .chain(t.base.map_or(&[][..], |b| b.streams))
                .filter(|s| s.dest == Dest::Stdout)
                .map(|s| &s.name),
        )
        .filter(|w| w.contains('/'))
        .for_each(|w| add((w, None)));
    let configs = t
        .configs
        .iter()
        .chain(t.base.map_or(&[][..], |b| b.configs));
    for c in configs {
        let mut values: Vec<&'static str> = Vec::new();
        // A value matters only where it makes the row report: a configuration that writes to
        // stdout by default reports without it.
        if c.arg.default != Dest::Stdout {
            values.extend(c.stdout_values);
        }
        if c.form == Form::Property {
            values.push(c.name);
        }
        // The keys a value is given to: the row's keys, else its argument's keyword
        // (`stdio`, the last part of `options.stdio`).
        let mut keys: Vec<&'static str> = c.keys.to_vec();
        if keys.is_empty() {
            let kws = c.arg.kw.into_iter().flat_map(|k| k.split('|'));
            keys.extend(kws.map(|k| k.rsplit('.').next().unwrap_or(k)));
        }
        for w in values {
            if keys.is_empty() {
                add((w, None));
            }
            keys.iter().for_each(|k| add((w, Some(k))));
        }
    }
    out
}

/// The anchors of rows reached only through a module (`util.log`, `child_process.spawn`,
/// `pino`): not rooted in one of the language's `globals` (`console.log`,
/// `process.stdout.write`). In JavaScript such a module is always named by a string
/// (`require('util')`, `from 'node:child_process'`); the identifier is any local name.
pub fn module_words(lang: Lang, globals: &[&str]) -> Vec<&'static str> {
    let Some(t) = table(lang) else {
        return Vec::new();
    };
    let words = plan_words(lang);
    words
        .into_iter()
        .filter(|w| {
            t.names()
                .filter(|n| t.anchor(n) == *w)
                .all(|n| !globals.contains(&n.split('.').next().unwrap_or(n)))
        })
        .collect()
}
