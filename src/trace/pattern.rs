//! What a write call can print, as a pattern: literal text with holes where the program fills in
//! a value (an f-string's `{x}`, a template literal's `${x}`, a `%s` or `{}` format spec, an
//! argument that is not a literal). Matching a polluted stdout line against it is a glob match
//! with holes as `*`. Pure; no I/O.

/// One piece of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Lit(String),
    /// Any text, possibly empty.
    Hole,
}

/// Text with holes, normalized: no empty literal, no two holes or two literals side by side.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pattern(Vec<Piece>);

/// Literal characters (other than whitespace and punctuation-only filler) a pattern needs before
/// a match means anything: `print(x)` or `f"{a}: {b}"` match every line.
const MIN_LITERAL_CHARS: usize = 4;

impl Pattern {
    pub fn lit(text: &str) -> Pattern {
        let mut p = Pattern::default();
        p.push_lit(text);
        p
    }

    pub fn hole() -> Pattern {
        Pattern(vec![Piece::Hole])
    }

    pub fn pieces(&self) -> &[Piece] {
        &self.0
    }

    pub fn push_lit(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        match self.0.last_mut() {
            Some(Piece::Lit(s)) => s.push_str(text),
            _ => self.0.push(Piece::Lit(text.to_string())),
        }
    }

    pub fn push_hole(&mut self) {
        if self.0.last() != Some(&Piece::Hole) {
            self.0.push(Piece::Hole);
        }
    }

    pub fn append(&mut self, other: &Pattern) {
        for piece in &other.0 {
            match piece {
                Piece::Lit(s) => self.push_lit(s),
                Piece::Hole => self.push_hole(),
            }
        }
    }

    pub fn has_holes(&self) -> bool {
        self.0.contains(&Piece::Hole)
    }

    /// Letters and digits in the literal pieces: how much of a line the pattern pins down.
    pub fn literal_weight(&self) -> usize {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Lit(s) => s.chars().filter(|c| c.is_alphanumeric()).count(),
                Piece::Hole => 0,
            })
            .sum()
    }

    /// Whether the pattern pins down enough text for a match to say anything.
    pub fn is_specific(&self) -> bool {
        self.literal_weight() >= MIN_LITERAL_CHARS
    }

    /// The pattern cut into the lines it prints: literal newlines end a line (a trailing one
    /// ends the last line and adds no empty one).
    pub fn lines(&self) -> Vec<Pattern> {
        let mut out = vec![Pattern::default()];
        for piece in &self.0 {
            match piece {
                Piece::Hole => out.last_mut().expect("never empty").push_hole(),
                Piece::Lit(s) => {
                    let mut parts = s.split('\n');
                    if let Some(first) = parts.next() {
                        out.last_mut().expect("never empty").push_lit(first);
                    }
                    for part in parts {
                        let mut next = Pattern::default();
                        next.push_lit(part);
                        out.push(next);
                    }
                }
            }
        }
        if out.len() > 1 && out.last().is_some_and(|p| p.0.is_empty()) {
            out.pop();
        }
        out
    }

    /// Whether `line` is what this pattern prints. `anchored`: the whole line (a `print`);
    /// else anywhere in it (a logger adds its own prefix). `cut`: the line was cut short (the
    /// report keeps a line's first bytes), so it only has to be a prefix of a match. A match
    /// must pin down at least [`MIN_LITERAL_CHARS`] letters or digits of the visible line with
    /// literal text: holes alone explain nothing.
    pub fn matches(&self, line: &str, anchored: bool, cut: bool) -> bool {
        let mut pieces: Vec<Piece> = self.0.clone();
        if !anchored {
            if pieces.first() != Some(&Piece::Hole) {
                pieces.insert(0, Piece::Hole);
            }
            if pieces.last() != Some(&Piece::Hole) {
                pieces.push(Piece::Hole);
            }
        }
        glob(&pieces, line, cut).is_some_and(|w| w >= MIN_LITERAL_CHARS)
    }
}

fn weight(s: &str) -> usize {
    s.chars().filter(|c| c.is_alphanumeric()).count()
}

/// Glob matching over pieces: a literal must match exactly, a hole any text. With `cut`, the
/// text may end anywhere inside the pattern. Returns the most literal letters and digits of the
/// text a match pins down, or `None` when nothing matches. Iterative, quadratic at worst in the
/// text and the number of holes (a line of evidence is at most a few hundred bytes).
fn glob(pieces: &[Piece], text: &str, cut: bool) -> Option<usize> {
    use std::collections::BTreeMap;
    // Positions (byte offsets into `text`) reachable before the next piece, with the most
    // literal weight matched on the way there.
    let mut reachable: BTreeMap<usize, usize> = BTreeMap::from([(0, 0)]);
    let mut best_cut: Option<usize> = None;
    for piece in pieces {
        let mut next: BTreeMap<usize, usize> = BTreeMap::new();
        let keep = |at: usize, w: usize, next: &mut BTreeMap<usize, usize>| {
            let e = next.entry(at).or_insert(w);
            *e = (*e).max(w);
        };
        match piece {
            Piece::Hole => {
                let (&from, _) = reachable.iter().next()?;
                for at in text
                    .char_indices()
                    .map(|(i, _)| i)
                    .chain(std::iter::once(text.len()))
                    .filter(|&i| i >= from)
                {
                    // The most weight of any reachable position at or before `at`.
                    let w = reachable.range(..=at).map(|(_, w)| *w).max().unwrap_or(0);
                    keep(at, w, &mut next);
                }
            }
            Piece::Lit(s) => {
                for (&at, &w) in &reachable {
                    let rest = &text[at..];
                    if rest.starts_with(s.as_str()) {
                        keep(at + s.len(), w + weight(s), &mut next);
                    } else if cut && s.starts_with(rest) {
                        // The text ends inside this literal: a prefix of a match.
                        let got = w + weight(rest);
                        best_cut = Some(best_cut.map_or(got, |b| b.max(got)));
                    }
                }
            }
        }
        if cut && let Some(&w) = next.get(&text.len()) {
            // The text is used up: whatever follows may match what was cut off.
            best_cut = Some(best_cut.map_or(w, |b| b.max(w)));
        }
        if next.is_empty() {
            return best_cut;
        }
        reachable = next;
    }
    let full = reachable.get(&text.len()).copied();
    match (full, best_cut) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// `printf`-style text (`%s`, `%5.2f`, `%(name)s`, `%%`) as a pattern: every spec a hole.
/// `console` specs (`%c` prints nothing but takes an argument) are holes as well.
pub fn percent_format(text: &str) -> (Pattern, usize) {
    let mut p = Pattern::default();
    let mut specs = 0;
    let mut chars = text.char_indices().peekable();
    let mut lit = String::new();
    while let Some((_, c)) = chars.next() {
        if c != '%' {
            lit.push(c);
            continue;
        }
        if let Some(&(_, '%')) = chars.peek() {
            chars.next();
            lit.push('%');
            continue;
        }
        // `%(name)` mapping key, flags, width, precision, length, then the conversion.
        let mut spec_ok = false;
        if let Some(&(_, '(')) = chars.peek() {
            for (_, k) in chars.by_ref() {
                if k == ')' {
                    break;
                }
            }
        }
        while let Some(&(_, k)) = chars.peek() {
            if "-+ #0123456789.*hlLqjzt".contains(k) {
                chars.next();
                continue;
            }
            if k.is_ascii_alphabetic() {
                chars.next();
                spec_ok = true;
            }
            break;
        }
        if spec_ok {
            p.push_lit(&lit);
            lit.clear();
            p.push_hole();
            specs += 1;
        } else {
            lit.push('%');
        }
    }
    p.push_lit(&lit);
    (p, specs)
}

/// `str.format`/`{}`-style text (`{}`, `{0}`, `{name!r:>10}`, `{{`) as a pattern.
pub fn brace_format(text: &str) -> Pattern {
    let mut p = Pattern::default();
    let mut lit = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                lit.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                lit.push('}');
            }
            '{' => {
                let mut depth = 1;
                for k in chars.by_ref() {
                    match k {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                p.push_lit(&lit);
                lit.clear();
                p.push_hole();
            }
            other => lit.push(other),
        }
    }
    p.push_lit(&lit);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(pieces: &[Option<&str>]) -> Pattern {
        let mut p = Pattern::default();
        for piece in pieces {
            match piece {
                Some(s) => p.push_lit(s),
                None => p.push_hole(),
            }
        }
        p
    }

    #[test]
    fn literals_and_holes_match_like_a_glob() {
        let banner = Pattern::lit("noisy-server v1.0 starting...");
        assert!(banner.matches("noisy-server v1.0 starting...", true, false));
        assert!(!banner.matches("noisy-server v1.0 starting... now", true, false));
        assert!(banner.matches("[x] noisy-server v1.0 starting... now", false, false));
        let debug = pat(&[Some("debug: add("), None, Some(", "), None, Some(")")]);
        assert!(debug.matches("debug: add(1, 2)", true, false));
        assert!(debug.matches("debug: add(, )", true, false));
        assert!(!debug.matches("debug: sub(1, 2)", true, false));
        assert!(debug.is_specific());
        assert!(!pat(&[None, Some(": "), None]).is_specific());
        // Holes alone explain nothing, even when the literal is somewhere in the pattern.
        let tail = pat(&[None, Some(" tools loaded")]);
        assert!(
            !tail.matches("xxxxxxxxxxxx", true, true),
            "a cut line of x's"
        );
        assert!(tail.matches("3 tools loaded", true, false));
    }

    #[test]
    fn a_cut_line_only_has_to_start_a_match() {
        let p = pat(&[Some("loaded "), None, Some(" tools from the registry")]);
        assert!(p.matches("loaded 3 tools fr", true, true));
        assert!(p.matches("loaded 3", true, true));
        assert!(!p.matches("loaded 3 tools fr", true, false));
        assert!(!p.matches("unloaded", true, true));
    }

    #[test]
    fn formats_become_holes() {
        let (p, n) = percent_format("loaded %d tools (%5.1f%%) for %(user)s");
        assert_eq!(n, 3);
        assert!(p.matches("loaded 3 tools (99.5%) for ann", true, false));
        let p = brace_format("{} of {total!r:>4} {{raw}}");
        assert!(p.matches("1 of   10 {raw}", true, false));
    }

    #[test]
    fn newlines_split_a_pattern_into_lines() {
        let p = pat(&[Some("a\nb "), None, Some("\n")]);
        let lines = p.lines();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], Pattern::lit("a"));
        assert_eq!(lines[1], pat(&[Some("b "), None]));
    }
}
