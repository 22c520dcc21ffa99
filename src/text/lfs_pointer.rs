//! Git LFS pointers: what git stores in place of a file that `.gitattributes` sends to Git
//! LFS (`filter=lfs`), and what a checkout holds until `git lfs pull` fetches the file.
//! The LFS specification (git-lfs/git-lfs `docs/spec.md`): a pointer is under 1,024 bytes
//! of `key value` lines, `version https://git-lfs.github.com/spec/v1` first, with
//! `oid sha256:<64 hex digits>` and `size <bytes>` among the rest.

/// The first line of every pointer.
const VERSION_LINE: &str = "version https://git-lfs.github.com/spec/v1\n";

/// A pointer is shorter than this.
pub const POINTER_MAX_BYTES: usize = 1024;

/// The file a pointer stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LfsPointer {
    /// `sha256:<hex>` of the file's content.
    pub oid: String,
    /// The file's size in bytes.
    pub size: u64,
}

impl LfsPointer {
    /// The pointer `bytes` are, when they are one.
    pub fn read(bytes: &[u8]) -> Option<LfsPointer> {
        if bytes.len() >= POINTER_MAX_BYTES || !bytes.starts_with(VERSION_LINE.as_bytes()) {
            return None;
        }
        let text = std::str::from_utf8(bytes).ok()?;
        let rest = text.strip_prefix(VERSION_LINE)?.strip_suffix('\n')?;
        let (mut oid, mut size) = (None, None);
        for line in rest.split('\n') {
            let (key, value) = line.split_once(' ')?;
            match key {
                "oid" => {
                    let hex = value.strip_prefix("sha256:")?;
                    let is_digest = hex.len() == 64
                        && hex
                            .bytes()
                            .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'));
                    oid = is_digest.then(|| value.to_owned());
                }
                "size" => size = value.parse::<u64>().ok(),
                _ if key
                    .bytes()
                    .all(|byte| matches!(byte, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-')) => {}
                _ => return None,
            }
        }
        Some(LfsPointer {
            oid: oid?,
            size: size?,
        })
    }

    /// The pointer's oid shortened for a message: `sha256:` and 12 hex digits.
    pub fn short_oid(&self) -> &str {
        self.oid.get(..7 + 12).unwrap_or(&self.oid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example pointer of the LFS specification.
    const SPEC_EXAMPLE: &str = "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n";

    #[test]
    fn a_pointer_names_the_file_it_stands_for() {
        let pointer = LfsPointer::read(SPEC_EXAMPLE.as_bytes()).expect("a pointer");
        assert_eq!(
            pointer.oid,
            "sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393"
        );
        assert_eq!(pointer.size, 12345);
        assert_eq!(pointer.short_oid(), "sha256:4d7a214614ab");
        let with_extension = SPEC_EXAMPLE.replace(
            "oid ",
            "ext-0-foo sha256:36485434f4f8a55150282ae7c78619a89de52721c00f48159f2562463df9c043\noid ",
        );
        assert!(LfsPointer::read(with_extension.as_bytes()).is_some());
    }

    #[test]
    fn what_is_not_a_pointer_is_read_as_itself() {
        let not_pointers = [
            String::new(),
            "{\"id\": \"a\"}\n".to_owned(),
            // No newline at the end, no size, no oid, a short oid, a key in capitals.
            SPEC_EXAMPLE.trim_end().to_owned(),
            SPEC_EXAMPLE.replace("size 12345\n", ""),
            SPEC_EXAMPLE.replace("oid sha256:4d7a", "old sha256:4d7a"),
            SPEC_EXAMPLE.replace("2393\n", "\n"),
            SPEC_EXAMPLE.replace("size", "Size"),
            // A case file that only starts like one.
            format!("{SPEC_EXAMPLE}{}", "{\"id\": \"a\"}\n".repeat(100)),
        ];
        for text in not_pointers {
            assert_eq!(LfsPointer::read(text.as_bytes()), None, "{text:?}");
        }
    }
}
