//! Memos of earlier answers in `.evalock/cache/`: an answer is reused when the same
//! question is asked again and everything it was worked out from is unchanged (see
//! [`RecordingSource`]). A memo is an optimisation only: a fresh clone has none, and
//! the answer is the same either way.
//!
//! One file per memo: a line of JSON with the binary, the question and the dependencies,
//! then the answer's text. A file that does not read back whole, or that another build
//! of evalock wrote, is ignored.

use crate::source::{ContentIdentity, ContentSource, Dependency, RecordingSource};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where memos live, relative to the project root.
pub const CACHE_DIR: &str = ".evalock/cache";
/// A file changed this recently may still change within one timestamp tick (FAT has
/// 2 s), which its stat data would not show: an answer that read one is not remembered.
const SETTLE_NS: i128 = 2_000_000_000;

/// One memo file, holding the last answer to one kind of question.
pub struct Memo {
    file: PathBuf,
    /// evalock's version and the executable's size and modification time: a rebuilt
    /// binary never trusts what another build worked out.
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
    /// The memo `name` of the project at `project_root`; `None` when the running binary
    /// cannot be identified (then nothing is remembered).
    pub fn open(project_root: &Path, name: &str) -> Option<Memo> {
        let executable = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
        let modified = executable
            .modified()
            .ok()?
            .duration_since(UNIX_EPOCH)
            .ok()?;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
        // The folder is made before the check reads anything: made when the memo is
        // written, it would change the project root after the walk stamped it, and the
        // memo's stamps would be stale from the start (see `Stamp`).
        let directory = project_root.join(CACHE_DIR);
        if std::fs::create_dir_all(&directory).is_ok() {
            crate::source::atomic::ignore_state_folder(&directory);
        }
        Some(Memo {
            file: directory.join(format!("{name}.json")),
            binary: format!(
                "{} {} {}",
                env!("CARGO_PKG_VERSION"),
                executable.len(),
                modified.as_nanos()
            ),
            started_ns: i128::try_from(now.as_nanos()).ok()?,
        })
    }

    /// The remembered answer to `question`, when nothing it depends on changed in `source`.
    pub fn recall(&self, question: &str, source: &dyn ContentSource) -> Option<String> {
        let (dependencies, answer) = self.read(question)?;
        let unchanged = crate::source::all_hold(&dependencies, source);
        unchanged.then_some(answer)
    }

    /// The remembered answer to a question that names everything its answer depends on
    /// (such as the object id of the file it was worked out from).
    pub fn recall_answer(&self, question: &str) -> Option<String> {
        let (dependencies, answer) = self.read(question)?;
        dependencies.is_empty().then_some(answer)
    }

    fn read(&self, question: &str) -> Option<(Vec<Dependency>, String)> {
        let text = std::fs::read_to_string(&self.file).ok()?;
        let (header, answer) = text.split_once('\n')?;
        let header: Header = serde_json::from_str(header).ok()?;
        if header.binary != self.binary || header.question != question {
            return None;
        }
        Some((header.dependencies, answer.to_owned()))
    }

    /// Remembers `answer` to `question` with what `recording` saw, unless something
    /// cannot be verified later or changed too recently to be trusted. Failures to write
    /// are ignored: a memo is only an optimisation.
    pub fn remember(&self, question: &str, recording: &RecordingSource<'_>, answer: &str) {
        let Some(mut dependencies) = recording.dependencies() else {
            return;
        };
        for dependency in &mut dependencies {
            dependency.drop_unsettled_stamps(self.started_ns - SETTLE_NS);
        }
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
        if settled {
            self.write(question, dependencies, answer);
        }
    }

    /// Remembers `answer` to a question that names everything it depends on.
    pub fn remember_answer(&self, question: &str, answer: &str) {
        self.write(question, Vec::new(), answer);
    }

    fn write(&self, question: &str, dependencies: Vec<Dependency>, answer: &str) {
        let header = Header {
            binary: self.binary.clone(),
            question: question.to_owned(),
            dependencies,
        };
        let _ = self.write_file(&header, answer);
    }

    /// Written straight to the file: the header of a check of 20,000 files is megabytes.
    fn write_file(&self, header: &Header, answer: &str) -> std::io::Result<()> {
        use std::io::Write as _;
        let directory = self.file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(directory)?;
        crate::source::atomic::ignore_state_folder(directory);
        let file = tempfile::NamedTempFile::new_in(directory)?;
        let mut writer = std::io::BufWriter::new(file);
        serde_json::to_writer(&mut writer, header)?;
        writer.write_all(b"\n")?;
        writer.write_all(answer.as_bytes())?;
        let file = writer.into_inner().map_err(|error| error.into_error())?;
        file.persist(&self.file).map_err(|error| error.error)?;
        Ok(())
    }
}
