//! A small binary encoding for cache files: fixed-width little-endian integers and
//! length-prefixed strings. Decoding never panics; any inconsistency is `None`.

use crate::hash::Digest;
use crate::source::ContentIdentity;

#[derive(Debug, Default)]
pub(super) struct Encoder {
    bytes: Vec<u8>,
}

impl Encoder {
    pub fn with_capacity(capacity: usize) -> Self {
        Encoder {
            bytes: Vec::with_capacity(capacity),
        }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn raw(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    pub fn u8(&mut self, value: u8) {
        self.bytes.push(value);
    }

    pub fn bool(&mut self, value: bool) {
        self.u8(u8::from(value));
    }

    pub fn u32(&mut self, value: u32) {
        self.raw(&value.to_le_bytes());
    }

    pub fn u64(&mut self, value: u64) {
        self.raw(&value.to_le_bytes());
    }

    pub fn i128(&mut self, value: i128) {
        self.raw(&value.to_le_bytes());
    }

    pub fn len(&mut self, length: usize) {
        self.u64(length as u64);
    }

    /// An unsigned number in as few bytes as it needs (LEB128: seven bits a byte, the
    /// high bit set on all but the last): most numbers in a case summary take one.
    pub fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.bytes.push(value as u8 | 0x80);
            value >>= 7;
        }
        self.bytes.push(value as u8);
    }

    /// A string prefixed with its length as a [`Encoder::varint`].
    pub fn short_str(&mut self, text: &str) {
        self.varint(text.len() as u64);
        self.raw(text.as_bytes());
    }

    /// Writes `body` prefixed with its length in bytes, without a buffer of its own.
    pub fn length_prefixed(&mut self, body: impl FnOnce(&mut Encoder)) {
        let at = self.bytes.len();
        self.len(0);
        let body_start = self.bytes.len();
        body(self);
        let length = (self.bytes.len() - body_start) as u64;
        self.bytes[at..body_start].copy_from_slice(&length.to_le_bytes());
    }

    pub fn str(&mut self, text: &str) {
        self.blob(text.as_bytes());
    }

    /// Bytes prefixed with their length.
    pub fn blob(&mut self, bytes: &[u8]) {
        self.len(bytes.len());
        self.raw(bytes);
    }

    pub fn optional_str(&mut self, text: Option<&str>) {
        self.bool(text.is_some());
        if let Some(text) = text {
            self.str(text);
        }
    }

    pub fn optional_u32(&mut self, value: Option<u32>) {
        self.bool(value.is_some());
        if let Some(value) = value {
            self.u32(value);
        }
    }

    pub fn digest(&mut self, digest: &Digest) {
        self.raw(&digest.sha256_bytes());
    }

    pub fn identity(&mut self, identity: &ContentIdentity) {
        match identity {
            ContentIdentity::Object(id) => {
                self.u8(0);
                self.str(id);
            }
            ContentIdentity::Stat {
                size,
                modified_ns,
                changed_ns,
                inode,
                device,
            } => {
                self.u8(1);
                self.u64(*size);
                self.i128(*modified_ns);
                self.i128(*changed_ns);
                self.u64(*inode);
                self.u64(*device);
            }
        }
    }
}

#[derive(Debug)]
pub(super) struct Decoder<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Decoder<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Decoder { bytes, position: 0 }
    }

    pub fn position(&self) -> usize {
        self.position
    }

    pub fn is_done(&self) -> bool {
        self.position == self.bytes.len()
    }

    pub fn rest(&self) -> &'a [u8] {
        &self.bytes[self.position..]
    }

    pub fn raw(&mut self, length: usize) -> Option<&'a [u8]> {
        let end = self.position.checked_add(length)?;
        let slice = self.bytes.get(self.position..end)?;
        self.position = end;
        Some(slice)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.raw(N)?.try_into().ok()
    }

    pub fn u8(&mut self) -> Option<u8> {
        Some(self.array::<1>()?[0])
    }

    pub fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.array()?))
    }

    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.array()?))
    }

    pub fn i128(&mut self) -> Option<i128> {
        Some(i128::from_le_bytes(self.array()?))
    }

    pub fn len(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }

    /// A number written by [`Encoder::varint`]; `None` past ten bytes or 64 bits.
    pub fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            let bits = u64::from(byte & 0x7F);
            if shift == 63 && bits > 1 {
                return None;
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    pub fn varint_u32(&mut self) -> Option<u32> {
        u32::try_from(self.varint()?).ok()
    }

    pub fn varint_len(&mut self) -> Option<usize> {
        usize::try_from(self.varint()?).ok()
    }

    /// A string written by [`Encoder::short_str`].
    pub fn short_str(&mut self) -> Option<&'a str> {
        let length = self.varint_len()?;
        std::str::from_utf8(self.raw(length)?).ok()
    }

    pub fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.blob()?).ok()
    }

    /// Bytes written by [`Encoder::blob`].
    pub fn blob(&mut self) -> Option<&'a [u8]> {
        let length = self.len()?;
        self.raw(length)
    }

    pub fn string(&mut self) -> Option<String> {
        self.str().map(str::to_owned)
    }

    pub fn optional_str(&mut self) -> Option<Option<&'a str>> {
        match self.bool()? {
            true => Some(Some(self.str()?)),
            false => Some(None),
        }
    }

    pub fn optional_string(&mut self) -> Option<Option<String>> {
        Some(self.optional_str()?.map(str::to_owned))
    }

    pub fn optional_u32(&mut self) -> Option<Option<u32>> {
        match self.bool()? {
            true => Some(Some(self.u32()?)),
            false => Some(None),
        }
    }

    pub fn digest(&mut self) -> Option<Digest> {
        Some(Digest::from_sha256_bytes(&self.array()?))
    }

    pub fn identity(&mut self) -> Option<ContentIdentity> {
        match self.u8()? {
            0 => Some(ContentIdentity::Object(self.string()?)),
            1 => Some(ContentIdentity::Stat {
                size: self.u64()?,
                modified_ns: self.i128()?,
                changed_ns: self.i128()?,
                inode: self.u64()?,
                device: self.u64()?,
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_and_short_input_is_none() {
        let mut encoder = Encoder::default();
        encoder.str("héllo");
        encoder.optional_str(None);
        encoder.optional_u32(Some(7));
        encoder.identity(&ContentIdentity::Stat {
            size: 1,
            modified_ns: -2,
            changed_ns: 3,
            inode: 4,
            device: 5,
        });
        encoder.digest(&crate::hash::bytes_digest(b"x"));
        let bytes = encoder.bytes();
        let mut decoder = Decoder::new(bytes);
        assert_eq!(decoder.str(), Some("héllo"));
        assert_eq!(decoder.optional_string(), Some(None));
        assert_eq!(decoder.optional_u32(), Some(Some(7)));
        assert!(matches!(
            decoder.identity(),
            Some(ContentIdentity::Stat {
                modified_ns: -2,
                ..
            })
        ));
        assert_eq!(decoder.digest(), Some(crate::hash::bytes_digest(b"x")));
        assert!(decoder.is_done());
        for cut in 0..bytes.len() {
            let mut decoder = Decoder::new(&bytes[..cut]);
            let complete = decoder.str().is_some()
                && decoder.optional_string().is_some()
                && decoder.optional_u32().is_some()
                && decoder.identity().is_some()
                && decoder.digest().is_some();
            assert!(!complete, "a truncation at {cut} must not decode");
        }
    }

    /// Every width a number can take comes back as written; a truncated number, one
    /// longer than ten bytes or one over 64 bits does not decode.
    #[test]
    fn varints_round_trip_and_bad_ones_are_none() {
        let values = [
            0,
            1,
            0x7F,
            0x80,
            300,
            0x3FFF,
            0x4000,
            u64::from(u32::MAX),
            u64::MAX,
        ];
        for value in values {
            let mut encoder = Encoder::default();
            encoder.varint(value);
            let width = encoder.bytes().len();
            assert_eq!(
                width,
                (64 - value.leading_zeros() as usize).max(1).div_ceil(7)
            );
            let mut decoder = Decoder::new(encoder.bytes());
            assert_eq!(decoder.varint(), Some(value));
            assert!(decoder.is_done());
            for cut in 0..width {
                assert_eq!(Decoder::new(&encoder.bytes()[..cut]).varint(), None);
            }
        }
        assert_eq!(Decoder::new(&[0x80; 11]).varint(), None);
        let over = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02];
        assert_eq!(Decoder::new(&over).varint(), None);
        assert_eq!(
            Decoder::new(&[0x80, 0x80, 0x80, 0x80, 0x10]).varint_u32(),
            None
        );
        let mut encoder = Encoder::default();
        encoder.short_str("héllo");
        encoder.short_str("");
        let mut decoder = Decoder::new(encoder.bytes());
        assert_eq!(decoder.short_str(), Some("héllo"));
        assert_eq!(decoder.short_str(), Some(""));
        assert!(decoder.is_done());
        assert_eq!(Decoder::new(&encoder.bytes()[..4]).short_str(), None);
    }

    #[test]
    fn a_length_prefix_counts_the_body_written_after_it() {
        let mut encoder = Encoder::default();
        encoder.u8(9);
        encoder.length_prefixed(|body| {
            body.str("abc");
            body.u32(7);
        });
        encoder.length_prefixed(|_| {});
        let mut decoder = Decoder::new(encoder.bytes());
        assert_eq!(decoder.u8(), Some(9));
        assert_eq!(decoder.len(), Some(8 + 3 + 4));
        let mut body = Decoder::new(decoder.raw(15).unwrap_or_default());
        assert_eq!(body.str(), Some("abc"));
        assert_eq!(body.u32(), Some(7));
        assert!(body.is_done());
        assert_eq!(decoder.len(), Some(0));
        assert!(decoder.is_done());
    }
}
