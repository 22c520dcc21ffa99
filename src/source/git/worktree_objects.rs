//! Which git objects the working tree's files hold, as the index vouches for them: a file
//! whose stat data matches its index entry, and that was not written in the same instant
//! as the index, holds the entry's object. This is how `git status` and `git diff` tell an
//! unchanged file without reading it; a check with a base uses it to parse only the base's
//! case files whose objects differ from the working tree's.

use gix::bstr::ByteSlice;
use gix::index::entry::{stat, Flags, Mode, Stage, Stat};
use gix::ObjectId;
use std::path::Path;

/// The index of the repository around a project, for its working-tree files.
pub struct WorktreeObjects {
    index: gix::index::File,
    /// The project root relative to the work tree, `/`-separated, `""` at the top.
    prefix: String,
}

/// Every stat field that may tell a change, nanoseconds included: a file that git's own
/// settings would take as unchanged but these do not is only read once more.
const STRICT: stat::Options = stat::Options {
    trust_ctime: true,
    check_stat: true,
    use_nsec: true,
    use_stdev: false,
};

impl WorktreeObjects {
    /// The index around `project_root`; `None` outside a repository or when the index
    /// cannot be read (then no file is vouched for).
    pub fn open(project_root: &Path) -> Option<WorktreeObjects> {
        let git = super::GitRepo::discover(project_root).ok()?;
        let repo = git.local();
        let options = gix::index::decode::Options::default();
        let index =
            gix::index::File::at(super::index_path(&repo), repo.object_hash(), false, options)
                .ok()?;
        Some(WorktreeObjects {
            index,
            prefix: git.prefix,
        })
    }

    /// The object the project-relative file `path` (at `absolute` on disk) holds, when its
    /// index entry vouches for it.
    pub fn object_id(&self, path: &str, absolute: &Path) -> Option<ObjectId> {
        let repo_path = match self.prefix.is_empty() {
            true => path.to_owned(),
            false => format!("{}/{path}", self.prefix),
        };
        let entry = self
            .index
            .entry_by_path_and_stage(repo_path.as_bytes().as_bstr(), Stage::Unconflicted)?;
        let tracked_file = matches!(entry.mode, Mode::FILE | Mode::FILE_EXECUTABLE)
            && !entry
                .flags
                .intersects(Flags::INTENT_TO_ADD | Flags::SKIP_WORKTREE);
        if !tracked_file || entry.stat.is_racy(self.index.timestamp(), STRICT) {
            return None;
        }
        let metadata = gix::index::fs::Metadata::from_path_no_follow(absolute).ok()?;
        let on_disk = Stat::from_fs(&metadata).ok()?;
        entry.stat.matches(&on_disk, STRICT).then_some(entry.id)
    }
}
