//! Python's stdout knowledge. Names are the qualified paths `lang::python` resolves
//! (`builtins.print` for the builtin, `rich.console.Console` for `from rich.console import
//! Console`); a call result is marked `()`.

use super::{Arg, Cond, Dest, Form, Means, Sink, StreamValue, Table, always, arg, stream};
use crate::catalog::scan::{
    STATIC_PRINT_CALL as PRINT, STATIC_STDOUT_INHERIT as INHERIT, STATIC_STDOUT_LOGGER as LOGGER,
    STATIC_STDOUT_REDIRECT as REDIRECT, STATIC_STDOUT_WRITE as WRITE,
};
use crate::scan::lang::{Condition, Lang};
use Cond::*;
use Dest::*;
use Form::*;

const FILE_KW: Arg = arg(None, Some("file"), Stdout, Means::Stream);
const FILE_1: Arg = arg(Some(1), Some("file"), Stdout, Means::Stream);
const CONSOLE: Arg = arg(None, Some("console"), Stdout, Means::Presence);
const SUBPROCESS: Arg = arg(None, Some("stdout"), Stdout, Means::ChildStdout);
const SUBPROCESS_CONDS: &[Cond] = &[NotCaptured("capture_output")];
const ECHO_CONDS: &[Cond] = &[FlagOff("err"), FollowsRedirect];
const STDOUT_WRITE: &[Cond] = &[FollowsRedirect, NotPayload(0)];
const STRUCTLOG_FILE: Arg = arg(Some(0), Some("file"), Stdout, Means::Stream);
const OPEN: Arg = arg(Some(0), Some("file"), Other, Means::FileOrFd);

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

const PRINT_MSG: &str = "`{name}(...)` {why} writes to stdout";

/// A method of rich's global console (`rich.get_console()`), on stdout unless the file calls
/// `rich.reconfigure(...)` (which replaces it, e.g. with `stderr=True`).
macro_rules! get_console {
    ($method:literal) => {
        row!(
            concat!("rich.get_console().", $method),
            Method,
            PRINT,
            always(Stdout),
            &[FileLacks("reconfigure")],
            "`{name}(...)` prints through rich's global console, on stdout"
        )
    };
}

static SINKS: &[Sink] = &[
    row!(
        "builtins.print",
        Function,
        PRINT,
        FILE_KW,
        &[FollowsRedirect, NotJsonRpc],
        PRINT_MSG
    ),
    row!(
        "rich.print",
        Function,
        PRINT,
        FILE_KW,
        &[FollowsRedirect, NoSplat, NotJsonRpc],
        PRINT_MSG
    ),
    row!(
        "rich.print_json",
        Function,
        PRINT,
        CONSOLE,
        &[],
        "`{name}(...)` prints through rich's default console, on stdout"
    ),
    row!(
        "rich.inspect",
        Function,
        PRINT,
        CONSOLE,
        &[],
        "`{name}(...)` prints through rich's default console, on stdout"
    ),
    row!(
        "rich.pretty.pprint",
        Function,
        PRINT,
        CONSOLE,
        &[],
        "`{name}(...)` prints through rich's default console, on stdout"
    ),
    row!(
        "pprint.pprint",
        Function,
        PRINT,
        arg(Some(1), Some("stream"), Stdout, Means::Stream),
        &[FollowsRedirect],
        "`{name}(...)` without `stream=` writes to stdout"
    ),
    row!(
        "pprint.pp",
        Function,
        PRINT,
        arg(Some(1), Some("stream"), Stdout, Means::Stream),
        &[FollowsRedirect],
        "`{name}(...)` without `stream=` writes to stdout"
    ),
    row!(
        "pprint.PrettyPrinter",
        Constructor,
        PRINT,
        arg(Some(3), Some("stream"), Stdout, Means::Stream),
        &[],
        "`{name}(...)` without `stream=` prints to stdout"
    ),
    row!(
        "click.echo",
        Function,
        PRINT,
        FILE_1,
        ECHO_CONDS,
        "`{name}(...)` without `err=True` writes to stdout"
    ),
    row!(
        "click.secho",
        Function,
        PRINT,
        FILE_1,
        ECHO_CONDS,
        "`{name}(...)` without `err=True` writes to stdout"
    ),
    row!(
        "click.utils.echo",
        Function,
        PRINT,
        FILE_1,
        ECHO_CONDS,
        "`{name}(...)` without `err=True` writes to stdout"
    ),
    row!(
        "click.termui.secho",
        Function,
        PRINT,
        FILE_1,
        ECHO_CONDS,
        "`{name}(...)` without `err=True` writes to stdout"
    ),
    row!(
        "typer.echo",
        Function,
        PRINT,
        FILE_1,
        ECHO_CONDS,
        "`{name}(...)` without `err=True` writes to stdout"
    ),
    row!(
        "typer.secho",
        Function,
        PRINT,
        FILE_1,
        ECHO_CONDS,
        "`{name}(...)` without `err=True` writes to stdout"
    ),
    row!(
        "click.echo_via_pager",
        Function,
        PRINT,
        FILE_KW,
        &[],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "click.progressbar",
        Function,
        PRINT,
        FILE_KW,
        &[],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "builtins.input",
        Function,
        PRINT,
        always(Stdout),
        &[Given(Some(0), Some("prompt")), FollowsRedirect],
        "`{name}(prompt)` writes its prompt to stdout"
    ),
    row!(
        "builtins.breakpoint",
        Function,
        WRITE,
        always(Stdout),
        &[],
        "`{name}()` starts a debugger that talks on stdout"
    ),
    row!(
        "pdb.set_trace",
        Function,
        WRITE,
        always(Stdout),
        &[],
        "`{name}()` starts a debugger that talks on stdout"
    ),
    row!(
        "ipdb.set_trace",
        Function,
        WRITE,
        always(Stdout),
        &[],
        "`{name}()` starts a debugger that talks on stdout"
    ),
    get_console!("print"),
    get_console!("log"),
    get_console!("print_json"),
    get_console!("out"),
    get_console!("rule"),
    get_console!("print_exception"),
    row!(
        "pdb.Pdb().set_trace",
        Method,
        WRITE,
        always(Stdout),
        &[],
        "`{name}()` starts a debugger that talks on stdout"
    ),
    row!(
        "tqdm.tqdm.write",
        Method,
        PRINT,
        FILE_1,
        &[FollowsRedirect],
        "`{name}(...)` without `file=` writes to stdout"
    ),
    row!(
        "tqdm.auto.tqdm.write",
        Method,
        PRINT,
        FILE_1,
        &[FollowsRedirect],
        "`{name}(...)` without `file=` writes to stdout"
    ),
    row!(
        "tqdm.std.tqdm.write",
        Method,
        PRINT,
        FILE_1,
        &[FollowsRedirect],
        "`{name}(...)` without `file=` writes to stdout"
    ),
    row!(
        "tqdm.asyncio.tqdm.write",
        Method,
        PRINT,
        FILE_1,
        &[FollowsRedirect],
        "`{name}(...)` without `file=` writes to stdout"
    ),
    row!(
        "sys.stdout.write",
        Method,
        WRITE,
        always(Stdout),
        STDOUT_WRITE,
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "sys.stdout.writelines",
        Method,
        WRITE,
        always(Stdout),
        STDOUT_WRITE,
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "sys.stdout.buffer.write",
        Method,
        WRITE,
        always(Stdout),
        STDOUT_WRITE,
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "sys.stdout.buffer.writelines",
        Method,
        WRITE,
        always(Stdout),
        STDOUT_WRITE,
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "sys.stdout.buffer.raw.write",
        Method,
        WRITE,
        always(Stdout),
        STDOUT_WRITE,
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "sys.__stdout__.write",
        Method,
        WRITE,
        always(Stdout),
        &[NotPayload(0)],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "sys.__stdout__.writelines",
        Method,
        WRITE,
        always(Stdout),
        &[NotPayload(0)],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "sys.__stdout__.buffer.write",
        Method,
        WRITE,
        always(Stdout),
        &[NotPayload(0)],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "os.write",
        Function,
        WRITE,
        arg(Some(0), None, Other, Means::Fd),
        &[NotPayload(1)],
        "`{name}(...)` writes to file descriptor 1 (stdout)"
    ),
    row!(
        "builtins.open",
        Function,
        WRITE,
        OPEN,
        &[WriteMode(1, "mode")],
        "`{name}(...)` opens stdout for writing"
    ),
    row!(
        "io.open",
        Function,
        WRITE,
        OPEN,
        &[WriteMode(1, "mode")],
        "`{name}(...)` opens stdout for writing"
    ),
    row!(
        "os.fdopen",
        Function,
        WRITE,
        arg(Some(0), Some("fd"), Other, Means::FileOrFd),
        &[WriteMode(1, "mode")],
        "`{name}(...)` opens stdout for writing"
    ),
    row!(
        "codecs.open",
        Function,
        WRITE,
        arg(Some(0), Some("filename"), Other, Means::FileOrFd),
        &[WriteMode(1, "mode")],
        "`{name}(...)` opens stdout for writing"
    ),
    row!(
        "io.FileIO",
        Constructor,
        WRITE,
        OPEN,
        &[WriteMode(1, "mode")],
        "`{name}(...)` opens stdout for writing"
    ),
    row!(
        "logging.basicConfig",
        Function,
        LOGGER,
        arg(None, Some("stream"), Stderr, Means::Stream),
        &[],
        "`{name}(stream=...)` sends every log record to stdout"
    ),
    row!(
        "logging.StreamHandler",
        Constructor,
        LOGGER,
        arg(Some(0), Some("stream"), Stderr, Means::Stream),
        &[],
        "`{name}(...)` on stdout sends log records to the protocol channel"
    ),
    row!(
        "rich.console.Console",
        Constructor,
        LOGGER,
        arg(None, Some("file"), Stdout, Means::Stream),
        &[FlagOff("stderr")],
        "`{name}()` without `stderr=True` prints to stdout"
    ),
    row!(
        "rich.logging.RichHandler",
        Constructor,
        LOGGER,
        CONSOLE,
        &[NoSplat],
        "`{name}(...)` without `console=` uses rich's default console, on stdout"
    ),
    row!(
        "rich.progress.Progress",
        Constructor,
        LOGGER,
        CONSOLE,
        &[NoSplat],
        "`{name}(...)` without `console=` uses rich's default console, on stdout"
    ),
    row!(
        "rich.progress.track",
        Function,
        LOGGER,
        CONSOLE,
        &[NoSplat],
        "`{name}(...)` without `console=` uses rich's default console, on stdout"
    ),
    row!(
        "rich.live.Live",
        Constructor,
        LOGGER,
        CONSOLE,
        &[NoSplat],
        "`{name}(...)` without `console=` uses rich's default console, on stdout"
    ),
    row!(
        "rich.status.Status",
        Constructor,
        LOGGER,
        CONSOLE,
        &[NoSplat],
        "`{name}(...)` without `console=` uses rich's default console, on stdout"
    ),
    row!(
        "loguru.logger.add",
        Method,
        LOGGER,
        arg(Some(0), Some("sink"), Other, Means::Sink),
        &[],
        "`{name}(...)` sends log records to stdout"
    ),
    row!(
        "structlog.configure",
        Function,
        LOGGER,
        arg(None, Some("logger_factory"), Stdout, Means::Presence),
        &[Satisfies(Condition::StructlogConfigured), NoSplat],
        "`{name}(...)` without `logger_factory=` keeps structlog's default PrintLogger on stdout"
    ),
    row!(
        "structlog.get_logger",
        Function,
        LOGGER,
        always(Stdout),
        &[Unless(Condition::StructlogConfigured)],
        "`{name}()` with structlog left unconfigured logs to stdout"
    ),
    row!(
        "structlog.getLogger",
        Function,
        LOGGER,
        always(Stdout),
        &[Unless(Condition::StructlogConfigured)],
        "`{name}()` with structlog left unconfigured logs to stdout"
    ),
    row!(
        "structlog.stdlib.get_logger",
        Function,
        LOGGER,
        always(Stdout),
        &[Unless(Condition::StructlogConfigured)],
        "`{name}()` with structlog left unconfigured logs to stdout"
    ),
    row!(
        "structlog.PrintLoggerFactory",
        Constructor,
        LOGGER,
        STRUCTLOG_FILE,
        &[],
        "`{name}()` without `file=` logs to stdout"
    ),
    row!(
        "structlog.WriteLoggerFactory",
        Constructor,
        LOGGER,
        STRUCTLOG_FILE,
        &[],
        "`{name}()` without `file=` logs to stdout"
    ),
    row!(
        "structlog.BytesLoggerFactory",
        Constructor,
        LOGGER,
        STRUCTLOG_FILE,
        &[],
        "`{name}()` without `file=` logs to stdout"
    ),
    row!(
        "structlog.PrintLogger",
        Constructor,
        LOGGER,
        STRUCTLOG_FILE,
        &[],
        "`{name}()` without `file=` logs to stdout"
    ),
    row!(
        "structlog.WriteLogger",
        Constructor,
        LOGGER,
        STRUCTLOG_FILE,
        &[],
        "`{name}()` without `file=` logs to stdout"
    ),
    row!(
        "structlog.BytesLogger",
        Constructor,
        LOGGER,
        STRUCTLOG_FILE,
        &[],
        "`{name}()` without `file=` logs to stdout"
    ),
    row!(
        "subprocess.run",
        Function,
        INHERIT,
        SUBPROCESS,
        SUBPROCESS_CONDS,
        "`{name}(...)` lets the child write to the server's stdout"
    ),
    row!(
        "subprocess.call",
        Function,
        INHERIT,
        SUBPROCESS,
        SUBPROCESS_CONDS,
        "`{name}(...)` lets the child write to the server's stdout"
    ),
    row!(
        "subprocess.check_call",
        Function,
        INHERIT,
        SUBPROCESS,
        SUBPROCESS_CONDS,
        "`{name}(...)` lets the child write to the server's stdout"
    ),
    row!(
        "subprocess.Popen",
        Constructor,
        INHERIT,
        SUBPROCESS,
        SUBPROCESS_CONDS,
        "`{name}(...)` lets the child write to the server's stdout"
    ),
    row!(
        "asyncio.create_subprocess_exec",
        Function,
        INHERIT,
        SUBPROCESS,
        SUBPROCESS_CONDS,
        "`{name}(...)` lets the child write to the server's stdout"
    ),
    row!(
        "asyncio.create_subprocess_shell",
        Function,
        INHERIT,
        SUBPROCESS,
        SUBPROCESS_CONDS,
        "`{name}(...)` lets the child write to the server's stdout"
    ),
    row!(
        "asyncio.subprocess.create_subprocess_exec",
        Function,
        INHERIT,
        SUBPROCESS,
        SUBPROCESS_CONDS,
        "`{name}(...)` lets the child write to the server's stdout"
    ),
    row!(
        "asyncio.subprocess.create_subprocess_shell",
        Function,
        INHERIT,
        SUBPROCESS,
        SUBPROCESS_CONDS,
        "`{name}(...)` lets the child write to the server's stdout"
    ),
    row!(
        "os.system",
        Function,
        INHERIT,
        always(Stdout),
        &[],
        "`{name}(...)` runs a shell that writes to the server's stdout"
    ),
];

static REDIRECTS: &[Sink] = &[
    row!(
        "os.dup2",
        Function,
        REDIRECT,
        arg(Some(1), None, Other, Means::Fd),
        &[FdNotSaved],
        "`{name}` points file descriptor 1 elsewhere: the protocol replies go there too"
    ),
    row!(
        "sys.stdout",
        Property,
        REDIRECT,
        always(Other),
        &[],
        "`{name}` replaces stdout for the whole process: the MCP transport's replies go there too"
    ),
    row!(
        "contextlib.redirect_stdout",
        Function,
        REDIRECT,
        arg(Some(0), Some("new_target"), Other, Means::Stream),
        &[],
        "inside `with {name}(...)` writes through sys.stdout go to its target"
    ),
];

static STREAMS: &[StreamValue] = &[
    stream("sys.stdout", Stdout, true),
    stream("sys.__stdout__", Stdout, true),
    stream("sys.stdout.buffer", Stdout, true),
    stream("sys.__stdout__.buffer", Stdout, true),
    stream("sys.stdout.buffer.raw", Stdout, true),
    stream("sys.stderr", Stderr, true),
    stream("sys.__stderr__", Stderr, true),
    stream("sys.stderr.buffer", Stderr, true),
    stream("sys.__stderr__.buffer", Stderr, true),
];

pub static TABLE: Table = Table {
    lang: Lang::Python,
    sinks: SINKS,
    streams: STREAMS,
    wrappers: &[],
    configs: &[],
    print_methods: &[],
    write_methods: &[],
    redirects: REDIRECTS,
    ubiquitous: &[
        "builtins",
        "sys",
        "os",
        "io",
        "asyncio",
        "codecs",
        "logging",
        "contextlib",
    ],
    // fd writes (`os.write(1, ...)`, `open(1, "w")`), `/dev/stdout` paths, `ext://sys.stdout`
    // config strings, `STDOUT_FILENO`.
    aliases: &[],
    base: None,
    pretty: &[],
    extra_words: &[
        "write",
        "open(",
        "FileIO(",
        "/dev/",
        "STDOUT_FILENO",
        "input",
        "print",
        "dup2",
        "system",
    ],
};
