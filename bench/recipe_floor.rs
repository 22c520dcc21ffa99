//! The floor under a cold `evalock check`: only what the `case-v1` recipe itself demands of
//! every case, with nothing else a check does. Each JSONL file named on the command line is
//! read and validated as UTF-8, each of its lines canonicalized (RFC 8785) and its canonical
//! text hashed with SHA-256, the files spread over every core as a check spreads them.
//!
//! `bench/bench.py` times it beside `sha256sum` over the same files: the ratio says how much
//! of the cold-check target (half of `sha256sum`'s time) the recipe alone already takes.
//! It prints the number of cases and an XOR of their digests, so that no work can be left
//! out; lines the fast canonicalizer declines are canonicalized through `serde_json`.

use evalock::cases::canonical::Canonicalizer;
use evalock::digest::{case_digest, Digest};
use rayon::prelude::*;
use std::process::ExitCode;

fn main() -> ExitCode {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: recipe_floor FILE.jsonl...");
        return ExitCode::from(64);
    }
    let totals = paths
        .par_iter()
        .map_init(Canonicalizer::new, |canonicalizer, path| {
            hash_file(canonicalizer, path)
        })
        .try_reduce(Totals::default, |left, right| Ok(left.join(right)));
    match totals {
        Ok(totals) => {
            let hex = Digest::from_sha256_bytes(&totals.xor).hex();
            println!("{} cases ({} slow), xor {hex}", totals.cases, totals.slow);
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("recipe_floor: {message}");
            ExitCode::FAILURE
        }
    }
}

#[derive(Default)]
struct Totals {
    cases: u64,
    slow: u64,
    xor: [u8; 32],
}

impl Totals {
    fn add(&mut self, digest: &Digest) {
        self.cases += 1;
        for (total, byte) in self.xor.iter_mut().zip(digest.sha256_bytes()) {
            *total ^= byte;
        }
    }

    fn join(mut self, other: Totals) -> Totals {
        self.cases += other.cases;
        self.slow += other.slow;
        for (total, byte) in self.xor.iter_mut().zip(other.xor) {
            *total ^= byte;
        }
        self
    }
}

fn hash_file(canonicalizer: &mut Canonicalizer, path: &str) -> Result<Totals, String> {
    let bytes = std::fs::read(path).map_err(|error| format!("{path}: {error}"))?;
    let text = simdutf8::basic::from_utf8(&bytes).map_err(|_| format!("{path}: not UTF-8"))?;
    let mut totals = Totals::default();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let digest = match canonicalizer.object(line, &[], None) {
            Some(object) => Digest::of_bytes(object.canonical),
            None => {
                totals.slow += 1;
                let value: serde_json::Value = serde_json::from_str(line)
                    .map_err(|error| format!("{path}:{}: {error}", index + 1))?;
                case_digest(&value).map_err(|error| format!("{path}:{}: {error}", index + 1))?
            }
        };
        totals.add(&digest);
    }
    Ok(totals)
}
