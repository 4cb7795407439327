//! Test support: README sections generated from the program's tables (the probe table, the
//! option and config-key tables), between `<!-- NAME:begin -->` and `<!-- NAME:end -->` markers.

/// Fails when the README's `name` section is not `want`; `UPDATE_GOLDEN=1` rewrites it.
pub(crate) fn check_section(name: &str, want: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = (
        format!("<!-- {name}:begin -->\n"),
        format!("<!-- {name}:end -->"),
    );
    let a = readme
        .find(&begin)
        .unwrap_or_else(|| panic!("README has no {begin:?} marker"))
        + begin.len();
    let b = readme
        .find(&end)
        .unwrap_or_else(|| panic!("README has no {end:?} marker"));
    if readme[a..b] != *want {
        if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
            std::fs::write(&path, format!("{}{want}{}", &readme[..a], &readme[b..])).unwrap();
        } else {
            panic!("README's {name} table is stale: UPDATE_GOLDEN=1 cargo test regenerates it");
        }
    }
}
