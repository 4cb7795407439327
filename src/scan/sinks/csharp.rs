//! C#'s stdout knowledge. `Console.SetOut(...)` is a redirection with no finding of its own:
//! the MCP C# SDK's stdio transport writes to `Console.OpenStandardOutput()`, which `SetOut`
//! does not touch, so `Console.SetOut(Console.Error)` is the usual fix and every later
//! `Console.WriteLine` goes to stderr. Microsoft.Extensions.Logging's console provider writes
//! to stdout unless `LogToStandardErrorThreshold` is set (the generic host, `Host.CreateApplicationBuilder`,
//! adds it by default); Serilog's console sink unless
//! `standardErrorFromLevel`; NLog's console target unless `StdErr` (older: `Error`), and its
//! fluent `WriteToConsole()` unless `stderr: true`.
//! `Process.Start` with a file name starts the child with the server's stdout (no
//! `RedirectStandardOutput`, and `UseShellExecute` is false by default on .NET Core).

use super::Dest::*;
use super::{
    Arg, Cond, Config, Form, Means, Sink, StreamValue, Table, Wrapper, always, arg, stream,
};
use crate::catalog::scan::{
    STATIC_PRINT_CALL as PRINT, STATIC_STDOUT_INHERIT as INHERIT, STATIC_STDOUT_LOGGER as LOGGER,
    STATIC_STDOUT_REDIRECT as REDIRECT,
};
use crate::scan::lang::Lang;
use Cond::*;
use Form::*;

const W0: Arg = arg(Some(0), None, Other, Means::Stream);
const CONSOLE_LOGGER: &[Cond] = &[
    CallLacks("LogToStandardErrorThreshold"),
    ScopeLacks("Configure<ConsoleLoggerOptions>"),
];

/// The .NET generic host adds the console logger (Information and above to stdout) unless the
/// code clears the providers, configures the console logger itself (a row of its own), sets a
/// stderr threshold, or serves over HTTP (stdout is no protocol there).
const HOST_DEFAULT: &[Cond] = &[
    FollowsRedirect,
    ScopeLacks("LogToStandardErrorThreshold"),
    ScopeLacks("ClearProviders"),
    ScopeLacks("AddConsole"),
    ScopeLacks("Console("),
    FileLacks("WithHttpTransport"),
];

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

/// Spectre.Console's static `AnsiConsole` writes to `System.Console.Out` (created on first use,
/// so a `Console.SetOut` before it counts).
macro_rules! spectre {
    ($name:expr) => {
        row!(
            $name,
            Method,
            PRINT,
            always(Stdout),
            &[FollowsRedirect],
            "Spectre.Console's `{name}(...)` writes to stdout"
        )
    };
}

/// log4net's console appenders write to `Console.Out` unless `Target = "Console.Error"`.
macro_rules! log4net {
    ($name:expr) => {
        Config {
            name: $name,
            form: Constructor,
            library: "log4net",
            conds: &[],
            keys: &[],
            rule: &LOGGER,
            arg: arg(None, Some("Target"), Stdout, Means::Sink),
            setters: &["Target"],
            triggers: &[],
            stdout_values: &["Console.Out", "ConsoleOut"],
            stderr_values: &["Console.Error", "ConsoleError"],
            message: "log4net's `{name}` logs to Console.Out unless `Target = \"Console.Error\"`",
        }
    };
}

static SINKS: &[Sink] = &[
    // System.Diagnostics: `new ConsoleTraceListener()` writes trace output to stdout,
    // `new ConsoleTraceListener(true)` to stderr.
    row!(
        "ConsoleTraceListener",
        Constructor,
        LOGGER,
        arg(Some(0), Some("useErrorStream"), Stdout, Means::StderrFlag),
        &[],
        "`new {name}()` sends Trace output to stdout (`new ConsoleTraceListener(true)` uses stderr)"
    ),
    spectre!("AnsiConsole.Write"),
    spectre!("AnsiConsole.WriteLine"),
    spectre!("AnsiConsole.Markup"),
    spectre!("AnsiConsole.MarkupLine"),
    spectre!("AnsiConsole.MarkupInterpolated"),
    spectre!("AnsiConsole.MarkupLineInterpolated"),
    spectre!("AnsiConsole.WriteException"),
    spectre!("AnsiConsole.Render"),
    spectre!("AnsiConsole.Clear"),
    // Prompts and live displays render on the same console.
    spectre!("AnsiConsole.Ask"),
    spectre!("AnsiConsole.Prompt"),
    spectre!("AnsiConsole.Confirm"),
    spectre!("AnsiConsole.Status"),
    spectre!("AnsiConsole.Progress"),
    spectre!("AnsiConsole.Live"),
    // `new TextWriterTraceListener(Console.Out)` sends Trace output where the writer goes (a
    // file name or a file stream is no finding).
    row!(
        "TextWriterTraceListener",
        Constructor,
        LOGGER,
        W0,
        &[],
        "`new {name}(Console.Out)` sends Trace output to stdout"
    ),
    // NLog's fluent setup: `LogManager.Setup().LoadConfiguration(b =>
    // b.ForLogger().WriteToConsole())` writes to stdout unless `stderr: true` (the third
    // parameter; the fourth of `WriteToColoredConsole`).
    row!(
        "*.WriteToConsole",
        Method,
        LOGGER,
        arg(Some(2), Some("stderr"), Stdout, Means::StderrFlag),
        &[],
        "NLog's `{name}(...)` without `stderr: true` logs to stdout"
    ),
    row!(
        "*.WriteToColoredConsole",
        Method,
        LOGGER,
        arg(Some(3), Some("stderr"), Stdout, Means::StderrFlag),
        &[],
        "NLog's `{name}(...)` without `stderr: true` logs to stdout"
    ),
    row!(
        "Console.Write",
        Method,
        PRINT,
        always(Stdout),
        &[FollowsRedirect, NotPayload(0)],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "Console.WriteLine",
        Method,
        PRINT,
        always(Stdout),
        &[FollowsRedirect, NotPayload(0)],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "Host.CreateApplicationBuilder",
        Function,
        LOGGER,
        always(Stdout),
        HOST_DEFAULT,
        "`{name}(...)` adds the console logger, which writes Information and above (\"Application started\") to stdout: call `builder.Logging.ClearProviders()` or `AddConsole(o => o.LogToStandardErrorThreshold = LogLevel.Trace)`"
    ),
    row!(
        "Host.CreateDefaultBuilder",
        Function,
        LOGGER,
        always(Stdout),
        HOST_DEFAULT,
        "`{name}(...)` adds the console logger, which writes Information and above (\"Application started\") to stdout: call `ConfigureLogging(l => l.ClearProviders())` or `AddConsole(o => o.LogToStandardErrorThreshold = LogLevel.Trace)`"
    ),
    row!(
        "*.AddConsole",
        Method,
        LOGGER,
        always(Stdout),
        CONSOLE_LOGGER,
        "`{name}()` without `LogToStandardErrorThreshold` logs to stdout"
    ),
    row!(
        "*.AddSimpleConsole",
        Method,
        LOGGER,
        always(Stdout),
        CONSOLE_LOGGER,
        "`{name}()` without `LogToStandardErrorThreshold` logs to stdout"
    ),
    row!(
        "*.AddJsonConsole",
        Method,
        LOGGER,
        always(Stdout),
        CONSOLE_LOGGER,
        "`{name}()` without `LogToStandardErrorThreshold` logs to stdout"
    ),
    row!(
        "*.AddSystemdConsole",
        Method,
        LOGGER,
        always(Stdout),
        CONSOLE_LOGGER,
        "`{name}()` without `LogToStandardErrorThreshold` logs to stdout"
    ),
    row!(
        "*.Console",
        Method,
        LOGGER,
        arg(
            None,
            Some("standardErrorFromLevel"),
            Stdout,
            Means::Threshold
        ),
        &[],
        "Serilog's `{name}()` without `standardErrorFromLevel` logs to stdout"
    ),
    row!(
        "Process.Start",
        Method,
        INHERIT,
        arg(
            Some(0),
            Some("fileName|startInfo"),
            Other,
            Means::ChildStdout
        ),
        &[],
        "`{name}(...)` starts a child that writes to the server's stdout (no `RedirectStandardOutput`)"
    ),
];

static REDIRECTS: &[Sink] = &[row!(
    "Console.SetOut",
    Method,
    REDIRECT,
    W0,
    &[Quiet],
    "`{name}` points Console.Out elsewhere"
)];

static WRAPPERS: &[Wrapper] = &[
    Wrapper {
        name: "StreamWriter",
        form: Constructor,
        arg: W0,
    },
    Wrapper {
        name: "BufferedStream",
        form: Constructor,
        arg: W0,
    },
    Wrapper {
        name: "TextWriter.Synchronized",
        form: Method,
        arg: W0,
    },
];

static CONFIGS: &[Config] = &[
    Config {
        name: "ConsoleTarget",
        form: Constructor,
        library: "NLog",
        conds: &[],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("StdErr|Error"), Stdout, Means::StderrFlag),
        setters: &["StdErr", "Error"],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "NLog's `{name}` without `StdErr = true` logs to stdout",
    },
    Config {
        name: "ColoredConsoleTarget",
        form: Constructor,
        library: "NLog",
        conds: &[],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("StdErr|ErrorStream"), Stdout, Means::StderrFlag),
        setters: &["StdErr", "ErrorStream"],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "NLog's `{name}` without `StdErr = true` logs to stdout",
    },
    log4net!("ConsoleAppender"),
    log4net!("ColoredConsoleAppender"),
    log4net!("ManagedColoredConsoleAppender"),
    log4net!("AnsiColorTerminalAppender"),
    Config {
        name: "ProcessStartInfo",
        form: Constructor,
        library: "System.Diagnostics",
        conds: &[],
        keys: &[],
        rule: &INHERIT,
        arg: arg(
            None,
            Some("RedirectStandardOutput|UseShellExecute"),
            Stdout,
            Means::StderrFlag,
        ),
        setters: &["RedirectStandardOutput", "UseShellExecute"],
        triggers: &["Start"],
        stdout_values: &[],
        stderr_values: &[],
        message: "the child started with `{name}` writes to the server's stdout",
    },
];

static STREAMS: &[StreamValue] = &[
    stream("Console.Out", Stdout, true),
    stream("Console.OpenStandardOutput()", Stdout, false),
    stream("Console.Error", Stderr, true),
    stream("Console.OpenStandardError()", Stderr, false),
];

pub static TABLE: Table = Table {
    lang: Lang::CSharp,
    sinks: SINKS,
    streams: STREAMS,
    wrappers: WRAPPERS,
    configs: CONFIGS,
    print_methods: &[],
    write_methods: &[
        "Write",
        "WriteLine",
        "WriteAsync",
        "WriteLineAsync",
        "WriteByte",
    ],
    redirects: REDIRECTS,
    ubiquitous: &["*"],
    pretty: &[],
    extra_words: &[],
    aliases: &[],
    base: None,
};
