//! The project's own files: `evalock.toml` (what to guard and how) and `evalock.lock`
//! (what was frozen), each read, validated and, for the lock, rendered.

pub mod config;
pub mod lock;
