//! The memo of `check`: the last report, with everything the check read to produce it
//! (see [`RecordingSource`]). A later check asked the same question, whose every
//! dependency is unchanged, returns that report without loading anything. It is an
//! optimisation only: a fresh clone has none, and the verdict is the same either way.
//!
//! One file per kind of source in `.evalock/cache/`: a line of JSON with the binary, the
//! question and the dependencies, then the report as `--format json` writes it. A file
//! that does not read back whole, or that another build of evalock wrote, is ignored.

use crate::report::Report;
use crate::source::{ContentIdentity, ContentSource, Dependency, RecordingSource};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where the memo lives, relative to the project root.
pub const CACHE_DIR: &str = ".evalock/cache";
/// A file changed this recently may still change within one timestamp tick (FAT has
/// 2 s), which its stat data would not show: a check that read one is not remembered.
const SETTLE_NS: i128 = 2_000_000_000;

/// The memo of one kind of source (`worktree` or `git`).
pub struct Memo {
    file: PathBuf,
    /// evalock's version and the executable's size and modification time: a rebuilt
    /// binary never trusts what another build judged.
    binary: String,
    started_ns: i128,
}

#[derive(Serialize, Deserialize)]
struct Header {
    binary: String,
    question: String,
    dependencies: Vec<Dependency>,
}

impl Memo {
    /// The memo of the project at `project_root`; `None` when the running binary cannot
    /// be identified (then nothing is remembered).
    pub fn open(project_root: &Path, kind: &str) -> Option<Memo> {
        let executable = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
        let modified = executable
            .modified()
            .ok()?
            .duration_since(UNIX_EPOCH)
            .ok()?;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
        Some(Memo {
            file: project_root
                .join(CACHE_DIR)
                .join(format!("check-{kind}.json")),
            binary: format!(
                "{} {} {}",
                env!("CARGO_PKG_VERSION"),
                executable.len(),
                modified.as_nanos()
            ),
            started_ns: i128::try_from(now.as_nanos()).ok()?,
        })
    }

    /// The remembered answer to `question`, when nothing it depends on changed.
    pub fn recall(&self, question: &str, source: &dyn ContentSource) -> Option<Report> {
        let text = std::fs::read_to_string(&self.file).ok()?;
        let (header, report) = text.split_once('\n')?;
        let header: Header = serde_json::from_str(header).ok()?;
        if header.binary != self.binary || header.question != question {
            return None;
        }
        let unchanged = header
            .dependencies
            .par_iter()
            .all(|dependency| dependency.holds(source));
        unchanged.then(|| crate::report::json::parse("memo", report.as_bytes()).ok())?
    }

    /// Remembers `report` as the answer to `question` with what `recording` saw, unless
    /// something cannot be verified later or changed too recently to be trusted. Failures
    /// to write are ignored: the memo is only an optimisation.
    pub fn remember(&self, question: &str, recording: &RecordingSource<'_>, report: &Report) {
        let Some(dependencies) = recording.dependencies() else {
            return;
        };
        let settled = dependencies.iter().all(|dependency| match dependency {
            Dependency::Content(
                _,
                Some(ContentIdentity::Stat {
                    modified_ns,
                    changed_ns,
                    ..
                }),
            ) => (*modified_ns).max(*changed_ns) < self.started_ns - SETTLE_NS,
            _ => true,
        });
        if !settled {
            return;
        }
        let header = Header {
            binary: self.binary.clone(),
            question: question.to_owned(),
            dependencies,
        };
        let Ok(mut text) = serde_json::to_string(&header) else {
            return;
        };
        text.push('\n');
        text.push_str(&crate::report::json::render(report));
        let _ = self.write(text.as_bytes());
    }

    fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        let directory = self.file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(directory)?;
        crate::source::atomic::ignore_state_folder(directory);
        let mut file = tempfile::NamedTempFile::new_in(directory)?;
        std::io::Write::write_all(&mut file, bytes)?;
        file.persist(&self.file).map_err(|error| error.error)?;
        Ok(())
    }
}
