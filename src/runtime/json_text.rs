//! JSON text as real clients read it. Pure, no I/O, no recursion.
//!
//! A line is JSON when Node's `JSON.parse` and Python's `json.loads` accept it. serde_json (the
//! fast path) agrees with them on almost every text, but not on three: it stops at 128 levels of
//! nesting (Node has no limit, Python's is its recursion limit, about 1,000), it rejects a lone
//! UTF-16 surrogate escape (`"\ud800"`, which both accept) and a number too large for an `f64`
//! (`1e400`, which both read as infinity). When serde_json refuses a text for any reason but its
//! end, the iterative parser below decides: it implements the RFC 8259 grammar with an explicit
//! stack, so no nesting depth can overflow the guard's own stack.
//!
//! The value it builds is the text's value, except that subtrees nested deeper than
//! [`KEEP_DEPTH`] levels are validated and replaced by the string [`ELIDED`] (everything that
//! walks a `Value` in the guard recurses: the cut keeps those walks bounded), a lone surrogate
//! becomes U+FFFD, and an overflowing number becomes the largest finite `f64` of its sign.

use serde_json::{Map, Number, Value};

/// Levels of nesting kept whole in a parsed value (serde_json's own limit: below it, values are
/// exactly what serde_json builds).
pub const KEEP_DEPTH: usize = 128;

/// What stands in for a subtree nested deeper than [`KEEP_DEPTH`] levels.
pub const ELIDED: &str = "<mcp-stdio-guard: JSON nested deeper than 128 levels, not kept>";

/// The first JSON value of a text.
#[derive(Debug)]
pub enum First {
    Value(Parsed),
    /// The text ends inside a value: a strict prefix of JSON (`{`, `[1,`, `"abc`).
    Incomplete,
    /// Not JSON (or nothing but whitespace).
    Invalid,
}

#[derive(Debug)]
pub struct Parsed {
    pub value: Value,
    /// The byte offset just past the value.
    pub end: usize,
    /// The deepest nesting of the value when it is over [`KEEP_DEPTH`] (its deeper parts were
    /// replaced by [`ELIDED`]); `None` otherwise.
    pub deep: Option<usize>,
}

/// Parses the first JSON value of `bytes` (leading whitespace allowed; what follows the value is
/// the caller's).
pub fn first(bytes: &[u8]) -> First {
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<Value>();
    match stream.next() {
        Some(Ok(value)) => First::Value(Parsed {
            value,
            end: stream.byte_offset(),
            deep: None,
        }),
        Some(Err(e)) if e.is_eof() => First::Incomplete,
        None => First::Invalid,
        Some(Err(_)) => Parser::new(bytes).run(),
    }
}

/// JSON's whitespace: space, tab, LF, CR (not the form feed or vertical tab that
/// `trim_ascii` also strips: `1\x0c` is not JSON).
pub fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// `bytes` without leading and trailing JSON whitespace.
pub fn trim_ws(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| !is_ws(*b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !is_ws(*b))
        .map_or(start, |i| i + 1);
    &bytes[start..end]
}

/// Whether a value holds an elided subtree (checks that would judge it skip it instead).
/// Bounded: an elided value is at most [`KEEP_DEPTH`] levels deep.
pub fn has_elided(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if s == ELIDED => return true,
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    false
}

/// An open container whose value is being built.
enum Open {
    Array(Vec<Value>),
    /// The entries so far and the key of the value being parsed.
    Object(Map<String, Value>, Option<String>),
}

/// What the parser expects next.
#[derive(Clone, Copy)]
enum Expect {
    /// A value.
    Value,
    /// A value or `]` (just after `[`).
    FirstItem,
    /// A key or `}` (just after `{`).
    FirstKey,
    /// A key (after a `,` in an object).
    Key,
    /// `,` or the container's close, after a value.
    Next,
}

enum Fail {
    Eof,
    Invalid,
}

struct Parser<'a> {
    b: &'a [u8],
    p: usize,
    /// Containers kept whole, outermost first (at most [`KEEP_DEPTH`]).
    kept: Vec<Open>,
    /// Containers nested deeper, validated only: `true` for an object.
    skipped: Vec<bool>,
    max_depth: usize,
}

impl<'a> Parser<'a> {
    fn new(b: &'a [u8]) -> Parser<'a> {
        Parser {
            b,
            p: 0,
            kept: Vec::new(),
            skipped: Vec::new(),
            max_depth: 0,
        }
    }

    fn run(mut self) -> First {
        self.ws();
        let delimited = matches!(self.b.get(self.p), Some(b'[' | b'{' | b'"'));
        match self.parse() {
            // As serde_json's stream: a bare number or literal must end at a delimiter (`7Y` is
            // not the value 7 followed by text).
            Ok(_)
                if !delimited
                    && !matches!(
                        self.b.get(self.p),
                        None | Some(
                            b' ' | b'\n'
                                | b'\t'
                                | b'\r'
                                | b'"'
                                | b'['
                                | b']'
                                | b'{'
                                | b'}'
                                | b','
                                | b':'
                        )
                    ) =>
            {
                First::Invalid
            }
            Ok(value) => First::Value(Parsed {
                value,
                end: self.p,
                deep: (self.max_depth > KEEP_DEPTH).then_some(self.max_depth),
            }),
            Err(Fail::Eof) => First::Incomplete,
            Err(Fail::Invalid) => First::Invalid,
        }
    }

    fn depth(&self) -> usize {
        self.kept.len() + self.skipped.len()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.p) {
            self.p += 1;
        }
    }

    fn peek(&mut self) -> Result<u8, Fail> {
        self.ws();
        self.b.get(self.p).copied().ok_or(Fail::Eof)
    }

    fn parse(&mut self) -> Result<Value, Fail> {
        let mut expect = Expect::Value;
        loop {
            let c = self.peek()?;
            let done: Option<Value> = match expect {
                Expect::Value | Expect::FirstItem => {
                    if c == b']' && matches!(expect, Expect::FirstItem) {
                        self.p += 1;
                        self.close()
                    } else if c == b'[' || c == b'{' {
                        self.p += 1;
                        self.open(c == b'{');
                        expect = if c == b'{' {
                            Expect::FirstKey
                        } else {
                            Expect::FirstItem
                        };
                        continue;
                    } else {
                        let v = self.scalar(c)?;
                        // Inside an elided subtree nothing is kept.
                        self.skipped.is_empty().then_some(v)
                    }
                }
                Expect::FirstKey | Expect::Key => {
                    if c == b'}' && matches!(expect, Expect::FirstKey) {
                        self.p += 1;
                        self.close()
                    } else if c == b'"' {
                        let build = self.skipped.is_empty();
                        let key = self.string(build)?;
                        if self.peek()? != b':' {
                            return Err(Fail::Invalid);
                        }
                        self.p += 1;
                        if let (Some(Open::Object(_, slot)), Some(key)) =
                            (self.kept.last_mut(), key)
                        {
                            *slot = Some(key);
                        }
                        expect = Expect::Value;
                        continue;
                    } else {
                        return Err(Fail::Invalid);
                    }
                }
                Expect::Next => {
                    let object = match self.skipped.last() {
                        Some(o) => *o,
                        None => match self.kept.last() {
                            Some(Open::Object(..)) => true,
                            Some(Open::Array(_)) => false,
                            None => unreachable!("Next is only expected inside a container"),
                        },
                    };
                    self.p += 1;
                    match (c, object) {
                        (b',', true) => {
                            expect = Expect::Key;
                            continue;
                        }
                        (b',', false) => {
                            expect = Expect::Value;
                            continue;
                        }
                        (b'}', true) | (b']', false) => self.close(),
                        _ => return Err(Fail::Invalid),
                    }
                }
            };
            // A value is complete (a scalar, or a container just closed): give it to its parent.
            match done {
                None => expect = Expect::Next,
                Some(v) if self.kept.is_empty() => return Ok(v),
                Some(v) => {
                    match self.kept.last_mut() {
                        Some(Open::Array(items)) => items.push(v),
                        Some(Open::Object(map, key)) => {
                            map.insert(key.take().unwrap_or_default(), v);
                        }
                        None => unreachable!("checked above"),
                    }
                    expect = Expect::Next;
                }
            }
        }
    }

    fn open(&mut self, object: bool) {
        let depth = self.depth() + 1;
        self.max_depth = self.max_depth.max(depth);
        if depth > KEEP_DEPTH {
            self.skipped.push(object);
        } else if object {
            self.kept.push(Open::Object(Map::new(), None));
        } else {
            self.kept.push(Open::Array(Vec::new()));
        }
    }

    /// Closes the innermost container: its value, or `None` while inside an elided subtree
    /// (the outermost elided container yields [`ELIDED`]).
    fn close(&mut self) -> Option<Value> {
        if self.skipped.pop().is_some() {
            return self
                .skipped
                .is_empty()
                .then(|| Value::String(ELIDED.to_string()));
        }
        Some(match self.kept.pop() {
            Some(Open::Array(items)) => Value::Array(items),
            Some(Open::Object(map, _)) => Value::Object(map),
            None => unreachable!("a close always has an open container"),
        })
    }

    /// A string, number or literal starting at `c`; inside an elided subtree its value is not
    /// built (a placeholder `null` is returned and dropped by the caller).
    fn scalar(&mut self, c: u8) -> Result<Value, Fail> {
        let build = self.skipped.is_empty();
        match c {
            b'"' => Ok(self.string(build)?.map_or(Value::Null, Value::String)),
            b't' => self.literal(b"true", Value::Bool(true)),
            b'f' => self.literal(b"false", Value::Bool(false)),
            b'n' => self.literal(b"null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(build),
            _ => Err(Fail::Invalid),
        }
    }

    fn literal(&mut self, word: &[u8], value: Value) -> Result<Value, Fail> {
        let rest = &self.b[self.p..];
        let n = rest.len().min(word.len());
        if rest[..n] != word[..n] {
            return Err(Fail::Invalid);
        }
        if n < word.len() {
            return Err(Fail::Eof);
        }
        self.p += word.len();
        Ok(value)
    }

    fn digits(&mut self) -> usize {
        let start = self.p;
        while self.b.get(self.p).is_some_and(u8::is_ascii_digit) {
            self.p += 1;
        }
        self.p - start
    }

    fn number(&mut self, build: bool) -> Result<Value, Fail> {
        let start = self.p;
        if self.b[self.p] == b'-' {
            self.p += 1;
        }
        match self.b.get(self.p) {
            None => return Err(Fail::Eof),
            Some(b'0') => self.p += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            Some(_) => return Err(Fail::Invalid),
        }
        let mut integer = true;
        if self.b.get(self.p) == Some(&b'.') {
            integer = false;
            self.p += 1;
            if self.digits() == 0 {
                return Err(self.eof_or_invalid());
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.p) {
            integer = false;
            self.p += 1;
            if let Some(b'+' | b'-') = self.b.get(self.p) {
                self.p += 1;
            }
            if self.digits() == 0 {
                return Err(self.eof_or_invalid());
            }
        }
        if !build {
            return Ok(Value::Null);
        }
        let text = std::str::from_utf8(&self.b[start..self.p]).map_err(|_| Fail::Invalid)?;
        if integer {
            if text == "-0" {
                // serde_json keeps the sign of a negative zero as a float.
                return Ok(Number::from_f64(-0.0).map_or(Value::Null, Value::Number));
            }
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Value::from(i));
            }
            if let Ok(u) = text.parse::<u64>() {
                return Ok(Value::from(u));
            }
        }
        let f: f64 = text.parse().map_err(|_| Fail::Invalid)?;
        let f = if f.is_infinite() {
            f64::MAX.copysign(f)
        } else {
            f
        };
        Ok(Number::from_f64(f).map_or(Value::Null, Value::Number))
    }

    fn eof_or_invalid(&self) -> Fail {
        if self.p >= self.b.len() {
            Fail::Eof
        } else {
            Fail::Invalid
        }
    }

    fn hex4(&mut self) -> Result<u16, Fail> {
        let mut n: u16 = 0;
        for _ in 0..4 {
            let c = *self.b.get(self.p).ok_or(Fail::Eof)?;
            let d = (c as char).to_digit(16).ok_or(Fail::Invalid)?;
            n = n * 16 + d as u16;
            self.p += 1;
        }
        Ok(n)
    }

    /// A string at `"`; its decoded text when `build`.
    fn string(&mut self, build: bool) -> Result<Option<String>, Fail> {
        self.p += 1; // the opening quote
        let mut out = build.then(String::new);
        loop {
            let start = self.p;
            while let Some(&c) = self.b.get(self.p) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.p += 1;
            }
            if let Some(out) = out.as_mut() {
                out.push_str(
                    std::str::from_utf8(&self.b[start..self.p]).map_err(|_| Fail::Invalid)?,
                );
            }
            match self.b.get(self.p) {
                None => return Err(Fail::Eof),
                Some(b'"') => {
                    self.p += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.p += 1;
                    let e = *self.b.get(self.p).ok_or(Fail::Eof)?;
                    self.p += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(Fail::Invalid),
                    };
                    if let Some(out) = out.as_mut() {
                        out.push(ch);
                    }
                }
                // A raw control character: both parsers reject it.
                Some(_) => return Err(Fail::Invalid),
            }
        }
    }

    /// The character of a `\u` escape (its `\u` already read), joining a surrogate pair; a lone
    /// surrogate is U+FFFD.
    fn unicode_escape(&mut self) -> Result<char, Fail> {
        let first = self.hex4()?;
        if (0xD800..0xDC00).contains(&first) && self.b[self.p..].starts_with(b"\\u") {
            let save = self.p;
            self.p += 2;
            let second = self.hex4()?;
            if (0xDC00..0xE000).contains(&second) {
                let c =
                    0x10000 + ((u32::from(first) - 0xD800) << 10) + (u32::from(second) - 0xDC00);
                return Ok(char::from_u32(c).unwrap_or('\u{FFFD}'));
            }
            // Not a pair: the first is lone, the second escape is read on its own.
            self.p = save;
            return Ok('\u{FFFD}');
        }
        Ok(char::from_u32(u32::from(first)).unwrap_or('\u{FFFD}'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> Value {
        match first(text.as_bytes()) {
            First::Value(p) => p.value,
            other => panic!("{text:?}: {other:?}"),
        }
    }

    /// The verdict on a whole text: one value and nothing after it.
    fn verdict(text: &str) -> &'static str {
        match first(text.as_bytes()) {
            First::Value(p) if trim_ws(&text.as_bytes()[p.end..]).is_empty() => "value",
            First::Value(_) => "trailing",
            First::Incomplete => "incomplete",
            First::Invalid => "invalid",
        }
    }

    fn nested(depth: usize) -> String {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"deep\":{}1{}}}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        )
    }

    #[test]
    fn deep_values_are_json_at_any_depth() {
        for depth in [200, 1_000, 100_000, 1_000_000] {
            let text = nested(depth);
            let Some(p) = (match first(text.as_bytes()) {
                First::Value(p) => Some(p),
                _ => None,
            }) else {
                panic!("depth {depth} is JSON");
            };
            assert_eq!(p.end, text.len());
            assert_eq!(
                p.deep,
                Some(depth + 2),
                "the deepest level counts the envelope"
            );
            assert_eq!(p.value["id"], 1);
            assert!(has_elided(&p.value));
        }
        // Unfinished deep text is a prefix, broken deep text is not JSON.
        assert_eq!(verdict(&"[".repeat(5_000)), "incomplete");
        assert_eq!(verdict(&format!("{}x", "[".repeat(5_000))), "invalid");
    }

    #[test]
    fn what_both_clients_accept_is_json() {
        // A lone surrogate (both keep it; a Rust string cannot): U+FFFD.
        assert_eq!(value(r#"{"a":"\ud800x"}"#)["a"], "\u{FFFD}x");
        assert_eq!(value(r#"["\udc00"]"#)[0], "\u{FFFD}");
        assert_eq!(value(r#"["\ud800\u0041"]"#)[0], "\u{FFFD}A");
        assert_eq!(value(r#"["\ud83d\ude00"]"#)[0], "😀");
        // Past f64: infinity in both; the largest finite number here.
        assert_eq!(value("[1e400]")[0].as_f64(), Some(f64::MAX));
        assert_eq!(value("[-1e400]")[0].as_f64(), Some(-f64::MAX));
    }

    #[test]
    fn the_grammar_is_strict() {
        for bad in [
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "[1,]",
            "{\"a\":1,}",
            "{a:1}",
            "'x'",
            "[\"\t\"]",
            "\"\\x\"",
            "NaN",
            "Infinity",
            "[1 2]",
            "{\"a\" 1}",
            "tru e",
            "nul",
        ] {
            assert_ne!(verdict(bad), "value", "{bad:?} was accepted");
        }
        assert_eq!(verdict("nul"), "incomplete");
        assert_eq!(verdict("[1,"), "incomplete");
        assert_eq!(verdict("\"abc"), "incomplete");
        assert_eq!(verdict("   "), "invalid");
        // A bare number or literal must end at a delimiter, as in serde_json's stream.
        assert_eq!(verdict("7Y"), "invalid");
        assert_eq!(verdict("truex"), "invalid");
        assert_eq!(verdict("7 Y"), "trailing");
        // A form feed is not JSON whitespace.
        assert_eq!(verdict("[1]\x0c"), "trailing");
        assert_eq!(verdict("1\x0c"), "invalid");
    }

    #[test]
    fn the_slow_path_builds_what_serde_json_builds() {
        // Texts serde_json accepts, forced through the iterative parser.
        for text in [
            r#"{"jsonrpc":"2.0","id":-7,"result":{"a":[1,2.5,-0,1e3,true,false,null,"x\n\"é\u00e9"],"b":{}}}"#,
            r#"[18446744073709551615,-9223372036854775808,12345678901234567890123]"#,
            r#"{"a":1,"a":2}"#,
            "  [ ]  ",
        ] {
            let expected: Value = serde_json::Deserializer::from_str(text)
                .into_iter::<Value>()
                .next()
                .unwrap()
                .unwrap();
            let got = Parser::new(text.as_bytes()).run();
            match got {
                First::Value(p) => assert_eq!(p.value, expected, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }
}
