//! The one scratch folder of the integration tests: a fresh folder under the system's temporary
//! folder, named by the test and the process (and a counter, so one test may make several),
//! with helpers to write files, FIFOs and symlinks; removed when dropped unless the test failed
//! (then it is kept to look at).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "guard-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self, rel: impl AsRef<OsStr>) -> PathBuf {
        self.0.join(rel.as_ref())
    }

    /// Writes `bytes` to `rel` (folders created), returning the path.
    pub fn write(&self, rel: impl AsRef<OsStr>, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// [`Scratch::write`], returning the path as a string (for command lines).
    pub fn file(&self, rel: &str, text: &str) -> String {
        self.write(rel, text).display().to_string()
    }

    #[cfg(unix)]
    pub fn fifo(&self, rel: &str) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let ok = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mkfifo {}", path.display());
        path
    }

    #[cfg(unix)]
    pub fn symlink(&self, target: &str, rel: &str) -> PathBuf {
        let path = self.path(rel);
        std::os::unix::fs::symlink(target, &path).unwrap();
        path
    }

    pub fn dir(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
