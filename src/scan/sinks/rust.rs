//! Rust's stdout knowledge. Names are paths (`std::println`, `std::io::stdout()`); `*::name`
//! is a method on any receiver. `eprint!`, `eprintln!` and `dbg!` write to stderr: no row.
//! env_logger writes to stderr by default (only `Target::Stdout` is a finding);
//! `tracing_subscriber::fmt()` and simple_logger write to stdout by default; a `Command` run
//! with `status()` or `spawn()` inherits stdout unless `.stdout(...)` was set, `output()`
//! captures it.

use super::Dest::*;
use super::{
    Arg, Cond, Config, Form, Means, Sink, StreamValue, Table, Wrapper, always, arg, stream,
};
use crate::catalog::scan::{
    STATIC_PRINT_CALL as PRINT, STATIC_STDOUT_INHERIT as INHERIT, STATIC_STDOUT_LOGGER as LOGGER,
    STATIC_STDOUT_WRITE as WRITE,
};
use crate::scan::lang::Lang;
use Cond::*;
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
macro_rules! tracing {
    ($name:expr) => {
        Config {
            name: $name,
            form: Function,
            library: "tracing-subscriber",
            conds: &[],
            keys: &[],
            rule: &LOGGER,
            arg: arg(None, None, Stdout, Means::Stream),
            setters: &["with_writer"],
            triggers: &[],
            stdout_values: &[],
            stderr_values: &[],
            message: "`{name}` without `.with_writer(std::io::stderr)` logs to stdout",
        }
    };
}

// simplelog: `TerminalMode::Mixed` = "Stderr for Errors and Stdout otherwise".
macro_rules! simplelog {
    ($name:expr) => {
        Config {
            name: $name,
            form: Function,
            library: "simplelog",
            conds: &[],
            keys: &[],
            rule: &LOGGER,
            arg: arg(Some(2), None, Stdout, Means::Sink),
            setters: &[],
            triggers: &[],
            stdout_values: &["TerminalMode::Mixed", "TerminalMode::Stdout"],
            stderr_values: &["TerminalMode::Stderr"],
            message: "`{name}` with `TerminalMode::Mixed` or `Stdout` logs to stdout",
        }
    };
}

static SINKS: &[Sink] = &[
    row!(
        "std::print",
        Macro,
        PRINT,
        always(Stdout),
        &[NotPayload(0), NotPayload(1)],
        "`{name}!` writes to stdout"
    ),
    row!(
        "std::println",
        Macro,
        PRINT,
        always(Stdout),
        &[NotPayload(0), NotPayload(1)],
        "`{name}!` writes to stdout"
    ),
    row!(
        "std::write",
        Macro,
        WRITE,
        W0,
        &[NotPayload(1), NotPayload(2)],
        "`{name}!` writes to stdout"
    ),
    row!(
        "std::writeln",
        Macro,
        WRITE,
        W0,
        &[NotPayload(1), NotPayload(2)],
        "`{name}!` writes to stdout"
    ),
    // anstream's `println!`/`print!` write to its `stdout()` (colours stripped when not a
    // terminal).
    row!(
        "anstream::print",
        Macro,
        PRINT,
        always(Stdout),
        &[NotPayload(0), NotPayload(1)],
        "`{name}!` writes to stdout"
    ),
    row!(
        "anstream::println",
        Macro,
        PRINT,
        always(Stdout),
        &[NotPayload(0), NotPayload(1)],
        "`{name}!` writes to stdout"
    ),
    // clap: `Command::print_help` "prints the short help message (-h) to io::stdout()".
    row!(
        "*::print_help",
        Method,
        PRINT,
        always(Stdout),
        &[],
        "`{name}()` prints the help text to stdout"
    ),
    row!(
        "*::print_long_help",
        Method,
        PRINT,
        always(Stdout),
        &[],
        "`{name}()` prints the help text to stdout"
    ),
    // simplelog's `SimpleLogger` writes Error records to stderr and every other level to stdout.
    row!(
        "simplelog::SimpleLogger::init",
        Function,
        LOGGER,
        always(Stdout),
        &[],
        "`{name}(...)` logs to stdout (simplelog's `SimpleLogger` sends all but errors there)"
    ),
    row!(
        "simplelog::SimpleLogger::new",
        Function,
        LOGGER,
        always(Stdout),
        &[],
        "`{name}(...)` logs to stdout (simplelog's `SimpleLogger` sends all but errors there)"
    ),
    row!(
        "tracing_subscriber::fmt::init",
        Function,
        LOGGER,
        always(Stdout),
        &[],
        "`{name}()` logs to stdout"
    ),
    row!(
        "env_logger::Target::Stdout",
        Property,
        LOGGER,
        always(Stdout),
        &[],
        "`{name}` sends the logger's output to stdout"
    ),
    row!(
        "env_logger::init",
        Function,
        LOGGER,
        always(Stderr),
        &[],
        "env_logger writes to stderr by default"
    ),
    row!(
        "simple_logger::init",
        Function,
        LOGGER,
        always(Stdout),
        &[],
        "`{name}()` logs to stdout (simple_logger's default)"
    ),
    row!(
        "simple_logger::init_with_level",
        Function,
        LOGGER,
        always(Stdout),
        &[],
        "`{name}()` logs to stdout (simple_logger's default)"
    ),
    row!(
        "simple_logger::init_with_env",
        Function,
        LOGGER,
        always(Stdout),
        &[],
        "`{name}()` logs to stdout (simple_logger's default)"
    ),
    row!(
        "libc::write",
        Function,
        WRITE,
        arg(Some(0), None, Other, Means::Fd),
        &[],
        "`{name}(1, ...)` writes to file descriptor 1 (stdout)"
    ),
    row!(
        "std::io::copy",
        Function,
        WRITE,
        arg(Some(1), None, Other, Means::Stream),
        &[],
        "`{name}(..., io::stdout())` copies into stdout"
    ),
    row!(
        "serde_json::to_writer_pretty",
        Function,
        WRITE,
        W0,
        &[],
        "`{name}(io::stdout(), ...)` writes pretty-printed (multi-line) JSON to stdout"
    ),
    row!(
        "*::log_to_stdout",
        Method,
        LOGGER,
        always(Stdout),
        &[],
        "flexi_logger's `{name}()` sends the log to stdout"
    ),
    row!(
        "*::duplicate_to_stdout",
        Method,
        LOGGER,
        always(Stdout),
        &[],
        "flexi_logger's `{name}(...)` copies log records to stdout"
    ),
    row!(
        "*::chain",
        Method,
        LOGGER,
        W0,
        &[],
        "`{name}(std::io::stdout())` sends the fern dispatch's records to stdout"
    ),
];

static WRAPPERS: &[Wrapper] = &[
    Wrapper {
        name: "std::io::BufWriter::new",
        form: Function,
        arg: W0,
    },
    Wrapper {
        name: "std::io::BufWriter::with_capacity",
        form: Function,
        arg: arg(Some(1), None, Other, Means::Stream),
    },
    Wrapper {
        name: "std::io::LineWriter::new",
        form: Function,
        arg: W0,
    },
    Wrapper {
        name: "tokio::io::BufWriter::new",
        form: Function,
        arg: W0,
    },
    Wrapper {
        name: "Box::new",
        form: Function,
        arg: W0,
    },
    Wrapper {
        name: "*::lock",
        form: Method,
        arg: always(Other),
    },
    // A shared writer keeps its stream: `Mutex::new(Box::new(io::stdout()))`, then
    // `self.out.lock().unwrap()`.
    Wrapper {
        name: "std::sync::Mutex::new",
        form: Function,
        arg: W0,
    },
    Wrapper {
        name: "std::sync::Arc::new",
        form: Function,
        arg: W0,
    },
    Wrapper {
        name: "std::cell::RefCell::new",
        form: Function,
        arg: W0,
    },
    Wrapper {
        name: "tokio::sync::Mutex::new",
        form: Function,
        arg: W0,
    },
    Wrapper {
        name: "parking_lot::Mutex::new",
        form: Function,
        arg: W0,
    },
    Wrapper {
        name: "*::unwrap",
        form: Method,
        arg: always(Other),
    },
    Wrapper {
        name: "*::expect",
        form: Method,
        arg: always(Other),
    },
    Wrapper {
        name: "*::borrow_mut",
        form: Method,
        arg: always(Other),
    },
];

static CONFIGS: &[Config] = &[
    Config {
        name: "std::process::Command::new",
        form: Function,
        library: "std",
        conds: &[],
        keys: &[],
        rule: &INHERIT,
        arg: arg(None, None, Stdout, Means::ChildStdout),
        setters: &["stdout"],
        triggers: &["status", "spawn"],
        stdout_values: &["inherit()"],
        stderr_values: &[],
        message: "`.{why}()` runs the child with the server's stdout (set `.stdout(Stdio::piped())` or `Stdio::null()`)",
    },
    Config {
        name: "tokio::process::Command::new",
        form: Function,
        library: "tokio",
        conds: &[],
        keys: &[],
        rule: &INHERIT,
        arg: arg(None, None, Stdout, Means::ChildStdout),
        setters: &["stdout"],
        triggers: &["status", "spawn"],
        stdout_values: &["inherit()"],
        stderr_values: &[],
        message: "`.{why}()` runs the child with the server's stdout (set `.stdout(Stdio::piped())` or `Stdio::null()`)",
    },
    simplelog!("simplelog::TermLogger::init"),
    simplelog!("simplelog::TermLogger::new"),
    tracing!("tracing_subscriber::fmt"),
    tracing!("tracing_subscriber::fmt::layer"),
    tracing!("tracing_subscriber::fmt::Subscriber::builder"),
    tracing!("tracing_subscriber::FmtSubscriber::builder"),
    tracing!("tracing_subscriber::fmt::fmt"),
    Config {
        name: "simple_logger::SimpleLogger::new",
        form: Function,
        library: "simple_logger",
        conds: &[],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, None, Stdout, Means::Stream),
        setters: &[],
        triggers: &[],
        stdout_values: &[],
        stderr_values: &[],
        message: "`{name}` logs to stdout (simple_logger's default)",
    },
    Config {
        name: "log4rs::append::console::ConsoleAppender::builder",
        form: Function,
        library: "log4rs",
        conds: &[],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, None, Stdout, Means::Sink),
        setters: &["target"],
        triggers: &[],
        stdout_values: &["Target::Stdout"],
        stderr_values: &["Target::Stderr"],
        message: "log4rs's `{name}` logs to stdout unless `.target(Target::Stderr)`",
    },
];

static STREAMS: &[StreamValue] = &[
    stream("std::io::stdout()", Stdout, false),
    stream("std::io::stdout", Stdout, false),
    stream("termcolor::StandardStream::stdout()", Stdout, false),
    stream("termcolor::StandardStream::stderr()", Stderr, false),
    stream("std::io::stderr()", Stderr, false),
    stream("tokio::io::stdout()", Stdout, false),
    stream("tokio::io::stderr()", Stderr, false),
    // console: `Term::stdout()` "returns a new unbuffered terminal" on stdout.
    stream("console::Term::stdout()", Stdout, false),
    stream("console::Term::buffered_stdout()", Stdout, false),
    stream("console::Term::stderr()", Stderr, false),
    stream("std::io::stderr", Stderr, false),
    stream("anstream::stdout()", Stdout, false),
    stream("anstream::stderr()", Stderr, false),
    // termcolor: a `BufferWriter`'s `print(&buffer)` writes the buffer to its stream.
    stream("termcolor::BufferWriter::stdout()", Stdout, false),
    stream("termcolor::BufferWriter::stderr()", Stderr, false),
    // indicatif draws to stderr unless given a stdout draw target.
    stream("indicatif::ProgressDrawTarget::stdout()", Stdout, false),
    stream(
        "indicatif::ProgressDrawTarget::stdout_with_hz()",
        Stdout,
        false,
    ),
    stream(
        "indicatif::ProgressDrawTarget::stdout_nohz()",
        Stdout,
        false,
    ),
    stream("indicatif::ProgressDrawTarget::stderr()", Stderr, false),
];

pub static TABLE: Table = Table {
    lang: Lang::Rust,
    sinks: SINKS,
    streams: STREAMS,
    wrappers: WRAPPERS,
    configs: CONFIGS,
    print_methods: &["print"],
    write_methods: &[
        "write",
        "write_all",
        "write_fmt",
        "write_vectored",
        "write_line",
        "write_str",
    ],
    redirects: &[],
    ubiquitous: &["std", "io", "*", "process"],
    pretty: &[],
    extra_words: &[],
    aliases: &[],
    base: None,
};
