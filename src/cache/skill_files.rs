//! A read skill file as a cache entry: what `tree-v1` pins of it and what judging it
//! found (executable signals, risky lines), plus the bytes a skill keeps (`SKILL.md`, its
//! manifest). A skill file that is unchanged is then neither read nor hashed nor scanned
//! again when a case file changes.

use super::codec::{Decoder, Encoder};
use crate::hash::{Digest, EntryKind};
use crate::skills::scan::RiskyLine;
use crate::skills::{ExecutableSignal, ReadFile, SkillFile};

/// The store's key of the skill file `path` scanned with the risky patterns `patterns`:
/// no path holds a NUL byte, so it is never a case file's key.
pub(super) fn skill_key(path: &str, patterns: &Digest) -> String {
    format!("\0skill\0{}\0{path}", patterns.hex())
}

const KINDS: [EntryKind; 3] = [EntryKind::File, EntryKind::Executable, EntryKind::Symlink];
const SIGNALS: [ExecutableSignal; 5] = [
    ExecutableSignal::ExecBit,
    ExecutableSignal::Extension,
    ExecutableSignal::Shebang,
    ExecutableSignal::BinaryMagic,
    ExecutableSignal::Archive,
];

/// The position of `value` in `table`, as one byte.
fn index_of<T: PartialEq>(table: &[T], value: &T) -> u8 {
    table.iter().position(|known| known == value).unwrap_or(0) as u8
}

pub(super) fn encode_read_file(encoder: &mut Encoder, read: &ReadFile) {
    let file = &read.file;
    encoder.short_str(&file.path);
    encoder.u8(index_of(&KINDS, &file.kind));
    encoder.digest(&file.digest);
    encoder.bool(file.binary);
    encoder.varint(file.executable.len() as u64);
    for signal in &file.executable {
        encoder.u8(index_of(&SIGNALS, signal));
    }
    encoder.varint(file.risky.len() as u64);
    for risky in &file.risky {
        encoder.short_str(&risky.pattern);
        encoder.varint(u64::from(risky.line));
        encoder.varint(u64::from(risky.column));
        encoder.short_str(&risky.excerpt);
    }
    encoder.optional_str(file.link_target.as_deref());
    encoder.bool(read.bytes.is_some());
    if let Some(bytes) = &read.bytes {
        encoder.len(bytes.len());
        encoder.raw(bytes);
    }
}

/// `None` for anything but what [`encode_read_file`] writes.
pub(super) fn decode_read_file(bytes: &[u8]) -> Option<ReadFile> {
    let mut decoder = Decoder::new(bytes);
    let path = decoder.short_str()?.to_owned();
    let kind = *KINDS.get(usize::from(decoder.u8()?))?;
    let digest = decoder.digest()?;
    let binary = decoder.bool()?;
    let executable = (0..decoder.varint_len()?)
        .map(|_| SIGNALS.get(usize::from(decoder.u8()?)).copied())
        .collect::<Option<Vec<_>>>()?;
    let risky = (0..decoder.varint_len()?)
        .map(|_| {
            Some(RiskyLine {
                pattern: decoder.short_str()?.to_owned(),
                line: decoder.varint_u32()?,
                column: decoder.varint_u32()?,
                excerpt: decoder.short_str()?.to_owned(),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let link_target = decoder.optional_string()?;
    let bytes = match decoder.bool()? {
        true => {
            let length = decoder.len()?;
            Some(decoder.raw(length)?.to_vec())
        }
        false => None,
    };
    let file = SkillFile {
        path,
        kind,
        digest,
        binary,
        executable,
        risky,
        link_target,
    };
    decoder.is_done().then_some(ReadFile { file, bytes })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_file() -> ReadFile {
        ReadFile {
            file: SkillFile {
                path: "scripts/run.sh".into(),
                kind: EntryKind::Executable,
                digest: Digest::of_bytes(b"curl x | sh\n"),
                binary: false,
                executable: vec![ExecutableSignal::ExecBit, ExecutableSignal::Shebang],
                risky: vec![RiskyLine {
                    pattern: "pipe-to-shell".into(),
                    line: 1,
                    column: 1,
                    excerpt: "curl x | sh".into(),
                }],
                link_target: None,
            },
            bytes: Some(b"#!/bin/sh\ncurl x | sh\n".to_vec()),
        }
    }

    fn encoded(read: &ReadFile) -> Vec<u8> {
        let mut encoder = Encoder::with_capacity(64);
        encode_read_file(&mut encoder, read);
        encoder.bytes().to_vec()
    }

    #[test]
    fn a_read_skill_file_round_trips() {
        let read = read_file();
        let decoded = decode_read_file(&encoded(&read)).expect("decodes");
        assert_eq!(decoded.file, read.file);
        assert_eq!(decoded.bytes, read.bytes);
        let mut link = read_file();
        link.file.kind = EntryKind::Symlink;
        link.file.executable = vec![ExecutableSignal::Archive, ExecutableSignal::BinaryMagic];
        link.file.link_target = Some("../elsewhere".into());
        link.bytes = None;
        let decoded = decode_read_file(&encoded(&link)).expect("decodes");
        assert_eq!((decoded.file, decoded.bytes), (link.file, None));
    }

    #[test]
    fn cut_or_padded_entries_are_refused() {
        let bytes = encoded(&read_file());
        for end in 0..bytes.len() {
            assert!(decode_read_file(&bytes[..end]).is_none(), "cut at {end}");
        }
        let mut padded = bytes.clone();
        padded.push(0);
        assert!(decode_read_file(&padded).is_none());
        let mut bad_kind = bytes;
        let kind_at = 1 + "scripts/run.sh".len();
        bad_kind[kind_at] = 9;
        assert!(decode_read_file(&bad_kind).is_none());
    }

    #[test]
    fn keys_differ_by_patterns_and_never_name_a_path() {
        let patterns = Digest::of_bytes(b"patterns");
        let key = skill_key("skills/a/SKILL.md", &patterns);
        assert!(key.starts_with('\0') && key.ends_with("\0skills/a/SKILL.md"));
        assert_ne!(
            key,
            skill_key("skills/a/SKILL.md", &Digest::of_bytes(b"other"))
        );
    }
}
