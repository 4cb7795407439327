//! Source maps (revision 3), just enough to map a position in compiled JavaScript back to the
//! TypeScript (or other) source it came from: the `mappings` field's base64 VLQ segments, the
//! `sources` list and `sourceRoot`. A map is found the way debuggers find it: the file's last
//! `//# sourceMappingURL=` comment (a relative path, or an inline `data:` URL in base64), else
//! `<file>.map` beside it. Hand-written (about 150 lines) rather than a crate: the guard needs
//! one lookup, not generation, index maps or names, and a parser of untrusted input small
//! enough to read whole; its test vectors are the specification's examples.

use std::path::{Path, PathBuf};

/// A position in an original source, 0-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Original {
    pub source: PathBuf,
    pub line: u32,
    pub column: u32,
}

/// A mapping segment: generated column, source index, original line and column (0-based).
type Segment = (u32, u32, u32, u32);

/// One decoded map: per generated line, its segments.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    sources: Vec<PathBuf>,
    lines: Vec<Vec<Segment>>,
}

/// Maps larger than this are not read (a bundle's map can be huge; the scan skips big files too).
const MAX_MAP_BYTES: u64 = 16 * 1024 * 1024;

impl SourceMap {
    /// The map of a compiled file, if it has one that parses. Source paths are resolved against
    /// the map's folder and `sourceRoot`.
    pub fn for_file(js: &Path, text: &str) -> Option<SourceMap> {
        let url = mapping_url(text);
        let dir = js.parent().unwrap_or(Path::new(""));
        let (json, base) = match url {
            Some(u) if u.starts_with("data:") => (decode_data_url(u)?, dir.to_path_buf()),
            Some(u) => {
                let path = dir.join(percent_decode(u.split(['?', '#']).next()?));
                (read_small(&path)?, path.parent()?.to_path_buf())
            }
            None => {
                let mut name = js.file_name()?.to_os_string();
                name.push(".map");
                (read_small(&dir.join(name))?, dir.to_path_buf())
            }
        };
        SourceMap::parse(&json, &base)
    }

    /// Parses a map's JSON; `base` is the folder relative sources start from.
    pub fn parse(json: &str, base: &Path) -> Option<SourceMap> {
        let v: serde_json::Value = serde_json::from_str(json).ok()?;
        if v.get("version")?.as_u64()? != 3 {
            return None;
        }
        let root = v.get("sourceRoot").and_then(|r| r.as_str()).unwrap_or("");
        let sources = v
            .get("sources")?
            .as_array()?
            .iter()
            .map(|s| {
                let s = s.as_str().unwrap_or("");
                let s = s.strip_prefix("file://").unwrap_or(s);
                let joined = if root.is_empty() {
                    PathBuf::from(s)
                } else {
                    Path::new(root.strip_prefix("file://").unwrap_or(root)).join(s)
                };
                crate::report::locate::normalize(&base.join(joined))
            })
            .collect();
        let lines = decode_mappings(v.get("mappings")?.as_str()?)?;
        Some(SourceMap { sources, lines })
    }

    /// The original position of a generated one (0-based line and column): the last segment of
    /// that line starting at or before the column, else the line's first segment.
    pub fn lookup(&self, line: u32, column: u32) -> Option<Original> {
        let segments = self.lines.get(line as usize)?;
        let seg = segments
            .iter()
            .rev()
            .find(|s| s.0 <= column)
            .or_else(|| segments.first())?;
        Some(Original {
            source: self.sources.get(seg.1 as usize)?.clone(),
            line: seg.2,
            column: seg.3,
        })
    }
}

/// The URL of the last `//# sourceMappingURL=` (or the older `//@`) comment.
fn mapping_url(text: &str) -> Option<&str> {
    text.lines().rev().take(20).find_map(|l| {
        let l = l.trim();
        let rest = l
            .strip_prefix("//# sourceMappingURL=")
            .or_else(|| l.strip_prefix("//@ sourceMappingURL="))?;
        Some(rest.trim())
    })
}

fn read_small(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_MAP_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (
                (bytes[i + 1] as char).to_digit(16),
                (bytes[i + 2] as char).to_digit(16),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `data:application/json;base64,...` (or with a charset) → the JSON text.
fn decode_data_url(url: &str) -> Option<String> {
    let (head, data) = url.split_once(',')?;
    if head.ends_with(";base64") {
        String::from_utf8(base64(data)?).ok()
    } else {
        Some(percent_decode(data))
    }
}

fn base64_digit(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    } as u32)
}

fn base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in text.trim_end_matches('=').as_bytes() {
        if c.is_ascii_whitespace() {
            continue;
        }
        acc = (acc << 6) | base64_digit(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Decodes `mappings`: `;` separates generated lines, `,` segments; each segment is 1, 4 or 5
/// base64 VLQ numbers, every one relative to the previous segment's (the generated column only
/// within its line). Segments without a source are dropped.
fn decode_mappings(text: &str) -> Option<Vec<Vec<Segment>>> {
    let mut lines = Vec::new();
    let (mut source, mut line, mut column) = (0i64, 0i64, 0i64);
    for group in text.split(';') {
        let mut segments = Vec::new();
        let mut gen_col = 0i64;
        for seg in group.split(',').filter(|s| !s.is_empty()) {
            let values = vlq(seg)?;
            gen_col += values[0];
            if values.len() >= 4 {
                source += values[1];
                line += values[2];
                column += values[3];
                if gen_col < 0 || source < 0 || line < 0 || column < 0 {
                    return None;
                }
                segments.push((gen_col as u32, source as u32, line as u32, column as u32));
            }
        }
        lines.push(segments);
    }
    Some(lines)
}

/// The base64 VLQ numbers of one segment (the sign in the lowest bit, 5 data bits a digit,
/// bit 6 to continue).
fn vlq(seg: &str) -> Option<Vec<i64>> {
    let mut out = Vec::with_capacity(5);
    let (mut value, mut shift) = (0i64, 0u32);
    for &c in seg.as_bytes() {
        let d = i64::from(base64_digit(c)?);
        if shift > 60 {
            return None;
        }
        value |= (d & 31) << shift;
        if d & 32 != 0 {
            shift += 5;
            continue;
        }
        let negative = value & 1 == 1;
        let magnitude = value >> 1;
        out.push(if negative { -magnitude } else { magnitude });
        value = 0;
        shift = 0;
    }
    (shift == 0 && !out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vlq_values_decode() {
        // The specification's and the common implementations' test vectors.
        assert_eq!(vlq("A"), Some(vec![0]));
        assert_eq!(vlq("C"), Some(vec![1]));
        assert_eq!(vlq("D"), Some(vec![-1]));
        assert_eq!(vlq("gB"), Some(vec![16]));
        assert_eq!(vlq("AAgBC"), Some(vec![0, 0, 16, 1]));
        assert_eq!(vlq("2HwcqxB"), Some(vec![123, 456, 789]));
        assert_eq!(vlq("g"), None, "a continuation bit with nothing after it");
    }

    #[test]
    fn positions_map_back_to_their_source() {
        let json = r#"{"version":3,"file":"out.js","sourceRoot":"../src","sources":["a.ts","b.ts"],
            "names":[],"mappings":"AAAA;;AACA,IAAM;ACAA,KAAK"}"#;
        let map = SourceMap::parse(json, Path::new("/p/dist")).unwrap();
        let at = |l, c| map.lookup(l, c).map(|o| (o.source, o.line, o.column));
        assert_eq!(at(0, 0), Some((PathBuf::from("/p/src/a.ts"), 0, 0)));
        assert_eq!(at(1, 0), None, "an empty generated line");
        assert_eq!(at(2, 0), Some((PathBuf::from("/p/src/a.ts"), 1, 0)));
        assert_eq!(at(2, 7), Some((PathBuf::from("/p/src/a.ts"), 1, 6)));
        // Source columns carry over from line to line: 6 + 5.
        assert_eq!(at(3, 9), Some((PathBuf::from("/p/src/b.ts"), 1, 11)));
        assert!(
            SourceMap::parse(
                r#"{"version":2,"sources":[],"mappings":""}"#,
                Path::new("/")
            )
            .is_none()
        );
    }

    #[test]
    fn inline_maps_and_comments_are_found() {
        let json = r#"{"version":3,"sources":["x.ts"],"mappings":"AAAA"}"#;
        let mut b64 = String::new();
        // A tiny encoder for the test only.
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for chunk in json.as_bytes().chunks(3) {
            let n =
                chunk.iter().fold(0u32, |a, &b| (a << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
            for k in 0..=chunk.len() {
                b64.push(A[((n >> (18 - 6 * k)) & 63) as usize] as char);
            }
        }
        let text = format!("x();\n//# sourceMappingURL=data:application/json;base64,{b64}\n");
        let map = SourceMap::for_file(Path::new("/p/out.js"), &text).unwrap();
        assert_eq!(map.lookup(0, 0).unwrap().source, PathBuf::from("/p/x.ts"));
        assert_eq!(
            mapping_url("a\n//# sourceMappingURL=out.js.map\n"),
            Some("out.js.map")
        );
    }
}
