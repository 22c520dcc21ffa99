//! Objects in the repository's packs, read with a few small reads of the pack files
//! instead of through the mapping the object database reads packs with.
//!
//! - **Sizes.** The index vouches for a working-tree file only when its size is its blob's
//!   (see [`super::StagedIndex::vouched_blob`]), which a check asks for every case file.
//!   Read through a mapping, each such look brings in the pages around the object as well
//!   (the kernel maps a whole neighbourhood on each fault), and counts them in the
//!   process's memory: about 22 MB for the 400 case files of a freshly cloned
//!   200,000-case project. A read of the object's first bytes costs nothing of the kind.
//! - **Delta chains.** An object stored as a chain of deltas is read as the chain's deltas,
//!   folded into one, and where its root lies (see [`super::object_stream`]).
//!
//! Only the packs of the repository's own object directory are looked in; an object
//! elsewhere (loose, or in an alternate's pack) is left to the caller.

use super::delta_ops::{delta_size, Delta};
use super::inflating::Inflating;
use gix::odb::pack;
use pack::data::entry::Header;
use std::fs::File;
use std::path::Path;

/// The indexes of the repository's packs, each with its pack file open for reading.
pub(super) struct Packs {
    packs: Vec<(pack::index::File, File)>,
}

/// An entry header is at most 10 bytes for its type and size, then 10 for an offset
/// delta's base or 20 (32 with SHA-256) for a reference delta's base id.
const ENTRY_HEAD: usize = 64;

/// Enough of a delta's compressed start to hold its two sizes, whatever its block
/// header: a dynamic Huffman header takes at most a few hundred bytes.
const DELTA_HEAD: usize = 4096;

/// The largest delta a chain may hold: a delta that large is no longer a small edit of its
/// base, and saves little memory over the object itself.
const MAX_DELTA: usize = 1 << 22;

/// The longest chain followed (git's `pack.depth` is 50 unless set otherwise), and the
/// most bytes its deltas may come to.
const MAX_DEPTH: usize = 64;
const MAX_CHAIN_BYTES: usize = 1 << 24;

/// An object as one delta of the root of its chain.
pub(super) struct Chain {
    pub root: Root,
    pub delta: Delta,
}

/// Where a chain ends: a whole object, or the object the caller has elsewhere.
pub(super) struct Root {
    /// The pack holding it.
    pack: usize,
    /// Where its zlib stream starts.
    data_offset: u64,
    /// The size of the object.
    pub size: u64,
    /// Whether the chain ends at the object the caller named, not at a whole object.
    pub is_known: bool,
}

impl Packs {
    /// The packs of `objects` (the object directory); none when it cannot be listed.
    pub(super) fn open(objects: &Path, hash: gix::hash::Kind) -> Packs {
        let Ok(listing) = std::fs::read_dir(objects.join("pack")) else {
            return Packs { packs: Vec::new() };
        };
        let mut indexes: Vec<_> = listing
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.extension().is_some_and(|extension| extension == "idx"))
            .collect();
        indexes.sort();
        let packs = indexes
            .into_iter()
            .filter_map(|index_path| {
                let data = File::open(index_path.with_extension("pack")).ok()?;
                let index = pack::index::File::at(&index_path, hash).ok()?;
                Some((index, data))
            })
            .collect();
        Packs { packs }
    }

    /// The size of object `id` when one of the packs holds it and its entry reads as git
    /// writes it; `None` otherwise (the object database then answers).
    pub(super) fn size_of(&self, id: &gix::oid) -> Option<u64> {
        let (pack, offset) = self.locate(id)?;
        self.size_at(pack, &self.entry_at(pack, offset)?)
    }

    /// Blob `id` as one delta of the root of its chain: the chain ends at a whole blob, or
    /// earlier at the object `known` when the chain passes through it. `None` when no pack
    /// holds `id`, or the chain is not a blob's, longer than [`MAX_DEPTH`], holds a delta
    /// larger than [`MAX_DELTA`] or does not read as git writes it.
    pub(super) fn chain(&self, id: &gix::oid, known: Option<&gix::oid>) -> Option<Chain> {
        let known = known.and_then(|known| self.locate(known));
        let (mut pack, mut offset) = self.locate(id)?;
        // Outermost first.
        let mut deltas = Vec::new();
        let mut inflated = 0;
        let (entry, is_known) = loop {
            let entry = self.entry_at(pack, offset)?;
            if known == Some((pack, offset)) {
                break (entry, true);
            }
            let base = match entry.header {
                Header::Blob => break (entry, false),
                Header::OfsDelta { base_distance } => (pack, offset.checked_sub(base_distance)?),
                Header::RefDelta { base_id } => self.locate(&base_id)?,
                _ => return None,
            };
            let delta = self.inflate_delta(pack, &entry)?;
            inflated += delta.len();
            deltas.push(delta);
            if deltas.len() > MAX_DEPTH || inflated > MAX_CHAIN_BYTES {
                return None;
            }
            (pack, offset) = base;
        };
        let size = self.size_at(pack, &entry)?;
        let mut folded = Delta::whole(size);
        for delta in deltas.iter().rev() {
            folded = folded.then(delta).ok()?;
        }
        let root = Root {
            pack,
            data_offset: entry.data_offset,
            size,
            is_known,
        };
        Some(Chain {
            root,
            delta: folded,
        })
    }

    /// The whole object a chain ends at, inflated as it is read.
    pub(super) fn inflate_root(&self, root: &Root) -> Option<Inflating> {
        if root.is_known {
            return None;
        }
        let (_, data) = self.packs.get(root.pack)?;
        Some(Inflating::at(data.try_clone().ok()?, root.data_offset))
    }

    /// The pack holding `id`, and its entry's offset there.
    fn locate(&self, id: &gix::oid) -> Option<(usize, u64)> {
        self.packs
            .iter()
            .enumerate()
            .find_map(|(pack, (index, _))| {
                let found = index.lookup(id)?;
                Some((pack, index.pack_offset_at_index(found)))
            })
    }

    /// The entry at `offset` of pack `pack`.
    fn entry_at(&self, pack: usize, offset: u64) -> Option<pack::data::Entry> {
        let (index, data) = self.packs.get(pack)?;
        let mut head = [0; ENTRY_HEAD];
        let read = read_at(data, &mut head, offset)?;
        pack::data::Entry::from_bytes(&head[..read], offset, index.object_hash()).ok()
    }

    /// The size of the object `entry` stores: its own for a whole object, the result's
    /// for a delta.
    fn size_at(&self, pack: usize, entry: &pack::data::Entry) -> Option<u64> {
        match entry.header {
            Header::OfsDelta { .. } | Header::RefDelta { .. } => {
                delta_result_size(&self.packs.get(pack)?.1, entry.data_offset)
            }
            _ => Some(entry.decompressed_size),
        }
    }

    /// The delta `entry` stores, inflated; `None` past [`MAX_DELTA`] bytes.
    fn inflate_delta(&self, pack: usize, entry: &pack::data::Entry) -> Option<Vec<u8>> {
        let (_, data) = self.packs.get(pack)?;
        let size = usize::try_from(entry.decompressed_size).ok()?;
        if size > MAX_DELTA {
            return None;
        }
        // zlib adds at most a few bytes for each 16 KiB block it stores, and a header.
        let mut compressed = vec![0; size + size / 1024 + 64];
        let read = read_at(data, &mut compressed, entry.data_offset)?;
        let mut delta = vec![0; size];
        let mut inflate = gix::zlib::Inflate::default();
        let (status, _, written) = inflate.once(&compressed[..read], &mut delta).ok()?;
        (written == size && status == gix::zlib::Status::StreamEnd).then_some(delta)
    }
}

/// The size of the object a delta at `offset` rebuilds: the second of the two sizes
/// its data starts with (the base's, then the result's).
fn delta_result_size(data: &File, offset: u64) -> Option<u64> {
    let mut compressed = vec![0; DELTA_HEAD];
    let read = read_at(data, &mut compressed, offset)?;
    let mut start = [0; 20];
    let mut inflate = gix::zlib::Inflate::default();
    let (_, _, written) = inflate.once(&compressed[..read], &mut start).ok()?;
    let start = &start[..written];
    let (_, base_bytes) = delta_size(start)?;
    let (result, _) = delta_size(&start[base_bytes..])?;
    Some(result)
}

/// Reads up to `buffer.len()` bytes at `offset`, fewer only at the end of the file.
pub(super) fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> Option<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        let position = offset + filled as u64;
        #[cfg(unix)]
        let read = std::os::unix::fs::FileExt::read_at(file, &mut buffer[filled..], position);
        #[cfg(windows)]
        let read = std::os::windows::fs::FileExt::seek_read(file, &mut buffer[filled..], position);
        match read {
            Ok(0) => break,
            Ok(count) => filled += count,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(filled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let output = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .expect("git runs");
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8(output.stdout).expect("UTF-8")
    }

    /// Every object of the repository with the size git gives it.
    fn sizes_git_gives(dir: &Path) -> Vec<(gix::ObjectId, u64)> {
        let listing = git(
            dir,
            &[
                "cat-file",
                "--batch-all-objects",
                "--batch-check=%(objectname) %(objectsize)",
            ],
        );
        listing
            .lines()
            .map(|line| {
                let (id, size) = line.split_once(' ').expect("id and size");
                (
                    gix::ObjectId::from_hex(id.as_bytes()).expect("id"),
                    size.parse().expect("size"),
                )
            })
            .collect()
    }

    /// A history whose files grow and shrink, so a repack stores most versions as deltas.
    fn history(dir: &Path) {
        git(dir, &["init", "-q"]);
        let mut text = String::new();
        for step in 0..12 {
            for line in 0..40 * (step + 1) {
                text.push_str(&format!(
                    "{{\"id\": \"case-{step}-{line}\", \"input\": \"x\"}}\n"
                ));
            }
            if step % 3 == 2 {
                text.truncate(text.len() / 2);
            }
            std::fs::write(dir.join("cases.jsonl"), &text).expect("write");
            std::fs::write(
                dir.join(format!("small-{}.txt", step % 4)),
                "x".repeat(step),
            )
            .expect("write");
            git(dir, &["add", "-A"]);
            git(dir, &["commit", "-q", "-m", "step"]);
        }
    }

    /// [`history`], repacked from scratch with offset deltas or reference deltas; with the
    /// setting that chose them.
    fn repacked_history(offset_deltas: &str) -> (tempfile::TempDir, String) {
        let folder = tempfile::tempdir().expect("temporary folder");
        history(folder.path());
        let setting = format!("repack.useDeltaBaseOffset={offset_deltas}");
        git(
            folder.path(),
            &[
                "-c",
                &setting,
                "repack",
                "-q",
                "-a",
                "-d",
                "-f",
                "--depth=50",
            ],
        );
        (folder, setting)
    }

    #[test]
    fn sizes_read_from_packs_are_git_s_for_whole_objects_and_both_kinds_of_delta() {
        for offset_deltas in ["true", "false"] {
            let (folder, setting) = repacked_history(offset_deltas);
            let dir = folder.path();
            let verified = git(
                dir,
                &[
                    "verify-pack",
                    "-v",
                    &format!("{}", pack_index(dir).display()),
                ],
            );
            assert!(verified.contains("chain length"), "the pack holds deltas");
            let packs = Packs::open(&dir.join(".git/objects"), gix::hash::Kind::Sha1);
            let expected = sizes_git_gives(dir);
            assert!(expected.len() > 30);
            for (id, size) in expected {
                assert_eq!(packs.size_of(&id), Some(size), "{id} ({setting})");
            }
            // An object no pack holds is left to the object database.
            let loose =
                gix::ObjectId::from_hex(b"1111111111111111111111111111111111111111").expect("id");
            assert_eq!(packs.size_of(&loose), None);
        }
    }

    fn pack_index(dir: &Path) -> std::path::PathBuf {
        let packs = std::fs::read_dir(dir.join(".git/objects/pack")).expect("pack folder");
        packs
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .find(|path| path.extension().is_some_and(|extension| extension == "idx"))
            .expect("one pack")
    }

    /// Every version of `cases.jsonl` read as a stream: inflated from the pack, through
    /// chains of deltas (chains of two deltas among them); and from a file holding
    /// another version wherever its chain passes through that version, proved by its id;
    /// from a file of the same length holding other bytes, refused.
    #[test]
    fn every_version_of_a_file_streams_from_its_pack_or_from_a_version_its_chain_passes() {
        use super::super::object_stream::{ObjectStream, Root as StreamRoot};
        for offset_deltas in ["true", "false"] {
            let (folder, setting) = repacked_history(offset_deltas);
            let dir = folder.path();
            let index = format!("{}", pack_index(dir).display());
            let verified = git(dir, &["verify-pack", "-v", &index]);
            assert!(verified.contains("chain length = 2"), "chains: {verified}");
            let packs = Packs::open(&dir.join(".git/objects"), gix::hash::Kind::Sha1);
            let versions: Vec<gix::ObjectId> = (0..12)
                .map(|back| {
                    let id = git(dir, &["rev-parse", &format!("HEAD~{back}:cases.jsonl")]);
                    gix::ObjectId::from_hex(id.trim().as_bytes()).expect("id")
                })
                .collect();
            let bytes_of = |id: &gix::ObjectId| {
                let output = Command::new("git")
                    .args(["cat-file", "blob", &id.to_string()])
                    .current_dir(dir)
                    .output()
                    .expect("git cat-file");
                output.stdout
            };
            let read = |mut stream: ObjectStream, id: &gix::ObjectId| {
                let mut bytes = Vec::new();
                let whole = stream.read_to_end(&mut bytes).is_ok();
                (bytes, whole && stream.is_object(id))
            };
            let mut from_files = 0;
            for object in &versions {
                let chain = packs.chain(object, None).expect("a chain");
                assert!(!chain.root.is_known);
                let root =
                    StreamRoot::Inflating(Box::new(packs.inflate_root(&chain.root).expect("root")));
                let size = chain.root.size;
                let stream = ObjectStream::new(root, size, chain.delta, gix::hash::Kind::Sha1)
                    .expect("sizes");
                assert_eq!(read(stream, object), (bytes_of(object), true), "{object}");
                for base in versions.iter().filter(|base| *base != object) {
                    let chain = packs.chain(object, Some(base)).expect("a chain");
                    if !chain.root.is_known {
                        continue;
                    }
                    assert!(packs.inflate_root(&chain.root).is_none(), "held elsewhere");
                    let mut base_bytes = bytes_of(base);
                    let holder = dir.join("holder");
                    let stream_from = |bytes: &[u8], delta| {
                        std::fs::write(&holder, bytes).expect("write");
                        let file = std::fs::File::open(&holder).expect("open");
                        let size = bytes.len() as u64;
                        ObjectStream::new(
                            StreamRoot::File(file),
                            size,
                            delta,
                            gix::hash::Kind::Sha1,
                        )
                        .expect("sizes")
                    };
                    let stream = stream_from(&base_bytes, chain.delta);
                    let expected = (bytes_of(object), true);
                    assert_eq!(
                        read(stream, object),
                        expected,
                        "{object} from {base} ({setting})"
                    );
                    base_bytes[0] ^= 1;
                    let chain = packs.chain(object, Some(base)).expect("a chain");
                    let stream = stream_from(&base_bytes, chain.delta);
                    assert!(!read(stream, object).1, "other bytes are not the object");
                    from_files += 1;
                }
            }
            assert!(
                from_files > 10,
                "chains pass through other versions ({setting})"
            );
        }
    }

    #[test]
    fn a_missing_object_folder_holds_no_packs() {
        let folder = tempfile::tempdir().expect("temporary folder");
        let packs = Packs::open(&folder.path().join("absent"), gix::hash::Kind::Sha1);
        assert!(packs.packs.is_empty());
    }
}
