//! The guard's own input files (its config file, a client's `mcpServers` file): only regular
//! files are read, and only up to a size, so a FIFO named by mistake cannot hang the guard and a
//! device (`/dev/zero`) cannot exhaust its memory. Errors are one line.

use std::io::Read;
use std::path::Path;

/// The largest input file read (config files are a few KiB).
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// What a path that is not a regular file or a folder is, in words (`None` for those two).
pub fn special_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() || t.is_dir() {
        return None;
    }
    #[cfg(not(unix))]
    {
        Some("a device or special file")
    }
    #[cfg(unix)]
    {
        special_unix_kind(&t)
    }
}

#[cfg(unix)]
fn special_unix_kind(t: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    }
}

/// Reads a UTF-8 text file that must be a regular file of at most [`MAX_INPUT_BYTES`].
pub fn read_text(path: &Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(std::io::Error::other("it is a folder, not a file"));
    }
    if let Some(kind) = special_kind(&meta) {
        return Err(std::io::Error::other(format!(
            "it is {kind}, not a regular file"
        )));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::other(format!(
            "it is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

fn too_large() -> std::io::Error {
    std::io::Error::other(format!(
        "it is larger than {} MiB, too large for a config file",
        MAX_INPUT_BYTES >> 20
    ))
}

// FIFOs and devices: Unix.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read() {
        let err = |p: &str| read_text(Path::new(p)).unwrap_err().to_string();
        assert!(err("/dev/zero").contains("character device"));
        assert!(err("/").contains("folder"));
        assert!(err("/no/such/file").contains("No such file"));
        let dir = std::env::temp_dir().join(format!("guard-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        assert!(err(fifo.to_str().unwrap()).contains("FIFO"));
        let latin1 = dir.join("latin1.json");
        std::fs::write(&latin1, b"{\"a\": \"caf\xe9\"}").unwrap();
        assert!(err(latin1.to_str().unwrap()).contains("offset 10"));
        let ok = dir.join("ok.json");
        std::fs::write(&ok, "{}").unwrap();
        assert_eq!(read_text(&ok).unwrap(), "{}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
