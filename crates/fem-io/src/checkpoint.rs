//! Checkpoints: a run's state as named arrays of `f64` and a few named integers, in a versioned,
//! checksummed file written atomically.
//!
//! # Format (version 1)
//! ```text
//! "FEMCKPT\n"                       8 bytes, the magic
//! version                           u32 little-endian (1)
//! payload length                    u64
//! CRC-32 of the payload             u32
//! payload:
//!   fingerprint                     u32   (of the input the run was started from)
//!   model name                      string
//!   integers                        u32 count, then (string name, u64 value) each
//!   arrays                          u32 count, then (string name, u8 kind, u64 length, f64 values) each
//! ```
//! Strings are a `u16` length and UTF-8 bytes; every number is little-endian. Values are
//! stored bit for bit, so a restored state is the saved one exactly.
//!
//! A file that is truncated, corrupt (checksum), of another version, or written for another
//! input (fingerprint) is refused by [`Checkpoint::read`] with a [`CheckpointError`] that says
//! which.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::OutputError;
use crate::atomic::write_atomically;

const MAGIC: &[u8; 8] = b"FEMCKPT\n";
/// The format version written by this build.
pub const CHECKPOINT_VERSION: u32 = 1;

/// One named array of a checkpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointArray {
    /// Its name.
    pub name: String,
    /// A small tag the writer chooses (what the values are).
    pub kind: u8,
    /// The values, bit for bit.
    pub values: Vec<f64>,
}

/// A run's saved state.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// Fingerprint of the input the run was started from ([`fingerprint`]).
    pub fingerprint: u32,
    /// The model's name.
    pub model: String,
    /// Named integers (the step index, counts of rows and frames…).
    pub integers: Vec<(String, u64)>,
    /// Named arrays (the state, the frame times…).
    pub arrays: Vec<CheckpointArray>,
}

/// Why a checkpoint was refused.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// No checkpoint where one was looked for.
    #[error(
        "{path}: no checkpoint here (a run writes one every output.checkpoint_every steps, at the end of a run cut short by --max-steps, and when interrupted)"
    )]
    Missing {
        /// Where.
        path: PathBuf,
    },
    /// The file could not be read.
    #[error("{path}: cannot read the checkpoint: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not a checkpoint, truncated, or corrupt.
    #[error("{path}: not a usable checkpoint: {why}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// Written by another version of the format.
    #[error("{path}: checkpoint format version {found}, this fem reads version {expected}")]
    Version {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u32,
        /// Ours.
        expected: u32,
    },
    /// Written for another input.
    #[error(
        "{path}: this checkpoint was written by a run of another input (or of this input before it or its mesh changed); start the run afresh without --resume"
    )]
    OtherInput {
        /// The file.
        path: PathBuf,
    },
    /// Written by another model, or with arrays that do not fit the model.
    #[error("{path}: this checkpoint does not fit the model: {why}")]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// What does not fit.
        why: String,
    },
    /// The outputs the checkpoint continues (frames, history) are missing, truncated or
    /// cannot be reopened.
    #[error("{0}")]
    Output(#[from] crate::OutputError),
}

/// The largest checkpoint read (64 GiB: a run's state, about 10⁹ dofs and their history).
const MAX_CHECKPOINT_BYTES: u64 = 64 << 30;

/// The CRC-32 fingerprint of the inputs a run reads (the input file, its mesh file…).
pub fn fingerprint(parts: &[&[u8]]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize()
}

impl Checkpoint {
    /// An empty checkpoint for `model`, from the input with this fingerprint.
    pub fn new(fingerprint: u32, model: &str) -> Self {
        Self {
            fingerprint,
            model: model.to_string(),
            integers: Vec::new(),
            arrays: Vec::new(),
        }
    }

    /// The integer named `name`.
    pub fn integer(&self, name: &str) -> Option<u64> {
        self.integers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    /// The array named `name`.
    pub fn array(&self, name: &str) -> Option<&CheckpointArray> {
        self.arrays.iter().find(|a| a.name == name)
    }

    fn payload(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.fingerprint.to_le_bytes());
        push_str(&mut out, &self.model);
        out.extend_from_slice(&(self.integers.len() as u32).to_le_bytes());
        for (name, v) in &self.integers {
            push_str(&mut out, name);
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&(self.arrays.len() as u32).to_le_bytes());
        for a in &self.arrays {
            push_str(&mut out, &a.name);
            out.push(a.kind);
            out.extend_from_slice(&(a.values.len() as u64).to_le_bytes());
            for v in &a.values {
                out.extend_from_slice(&v.to_bits().to_le_bytes());
            }
        }
        out
    }

    /// Writes the checkpoint to `path` atomically (temporary file, fsync, rename): an
    /// interrupted write leaves the previous checkpoint in place.
    pub fn write(&self, path: &Path) -> Result<(), OutputError> {
        let payload = self.payload();
        write_atomically(path, true, |w, tmp| {
            let io = |e| OutputError::io("write", tmp, e);
            w.write_all(MAGIC).map_err(io)?;
            w.write_all(&CHECKPOINT_VERSION.to_le_bytes()).map_err(io)?;
            w.write_all(&(payload.len() as u64).to_le_bytes())
                .map_err(io)?;
            w.write_all(&crc32fast::hash(&payload).to_le_bytes())
                .map_err(io)?;
            w.write_all(&payload).map_err(io)
        })
    }

    /// Reads a checkpoint, refusing a truncated or corrupt file, another version, or one
    /// written for another input (`fingerprint`).
    pub fn read(path: &Path, fingerprint: u32) -> Result<Self, CheckpointError> {
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => {
                return Err(CheckpointError::Corrupt {
                    path: path.to_path_buf(),
                    why: "it is not a regular file (a device, a pipe or a folder stands there)"
                        .into(),
                });
            }
            Ok(m) if m.len() > MAX_CHECKPOINT_BYTES => {
                return Err(CheckpointError::Corrupt {
                    path: path.to_path_buf(),
                    why: format!(
                        "it has {} bytes, more than a checkpoint this fem writes ({MAX_CHECKPOINT_BYTES})",
                        m.len()
                    ),
                });
            }
            _ => {}
        }
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(CheckpointError::Missing {
                    path: path.to_path_buf(),
                });
            }
            Err(source) => {
                return Err(CheckpointError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let corrupt = |why: &str| CheckpointError::Corrupt {
            path: path.to_path_buf(),
            why: why.to_string(),
        };
        if bytes.len() < 24 || &bytes[..8] != MAGIC {
            return Err(corrupt("it does not start like a fem checkpoint"));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if version != CHECKPOINT_VERSION {
            return Err(CheckpointError::Version {
                path: path.to_path_buf(),
                found: version,
                expected: CHECKPOINT_VERSION,
            });
        }
        let length = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
        let crc = u32::from_le_bytes(bytes[20..24].try_into().expect("4 bytes"));
        let payload = &bytes[24..];
        if payload.len() as u64 != length {
            return Err(corrupt(&format!(
                "it is truncated or padded: {} payload bytes, the header says {length}",
                payload.len()
            )));
        }
        if crc32fast::hash(payload) != crc {
            return Err(corrupt("its checksum does not match its contents"));
        }
        let mut r = Reader {
            bytes: payload,
            at: 0,
        };
        let parse = |r: &mut Reader<'_>| -> Option<Checkpoint> {
            let fingerprint = r.u32()?;
            let model = r.string()?;
            let n_integers = r.u32()? as usize;
            let mut integers = Vec::with_capacity(n_integers.min(1024));
            for _ in 0..n_integers {
                let name = r.string()?;
                integers.push((name, r.u64()?));
            }
            let n_arrays = r.u32()? as usize;
            let mut arrays = Vec::with_capacity(n_arrays.min(1024));
            for _ in 0..n_arrays {
                let name = r.string()?;
                let kind = r.u8()?;
                let len = r.u64()? as usize;
                if len > r.remaining() / 8 {
                    return None;
                }
                let values = (0..len)
                    .map(|_| r.u64().map(f64::from_bits))
                    .collect::<Option<Vec<f64>>>()?;
                arrays.push(CheckpointArray { name, kind, values });
            }
            (r.remaining() == 0).then_some(Checkpoint {
                fingerprint,
                model,
                integers,
                arrays,
            })
        };
        let checkpoint = parse(&mut r).ok_or_else(|| corrupt("its contents are malformed"))?;
        if checkpoint.fingerprint != fingerprint {
            return Err(CheckpointError::OtherInput {
                path: path.to_path_buf(),
            });
        }
        Ok(checkpoint)
    }
}

fn push_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    let n = b.len().min(u16::MAX as usize);
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&b[..n]);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
    fn string(&mut self) -> Option<String> {
        let n = self
            .take(2)
            .map(|b| u16::from_le_bytes(b.try_into().expect("2 bytes")))? as usize;
        self.take(n)
            .and_then(|b| String::from_utf8(b.to_vec()).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Checkpoint {
        let mut c = Checkpoint::new(fingerprint(&[b"input"]), "string");
        c.integers.push(("step".into(), 42));
        c.arrays.push(CheckpointArray {
            name: "position".into(),
            kind: 0,
            values: vec![1.0, -0.0, f64::MIN_POSITIVE, 1e300],
        });
        c
    }

    #[test]
    fn round_trips_bit_for_bit_and_refuses_damage() {
        let dir = std::env::temp_dir().join(format!("fem_ckpt_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("checkpoint.fem");
        let c = sample();
        c.write(&path).unwrap();
        let back = Checkpoint::read(&path, c.fingerprint).unwrap();
        assert_eq!(back, c);
        assert_eq!(
            back.array("position").unwrap().values[1].to_bits(),
            (-0.0f64).to_bits()
        );
        // Another input.
        assert!(matches!(
            Checkpoint::read(&path, c.fingerprint ^ 1),
            Err(CheckpointError::OtherInput { .. })
        ));
        // Truncated, then corrupt.
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(matches!(
            Checkpoint::read(&path, c.fingerprint),
            Err(CheckpointError::Corrupt { .. })
        ));
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 0x40;
        std::fs::write(&path, &flipped).unwrap();
        let e = Checkpoint::read(&path, c.fingerprint).unwrap_err();
        assert!(e.to_string().contains("checksum"), "{e}");
        // Another version.
        let mut other = bytes;
        other[8] = 9;
        std::fs::write(&path, &other).unwrap();
        assert!(matches!(
            Checkpoint::read(&path, c.fingerprint),
            Err(CheckpointError::Version { found: 9, .. })
        ));
        assert!(matches!(
            Checkpoint::read(&dir.join("nothere"), 0),
            Err(CheckpointError::Missing { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
