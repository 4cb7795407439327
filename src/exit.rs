//! The process exit codes, in one place.

/// What the guard's exit status means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// No error-level finding (warnings and notes allowed).
    Clean = 0,
    /// At least one error-level finding.
    Findings = 1,
    /// Bad arguments, a bad config file, a missing path: nothing was run.
    Usage = 2,
    /// The guard itself failed.
    Internal = 3,
}

impl Exit {
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// A failure of the tool itself (never a finding about the server): one line for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub exit: Exit,
    /// One line: the problem, then the fix.
    pub message: String,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            exit: Exit::Usage,
            message: message.into(),
        }
    }

    pub fn internal(message: impl Into<String>) -> Failure {
        Failure {
            exit: Exit::Internal,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}
