//! The size of an object in a pack, read with a few small reads of the pack file instead
//! of through the mapping the object database reads packs with.
//!
//! The index vouches for a working-tree file only when its size is its blob's (see
//! [`super::StagedIndex::vouched_blob`]), which a check asks for every case file. Read
//! through a mapping, each such look brings in the pages around the object as well (the
//! kernel maps a whole neighbourhood on each fault), and counts them in the process's
//! memory: about 22 MB for the 400 case files of a freshly cloned 200,000-case project.
//! A read of the object's first bytes costs nothing of the kind.
//!
//! Only the packs of the repository's own object directory are looked in; an object
//! elsewhere (loose, or in an alternate's pack) is left to the object database.

use gix::odb::pack;
use pack::data::entry::Header;
use std::fs::File;
use std::path::Path;

/// The indexes of the repository's packs, each with its pack file open for reading.
pub(super) struct PackSizes {
    packs: Vec<(pack::index::File, File)>,
}

/// An entry header is at most 10 bytes for its type and size, then 10 for an offset
/// delta's base or 20 (32 with SHA-256) for a reference delta's base id.
const ENTRY_HEAD: usize = 64;

/// Enough of a delta's compressed start to hold its two sizes, whatever its block
/// header: a dynamic Huffman header takes at most a few hundred bytes.
const DELTA_HEAD: usize = 4096;

/// The largest delta [`PackSizes::delta_onto`] inflates: a delta that large is no longer a
/// small edit of its base, and saves little memory over the object itself.
const MAX_DELTA: usize = 1 << 22;

impl PackSizes {
    /// The packs of `objects` (the object directory); none when it cannot be listed.
    pub(super) fn open(objects: &Path, hash: gix::hash::Kind) -> PackSizes {
        let Ok(listing) = std::fs::read_dir(objects.join("pack")) else {
            return PackSizes { packs: Vec::new() };
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
        PackSizes { packs }
    }

    /// The size of object `id` when one of the packs holds it and its entry reads as git
    /// writes it; `None` otherwise (the object database then answers).
    pub(super) fn size_of(&self, id: &gix::oid) -> Option<u64> {
        let (_, data, entry) = self.entry(id)?;
        match entry.header {
            Header::OfsDelta { .. } | Header::RefDelta { .. } => {
                delta_result_size(data, entry.data_offset)
            }
            _ => Some(entry.decompressed_size),
        }
    }

    /// The delta object `id` is stored as, inflated, when a pack stores it as a delta of
    /// the object `base` itself (not of another delta of it, nor of another object), and
    /// the delta is at most [`MAX_DELTA`] bytes.
    pub(super) fn delta_onto(&self, id: &gix::oid, base: &gix::oid) -> Option<Vec<u8>> {
        let (index, data, entry) = self.entry(id)?;
        let onto_base = match entry.header {
            Header::OfsDelta { base_distance } => {
                let at = index
                    .lookup(base)
                    .map(|found| index.pack_offset_at_index(found));
                at.is_some() && at == entry.pack_offset().checked_sub(base_distance)
            }
            Header::RefDelta { base_id } => base_id == base,
            _ => false,
        };
        let size = usize::try_from(entry.decompressed_size).ok()?;
        if !onto_base || size > MAX_DELTA {
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

    /// The index and pack file holding `id`, and its entry's header there.
    fn entry(&self, id: &gix::oid) -> Option<(&pack::index::File, &File, pack::data::Entry)> {
        let (index, data) = self
            .packs
            .iter()
            .find(|(index, _)| index.lookup(id).is_some())?;
        let offset = index.pack_offset_at_index(index.lookup(id)?);
        let mut head = [0; ENTRY_HEAD];
        let read = read_at(data, &mut head, offset)?;
        let entry =
            pack::data::Entry::from_bytes(&head[..read], offset, index.object_hash()).ok()?;
        Some((index, data, entry))
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

/// A size at the start of a delta: seven bits a byte, least significant first, the high
/// bit set on every byte but the last. With the number of bytes it took.
pub(super) fn delta_size(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut size = 0u64;
    for (position, byte) in bytes.iter().enumerate().take(10) {
        size |= u64::from(byte & 0x7f) << (7 * position);
        if byte & 0x80 == 0 {
            return Some((size, position + 1));
        }
    }
    None
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
            &["-c", &setting, "repack", "-q", "-a", "-d", "-f"],
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
            let packs = PackSizes::open(&dir.join(".git/objects"), gix::hash::Kind::Sha1);
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

    /// Each version of `cases.jsonl` that a pack stores as a delta of another, rebuilt
    /// from a file holding that other version: the object's bytes, proved by its id; from
    /// a file of the same length holding other bytes: refused.
    #[test]
    fn a_delta_of_a_file_s_blob_is_rebuilt_from_the_file() {
        use super::super::delta_stream::DeltaReader;
        for offset_deltas in ["true", "false"] {
            let (folder, setting) = repacked_history(offset_deltas);
            let dir = folder.path();
            let packs = PackSizes::open(&dir.join(".git/objects"), gix::hash::Kind::Sha1);
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
            let mut rebuilt = 0;
            for object in &versions {
                assert_eq!(
                    packs.delta_onto(object, object),
                    None,
                    "not a delta of itself"
                );
                for base in versions.iter().filter(|base| *base != object) {
                    let Some(delta) = packs.delta_onto(object, base) else {
                        continue;
                    };
                    let mut base_bytes = bytes_of(base);
                    let holder = dir.join("holder");
                    std::fs::write(&holder, &base_bytes).expect("write");
                    let open = || std::fs::File::open(&holder).expect("open");
                    let mut reader = DeltaReader::new(open(), delta.clone(), gix::hash::Kind::Sha1)
                        .expect("sizes");
                    let mut bytes = Vec::new();
                    reader.read_to_end(&mut bytes).expect("rebuilt");
                    assert_eq!(bytes, bytes_of(object), "{object} onto {base} ({setting})");
                    assert!(reader.is_object(object));
                    base_bytes[0] ^= 1;
                    std::fs::write(&holder, &base_bytes).expect("write");
                    let mut reader = DeltaReader::new(open(), delta, gix::hash::Kind::Sha1)
                        .expect("same length");
                    let _ = std::io::copy(&mut reader, &mut std::io::sink());
                    assert!(!reader.is_object(object), "other bytes are not the object");
                    rebuilt += 1;
                }
            }
            assert!(
                rebuilt > 3,
                "git stored versions as deltas of others ({setting})"
            );
        }
    }

    #[test]
    fn a_missing_object_folder_holds_no_packs() {
        let folder = tempfile::tempdir().expect("temporary folder");
        let packs = PackSizes::open(&folder.path().join("absent"), gix::hash::Kind::Sha1);
        assert!(packs.packs.is_empty());
    }

    #[test]
    fn delta_sizes_read_as_git_writes_them() {
        assert_eq!(delta_size(&[0x05]), Some((5, 1)));
        // 300 = 0b10_0101100: low seven bits first, with the high bit set.
        assert_eq!(delta_size(&[0xac, 0x02, 0x7f]), Some((300, 2)));
        assert_eq!(delta_size(&[0x80, 0x80]), None, "truncated");
        assert_eq!(delta_size(&[0xff; 11]), None, "longer than a u64");
        assert_eq!(delta_size(&[]), None);
    }
}
