//! Random text as the guard's config file and as a client `mcpServers`/`servers` file (JSONC).
//! Invariants: nothing panics; the JSONC reader reads plain JSON as serde_json does; every server
//! imported has a non-empty program and no unexpanded VS Code variable that the environment
//! resolves.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_stdio_guard::settings::{client, file};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // JSONC is a superset of JSON: plain JSON reads the same either way.
    if let Ok(plain) = serde_json::from_str::<serde_json::Value>(text) {
        if let Ok(jsonc) = client::parse_jsonc(text) {
            assert_eq!(jsonc, plain, "JSONC read plain JSON differently");
        }
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
