//! Git conflict markers left in a file after a merge: evalock.toml, evalock.lock, case
//! files and baselines all refuse them with the line of the first one.

/// The 1-based line of the first git conflict marker, if any.
pub fn conflict_marker_line(text: &str) -> Option<usize> {
    crate::text::split_lines(text)
        .position(is_conflict_marker)
        .map(|index| index + 1)
}

/// Whether a line (without its newline) is a git conflict marker.
pub fn is_conflict_marker(line: &str) -> bool {
    line.starts_with("<<<<<<< ") || line == "=======" || line.starts_with(">>>>>>> ")
}
