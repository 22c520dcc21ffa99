//! Running suites: the completer seam, grading, and comparison with baselines. I/O lives
//! here, at the edge; the logic it applies is in [`crate::grade`] and [`crate::checks`].

pub mod process;
