//! Go's stdout knowledge. Names are import paths and members (`fmt.Println`,
//! `github.com/sirupsen/logrus.SetOutput`); `*.Name` is a method or field on any receiver.
//! Go's builtin `print`/`println` write to stderr: no row. `log`, logrus and zap's production
//! and development loggers write to stderr by default: only an explicit stdout is a finding.

use super::Dest::*;
use super::{
    Arg, Cond, Config, Form, Means, Sink, StreamValue, Table, Wrapper, always, arg, stream,
};
use crate::catalog::scan::{
    STATIC_PRINT_CALL as PRINT, STATIC_STDOUT_INHERIT as INHERIT, STATIC_STDOUT_LOGGER as LOGGER,
    STATIC_STDOUT_REDIRECT as REDIRECT, STATIC_STDOUT_WRITE as WRITE,
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
macro_rules! wrap {
    ($name:expr, $form:expr, $arg:expr) => {
        Wrapper {
            name: $name,
            form: $form,
            arg: $arg,
        }
    };
}

/// fatih/color's package functions print in their colour to `color.Output` (stdout).
macro_rules! color {
    ($name:expr) => {
        row!(
            $name,
            Function,
            PRINT,
            always(Stdout),
            &[],
            "`{name}(...)` prints to stdout (fatih/color's `Output`)"
        )
    };
}

static SINKS: &[Sink] = &[
    color!("github.com/fatih/color.Black"),
    color!("github.com/fatih/color.Red"),
    color!("github.com/fatih/color.Green"),
    color!("github.com/fatih/color.Yellow"),
    color!("github.com/fatih/color.Blue"),
    color!("github.com/fatih/color.Magenta"),
    color!("github.com/fatih/color.Cyan"),
    color!("github.com/fatih/color.White"),
    color!("github.com/fatih/color.HiBlack"),
    color!("github.com/fatih/color.HiRed"),
    color!("github.com/fatih/color.HiGreen"),
    color!("github.com/fatih/color.HiYellow"),
    color!("github.com/fatih/color.HiBlue"),
    color!("github.com/fatih/color.HiMagenta"),
    color!("github.com/fatih/color.HiCyan"),
    color!("github.com/fatih/color.HiWhite"),
    row!(
        "github.com/davecgh/go-spew/spew.Dump",
        Function,
        PRINT,
        always(Stdout),
        &[],
        "`{name}(...)` prints to stdout"
    ),
    row!(
        "github.com/davecgh/go-spew/spew.Print",
        Function,
        PRINT,
        always(Stdout),
        &[],
        "`{name}(...)` prints to stdout"
    ),
    row!(
        "github.com/davecgh/go-spew/spew.Printf",
        Function,
        PRINT,
        always(Stdout),
        &[],
        "`{name}(...)` prints to stdout"
    ),
    row!(
        "github.com/davecgh/go-spew/spew.Println",
        Function,
        PRINT,
        always(Stdout),
        &[],
        "`{name}(...)` prints to stdout"
    ),
    row!(
        "fmt.Print",
        Function,
        PRINT,
        always(Stdout),
        &[FollowsRedirect, NotPayload(0)],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "fmt.Printf",
        Function,
        PRINT,
        always(Stdout),
        &[FollowsRedirect, NotPayload(1)],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "fmt.Println",
        Function,
        PRINT,
        always(Stdout),
        &[FollowsRedirect, NotPayload(0)],
        "`{name}(...)` writes to stdout"
    ),
    row!(
        "fmt.Fprint",
        Function,
        WRITE,
        W0,
        &[NotPayload(1)],
        "`{name}(...)` is given stdout and writes to it"
    ),
    row!(
        "fmt.Fprintf",
        Function,
        WRITE,
        W0,
        &[NotPayload(2)],
        "`{name}(...)` is given stdout and writes to it"
    ),
    row!(
        "fmt.Fprintln",
        Function,
        WRITE,
        W0,
        &[NotPayload(1)],
        "`{name}(...)` is given stdout and writes to it"
    ),
    row!(
        "io.WriteString",
        Function,
        WRITE,
        W0,
        &[NotPayload(1)],
        "`{name}(...)` is given stdout and writes to it"
    ),
    row!(
        "io.Copy",
        Function,
        WRITE,
        W0,
        &[],
        "`{name}(...)` copies into stdout"
    ),
    row!(
        "io.CopyN",
        Function,
        WRITE,
        W0,
        &[],
        "`{name}(...)` copies into stdout"
    ),
    row!(
        "github.com/pterm/pterm.Print",
        Function,
        PRINT,
        always(Stdout),
        &[],
        "`{name}(...)` prints to stdout (pterm's default writer)"
    ),
    row!(
        "github.com/pterm/pterm.Printf",
        Function,
        PRINT,
        always(Stdout),
        &[],
        "`{name}(...)` prints to stdout (pterm's default writer)"
    ),
    row!(
        "github.com/pterm/pterm.Println",
        Function,
        PRINT,
        always(Stdout),
        &[],
        "`{name}(...)` prints to stdout (pterm's default writer)"
    ),
    row!(
        "github.com/pterm/pterm.Printfln",
        Function,
        PRINT,
        always(Stdout),
        &[],
        "`{name}(...)` prints to stdout (pterm's default writer)"
    ),
    row!(
        "syscall.Write",
        Function,
        WRITE,
        arg(Some(0), None, Other, Means::Fd),
        &[NotPayload(1)],
        "`{name}(1, ...)` writes to file descriptor 1 (stdout)"
    ),
    row!(
        "golang.org/x/sys/unix.Write",
        Function,
        WRITE,
        arg(Some(0), None, Other, Means::Fd),
        &[NotPayload(1)],
        "`{name}(1, ...)` writes to file descriptor 1 (stdout)"
    ),
    row!(
        "io.CopyBuffer",
        Function,
        WRITE,
        W0,
        &[],
        "`{name}(...)` copies into stdout"
    ),
    row!(
        "log.SetOutput",
        Function,
        LOGGER,
        arg(Some(0), None, Stderr, Means::Stream),
        &[],
        "`{name}(os.Stdout)` sends the standard logger's output to stdout"
    ),
    // The official Go SDK's LoggingTransport copies every JSON-RPC message to its writer (a
    // struct literal since v0.3, `NewLoggingTransport(t, w)` before).
    row!(
        "github.com/modelcontextprotocol/go-sdk/mcp.LoggingTransport",
        Constructor,
        LOGGER,
        arg(None, Some("Writer"), Other, Means::Stream),
        &[],
        "`{name}{Writer: os.Stdout}` copies every JSON-RPC message to stdout, beside the protocol's own"
    ),
    row!(
        "github.com/modelcontextprotocol/go-sdk/mcp.NewLoggingTransport",
        Function,
        LOGGER,
        arg(Some(1), None, Other, Means::Stream),
        &[],
        "`{name}(t, os.Stdout)` copies every JSON-RPC message to stdout, beside the protocol's own"
    ),
    row!(
        "log.New",
        Function,
        LOGGER,
        W0,
        &[],
        "`{name}(os.Stdout, ...)` builds a logger on stdout"
    ),
    row!(
        "log/slog.NewTextHandler",
        Function,
        LOGGER,
        W0,
        &[],
        "`{name}(os.Stdout, ...)` sends log records to stdout"
    ),
    row!(
        "log/slog.NewJSONHandler",
        Function,
        LOGGER,
        W0,
        &[],
        "`{name}(os.Stdout, ...)` sends log records to stdout"
    ),
    row!(
        "github.com/sirupsen/logrus.SetOutput",
        Function,
        LOGGER,
        arg(Some(0), None, Stderr, Means::Stream),
        &[],
        "`{name}(os.Stdout)` sends logrus's output to stdout (its default is stderr)"
    ),
    row!(
        "github.com/rs/zerolog.New",
        Function,
        LOGGER,
        W0,
        &[],
        "`{name}(os.Stdout)` builds a zerolog logger on stdout"
    ),
    row!(
        "github.com/rs/zerolog.NewConsoleWriter",
        Function,
        LOGGER,
        always(Stdout),
        &[],
        "`{name}()` writes to stdout unless its `Out` is set"
    ),
    row!(
        "go.uber.org/zap.NewExample",
        Function,
        LOGGER,
        always(Stdout),
        &[],
        "`{name}()` logs to stdout (zap's production and development loggers use stderr)"
    ),
    row!(
        "go.uber.org/zap/zapcore.AddSync",
        Function,
        LOGGER,
        W0,
        &[],
        "`{name}(os.Stdout)` makes a zap sink of stdout"
    ),
    row!(
        "go.uber.org/zap/zapcore.Lock",
        Function,
        LOGGER,
        W0,
        &[],
        "`{name}(os.Stdout)` makes a zap sink of stdout"
    ),
    row!(
        "*.SetOutput",
        Method,
        LOGGER,
        arg(Some(0), None, Stderr, Means::Stream),
        &[],
        "`{name}(os.Stdout)` sends the logger's output to stdout"
    ),
    row!(
        "*.Output",
        Method,
        LOGGER,
        W0,
        &[],
        "`{name}(os.Stdout)` sends the logger's output to stdout"
    ),
    row!(
        "*.Stdout",
        Property,
        INHERIT,
        arg(None, None, Other, Means::Stream),
        &[],
        "`{name}` gives the child process the server's stdout"
    ),
    row!(
        "*.Stderr",
        Property,
        INHERIT,
        arg(None, None, Other, Means::Stream),
        &[],
        "`{name}` sends the child's stderr to the server's stdout"
    ),
    row!(
        "*.Out",
        Property,
        LOGGER,
        arg(None, None, Other, Means::Stream),
        &[],
        "`{name}` sends the logger's output to stdout"
    ),
];

static REDIRECTS: &[Sink] = &[row!(
    "os.Stdout",
    Property,
    REDIRECT,
    always(Other),
    &[],
    "`{name}` replaces os.Stdout: the MCP transport's replies go there too"
)];

static WRAPPERS: &[Wrapper] = &[
    wrap!("bufio.NewWriter", Function, W0),
    wrap!("bufio.NewWriterSize", Function, W0),
    wrap!(
        "bufio.NewReadWriter",
        Function,
        arg(Some(1), None, Other, Means::Stream)
    ),
    wrap!("text/tabwriter.NewWriter", Function, W0),
    wrap!("encoding/json.NewEncoder", Function, W0),
    // Conversions to an interface keep the value (`w := io.Writer(os.Stdout)`).
    wrap!("io.Writer", Function, W0),
    wrap!("io.WriteCloser", Function, W0),
    wrap!(
        "io.MultiWriter",
        Function,
        arg(Some(0), None, Other, Means::Streams)
    ),
];

static CONFIGS: &[Config] = &[
    Config {
        name: "go.uber.org/zap.NewProductionConfig",
        form: Function,
        library: "zap",
        conds: &[],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("OutputPaths"), Stderr, Means::Sink),
        setters: &["OutputPaths"],
        triggers: &[],
        stdout_values: &["stdout"],
        stderr_values: &["stderr"],
        message: "zap's `OutputPaths` include \"stdout\": every record goes to stdout",
    },
    Config {
        name: "go.uber.org/zap.NewDevelopmentConfig",
        form: Function,
        library: "zap",
        conds: &[],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("OutputPaths"), Stderr, Means::Sink),
        setters: &["OutputPaths"],
        triggers: &[],
        stdout_values: &["stdout"],
        stderr_values: &["stderr"],
        message: "zap's `OutputPaths` include \"stdout\": every record goes to stdout",
    },
    Config {
        name: "go.uber.org/zap.Config",
        form: Constructor,
        library: "zap",
        conds: &[],
        keys: &[],
        rule: &LOGGER,
        arg: arg(None, Some("OutputPaths"), Other, Means::Sink),
        setters: &["OutputPaths"],
        triggers: &[],
        stdout_values: &["stdout"],
        stderr_values: &["stderr"],
        message: "zap's `OutputPaths` include \"stdout\": every record goes to stdout",
    },
];

static STREAMS: &[StreamValue] = &[
    stream("os.Stdout", Stdout, true),
    stream("os.Stderr", Stderr, true),
    // cobra: `OutOrStdout` "returns output to stdout" unless `SetOut` was called.
    stream("*.OutOrStdout()", Stdout, false),
    stream("*.OutOrStderr()", Stderr, false),
    stream("*.ErrOrStderr()", Stderr, false),
    // fatih/color: "By default os.Stdout is used" (`color.Output`).
    stream("github.com/fatih/color.New()", Stdout, false),
    stream("github.com/fatih/color.Output", Stdout, false),
    // pterm's printers write to stdout unless given a writer (`pterm.Info.Println(...)`).
    stream("github.com/pterm/pterm.Info", Stdout, false),
    stream("github.com/pterm/pterm.Success", Stdout, false),
    stream("github.com/pterm/pterm.Warning", Stdout, false),
    stream("github.com/pterm/pterm.Error", Stdout, false),
    stream("github.com/pterm/pterm.Description", Stdout, false),
];

pub static TABLE: Table = Table {
    lang: Lang::Go,
    sinks: SINKS,
    streams: STREAMS,
    wrappers: WRAPPERS,
    configs: CONFIGS,
    print_methods: &["Print", "Printf", "Println", "Printfln"],
    write_methods: &[
        "Write",
        "WriteString",
        "WriteAt",
        "ReadFrom",
        "WriteByte",
        "WriteRune",
    ],
    redirects: REDIRECTS,
    ubiquitous: &["os", "io", "*"],
    aliases: &[],
    base: None,
    pretty: &[("SetIndent", "Encode")],
    extra_words: &[],
};
