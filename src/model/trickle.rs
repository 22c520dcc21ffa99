//! A reader for tests of streamed parsing.

use std::io::Read;

/// Hands out one to seven bytes at a time, cutting lines and characters apart.
pub(super) struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl<'a> Trickle<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Trickle { bytes, step: 0 }
    }
}

impl Read for Trickle<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        self.step = self.step % 7 + 1;
        let length = self.step.min(buffer.len()).min(self.bytes.len());
        buffer[..length].copy_from_slice(&self.bytes[..length]);
        self.bytes = &self.bytes[length..];
        Ok(length)
    }
}
