//! Program lookup, the way the spawn will look for the program (`execvp` on Unix; on Windows,
//! `.exe` added to a bare name, the guard's folder, the system folders, PATH): a command that
//! cannot start is a usage error before anything runs, not a confusing spawn failure.

use std::ffi::{OsStr, OsString};
use std::path::Path;

/// Checks that the program can be executed, the way the spawn will look for it (`execvp` on
/// Unix; on Windows, `.exe` added to a bare name, the guard's folder, the system folders, PATH).
/// Errors are one line naming the program and the fix.
pub fn check_program(
    program: &OsStr,
    cwd: &Path,
    path_override: Option<&OsStr>,
) -> Result<(), String> {
    let shown = program.to_string_lossy();
    if program.is_empty() {
        return Err(
            "the server command is empty: pass it after `--`, e.g. `-- node server.js`".into(),
        );
    }
    if super::has_separator(program) {
        let full = cwd.join(program);
        return check_executable(&full)
            .map_err(|why| format!("cannot run the server command {shown}: {why}"));
    }
    let path = path_override
        .map(OsString::from)
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    let mut dirs: Vec<std::path::PathBuf> = Vec::new();
    if cfg!(windows) {
        dirs.extend(
            std::env::current_exe()
                .ok()
                .and_then(|exe| exe.parent().map(Path::to_path_buf)),
        );
        if let Some(root) = std::env::var_os("SystemRoot") {
            let root = std::path::PathBuf::from(root);
            dirs.extend([root.join("System32"), root]);
        }
    }
    let mut searched = vec![path];
    // Windows searches the server's PATH, then the guard's own.
    if cfg!(windows) && path_override.is_some() {
        searched.extend(std::env::var_os("PATH"));
    }
    for path in &searched {
        dirs.extend(std::env::split_paths(path).map(|dir| {
            if dir.as_os_str().is_empty() {
                cwd.to_path_buf()
            } else {
                cwd.join(dir)
            }
        }));
    }
    if dirs
        .iter()
        .any(|dir| check_executable(&dir.join(program)).is_ok())
    {
        return Ok(());
    }
    // Windows runs a batch file (`npx.cmd`) only when it is named with its extension.
    if cfg!(windows) && Path::new(program).extension().is_none() {
        for ext in ["cmd", "bat"] {
            let script = Path::new(program).with_extension(ext);
            if dirs.iter().any(|dir| dir.join(&script).is_file()) {
                return Err(format!(
                    "command not found: {shown} is the batch script {}, which Windows starts only through cmd: pass `-- cmd /c {shown} ...` (what MCP clients on Windows are configured with)",
                    script.display()
                ));
            }
        }
    }
    Err(format!(
        "command not found: {shown} is not on PATH; install it or pass its full path after `--`"
    ))
}

#[cfg(unix)]
fn check_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(format!("{} is a directory, not a program", path.display())),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => Err(format!(
            "{} is not executable; chmod +x it or run it through its interpreter (e.g. `-- node {}`)",
            path.display(),
            path.display()
        )),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("{} does not exist ({e})", path.display())),
    }
}

/// Windows: a file as named, or with `.exe` added when the name has no extension.
#[cfg(not(unix))]
fn check_executable(path: &Path) -> Result<(), String> {
    let mut candidates = vec![path.to_path_buf()];
    if path.extension().is_none() {
        candidates.push(path.with_extension("exe"));
    }
    for candidate in &candidates {
        match std::fs::metadata(candidate) {
            Ok(m) if m.is_dir() => {
                return Err(format!("{} is a directory, not a program", path.display()));
            }
            Ok(_) => return Ok(()),
            Err(_) => {}
        }
    }
    Err(format!("{} does not exist", path.display()))
}
