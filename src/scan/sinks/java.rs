//! Java's stdout knowledge (Kotlin's table builds on it). `System.out` follows
//! `System.setOut(...)`; `FileDescriptor.out` is the descriptor itself. Logback's
//! `ConsoleAppender` and log4j2's Console appender default to System.out; java.util.logging's
//! `ConsoleHandler` writes to System.err (a trap, never a finding). `ProcessBuilder` pipes the
//! child's output by default; `inheritIO()` and `Redirect.INHERIT` hand it the server's stdout.

use super::Dest::*;
use super::{
    Arg, Cond, Config, Form, Means, Sink, StreamValue, Table, Wrapper, always, arg, inherit, stream,
};
use crate::catalog::scan::{
    STATIC_STDOUT_INHERIT as INHERIT, STATIC_STDOUT_LOGGER as LOGGER,
    STATIC_STDOUT_REDIRECT as REDIRECT, STATIC_STDOUT_WRITE as WRITE,
};
use crate::scan::lang::Lang;
use Form::*;

const W0: Arg = arg(Some(0), None, Other, Means::Stream);

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
macro_rules! wrap {
    ($name:expr) => {
        Wrapper {
            name: $name,
            form: Constructor,
            arg: W0,
        }
    };
}

static SINKS: &[Sink] = &[
    row!(
        "FileOutputStream",
        Constructor,
        WRITE,
        arg(Some(0), None, Other, Means::Fd),
        &[],
        "`new {name}(FileDescriptor.out)` opens stdout for writing"
    ),
    row!(
        "StreamHandler",
        Constructor,
        LOGGER,
        W0,
        &[],
        "`new {name}(System.out, ...)` sends log records to stdout"
    ),
    row!(
        "ConsoleAppender.createDefaultAppenderForLayout",
        Method,
        LOGGER,
        always(Stdout),
        &[],
        "`{name}(...)` builds a log4j2 console appender on SYSTEM_OUT"
    ),
    row!(
        "System.setProperty",
        Method,
        LOGGER,
        arg(Some(1), None, Other, Means::Sink),
        &[Cond::ArgIs(
            0,
            "org.slf4j.simpleLogger.logFile|SimpleLogger.LOG_FILE_KEY",
        )],
        "slf4j-simple's `logFile` set to \"System.out\" sends every log record to stdout (its default is System.err)"
    ),
    row!(
        "*.inheritIO",
        Method,
        INHERIT,
        always(Stdout),
        // `inheritIO().redirectOutput(Redirect.PIPE)` takes stdout back; an inheriting
        // `redirectOutput(...)` is a finding of its own row.
        &[Cond::ThenLacks("redirectOutput")],
        "`inheritIO()` gives the child process the server's stdout"
    ),
    row!(
        "*.redirectOutput",
        Method,
        INHERIT,
        arg(Some(0), None, Other, Means::ChildStdout),
        &[],
        "`redirectOutput(Redirect.INHERIT)` gives the child process the server's stdout"
    ),
];

static REDIRECTS: &[Sink] = &[row!(
    "System.setOut",
    Method,
    REDIRECT,
    W0,
    &[],
    "`{name}` replaces System.out: the MCP transport's replies go there too"
)];

static WRAPPERS: &[Wrapper] = &[
    wrap!("PrintStream"),
    wrap!("PrintWriter"),
    wrap!("OutputStreamWriter"),
    wrap!("BufferedWriter"),
    wrap!("BufferedOutputStream"),
    wrap!("DataOutputStream"),
    wrap!("FileOutputStream"),
];

const TARGETS_OUT: &[&str] = &["System.out", "SYSTEM_OUT"];
const TARGETS_ERR: &[&str] = &["System.err", "SYSTEM_ERR"];

static CONFIGS: &[Config] = &[
    Config {
        name: "ConsoleAppender",
        form: Constructor,
        library: "logback",
        conds: &[],
        keys: &[],
        rule: &LOGGER,
        // log4j 1's `new ConsoleAppender(layout, target)` names its target second.
        arg: arg(Some(1), None, Stdout, Means::Sink),
        setters: &["setTarget"],
        triggers: &[],
        stdout_values: TARGETS_OUT,
        stderr_values: TARGETS_ERR,
        message: "logback's `{name}` logs to System.out unless `setTarget(\"System.err\")`",
    },
    Config {
        name: "ConsoleAppender.newBuilder",
        form: Method,
        library: "log4j2",
        conds: &[],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, None, Stdout, Means::Sink),
        setters: &["setTarget", "withTarget"],
        triggers: &[],
        stdout_values: TARGETS_OUT,
        stderr_values: TARGETS_ERR,
        message: "the log4j2 console appender built by `{name}` logs to SYSTEM_OUT unless `setTarget(Target.SYSTEM_ERR)`",
    },
    // log4j2's ConfigurationBuilder: `builder.newAppender(name, "Console")` is a ConsoleAppender,
    // whose default target is SYSTEM_OUT unless `.addAttribute("target", Target.SYSTEM_ERR)`.
    Config {
        name: "*.newAppender",
        form: Method,
        library: "log4j2",
        conds: &[Cond::ArgIs(1, "Console")],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, None, Stdout, Means::Sink),
        setters: &["addAttribute(target)"],
        triggers: &[],
        stdout_values: TARGETS_OUT,
        stderr_values: TARGETS_ERR,
        message: "the log4j2 Console appender built by `{name}` logs to SYSTEM_OUT unless `.addAttribute(\"target\", Target.SYSTEM_ERR)`",
    },
    Config {
        name: "ConsoleHandler",
        form: Constructor,
        library: "java.util.logging",
        conds: &[],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, None, Stderr, Means::Stream),
        setters: &[],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "java.util.logging's `{name}` writes to System.err",
    },
];

static STREAMS: &[StreamValue] = &[
    stream("System.out", Stdout, true),
    // picocli: `CommandLine.getOut()` defaults to a PrintWriter around System.out (made when
    // the CommandLine is built: a later System.setOut does not move it).
    stream("*.getOut()", Stdout, false),
    stream("*.getErr()", Stderr, false),
    stream("FileDescriptor.out", Stdout, false),
    inherit("ProcessBuilder.Redirect.INHERIT"),
    inherit("Redirect.INHERIT"),
    stream("System.err", Stderr, true),
    stream("FileDescriptor.err", Stderr, false),
];

pub static TABLE: Table = Table {
    lang: Lang::Java,
    sinks: SINKS,
    streams: STREAMS,
    wrappers: WRAPPERS,
    configs: CONFIGS,
    print_methods: &["print", "println", "printf", "format"],
    write_methods: &["write", "append", "writeBytes", "writeUTF"],
    redirects: REDIRECTS,
    ubiquitous: &["*"],
    pretty: &[],
    extra_words: &[],
    aliases: &[],
    base: None,
};

/// Kotlin: the stdlib's `println`/`print` (unless the file defines its own), plus every Java
/// row (Kotlin code calls the same JVM libraries).
pub static KOTLIN: Table = Table {
    lang: Lang::Kotlin,
    sinks: KOTLIN_SINKS,
    streams: &[],
    wrappers: KOTLIN_WRAPPERS,
    configs: &[],
    print_methods: &["print", "println", "printf", "format"],
    write_methods: &["write", "append", "appendLine", "writeBytes", "writeUTF"],
    redirects: &[],
    ubiquitous: &["*", "kotlin", "io"],
    pretty: &[],
    extra_words: &[],
    aliases: &[],
    base: Some(&TABLE),
};

/// kotlin.io's extensions on an `OutputStream` (`System.out.bufferedWriter()`): the result
/// writes where the stream does.
static KOTLIN_WRAPPERS: &[Wrapper] = &[
    Wrapper {
        name: "*.bufferedWriter",
        form: Method,
        arg: always(Other),
    },
    Wrapper {
        name: "*.writer",
        form: Method,
        arg: always(Other),
    },
    Wrapper {
        name: "*.buffered",
        form: Method,
        arg: always(Other),
    },
];

static KOTLIN_SINKS: &[Sink] = &[
    row!(
        "CliktCommand.echo",
        Method,
        crate::catalog::scan::STATIC_PRINT_CALL,
        always(Stdout),
        &[Cond::FlagOff("err")],
        "Clikt's `{name}(...)` writes to stdout (without `err = true`)"
    ),
    row!(
        "kotlin.io.println",
        Function,
        crate::catalog::scan::STATIC_PRINT_CALL,
        always(Stdout),
        &[Cond::FollowsRedirect, Cond::NotPayload(0)],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "kotlin.io.print",
        Function,
        crate::catalog::scan::STATIC_PRINT_CALL,
        always(Stdout),
        &[Cond::FollowsRedirect, Cond::NotPayload(0)],
        "`{name}(...)` writes to stdout"
    ),
];
