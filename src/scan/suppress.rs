//! Inline suppressions, in one place.
//!
//! `# mcp-stdio-guard: ignore` (Python) or `// mcp-stdio-guard: ignore` (the other languages),
//! optionally narrowed to rules: `ignore[static-print-call, static-console-log]`. A marker at the
//! end of a line silences findings that start or end on that line; a marker alone on its line
//! silences the next line (the next-line form). Markers are read from comment nodes only, so the
//! same text inside a string silences nothing.

use super::lang::{Lang, comment_query};
use tree_sitter::Tree;

const MARKER: &str = "mcp-stdio-guard:";

/// One suppression: the lines it covers and the rules it names (empty: every rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppression {
    /// 0-based rows the marker applies to.
    pub rows: Vec<usize>,
    pub rules: Vec<String>,
}

impl Suppression {
    pub fn covers(&self, rule: &str, start_row: usize, end_row: usize) -> bool {
        (self.rows.contains(&start_row) || self.rows.contains(&end_row))
            && (self.rules.is_empty() || self.rules.iter().any(|r| r == rule))
    }
}

/// True when a file may contain a marker at all (a byte search, before any tree work).
pub fn may_have_markers(src: &[u8]) -> bool {
    memchr::memmem::find(src, MARKER.as_bytes()).is_some()
}

/// Parses the marker in a comment's text: `Some(rules)` when it is a suppression.
pub fn parse_marker(comment: &str) -> Option<Vec<String>> {
    let at = comment.find(MARKER)?;
    let rest = comment[at + MARKER.len()..].trim_start();
    let rest = rest
        .strip_prefix("ignore-next-line")
        .or_else(|| rest.strip_prefix("ignore"))?;
    let rest = rest.trim_start();
    if let Some(list) = rest.strip_prefix('[') {
        let end = list.find(']')?;
        let rules: Vec<String> = list[..end]
            .split(',')
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty())
            .collect();
        return Some(rules);
    }
    // `ignore` must end there (or be followed by the rest of the comment), not `ignored`.
    match rest.chars().next() {
        None => Some(Vec::new()),
        Some(c) if c.is_whitespace() || c == '*' || c == '-' || c == '#' => Some(Vec::new()),
        _ => None,
    }
}

/// Every suppression of a file, read from its comment nodes.
pub fn collect(lang: Lang, tree: &Tree, src: &[u8]) -> Vec<Suppression> {
    let mut out = Vec::new();
    for node in super::lang::captured(comment_query(lang), tree, src) {
        let text = super::lang::text(node, src);
        if !text.contains(MARKER) {
            continue;
        }
        let Some(rules) = parse_marker(text) else {
            continue;
        };
        let row = node.start_position().row;
        let line_start = src[..node.start_byte()]
            .iter()
            .rposition(|b| *b == b'\n')
            .map(|i| i + 1)
            .unwrap_or(0);
        let alone = src[line_start..node.start_byte()]
            .iter()
            .all(|b| b.is_ascii_whitespace());
        let next_line = text[text.find(MARKER).unwrap_or(0)..].contains("ignore-next-line");
        let mut rows = vec![node.end_position().row];
        if alone || next_line {
            rows.push(node.end_position().row + 1);
        }
        if !alone && !next_line {
            rows.push(row);
        }
        out.push(Suppression { rows, rules });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_parse() {
        assert_eq!(parse_marker("# mcp-stdio-guard: ignore"), Some(vec![]));
        assert_eq!(
            parse_marker("// mcp-stdio-guard: ignore[static-console-log]"),
            Some(vec!["static-console-log".to_string()])
        );
        assert_eq!(
            parse_marker("# mcp-stdio-guard: ignore[ a , b ] because"),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(parse_marker("# mcp-stdio-guard: ignored"), None);
        assert_eq!(parse_marker("# mcp-stdio-guard ignore"), None);
        assert_eq!(parse_marker("/* mcp-stdio-guard: ignore */"), Some(vec![]));
        assert_eq!(
            parse_marker("// mcp-stdio-guard: ignore-next-line[x]"),
            Some(vec!["x".to_string()])
        );
    }
}
