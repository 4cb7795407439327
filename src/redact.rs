//! Secret hygiene: values that must never reach any output.
//!
//! Three sources of secrets: values of environment variables the user passes (`--env`, config
//! `env`), argv entries that look like credentials (`--token x`, `API_KEY=...`, URLs with a
//! password, well-known token shapes), and any later occurrence of those values in free text
//! (stderr excerpts, messages). Redaction is idempotent: redacting twice changes nothing more.

pub const REDACTED: &str = "<redacted>";

/// Names that mark a value as secret, matched case-insensitively as a substring of a flag or
/// variable name (after removing `-` and `_`).
const SECRET_NAME_PARTS: [&str; 14] = [
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "apikey",
    "accesskey",
    "privatekey",
    "auth",
    "credential",
    "bearer",
    "session",
    "cookie",
    "signature",
];

/// Prefixes of well-known credential formats.
const TOKEN_PREFIXES: [&str; 12] = [
    "sk-",
    "sk_live_",
    "rk_live_",
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "github_pat_",
    "xoxb-",
    "xoxp-",
    "glpat-",
    "AKIA",
];

/// True when a flag or variable name suggests its value is a secret.
pub fn is_secret_name(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_NAME_PARTS.iter().any(|part| folded.contains(part)) || folded.ends_with("key")
}

/// True when a bare value looks like a credential by its shape.
pub fn looks_like_token(value: &str) -> bool {
    if TOKEN_PREFIXES
        .iter()
        .any(|p| value.starts_with(p) && value.len() >= p.len() + 8)
    {
        return true;
    }
    // A JWT: three base64url segments, the first starting with `eyJ`.
    if value.starts_with("eyJ") && value.split('.').count() == 3 && value.len() > 30 {
        return true;
    }
    false
}

/// Redacts credentials in a URL (`scheme://user:pass@host` → `scheme://<redacted>@host`) and in
/// query parameters with secret names. Returns `None` when nothing changed.
fn redact_url(value: &str) -> Option<String> {
    let scheme_end = value.find("://")?;
    let after = &value[scheme_end + 3..];
    let authority_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let mut out = value.to_string();
    let mut changed = false;
    if let Some(at) = after[..authority_end].rfind('@')
        && after[..at] != *REDACTED
    {
        out = format!("{}{}{}", &value[..scheme_end + 3], REDACTED, &after[at..]);
        changed = true;
    }
    if let Some(q) = out.find('?') {
        let (base, query) = out.split_at(q + 1);
        let mut parts = Vec::new();
        for pair in query.split('&') {
            match pair.split_once('=') {
                Some((k, v)) if is_secret_name(k) && v != REDACTED => {
                    parts.push(format!("{k}={REDACTED}"));
                    changed = true;
                }
                _ => parts.push(pair.to_string()),
            }
        }
        out = format!("{base}{}", parts.join("&"));
    }
    changed.then_some(out)
}

/// Redacts a command line: values of secret-named flags (`--token x`, `--api-key=x`), `NAME=value`
/// assignments with secret names, credentials in URLs, and token-shaped values.
pub fn argv(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut redact_next = false;
    for arg in args {
        if redact_next {
            redact_next = false;
            if !arg.starts_with('-') {
                out.push(REDACTED.to_string());
                continue;
            }
        }
        if let Some(flag) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) {
            if let Some((name, value)) = flag.split_once('=') {
                if is_secret_name(name) && value != REDACTED {
                    out.push(format!(
                        "{}={REDACTED}",
                        &arg[..arg.len() - value.len() - 1]
                    ));
                    continue;
                }
            } else if is_secret_name(flag) {
                redact_next = true;
                out.push(arg.clone());
                continue;
            }
        }
        out.push(redact_value(arg));
    }
    out
}

/// Redacts one value that is not a flag: `NAME=value`, URLs, token shapes.
fn redact_value(arg: &str) -> String {
    if let Some((name, value)) = arg.split_once('=') {
        let is_name =
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if is_name && is_secret_name(name) && value != REDACTED {
            return format!("{name}={REDACTED}");
        }
    }
    if let Some(url) = redact_url(arg) {
        return url;
    }
    if looks_like_token(arg) {
        return REDACTED.to_string();
    }
    arg.to_string()
}

/// Scrubs known secret values out of free text (stderr excerpts, messages, evidence).
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

/// Values shorter than this are not scrubbed from free text: they would match everywhere.
const MIN_SECRET_LEN: usize = 4;

impl Redactor {
    pub fn new() -> Redactor {
        Redactor::default()
    }

    /// Adds a secret value (an env value, a redacted argv entry).
    pub fn add(&mut self, value: &str) {
        if value.len() >= MIN_SECRET_LEN
            && value != REDACTED
            && !self.secrets.iter().any(|s| s == value)
        {
            self.secrets.push(value.to_string());
            // Longest first, so a secret containing another is replaced whole.
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// Adds the secrets a command line carries (what [`argv`] would redact).
    pub fn add_argv(&mut self, args: &[String]) {
        let redacted = argv(args);
        for (orig, red) in args.iter().zip(&redacted) {
            if orig != red {
                // Whatever differs: the value after `=`, the URL credentials, or the whole arg.
                match orig.split_once('=') {
                    Some((_, v)) if red.ends_with(REDACTED) && !orig.contains("://") => self.add(v),
                    _ if orig.contains("://") => {
                        if let Some(creds) = url_credentials(orig) {
                            self.add(&creds);
                        }
                        if let Some(q) = orig.split_once('?') {
                            for pair in q.1.split('&') {
                                if let Some((k, v)) = pair.split_once('=')
                                    && is_secret_name(k)
                                {
                                    self.add(v);
                                }
                            }
                        }
                    }
                    _ => self.add(orig),
                }
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// Replaces every known secret in `text`: each stretch of text covered by occurrences of
    /// secrets (overlapping ones merge) becomes one [`REDACTED`] marker. A marker next to text
    /// can spell a secret anew (a secret such as `d>ab`, or a piece of the marker itself), so
    /// this repeats until no secret occurs outside a marker; a stretch that touches a marker
    /// swallows it whole, so markers never break apart and each round shrinks the text outside
    /// them. Hence idempotent, and no secret survives except as part of a marker. The start of a
    /// secret that a shortened excerpt cut off (a prefix of at least [`MIN_SECRET_LEN`] bytes
    /// right before `...`, `…` or the end of the text) counts as an occurrence: excerpts are
    /// often shortened before they are scrubbed.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        loop {
            let stretches = self.stretches(&out);
            if stretches.is_empty() {
                return out;
            }
            let mut next = String::with_capacity(out.len());
            let mut at = 0;
            for r in stretches {
                next.push_str(&out[at..r.start]);
                next.push_str(REDACTED);
                at = r.end;
            }
            next.push_str(&out[at..]);
            out = next;
        }
    }

    /// The sorted, merged byte ranges of `text` to replace: every occurrence of a secret that
    /// is not inside a marker, widened to the whole of any marker it touches.
    fn stretches(&self, text: &str) -> Vec<std::ops::Range<usize>> {
        if self.secrets.is_empty() {
            return Vec::new();
        }
        // The marker has no border (`<` only starts it), so its occurrences never overlap.
        let markers: Vec<std::ops::Range<usize>> = text
            .match_indices(REDACTED)
            .map(|(i, m)| i..i + m.len())
            .collect();
        // The marker holding byte `i`, if any (markers are sorted and disjoint).
        let marker_at = |i: usize| {
            let k = markers.partition_point(|m| m.start <= i);
            markers[..k].last().filter(|m| i < m.end)
        };
        // An occurrence inside a marker is none; one touching a marker swallows it whole.
        let widen = |start: usize, end: usize| {
            let first = marker_at(start);
            if first.is_some_and(|m| end <= m.end) {
                return None;
            }
            Some(first.map_or(start, |m| m.start)..marker_at(end - 1).map_or(end, |m| m.end))
        };
        let mut hits: Vec<std::ops::Range<usize>> = Vec::new();
        for s in &self.secrets {
            let finder = memchr::memmem::Finder::new(s.as_bytes());
            let mut from = 0;
            // Every occurrence, overlapping ones included.
            while let Some(p) = finder.find(&text.as_bytes()[from..]) {
                let (start, end) = (from + p, from + p + s.len());
                from = start + text[start..].chars().next().map_or(1, char::len_utf8);
                hits.extend(widen(start, end));
            }
        }
        // Secrets cut short: the longest prefix of any secret that ends at a cut.
        let mut cuts: Vec<usize> = text
            .match_indices("...")
            .chain(text.match_indices('…'))
            .map(|(i, _)| i)
            .collect();
        cuts.push(text.len());
        cuts.sort_unstable();
        cuts.dedup();
        for cut in cuts {
            let head = &text[..cut];
            let longest = self
                .secrets
                .iter()
                .filter_map(|s| {
                    (MIN_SECRET_LEN..s.len())
                        .rev()
                        .filter(|&k| s.is_char_boundary(k))
                        .find(|&k| head.ends_with(&s[..k]))
                })
                .max();
            if let Some(k) = longest {
                hits.extend(widen(cut - k, cut));
            }
        }
        hits.sort_by_key(|r| r.start);
        let mut merged: Vec<std::ops::Range<usize>> = Vec::new();
        for r in hits {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        merged
    }

    /// Scrubs every string inside a JSON value.
    pub fn scrub_json(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => {
                let scrubbed = self.scrub(s);
                if scrubbed != *s {
                    *s = scrubbed;
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.scrub_json(v)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| self.scrub_json(v)),
            _ => {}
        }
    }
}

fn url_credentials(value: &str) -> Option<String> {
    let after = &value[value.find("://")? + 3..];
    let authority_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let at = after[..authority_end].rfind('@')?;
    Some(after[..at].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_cut_short_by_an_excerpt_is_still_redacted() {
        let mut r = Redactor::new();
        r.add("cnry-argv-kv-9a8b7c");
        assert_eq!(r.scrub("API_KEY=cnry-argv-..."), "API_KEY=<redacted>...");
        assert_eq!(r.scrub("x cnry-argv-kv…; y"), "x <redacted>…; y");
        assert_eq!(r.scrub("tail cnry-a"), "tail <redacted>");
        // Too short to tell from ordinary text, and not at a cut: kept.
        assert_eq!(r.scrub("cnr... cnry-argv later"), "cnr... cnry-argv later");
        let once = r.scrub("a cnry-argv-kv-9a8b7c b cnry-arg...");
        assert_eq!(r.scrub(&once), once, "idempotent");
    }

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn redacts_secret_flags_assignments_urls_and_tokens() {
        let got = argv(&v(&[
            "node",
            "server.js",
            "--token",
            "abc123",
            "--api-key=xyz",
            "API_KEY=k1",
            "https://user:pw@example.test/path?access_token=t&x=1",
            "ghp_0123456789abcdef",
            "--verbose",
            "plain",
        ]));
        assert_eq!(
            got,
            v(&[
                "node",
                "server.js",
                "--token",
                "<redacted>",
                "--api-key=<redacted>",
                "API_KEY=<redacted>",
                "https://<redacted>@example.test/path?access_token=<redacted>&x=1",
                "<redacted>",
                "--verbose",
                "plain",
            ])
        );
    }

    #[test]
    fn redaction_is_idempotent() {
        let once = argv(&v(&[
            "--password",
            "pw",
            "TOKEN=t",
            "https://a:b@h/?token=x",
        ]));
        assert_eq!(argv(&once), once);
    }

    #[test]
    fn a_flag_after_a_secret_flag_is_not_swallowed() {
        assert_eq!(
            argv(&v(&["--token", "--verbose"])),
            v(&["--token", "--verbose"])
        );
    }

    #[test]
    fn redactor_scrubs_free_text() {
        let mut r = Redactor::new();
        r.add("s3cr3t-value");
        r.add_argv(&v(&["--token", "tok-12345", "https://u:pass1234@h/"]));
        let text = "using s3cr3t-value and tok-12345 at https://u:pass1234@h/";
        let scrubbed = r.scrub(text);
        assert!(!scrubbed.contains("s3cr3t-value"));
        assert!(!scrubbed.contains("tok-12345"));
        assert!(!scrubbed.contains("pass1234"));
        assert_eq!(r.scrub(&scrubbed), scrubbed);
    }
}
