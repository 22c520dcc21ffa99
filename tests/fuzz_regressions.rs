//! Replays every saved fuzz input through the same checks the fuzz targets run
//! (fuzz/checks.rs): the seeds in fuzz/seeds/<target>/ and every crash ever found, kept
//! in tests/fuzz_regressions/<target>/. A crash fixed once stays fixed without nightly.

#[path = "../fuzz/checks.rs"]
mod checks;

use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for folder in [
        root.join("fuzz/seeds").join(target),
        root.join("tests/fuzz_regressions").join(target),
    ] {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        files.extend(
            entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.is_file()),
        );
    }
    files.sort();
    files
}

fn replay(target: &str, check: fn(&[u8])) {
    let files = inputs(target);
    assert!(
        !files.is_empty(),
        "no saved inputs for fuzz target `{target}`"
    );
    for file in files {
        let bytes = std::fs::read(&file).expect("read saved input");
        let outcome = std::panic::catch_unwind(|| check(&bytes));
        assert!(
            outcome.is_ok(),
            "fuzz target `{target}` fails on {}",
            file.display()
        );
    }
}

#[test]
fn mcp_inputs_replay_cleanly() {
    replay("mcp", checks::mcp);
}

#[test]
fn records_inputs_replay_cleanly() {
    replay("records", checks::records);
}

#[test]
fn case_file_inputs_replay_cleanly() {
    replay("case_file", checks::case_file);
}

#[test]
fn config_inputs_replay_cleanly() {
    replay("config", checks::config);
}

#[test]
fn lock_inputs_replay_cleanly() {
    replay("lock", checks::lock);
}

#[test]
fn skill_front_matter_inputs_replay_cleanly() {
    replay("skill_front_matter", checks::skill_front_matter);
}

#[test]
fn skill_manifest_inputs_replay_cleanly() {
    replay("skill_manifest", checks::skill_manifest);
}

#[test]
fn baseline_inputs_replay_cleanly() {
    replay("baseline", checks::baseline);
}

#[test]
fn results_inputs_replay_cleanly() {
    replay("results", checks::results);
}

#[test]
fn diff_inputs_replay_cleanly() {
    replay("diff", checks::diff);
}

#[test]
fn event_inputs_replay_cleanly() {
    replay("event", checks::event);
}

#[test]
fn jcs_inputs_replay_cleanly() {
    replay("jcs", checks::jcs);
}
