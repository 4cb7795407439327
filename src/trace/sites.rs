//! Write sites: what a stdout write call of the scan prints, as line patterns, read from the call
//! itself. The scan says *where* code writes to stdout (rule, file, line, column); this module
//! re-parses the file with tree-sitter and turns the call's arguments into text with holes:
//! string literals, f-strings and template literals (interpolations are holes), `%`/`{}` format
//! strings, concatenations, and `print`'s and `console.log`'s own joining rules. Logger calls
//! (`logger.info("loaded %d tools", n)`) are read the same way, for trees where the scan found a
//! logger configured on stdout. Only Python and JavaScript/TypeScript are read; a call in another
//! language yields no site.

use super::pattern::{self, Pattern};
use crate::scan::lang::Lang;
use std::path::{Path, PathBuf};
use tree_sitter::{Node, Parser, Tree};

/// How a site writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A call the scan reported as a stdout write (`print`, `console.log`, `sys.stdout.write`).
    Sink,
    /// A logger call in a tree whose logger is configured on stdout: its message is somewhere in
    /// the line, after the logger's prefix.
    Logger,
}

/// One write call and the lines it can print.
#[derive(Debug, Clone)]
pub struct Site {
    /// As reports show source paths: relative to the guard's working directory when under it.
    pub file: PathBuf,
    /// 1-based line and character column of the call, and its end.
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    /// The callee as written (`print`, `console.log`, `sys.stdout.write`, `logger.info`).
    pub sink: String,
    pub kind: Kind,
    /// The lines it prints; matched against a whole stdout line (unknown ends are holes).
    pub lines: Vec<Pattern>,
    /// Where the call is in the compiled file, when it was mapped back through a source map.
    pub compiled: Option<(PathBuf, u32, u32)>,
}

impl Site {
    /// Whether any of its lines pins down enough text to be matched.
    pub fn is_specific(&self) -> bool {
        self.lines.iter().any(Pattern::is_specific)
    }
}

/// A parsed source file.
pub struct Parsed {
    pub lang: Lang,
    pub text: String,
    pub tree: Tree,
}

/// Parses a file the scan would read (by extension; extension-less scripts by their shebang).
pub fn parse(path: &Path, max_bytes: u64) -> Option<Parsed> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > max_bytes {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let lang = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(Lang::from_file_name)
        .or_else(|| Lang::from_shebang(&bytes[..bytes.len().min(256)]))?;
    if !matches!(
        lang,
        Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Tsx
    ) {
        return None;
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    let tree = parser.parse(text.as_bytes(), None)?;
    Some(Parsed { lang, text, tree })
}

impl Parsed {
    fn is_python(&self) -> bool {
        self.lang == Lang::Python
    }

    /// The byte offset of a 1-based line and character column.
    fn offset(&self, line: u32, column: u32) -> Option<usize> {
        let start = if line <= 1 {
            0
        } else {
            self.text
                .match_indices('\n')
                .nth(line as usize - 2)
                .map(|(i, _)| i + 1)?
        };
        let rest = &self.text[start..];
        let within = rest
            .char_indices()
            .nth(column.saturating_sub(1) as usize)
            .map_or(rest.len(), |(i, _)| i);
        Some(start + within)
    }

    /// 1-based line and character column of a byte offset.
    fn position(&self, byte: usize) -> (u32, u32) {
        let before = &self.text[..byte];
        let line = before.matches('\n').count() as u32 + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() as u32 + 1;
        (line, column)
    }

    /// The write site of the call the scan reported at this line and column.
    pub fn sink_at(&self, file: &Path, line: u32, column: u32) -> Option<Site> {
        let at = self.offset(line, column)?;
        let mut node = self.tree.root_node().descendant_for_byte_range(at, at)?;
        let call = loop {
            if is_call(node) && node.start_byte() == at {
                break node;
            }
            node = node.parent()?;
            if node.start_byte() != at {
                return None;
            }
        };
        let callee = call.child_by_field_name("function")?;
        let sink: String = self
            .node_text(callee)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let args = self.arguments(call);
        let last = sink.rsplit('.').next().unwrap_or("");
        let lines = if self.is_python() {
            match last {
                "print" => self.print_lines(call, &args),
                "write" | "writelines" => stream_lines(self.write_arg(&args)),
                _ => vec![self.expr(args.first().copied())],
            }
        } else {
            match last {
                "log" | "info" | "debug" | "trace" | "dir" => vec![self.console_format(&args)],
                "write" | "writeSync" => stream_lines(self.write_arg(&args)),
                _ => vec![self.expr(args.first().copied())],
            }
        };
        Some(self.site(file, call, sink, Kind::Sink, lines))
    }

    /// Every logger call of the file (`logger.info(...)`, `logging.warning(...)`, a pino or
    /// `console.Console` logger's `log.info(...)`; never `console.*` itself, which the scan
    /// judges on its own).
    pub fn logger_calls(&self, file: &Path) -> Vec<Site> {
        let mut out = Vec::new();
        let mut cursor = self.tree.walk();
        // Iterative pre-order walk: no recursion over the file's nesting.
        'walk: loop {
            let node = cursor.node();
            if is_call(node)
                && let Some(site) = self.logger_call(file, node)
            {
                out.push(site);
            }
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    continue 'walk;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        out
    }

    fn logger_call(&self, file: &Path, call: Node) -> Option<Site> {
        let callee = call.child_by_field_name("function")?;
        if !matches!(callee.kind(), "attribute" | "member_expression") {
            return None;
        }
        let method = callee
            .child_by_field_name(if self.is_python() {
                "attribute"
            } else {
                "property"
            })
            .map(|m| self.node_text(m))?;
        let object = callee
            .child_by_field_name("object")
            .map(|o| self.node_text(o))?;
        let args = self.arguments(call);
        let message = if self.is_python() {
            const LEVELS: [&str; 8] = [
                "debug",
                "info",
                "warning",
                "warn",
                "error",
                "critical",
                "exception",
                "fatal",
            ];
            let msg = match method {
                m if LEVELS.contains(&m) => args.first().copied(),
                "log" => args.get(1).copied(),
                _ => return None,
            }?;
            let own = self.expr(Some(msg));
            // `%` placeholders are only filled in when arguments follow the message.
            match self.literal(msg) {
                Some(text) if args.len() > 1 + usize::from(method == "log") => {
                    pattern::percent_format(&text).0
                }
                _ => own,
            }
        } else {
            const LEVELS: [&str; 7] = ["log", "info", "debug", "trace", "warn", "error", "fatal"];
            if !LEVELS.contains(&method) || object == "console" {
                return None;
            }
            // pino and bunyan take an object of fields first, the message second.
            let rest = match args.first() {
                Some(a) if a.kind() == "object" => &args[1..],
                _ => &args[..],
            };
            self.console_format(rest)
        };
        if !message.is_specific() {
            return None;
        }
        let sink: String = self
            .node_text(callee)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let lines = message
            .lines()
            .into_iter()
            .map(|l| {
                let mut p = Pattern::hole();
                p.append(&l);
                p.push_hole();
                p
            })
            .collect();
        Some(self.site(file, call, sink, Kind::Logger, lines))
    }

    fn site(&self, file: &Path, call: Node, sink: String, kind: Kind, lines: Vec<Pattern>) -> Site {
        let (line, column) = self.position(call.start_byte());
        let (end_line, end_column) = self.position(call.end_byte());
        Site {
            file: file.to_path_buf(),
            line,
            column,
            end_line,
            end_column,
            sink,
            kind,
            lines,
            compiled: None,
        }
    }

    fn node_text(&self, node: Node) -> &str {
        &self.text[node.byte_range()]
    }

    /// The positional arguments of a call (Python keyword arguments are left out).
    fn arguments<'t>(&self, call: Node<'t>) -> Vec<Node<'t>> {
        let Some(list) = call.child_by_field_name("arguments") else {
            return Vec::new();
        };
        let mut cursor = list.walk();
        list.named_children(&mut cursor)
            .filter(|n| !matches!(n.kind(), "comment" | "keyword_argument"))
            .collect()
    }

    /// A keyword argument's value (Python).
    fn keyword<'t>(&self, call: Node<'t>, name: &str) -> Option<Node<'t>> {
        let list = call.child_by_field_name("arguments")?;
        let mut cursor = list.walk();
        list.named_children(&mut cursor)
            .filter(|n| n.kind() == "keyword_argument")
            .find(|n| {
                n.child_by_field_name("name")
                    .is_some_and(|k| self.node_text(k) == name)
            })
            .and_then(|n| n.child_by_field_name("value"))
    }

    /// What `print(a, b, sep=..., end=...)` prints.
    fn print_lines(&self, call: Node, args: &[Node]) -> Vec<Pattern> {
        let sep = match self.keyword(call, "sep") {
            Some(s) => self.expr(Some(s)),
            None => Pattern::lit(" "),
        };
        let mut out = Pattern::default();
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                out.append(&sep);
            }
            out.append(&self.expr(Some(*a)));
        }
        match self.keyword(call, "end") {
            None => out.push_lit("\n"),
            Some(end) => match self.literal(end) {
                Some(e) => {
                    out.push_lit(&e);
                    if !e.ends_with('\n') {
                        out.push_hole();
                    }
                }
                None => out.push_hole(),
            },
        }
        out.lines()
    }

    /// The data argument of a `write`: the second one after a file descriptor number
    /// (`os.write(1, b"...")`, `fs.writeSync(1, "...")`), else the first.
    fn write_arg(&self, args: &[Node]) -> Pattern {
        match args.first() {
            Some(first) if matches!(first.kind(), "integer" | "number") => {
                self.expr(args.get(1).copied())
            }
            first => self.expr(first.copied()),
        }
    }

    /// Node's `util.format`: a string first argument is a format (`%s`, `%d`, `%o`, `%%`; each
    /// spec takes an argument); every argument left over is appended after a space.
    fn console_format(&self, args: &[Node]) -> Pattern {
        let mut out = Pattern::default();
        let mut rest = args;
        if let Some(first) = args.first()
            && let Some(text) = self.literal(*first)
        {
            let (p, specs) = pattern::percent_format(&text);
            out.append(&p);
            rest = &args[(1 + specs).min(args.len())..];
        } else if let Some(first) = args.first() {
            out.append(&self.expr(Some(*first)));
            rest = &args[1..];
        }
        for a in rest {
            out.push_lit(" ");
            out.append(&self.expr(Some(*a)));
        }
        out
    }

    /// A string literal's value, when the expression is one without interpolation.
    fn literal(&self, node: Node) -> Option<String> {
        let p = self.expr(Some(node));
        match p.pieces() {
            [] => Some(String::new()),
            [pattern::Piece::Lit(s)] => Some(s.clone()),
            _ => None,
        }
        .filter(|_| is_string_kind(node))
    }

    /// The text an expression evaluates to, as a pattern.
    fn expr(&self, node: Option<Node>) -> Pattern {
        let Some(node) = node else {
            return Pattern::default();
        };
        match node.kind() {
            "string" if self.is_python() => self.python_string(node),
            "string" => Pattern::lit(&unescape_js(strip_quotes(self.node_text(node)))),
            "template_string" => self.template(node),
            "concatenated_string" => {
                let mut out = Pattern::default();
                let mut cursor = node.walk();
                for part in node.named_children(&mut cursor) {
                    out.append(&self.expr(Some(part)));
                }
                out
            }
            "parenthesized_expression" => self.expr(node.named_child(0)),
            "binary_operator" | "binary_expression" => {
                let op = node
                    .child_by_field_name("operator")
                    .map(|o| self.node_text(o))
                    .unwrap_or("");
                let left = node.child_by_field_name("left");
                let right = node.child_by_field_name("right");
                match op {
                    "+" => {
                        let mut out = self.expr(left);
                        out.append(&self.expr(right));
                        out
                    }
                    "%" if self.is_python() => match left.and_then(|l| self.literal(l)) {
                        Some(text) => pattern::percent_format(&text).0,
                        None => Pattern::hole(),
                    },
                    _ => Pattern::hole(),
                }
            }
            // `"...".format(...)`
            "call" if self.is_python() => {
                let func = node.child_by_field_name("function");
                match func.filter(|f| f.kind() == "attribute") {
                    Some(f)
                        if f.child_by_field_name("attribute")
                            .is_some_and(|a| self.node_text(a) == "format") =>
                    {
                        match f
                            .child_by_field_name("object")
                            .and_then(|o| self.literal(o))
                        {
                            Some(text) => pattern::brace_format(&text),
                            None => Pattern::hole(),
                        }
                    }
                    _ => Pattern::hole(),
                }
            }
            _ => Pattern::hole(),
        }
    }

    /// A Python string: its prefix (`f`, `r`, `b`, ...) says whether braces are holes and
    /// backslashes escapes.
    fn python_string(&self, node: Node) -> Pattern {
        let mut out = Pattern::default();
        let mut prefix = "";
        let mut cursor = node.walk();
        for part in node.children(&mut cursor) {
            match part.kind() {
                "string_start" => {
                    let t = self.node_text(part);
                    prefix = &t[..t.find(['\'', '"']).unwrap_or(t.len())];
                }
                "string_content" => {
                    let raw = self.node_text(part);
                    let lower = prefix.to_ascii_lowercase();
                    let mut text = if lower.contains('r') {
                        raw.to_string()
                    } else {
                        unescape_python(raw)
                    };
                    if lower.contains('f') || lower.contains('t') {
                        text = text.replace("{{", "{").replace("}}", "}");
                    }
                    out.push_lit(&text);
                }
                "interpolation" => out.push_hole(),
                // Older grammars: escapes as siblings of the content.
                "escape_sequence" => out.push_lit(&unescape_python(self.node_text(part))),
                _ => {}
            }
        }
        out
    }

    /// A JavaScript template literal: substitutions are holes.
    fn template(&self, node: Node) -> Pattern {
        let mut out = Pattern::default();
        let mut cursor = node.walk();
        for part in node.children(&mut cursor) {
            match part.kind() {
                "string_fragment" => out.push_lit(self.node_text(part)),
                "escape_sequence" => out.push_lit(&unescape_js(self.node_text(part))),
                "template_substitution" => out.push_hole(),
                _ => {}
            }
        }
        out
    }
}

fn is_call(node: Node) -> bool {
    matches!(node.kind(), "call" | "call_expression")
}

fn is_string_kind(node: Node) -> bool {
    matches!(
        node.kind(),
        "string" | "template_string" | "concatenated_string" | "parenthesized_expression"
    )
}

/// Lines a stream `write` prints: text written before it may start the line, text written after
/// it may end the line (when the data has no newline of its own there).
fn stream_lines(data: Pattern) -> Vec<Pattern> {
    let ends_line =
        matches!(data.pieces().last(), Some(pattern::Piece::Lit(s)) if s.ends_with('\n'));
    let mut lines = data.lines();
    if let Some(first) = lines.first_mut() {
        let mut p = Pattern::hole();
        p.append(first);
        *first = p;
    }
    if !ends_line && let Some(last) = lines.last_mut() {
        last.push_hole();
    }
    lines
}

fn strip_quotes(s: &str) -> &str {
    let s = s.strip_prefix(['"', '\'']).unwrap_or(s);
    s.strip_suffix(['"', '\'']).unwrap_or(s)
}

/// Decodes Python escapes (`\n`, `\t`, `\\`, `\'`, `\xNN`, `\uNNNN`, `\UNNNNNNNN`, octal, line
/// continuations); an unknown escape keeps its backslash, as Python does.
pub fn unescape_python(s: &str) -> String {
    unescape(s, true)
}

/// Decodes JavaScript escapes (`\n`, `\xNN`, `\uNNNN`, `\u{...}`, line continuations); an
/// unknown escape is the character itself.
pub fn unescape_js(s: &str) -> String {
    unescape(s, false)
}

fn unescape(s: &str, python: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    let hex = |chars: &mut std::iter::Peekable<std::str::Chars>, n: usize| {
        let mut v = 0u32;
        for _ in 0..n {
            v = v * 16 + chars.next()?.to_digit(16)?;
        }
        char::from_u32(v)
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0' if !python || chars.peek().is_none_or(|d| !d.is_digit(8)) => out.push('\0'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'a' if python => out.push('\u{7}'),
            '\n' => {}
            'x' => out.extend(hex(&mut chars, 2)),
            'u' if !python && chars.peek() == Some(&'{') => {
                chars.next();
                let digits: String = chars.by_ref().take_while(|c| *c != '}').collect();
                out.extend(
                    u32::from_str_radix(&digits, 16)
                        .ok()
                        .and_then(char::from_u32),
                );
            }
            'u' => out.extend(hex(&mut chars, 4)),
            'U' if python => out.extend(hex(&mut chars, 8)),
            d if python && d.is_digit(8) => {
                let mut v = d.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(n) => {
                            v = v * 8 + n;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.extend(char::from_u32(v));
            }
            '\\' | '\'' | '"' => out.push(e),
            other if python => {
                out.push('\\');
                out.push(other);
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(name: &str, src: &str) -> Parsed {
        let lang = Lang::from_file_name(name).unwrap();
        let mut parser = Parser::new();
        parser.set_language(&lang.grammar()).unwrap();
        let tree = parser.parse(src, None).unwrap();
        Parsed {
            lang,
            text: src.to_string(),
            tree,
        }
    }

    fn lines_at(name: &str, src: &str, line: u32, column: u32) -> Vec<(bool, bool)> {
        let p = parsed(name, src);
        let site = p
            .sink_at(Path::new(name), line, column)
            .expect("a call there");
        let probe = |text: &str| site.lines.iter().any(|l| l.matches(text, true, false));
        vec![(probe("noisy v1 ready"), probe("debug: 3 tools"))]
    }

    #[test]
    fn python_literals_f_strings_and_formats() {
        let src = "import sys\nprint('noisy v1 ready')\nprint(f\"debug: {n} tools\")\nprint('debug: %d tools' % n)\nprint('debug:', n, 'tools')\nsys.stdout.write('debug: {} tools\\n'.format(n))\n";
        assert_eq!(lines_at("s.py", src, 2, 1), [(true, false)]);
        for line in 3..=6 {
            assert_eq!(
                lines_at("s.py", src, line, 1),
                [(false, true)],
                "line {line}"
            );
        }
    }

    #[test]
    fn javascript_literals_templates_and_console_formats() {
        let src = "console.log('noisy v1 ready');\nconsole.log(`debug: ${n} tools`);\nconsole.log('debug: %d tools', n);\nconsole.log('debug:', n, 'tools');\nprocess.stdout.write('debug: ' + n + ' tools\\n');\n";
        assert_eq!(lines_at("s.ts", src, 1, 1), [(true, false)]);
        for line in 2..=5 {
            assert_eq!(
                lines_at("s.ts", src, line, 1),
                [(false, true)],
                "line {line}"
            );
        }
    }

    #[test]
    fn logger_calls_keep_their_message() {
        let p = parsed(
            "s.py",
            "import logging\nlog = logging.getLogger()\nlog.info('loaded %d tools', 3)\nlogging.warning(f'x: {x}')\nlog.info('x')\n",
        );
        let sites = p.logger_calls(Path::new("s.py"));
        assert_eq!(sites.len(), 1, "only specific messages: {sites:?}");
        assert_eq!((sites[0].line, sites[0].sink.as_str()), (3, "log.info"));
        assert!(sites[0].lines[0].matches("INFO:root:loaded 3 tools", true, false));
        let p = parsed(
            "s.js",
            "console.info('not a logger call here');\nlog.info({a: 1}, 'loaded %d tools', n);\n",
        );
        let sites = p.logger_calls(Path::new("s.js"));
        assert_eq!(sites.len(), 1);
        assert!(sites[0].lines[0].matches("[12:00] INFO loaded 3 tools", true, false));
    }

    #[test]
    fn escapes_decode() {
        assert_eq!(unescape_python(r"a\tb\x41\u00e9\101\q"), "a\tbAéA\\q");
        assert_eq!(unescape_js(r"a\tb\x41\u00e9\u{1F600}\q"), "a\tbAé😀q");
    }
}
