//! Errors the library returns. Each knows which documented exit code it maps to.

/// The documented exit codes.
pub mod exit_code {
    pub const CLEAN: i32 = 0;
    pub const FAILURES: i32 = 1;
    pub const REFUSED: i32 = 2;
    pub const MOVED: i32 = 3;
    pub const USAGE: i32 = 64;
    pub const MALFORMED: i32 = 65;
    pub const INTERNAL: i32 = 70;
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Input evalock cannot read as its own format (config, lock, baselines, results).
    #[error("{location}: {message}")]
    Malformed { location: String, message: String },

    #[error("invalid path `{path}`: {reason}")]
    InvalidPath { path: String, reason: String },

    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },

    #[error("git: {0}")]
    Git(String),

    #[error("cannot canonicalize JSON: {0}")]
    Canonicalize(String),

    /// The command was used in a way it does not support.
    #[error("{0}")]
    Usage(String),

    /// A write that freezes state was attempted where it is never allowed (CI).
    #[error("{0}")]
    Refused(String),

    #[error("{0}")]
    Internal(String),
}

impl Error {
    pub fn malformed(location: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Malformed {
            location: location.into(),
            message: message.into(),
        }
    }

    /// A JSON file evalock reads that serde_json refused in `text`: at `label:line:column`
    /// (1-based, the column in characters), with the message once, without serde_json's
    /// own " at line L column C".
    pub fn malformed_json(label: &str, text: &[u8], error: &serde_json::Error) -> Self {
        let message = error.to_string();
        let message = match message.rfind(" at line ") {
            Some(index) => &message[..index],
            None => &message,
        };
        let (line, column) = crate::text::json_error_position(text, error);
        Error::malformed(format!("{label}:{line}:{column}"), message)
    }

    pub fn io(path: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub fn git(message: impl std::fmt::Display) -> Self {
        Error::Git(message.to_string())
    }

    /// The documented exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Malformed { .. } | Error::InvalidPath { .. } => exit_code::MALFORMED,
            Error::Usage(_) => exit_code::USAGE,
            Error::Refused(_) => exit_code::REFUSED,
            Error::Io { source, .. } => io_exit_code(source),
            Error::Git(_) | Error::Canonicalize(_) | Error::Internal(_) => exit_code::INTERNAL,
        }
    }
}

/// A path the user named that is not there is a usage error; one that is there but cannot
/// be used as a file (a directory, no permission, bytes that are not text) is bad input.
/// A symlink that loops back on itself is bad input too (std has no stable kind for it
/// yet, hence the errno). Only the rest (disk full, interrupted, …) is left to "internal".
fn io_exit_code(error: &std::io::Error) -> i32 {
    use std::io::ErrorKind;
    if rustix::io::Errno::from_io_error(error) == Some(rustix::io::Errno::LOOP) {
        return exit_code::MALFORMED;
    }
    match error.kind() {
        ErrorKind::NotFound => exit_code::USAGE,
        ErrorKind::IsADirectory
        | ErrorKind::NotADirectory
        | ErrorKind::PermissionDenied
        | ErrorKind::AlreadyExists
        | ErrorKind::ReadOnlyFilesystem
        | ErrorKind::InvalidData
        | ErrorKind::InvalidFilename => exit_code::MALFORMED,
        _ => exit_code::INTERNAL,
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
