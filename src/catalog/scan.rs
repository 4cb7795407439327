//! Rules of the static scan (`mcp-stdio-guard scan`, `--scan`): source code that writes to the
//! process's stdout, which an MCP stdio server owns as its protocol channel.
//!
//! Write rules default to `error` because `scan` is what pre-commit and CI call; in runtime mode
//! (`--scan` next to a server command) they are merged as warnings unless `--fail-on-static`, as
//! in the reference tool. Findings in test files and dev scripts are reported one level lower
//! (see docs/scan.md).

use super::{Check, Class, Severity};

rules! {
    STATIC_STDOUT_WRITE {
        code: "static-stdout-write",
        class: Class::StdioTransport,
        check: Check::StaticScan,
        reference: true,
        summary: "Code writes directly to the process's stdout stream.",
        what: "A direct write to standard output that is not a JSON-RPC message: `sys.stdout.write`, `sys.stdout.buffer.write`, `os.write(1, ...)`, `open(1)` or `/dev/stdout`, `process.stdout.write`, `fs.writeSync(1, ...)`, the stdout stream passed to a writer (`json.dump(x, sys.stdout)`, `fmt.Fprintln(os.Stdout)`, `io.Copy(os.Stdout, r)`), `os.Stdout.Write`, `std::io::stdout().write_all`, `System.out.write`, `Console.Out.Write`. Writes whose payload is a single-line JSON serialization (`json.dumps(msg)`, `JSON.stringify(msg)`) are the hand-written transport and are not reported.",
        why: "An MCP stdio server must write nothing but newline-delimited JSON-RPC messages to stdout. Any other byte corrupts the stream: strict clients disconnect, lenient ones drop or mismatch messages.",
        example: "`sys.stdout.write(\"loading model...\\n\")` at start-up.",
        fix: "Write diagnostics to stderr instead (`sys.stderr.write`, `process.stderr.write`, `os.Stderr`). Keep stdout for the protocol transport alone.",
    }
    STATIC_PRINT_CALL {
        code: "static-print-call",
        class: Class::StdioTransport,
        check: Check::StaticScan,
        summary: "A print-style call writes to stdout.",
        what: "A print function whose output goes to stdout: Python `print()` without `file=` (or with `file=sys.stdout`/`None`), `builtins.print`, `pprint.pprint`/`pp`, rich `print`, `click.echo`/`typer.echo` without `err=True`, `tqdm.write`, `input(prompt)`, Python 2 `print` statements; Go `fmt.Print*`; Rust `print!`/`println!`; Java/Kotlin `System.out.print*` and Kotlin `println`; C# `Console.Write*`. A shadowed or user-defined `print`, `obj.print()`, and `print(..., file=sys.stderr)` are not reported.",
        why: "stdout is the MCP protocol channel: a single printed line is read by the client as a malformed JSON-RPC message, and many clients drop the connection.",
        example: "`print(\"debug: listing tools\")` inside a `tools/list` handler.",
        fix: "Print to stderr (`print(..., file=sys.stderr)`, `click.echo(..., err=True)`, `eprintln!`, `System.err`, `Console.Error`) or use a logger configured for stderr.",
    }
    STATIC_CONSOLE_LOG {
        code: "static-console-log",
        class: Class::StdioTransport,
        check: Check::StaticScan,
        summary: "A JavaScript/TypeScript console method that writes to stdout.",
        what: "`console.log`, `info`, `debug`, `table`, `dir`, `dirxml`, `group`, `groupCollapsed`, `count`, `timeEnd` and `timeLog` on the global console, in every spelling (`console['log']`, `console?.log`, `globalThis.console.log`, `(console as any).log`, `console!.log`), through aliases (`const log = console.log`, `const { log } = console`, `.bind`) and when passed as a callback (`.then(console.log)`). `console.error/warn/trace/assert/time` (stderr or no output), a local variable or parameter named `console`, and text in strings, templates, JSX and comments are not reported.",
        why: "In Node.js these console methods write to stdout, the MCP protocol channel; the client reads the text as a broken JSON-RPC message.",
        example: "`console.log('server started on stdio')` before `server.connect(transport)`.",
        fix: "Use `console.error` (stderr) for diagnostics, or a logger whose destination is stderr.",
    }
    STATIC_STDOUT_LOGGER {
        code: "static-stdout-logger",
        class: Class::StdioTransport,
        check: Check::StaticScan,
        summary: "A logger, log handler or console object is built on stdout.",
        what: "A logging setup whose output goes to stdout, reported where the logger or console is constructed: `logging.basicConfig(stream=sys.stdout)`, `StreamHandler(sys.stdout)`, `ext://sys.stdout` in a dictConfig, rich `Console()`/`RichHandler()`/`Progress()` without `stderr=True`, loguru `logger.add(sys.stdout)`, structlog left on its stdout default, `pino()` with the default destination, a winston `Console` transport without `stderrLevels`, bunyan without a stream, `new Console(process.stdout)`, Go `log.SetOutput(os.Stdout)`/`log.New(os.Stdout, ...)`/`slog` handlers on stdout, Rust `tracing_subscriber::fmt()` without a stderr writer, .NET `AddConsole()` without `LogToStandardErrorThreshold`. `StreamHandler()`, `basicConfig()`, `Console(stderr=True)`, `pino.destination(2)` and the `debug` library are not reported.",
        why: "Every log record becomes a line on the MCP protocol channel; the first one breaks the session, often only later, when a code path logs.",
        example: "`logging.basicConfig(level=logging.INFO, stream=sys.stdout)`",
        fix: "Point the logger at stderr (`stream=sys.stderr`, `Console(stderr=True)`, `pino(pino.destination(2))`, `stderrLevels` for every level, `os.Stderr`, `.with_writer(std::io::stderr)`).",
    }
    STATIC_STDOUT_INHERIT {
        code: "static-stdout-inherit",
        class: Class::StdioTransport,
        check: Check::StaticScan,
        summary: "A child process inherits the server's stdout.",
        what: "A subprocess started without redirecting its stdout, so everything it prints lands on the protocol channel: Python `subprocess.run/call/check_call/Popen` without `stdout=` or `capture_output=True`, `os.system`; Node `child_process` calls with `stdio: 'inherit'` (or fd 1 in the stdio array), `fork()` without `silent: true`; Rust `Command::status()`/`spawn()` without `.stdout(...)`; Java `ProcessBuilder.inheritIO()`; Go `cmd.Stdout = os.Stdout`.",
        why: "The child writes to the same file descriptor the client reads JSON-RPC from; its output corrupts the stream exactly like a print in the server.",
        example: "`subprocess.run([\"git\", \"fetch\"])` inside a tool handler.",
        fix: "Capture or redirect the child's stdout (`stdout=subprocess.PIPE` or `sys.stderr`, `capture_output=True`, `stdio: ['ignore', 'pipe', 'inherit']`, `.stdout(Stdio::piped())`).",
    }
    STATIC_STDOUT_REDIRECT {
        code: "static-stdout-redirect",
        class: Class::StdioTransport,
        check: Check::StaticScan,
        summary: "The code replaces the process's stdout, which kills the protocol transport itself.",
        what: "An assignment or call that points stdout somewhere else for the whole process: `sys.stdout = sys.stderr` (or any stream that does not wrap stdout), `os.dup2(2, 1)` without first saving fd 1, `process.stdout.write = ...`, Go `os.Stdout = os.Stderr`, Java/Kotlin `System.setOut(...)`. C# `Console.SetOut(...)` is not reported: the MCP C# SDK writes to `Console.OpenStandardOutput()`, so `Console.SetOut(Console.Error)` is the usual fix (later `Console.WriteLine` calls then go to stderr).",
        why: "A common attempt to silence prints: but the MCP SDKs take stdout when the transport starts, so the JSON-RPC replies themselves go to stderr or nowhere and no client ever completes the handshake.",
        example: "`sys.stdout = sys.stderr  # keep prints off the protocol` at the top of `server.py`.",
        fix: "Leave stdout alone and send diagnostics to stderr explicitly. To silence a noisy library for one call, wrap only that call in `contextlib.redirect_stdout(sys.stderr)`.",
    }
    STATIC_PARSE_ERROR {
        code: "static-parse-error",
        class: Class::StdioTransport,
        check: Check::StaticScan,
        severity: Severity::Note,
        summary: "Part of a source file could not be parsed; the rest was still scanned.",
        what: "The parser met syntax it could not read (a syntax error, a language version newer than the grammar, a template file). The first unparsable region is reported; every part of the file that did parse was still scanned.",
        why: "Code inside the unparsable region was not checked, so a stdout write there could be missed. The note never fails a run.",
        example: "A Python 2 file with backticks, or a `.js` file that is really a template with `<%= %>` tags.",
        fix: "Nothing is required. Fix the syntax error, or exclude generated and template files in `.ignore` to silence the note.",
    }
    STATIC_FILE_SKIPPED {
        code: "static-file-skipped",
        class: Class::StdioTransport,
        check: Check::StaticScan,
        severity: Severity::Note,
        summary: "A file given to the scan was not scanned.",
        what: "A file was larger than the size limit (minified bundles, generated code), or looked binary (it contains NUL bytes). Such files are skipped and counted; this note appears only for files named explicitly or over the size limit.",
        why: "Code in a skipped file was not checked. Bundles and generated files are rarely where a stdout write should be fixed, so they are not scanned by default.",
        example: "`dist/server.min.js` of 4 MiB.",
        fix: "Nothing is required. Scan the sources the bundle is built from, or raise `--max-file-size` to scan the file anyway.",
    }
}
