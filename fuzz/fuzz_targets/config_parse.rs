//! Random text as the guard's config file and as a client `mcpServers`/`servers` file (JSONC).
//! Invariants: nothing panics; JSONC stripping keeps every byte position (same length, same
//! lines) and leaves plain JSON untouched; every server imported has a non-empty program and
//! no unexpanded VS Code variable that the environment resolves.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_stdio_guard::settings::{client, file};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let stripped = client::strip_jsonc(text);
    assert_eq!(stripped.len(), text.len(), "JSONC stripping moved bytes");
    assert_eq!(
        stripped.bytes().filter(|b| *b == b'\n').count(),
        text.bytes().filter(|b| *b == b'\n').count(),
        "JSONC stripping moved lines"
    );
    if serde_json::from_str::<serde_json::Value>(text).is_ok() {
        assert_eq!(stripped, text, "JSONC stripping changed plain JSON");
    }

    let _ = file::parse(text, Path::new("/cfg"));
    for dir in ["/cfg", "/ws/.vscode"] {
        let env = |name: &str| (name == "HOME" || name == "TOKEN").then(|| format!("<{name}>"));
        if let Ok(servers) = client::parse_mcp_servers(text, Path::new(dir), &env) {
            for s in &servers.servers {
                assert!(
                    s.command.first().is_some_and(|p| !p.is_empty()),
                    "server {:?} has no program",
                    s.name
                );
                for arg in &s.command {
                    assert!(
                        !arg.contains("${env:TOKEN}"),
                        "{arg:?} kept a resolvable variable"
                    );
                }
            }
        }
    }
});
