//! JavaScript and TypeScript's stdout knowledge (Node.js). Names are the paths
//! `lang::javascript` resolves: a global or a module, then members (`console.log`,
//! `process.stdout.write`, `child_process.spawn`, `pino`, `winston.transports.Console`); a call
//! result is marked `()`.
//!
//! Arguments: a position counts the arguments of the call; when the row also names an option, the
//! options object (an object literal argument) is not counted, and the option is read from it
//! (`a.b` is a nested property, `a|b` the first given of two). `fs.createWriteStream(path, { fd })`
//! is `arg(Some(0), Some("fd"), ...)`.
//!
//! Defaults, from each library's documentation and source:
//! - `console.log`, `info`, `debug`, `table`, `dir`, `dirxml`, `count`, `timeLog`, `timeEnd`
//!   and a labelled `group` print to stdout; `error`, `warn`, `trace` and `assert` to stderr.
//! - pino logs to stdout (`pino.destination()` is fd 1) unless given a destination or a
//!   transport; the `pino/file` and `pino-pretty` transports default to fd 1 too.
//! - winston's Console transport writes every level to stdout unless it is in `stderrLevels`
//!   (default `[]`): a list that leaves out a level the transport logs (its `level`, else
//!   `info`, and every more severe level) still sends that level to stdout.
//! - bunyan logs to stdout when no `stream`/`streams` is given.
//! - consola's reporters write levels below 2 (fatal, error, warn) to stderr and everything else
//!   to stdout; the default level is 3, so `log`, `info`, `success`, `fail`, `ready`, `start`
//!   and `box` print, `debug` and `trace` do not. `createConsola({ stdout })` picks the stream;
//!   `withTag()` and `withDefaults()` return instances with the same reporters.
//! - ink's `render(tree, options)` draws on `options.stdout`, by default `process.stdout`.
//! - log4js writes nothing until configured (its default level is OFF); the `stdout` and
//!   `console` appenders write to stdout (`console` through `console.log` at every level), the
//!   `stderr` appender to stderr.
//! - tslog's `Logger` prints through `console.log` unless `type: "hidden"`.
//! - signale's default instance and `new Signale()` write every type to `process.stdout` unless
//!   `stream` is given; `debug` and the timers are below the default level (`info`).
//! - `child_process.spawn`/`exec*` pipe the child's stdout unless `stdio` says `inherit` (or fd
//!   1, or `process.stdout`); `fork` inherits it unless `silent: true` or `stdio` says otherwise.
//!   execa (`execa`, `$`, ...) pipes it unless `stdout`/`stdio` says `inherit`.
//!
//! `console.log = console.error` (any assignment to a spelled-out path) is a redirection the
//! resolver applies in source order: later calls of the path resolve to the new value.

use super::Dest::*;
use super::{Cond, Config, Form, Means, Sink, StreamValue, Table, Wrapper, always, arg, stream};
use crate::catalog::scan::{
    STATIC_CONSOLE_LOG as CONSOLE, STATIC_PRINT_CALL as PRINT, STATIC_STDOUT_INHERIT as INHERIT,
    STATIC_STDOUT_LOGGER as LOGGER, STATIC_STDOUT_REDIRECT as REDIRECT,
    STATIC_STDOUT_WRITE as WRITE,
};
use crate::scan::lang::Lang;
use Cond::*;
use Form::*;

macro_rules! row {
    ($name:expr, $form:expr, $rule:expr, $arg:expr, $conds:expr, $msg:expr) => {
        Sink {
            name: $name,
            form: $form,
            rule: &$rule,
            arg: $arg,
            conds: $conds,
            message: $msg,
        }
    };
}

macro_rules! console {
    ($method:literal) => {
        row!(
            concat!("console.", $method),
            Method,
            CONSOLE,
            always(Stdout),
            &[NotJsonRpc],
            concat!(
                "`{name}(...)` writes to stdout (console.",
                $method,
                " is stdout in Node.js)"
            )
        )
    };
    ($method:literal, labelled) => {
        row!(
            concat!("console.", $method),
            Method,
            CONSOLE,
            always(Stdout),
            &[Given(Some(0), None)],
            concat!(
                "`{name}(...)` prints its label to stdout (console.",
                $method,
                " is stdout in Node.js)"
            )
        )
    };
}

/// A file-descriptor write: the first argument is the descriptor (or a path).
macro_rules! fd_write {
    ($name:literal) => {
        row!(
            $name,
            Function,
            WRITE,
            arg(Some(0), None, Other, Means::FileOrFd),
            &[NotPayload(1)],
            "`{name}(...)` writes to file descriptor 1, stdout"
        )
    };
}

/// A child process whose `stdio` (or execa's `stdout`) option decides where its output goes.
macro_rules! child {
    ($name:literal, $library:literal, $kw:literal) => {
        child!(
            $name,
            $library,
            $kw,
            Other,
            &[],
            "`{name}(...)` gives the child the server's stdout"
        )
    };
    ($name:literal, $library:literal, $kw:literal, $default:expr, $conds:expr, $msg:literal) => {
        Config {
            name: $name,
            form: Function,
            library: $library,
            conds: $conds,
            keys: &[],
            rule: &INHERIT,
            arg: arg(None, Some($kw), $default, Means::ChildStdout),
            setters: &[],
            triggers: &[],
            stdout_values: &["inherit"],
            stderr_values: &[],
            message: $msg,
        }
    };
}

macro_rules! logger_method {
    ($lib:literal, $method:literal, $why:literal) => {
        row!(
            concat!($lib, ".", $method),
            Method,
            LOGGER,
            always(Stdout),
            &[],
            concat!("`{name}(...)` ", $why)
        )
    };
}

macro_rules! consola {
    ($method:literal) => {
        logger_method!(
            "consola",
            $method,
            "prints through consola's default reporter, which writes this level to stdout"
        )
    };
}

macro_rules! signale {
    ($method:literal) => {
        logger_method!(
            "signale",
            $method,
            "prints through signale's default instance, which writes to stdout"
        )
    };
}

static SINKS: &[Sink] = &[
    console!("log"),
    console!("info"),
    console!("debug"),
    console!("table"),
    console!("dir"),
    console!("dirxml"),
    console!("count"),
    console!("timeLog"),
    console!("timeEnd"),
    console!("group", labelled),
    console!("groupCollapsed", labelled),
    row!(
        "process.stdout.write",
        Method,
        WRITE,
        always(Stdout),
        &[NotPayload(0), NotFilter],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "process.stdout.end",
        Method,
        WRITE,
        always(Stdout),
        &[Given(Some(0), None), NotPayload(0), NotFilter],
        "`{name}(...)` writes its last chunk to stdout"
    ),
    row!(
        "util.log",
        Function,
        PRINT,
        always(Stdout),
        &[],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "util.print",
        Function,
        PRINT,
        always(Stdout),
        &[],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "util.puts",
        Function,
        PRINT,
        always(Stdout),
        &[],
        "`{name}(...)` writes to stdout"
    ),
    fd_write!("fs.writeSync"),
    fd_write!("fs.write"),
    fd_write!("fs.writeFileSync"),
    fd_write!("fs.appendFileSync"),
    fd_write!("fs.writeFile"),
    fd_write!("fs.appendFile"),
    fd_write!("fs.promises.writeFile"),
    fd_write!("fs.promises.appendFile"),
    row!(
        "fs.createWriteStream",
        Function,
        WRITE,
        arg(Some(0), Some("fd"), Other, Means::FileOrFd),
        &[],
        "`{name}(...)` opens stdout for writing"
    ),
    consola!("log"),
    consola!("info"),
    consola!("success"),
    consola!("fail"),
    consola!("ready"),
    consola!("start"),
    consola!("box"),
    signale!("log"),
    signale!("info"),
    signale!("success"),
    signale!("note"),
    signale!("start"),
    signale!("pause"),
    signale!("complete"),
    signale!("pending"),
    signale!("wait"),
    signale!("await"),
    signale!("watch"),
    signale!("star"),
    signale!("fav"),
    signale!("warn"),
    signale!("error"),
    signale!("fatal"),
    signale!("alert"),
];

static REDIRECTS: &[Sink] = &[row!(
    "process.stdout.write",
    Property,
    REDIRECT,
    always(Other),
    &[NotFilter],
    "`{name}` replaces process.stdout.write: the MCP transport's replies go there too"
)];

static WRAPPERS: &[Wrapper] = &[
    Wrapper {
        name: "pino.destination",
        form: Function,
        arg: arg(Some(0), Some("dest"), Stdout, Means::FileOrFd),
    },
    Wrapper {
        name: "pino.transport",
        form: Function,
        arg: arg(Some(0), None, Other, Means::Sink),
    },
];

macro_rules! target {
    ($library:literal, $key:literal, $value:literal, $arg:expr, $msg:literal) => {
        Config {
            name: $value,
            form: Property,
            library: $library,
            conds: &[],
            keys: &[$key],
            rule: &LOGGER,
            arg: $arg,
            setters: &[],
            triggers: &[],
            stdout_values: &[],
            stderr_values: &[],
            message: $msg,
        }
    };
}

static CONFIGS: &[Config] = &[
    child!("child_process.spawn", "node:child_process", "stdio"),
    child!("child_process.spawnSync", "node:child_process", "stdio"),
    child!("child_process.exec", "node:child_process", "stdio"),
    child!("child_process.execSync", "node:child_process", "stdio"),
    child!("child_process.execFile", "node:child_process", "stdio"),
    child!("child_process.execFileSync", "node:child_process", "stdio"),
    child!(
        "child_process.fork",
        "node:child_process",
        "stdio",
        Stdout,
        &[FlagOff("silent"), NoSplat],
        "`{name}(...)` gives the child the server's stdout (fork inherits it unless `silent: true`)"
    ),
    child!("cross-spawn", "cross-spawn", "stdio"),
    child!("cross-spawn.sync", "cross-spawn", "stdio"),
    child!("execa", "execa", "stdout|stdio"),
    child!("execa.execaSync", "execa", "stdout|stdio"),
    child!("execa.execaCommand", "execa", "stdout|stdio"),
    child!("execa.execaCommandSync", "execa", "stdout|stdio"),
    child!("execa.execaNode", "execa", "stdout|stdio"),
    child!("execa.$", "execa", "stdout|stdio"),
    Config {
        name: "ink.render",
        form: Function,
        library: "ink",
        conds: &[NoSplat],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("stdout"), Stdout, Means::Stream),
        setters: &[],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "`{name}(...)` without a `stdout` option draws its interface on stdout",
    },
    Config {
        name: "pino",
        form: Function,
        library: "pino",
        conds: &[NoSplat],
        keys: &[],
        rule: &LOGGER,
        arg: arg(Some(0), Some("transport"), Stdout, Means::Sink),
        setters: &[],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "`{name}(...)` logs to its default destination, stdout",
    },
    target!(
        "pino",
        "target",
        "pino-pretty",
        arg(None, Some("options.destination"), Stdout, Means::FileOrFd),
        "the pino-pretty transport writes to fd 1 unless `options.destination` says otherwise"
    ),
    target!(
        "pino",
        "target",
        "pino/file",
        arg(None, Some("options.destination"), Stdout, Means::FileOrFd),
        "the pino/file transport writes to fd 1 unless `options.destination` says otherwise"
    ),
    Config {
        name: "winston.transports.Console",
        form: Constructor,
        library: "winston",
        conds: &[NoSplat],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("stderrLevels"), Stdout, Means::Threshold),
        setters: &[],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "`new {name}(...)` logs to stdout every level its `stderrLevels` leaves out",
    },
    Config {
        name: "bunyan.createLogger",
        form: Function,
        library: "bunyan",
        conds: &[NoSplat],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("stream|streams"), Stdout, Means::Sink),
        setters: &[],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "bunyan logger without a stderr `stream` logs to stdout",
    },
    Config {
        name: "bunyan",
        form: Constructor,
        library: "bunyan",
        conds: &[NoSplat],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("stream|streams"), Stdout, Means::Sink),
        setters: &[],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "bunyan logger without a stderr `stream` logs to stdout",
    },
    Config {
        name: "console.Console",
        form: Constructor,
        library: "node:console",
        conds: &[],
        keys: &[],
        rule: &LOGGER,
        arg: arg(Some(0), Some("stdout"), Other, Means::Stream),
        setters: &[],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "`new {name}(...)` on process.stdout prints to stdout",
    },
    Config {
        name: "consola.createConsola",
        form: Function,
        library: "consola",
        conds: &[NoSplat, CallLacks("reporters")],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("stdout"), Stdout, Means::Stream),
        setters: &[],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "`{name}(...)` without `stdout: process.stderr` logs info and below to stdout",
    },
    Config {
        name: "consola.create",
        form: Method,
        library: "consola",
        conds: &[NoSplat, CallLacks("reporters")],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("stdout"), Stdout, Means::Stream),
        setters: &[],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "`{name}(...)` without `stdout: process.stderr` logs info and below to stdout",
    },
    Config {
        name: "log4js.configure",
        form: Function,
        library: "log4js",
        conds: &[],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("appenders"), Other, Means::Sink),
        setters: &[],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "`{name}(...)` sends log events to a stdout or console appender",
    },
    target!(
        "log4js",
        "type",
        "stdout",
        always(Stdout),
        "log4js's `stdout` appender writes to stdout"
    ),
    target!(
        "log4js",
        "type",
        "console",
        always(Stdout),
        "log4js's `console` appender writes every level with console.log, to stdout"
    ),
    target!(
        "log4js",
        "type",
        "stderr",
        always(Stderr),
        "log4js's `stderr` appender writes to stderr"
    ),
    Config {
        name: "tslog.Logger",
        form: Constructor,
        library: "tslog",
        conds: &[NoSplat],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("type"), Stdout, Means::Sink),
        setters: &[],
        triggers: &[],
        stdout_values: &["pretty", "json"],
        stderr_values: &[],
        message: "`new {name}(...)` prints with console.log, to stdout, unless `type: \"hidden\"`",
    },
    Config {
        name: "signale.Signale",
        form: Constructor,
        library: "signale",
        conds: &[NoSplat, FlagOff("disabled")],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("stream"), Stdout, Means::Sink),
        setters: &[],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "`new {name}(...)` without `stream: process.stderr` logs to stdout",
    },
];

static STREAMS: &[StreamValue] = &[
    stream("process.stdout", Stdout, true),
    stream("process.stdout.fd", Stdout, false),
    stream("/dev/stdout", Stdout, false),
    stream("/dev/fd/1", Stdout, false),
    stream("/proc/self/fd/1", Stdout, false),
    stream("process.stderr", Stderr, true),
    stream("process.stderr.fd", Stderr, false),
    stream("/dev/stderr", Stderr, false),
];

pub static TABLE: Table = Table {
    lang: Lang::JavaScript,
    sinks: SINKS,
    streams: STREAMS,
    wrappers: WRAPPERS,
    configs: CONFIGS,
    print_methods: &[],
    write_methods: &[],
    redirects: REDIRECTS,
    ubiquitous: &["process", "fs", "promises"],
    pretty: &[],
    extra_words: &[],
    aliases: EXPORT_ALIASES,
    base: None,
};

/// Names that are the same object whatever the code declares: a global the resolver knows
/// (`console`, `process`) is itself until a declaration shadows it.
pub static GLOBALS: &[&str] = &[
    "console",
    "process",
    "globalThis",
    "global",
    "window",
    "self",
    "require",
    "JSON",
    "Bun",
    "Deno",
];

/// The global objects: `globalThis.console` is `console`.
pub static GLOBAL_OBJECTS: &[&str] = &["globalThis", "global", "window", "self"];

/// Other spellings of the same export: `import { pino } from 'pino'`, `require('pino').default`,
/// `import { consola } from 'consola/basic'`.
pub static EXPORT_ALIASES: &[(&str, &str)] = &[
    ("pino.pino", "pino"),
    ("pino.default", "pino"),
    ("execa.execa", "execa"),
    ("winston.default", "winston"),
    ("bunyan.default", "bunyan"),
    ("consola.consola", "consola"),
    ("consola.default", "consola"),
    ("consola.basic", "consola"),
    ("consola.core", "consola"),
    // An instance made from the default one keeps its reporters: `consola.withTag('x').info()`.
    ("consola.withTag()", "consola"),
    ("consola.withDefaults()", "consola"),
    ("signale.default", "signale"),
    ("log4js.default", "log4js"),
    ("console.default", "console"),
    ("process.default", "process"),
    ("fs.default", "fs"),
    ("child_process.default", "child_process"),
    ("util.default", "util"),
];

/// Globals that are another path: `new Console(...)` is `console.Console`.
pub static GLOBAL_ALIASES: &[(&str, &str)] = &[("Console", "console.Console")];

/// Module specifiers: `node:fs` is `fs`, `fs/promises` is `fs.promises`.
pub static MODULE_ALIASES: &[(&str, &str)] = &[("fs/promises", "fs.promises")];

/// Callee names whose stdout argument sets up the protocol's own transport or wraps the stream
/// (not a stray write): `new StdioServerTransport(process.stdin, process.stdout)`,
/// `readline.createInterface({ output: process.stdout })`.
pub static TRANSPORT_WORDS: &[&str] = &[
    "stdio",
    "transport",
    "connect",
    "serve",
    "server",
    "createinterface",
    "wrap",
];

/// Callee names that make a call handed process.stdout a logger (`static-stdout-logger`)
/// rather than a plain write.
pub static LOGGER_WORDS: &[&str] = &[
    "log",
    "console",
    "handler",
    "transport",
    "destination",
    "logger",
];
