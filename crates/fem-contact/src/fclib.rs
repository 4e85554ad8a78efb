//! A reader of FCLIB's frictional contact problems (HDF5; layout of the FCLIB report,
//! Acary, Brémond, Koziara, Pérignon, INRIA hal-00945820), over the pure-Rust `hdf5-pure`.
//!
//! A *local* problem (`/fclib_local`) gives `W`, `q`, `μ` directly: `u = W r + q`.
//! A *global* problem (`/fclib_global`) gives `M`, `H`, `f`, `w`, `μ` with
//! `M v = H r + f`, `u = Hᵀ v + w` (`H` has a column per contact row); it is reduced here
//! to local form (docs/theory/contact.md, eq. (C13)):
//! `W = Hᵀ M⁻¹ H`, `q = Hᵀ M⁻¹ f + w`, with `M` factored once (sparse Cholesky, or LU
//! when Cholesky fails) and `M⁻¹ H` formed a column at a time.
//!
//! Sparse matrices are CSparse-like groups (`m`, `n`, `nz`, `nzmax`, `p`, `i`, `x`): `nz ≥ 0`
//! triplets (`i` rows, `p` columns), `nz = −1` compressed columns, `nz = −2` compressed rows.
//! Every count read is checked against the dataset lengths and against a memory limit before
//! anything of that size is allocated.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fem_assembly::{CsrMatrix, Factorization, Symmetry};
use nalgebra::{Matrix3, Vector3};

use crate::law::Law;
use crate::problem::{Problem, ProblemError};

/// A problem read from an FCLIB file.
#[derive(Clone, Debug)]
pub struct FclibProblem {
    /// The local problem (`W`, `q`, `μ`), reduced from the global one if need be.
    pub problem: Problem,
    /// Whether the file held a global problem.
    pub global: bool,
    /// The file's title (`info/title`), if any.
    pub title: String,
    /// The reference solution's impulses (`/solution/r`), if the file has one.
    pub solution: Option<Vec<Vector3<f64>>>,
    /// The first guess (`/guesses/1/r`), if the file has one.
    pub guess: Option<Vec<Vector3<f64>>>,
    /// Whether `W` was stored by compressed rows (`nz = −2`), which a reader taking
    /// compressed storage as columns would read transposed.
    pub compressed_rows: bool,
}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FclibError {
    /// The HDF5 layer refused the file or a dataset.
    #[error("{}: {what}: {message}", path.display())]
    Hdf5 {
        /// File.
        path: PathBuf,
        /// The dataset or group.
        what: String,
        /// The reader's message.
        message: String,
    },
    /// The file is not laid out as FCLIB says.
    #[error("{}: {what}: {expected}", path.display())]
    Layout {
        /// File.
        path: PathBuf,
        /// The dataset or group.
        what: String,
        /// What was expected.
        expected: String,
    },
    /// The problem needs more memory than allowed.
    #[error(
        "{}: the problem needs about {needed} bytes ({what}), above the limit of {limit} bytes",
        path.display()
    )]
    TooLarge {
        /// File.
        path: PathBuf,
        /// What is large.
        what: String,
        /// Estimated bytes.
        needed: u64,
        /// Limit.
        limit: u64,
    },
    /// The data do not form a valid problem.
    #[error("{}: {source}", path.display())]
    Problem {
        /// File.
        path: PathBuf,
        /// What is wrong.
        source: ProblemError,
    },
}

struct Reader<'a> {
    path: &'a Path,
    file: hdf5_pure::File,
    limit: u64,
}

/// Matrix entries `(row, column, value)`.
type Entries = Vec<(usize, usize, f64)>;

/// A sparse matrix as triplets.
struct Triplets {
    m: usize,
    n: usize,
    nz: i64,
    entries: Vec<(usize, usize, f64)>,
}

impl Reader<'_> {
    fn hdf5(&self, what: &str, e: impl std::fmt::Display) -> FclibError {
        FclibError::Hdf5 {
            path: self.path.to_path_buf(),
            what: what.to_string(),
            message: e.to_string(),
        }
    }

    fn layout(&self, what: &str, expected: impl Into<String>) -> FclibError {
        FclibError::Layout {
            path: self.path.to_path_buf(),
            what: what.to_string(),
            expected: expected.into(),
        }
    }

    fn has(&self, name: &str) -> bool {
        self.file.dataset(name).is_ok()
    }

    fn budget(&self, what: &str, bytes: u64) -> Result<(), FclibError> {
        if bytes > self.limit {
            return Err(FclibError::TooLarge {
                path: self.path.to_path_buf(),
                what: what.to_string(),
                needed: bytes,
                limit: self.limit,
            });
        }
        Ok(())
    }

    fn len_of(&self, name: &str) -> Result<usize, FclibError> {
        let d = self.file.dataset(name).map_err(|e| self.hdf5(name, e))?;
        let shape = d.shape().map_err(|e| self.hdf5(name, e))?;
        let len = shape.iter().try_fold(1u64, |a, &b| a.checked_mul(b));
        let len = len.ok_or_else(|| self.layout(name, "a dataset of a representable size"))?;
        self.budget(name, len.saturating_mul(8))?;
        Ok(len as usize)
    }

    fn f64s(&self, name: &str) -> Result<Vec<f64>, FclibError> {
        self.len_of(name)?;
        let d = self.file.dataset(name).map_err(|e| self.hdf5(name, e))?;
        d.read_f64().map_err(|e| self.hdf5(name, e))
    }

    fn ints(&self, name: &str) -> Result<Vec<i64>, FclibError> {
        self.len_of(name)?;
        let d = self.file.dataset(name).map_err(|e| self.hdf5(name, e))?;
        match d.read_i64() {
            Ok(v) => Ok(v),
            Err(_) => d
                .read_i32()
                .map(|v| v.into_iter().map(i64::from).collect())
                .map_err(|e| self.hdf5(name, e)),
        }
    }

    fn int(&self, name: &str) -> Result<i64, FclibError> {
        let v = self.ints(name)?;
        v.first()
            .copied()
            .ok_or_else(|| self.layout(name, "one integer"))
    }

    fn count(&self, name: &str) -> Result<usize, FclibError> {
        let v = self.int(name)?;
        usize::try_from(v).map_err(|_| self.layout(name, format!("a count ≥ 0, got {v}")))
    }

    fn matrix(&self, group: &str) -> Result<Triplets, FclibError> {
        let m = self.count(&format!("{group}/m"))?;
        let n = self.count(&format!("{group}/n"))?;
        let nz = self.int(&format!("{group}/nz"))?;
        let p = self.ints(&format!("{group}/p"))?;
        let i = self.ints(&format!("{group}/i"))?;
        let x = self.f64s(&format!("{group}/x"))?;
        let index = |what: &str, v: i64, bound: usize| -> Result<usize, FclibError> {
            usize::try_from(v)
                .ok()
                .filter(|&k| k < bound)
                .ok_or_else(|| {
                    self.layout(
                        &format!("{group}/{what}"),
                        format!("indices in [0, {bound}), found {v}"),
                    )
                })
        };
        let mut entries = Vec::new();
        match nz {
            nz if nz >= 0 => {
                let nz = nz as usize;
                if p.len() < nz || i.len() < nz || x.len() < nz {
                    return Err(
                        self.layout(group, format!("at least nz = {nz} entries in p, i and x"))
                    );
                }
                for k in 0..nz {
                    entries.push((index("i", i[k], m)?, index("p", p[k], n)?, x[k]));
                }
            }
            -1 | -2 => {
                let (outer, inner) = if nz == -1 { (n, m) } else { (m, n) };
                if p.len() != outer + 1 {
                    return Err(self.layout(
                        &format!("{group}/p"),
                        format!(
                            "{} pointers (compressed storage of {outer} {})",
                            outer + 1,
                            if nz == -1 { "columns" } else { "rows" }
                        ),
                    ));
                }
                let end = usize::try_from(p[outer])
                    .ok()
                    .filter(|&e| e <= i.len() && e <= x.len());
                let end = end.ok_or_else(|| {
                    self.layout(&format!("{group}/p"), "a last pointer within i and x")
                })?;
                for o in 0..outer {
                    let a = index("p", p[o], end + 1)?;
                    let b = index("p", p[o + 1], end + 1)?;
                    if b < a {
                        return Err(self.layout(&format!("{group}/p"), "nondecreasing pointers"));
                    }
                    for k in a..b {
                        let inn = index("i", i[k], inner)?;
                        entries.push(if nz == -1 {
                            (inn, o, x[k])
                        } else {
                            (o, inn, x[k])
                        });
                    }
                }
            }
            other => {
                return Err(self.layout(&format!("{group}/nz"), format!("nz ≥ 0 (triplets), −1 (compressed columns) or −2 (compressed rows), got {other}")));
            }
        }
        if let Some(&(r, c, _)) = entries.iter().find(|e| !e.2.is_finite()) {
            return Err(self.layout(group, format!("finite values; entry ({r}, {c}) is not")));
        }
        Ok(Triplets { m, n, nz, entries })
    }

    fn vectors3(&self, name: &str, points: usize) -> Result<Option<Vec<Vector3<f64>>>, FclibError> {
        if !self.has(name) {
            return Ok(None);
        }
        let v = self.f64s(name)?;
        if v.len() != 3 * points {
            return Err(self.layout(
                name,
                format!("{} values (3 per contact), found {}", 3 * points, v.len()),
            ));
        }
        Ok(Some(
            v.chunks_exact(3)
                .map(|c| Vector3::new(c[0], c[1], c[2]))
                .collect(),
        ))
    }
}

/// Reads an FCLIB file, refusing one that would need more than `max_bytes` of memory.
pub fn read(path: &Path, max_bytes: u64) -> Result<FclibProblem, FclibError> {
    let size = std::fs::metadata(path)
        .map_err(|e| FclibError::Hdf5 {
            path: path.to_path_buf(),
            what: "the file".into(),
            message: e.to_string(),
        })?
        .len();
    if size > max_bytes {
        return Err(FclibError::TooLarge {
            path: path.to_path_buf(),
            what: "the file itself".into(),
            needed: size,
            limit: max_bytes,
        });
    }
    let file = hdf5_pure::File::open(path).map_err(|e| FclibError::Hdf5 {
        path: path.to_path_buf(),
        what: "the file".into(),
        message: e.to_string(),
    })?;
    let rd = Reader {
        path,
        file,
        limit: max_bytes,
    };
    let global = rd.has("fclib_global/vectors/mu");
    let root = if global {
        "fclib_global"
    } else {
        "fclib_local"
    };
    if !global && !rd.has("fclib_local/vectors/mu") {
        return Err(rd.layout("/", "a group fclib_local or fclib_global with vectors/mu"));
    }
    let dim = rd.int(&format!("{root}/spacedim"))?;
    if dim != 3 {
        return Err(rd.layout(
            &format!("{root}/spacedim"),
            format!("3 (three-dimensional contact), got {dim}"),
        ));
    }
    let mu = rd.f64s(&format!("{root}/vectors/mu"))?;
    let nc = mu.len();
    let rows = 3 * nc;
    let mut compressed_rows = false;
    let (q, w) = if global {
        reduce_global(&rd, rows)?
    } else {
        let q = rd.f64s("fclib_local/vectors/q")?;
        let w = rd.matrix("fclib_local/W")?;
        if w.m != rows || w.n != rows || q.len() != rows {
            return Err(rd.layout(
                "fclib_local",
                format!(
                    "W of {rows}×{rows} and q of {rows} for {nc} contacts, found W {}×{} and q {}",
                    w.m,
                    w.n,
                    q.len()
                ),
            ));
        }
        compressed_rows = w.nz == -2;
        (q, w.entries)
    };
    let mut blocks: BTreeMap<(usize, usize), Matrix3<f64>> = BTreeMap::new();
    for (i, j, v) in w {
        blocks.entry((i / 3, j / 3)).or_insert_with(Matrix3::zeros)[(i % 3, j % 3)] += v;
    }
    let laws = mu
        .iter()
        .map(|&m| Law::Contact {
            friction: m,
            restitution: 0.0,
        })
        .collect();
    let qv = q
        .chunks_exact(3)
        .map(|c| Vector3::new(c[0], c[1], c[2]))
        .collect();
    let triplets = blocks.into_iter().map(|((i, j), b)| (i, j, b)).collect();
    let problem =
        Problem::from_blocks(laws, qv, triplets).map_err(|source| FclibError::Problem {
            path: path.to_path_buf(),
            source,
        })?;
    let title = rd
        .file
        .dataset(&format!("{root}/info/title"))
        .ok()
        .and_then(|d| d.read_string().ok())
        .and_then(|v| v.into_iter().next())
        .unwrap_or_default()
        .trim()
        .to_string();
    Ok(FclibProblem {
        problem,
        global,
        title,
        solution: rd.vectors3("solution/r", nc)?,
        guess: rd.vectors3("guesses/1/r", nc)?,
        compressed_rows,
    })
}

/// `W = Hᵀ M⁻¹ H` (as triplets, zeros dropped) and `q = Hᵀ M⁻¹ f + w` (C13).
fn reduce_global(rd: &Reader, rows: usize) -> Result<(Vec<f64>, Entries), FclibError> {
    let m = rd.matrix("fclib_global/M")?;
    let h = rd.matrix("fclib_global/H")?;
    let f = rd.f64s("fclib_global/vectors/f")?;
    let wv = rd.f64s("fclib_global/vectors/w")?;
    let n = m.n;
    if m.m != n || h.m != n || h.n != rows || f.len() != n || wv.len() != rows {
        return Err(rd.layout("fclib_global", format!("M square of the size of f, H with as many rows as M and 3 columns per contact ({rows}), w of {rows}; found M {}×{}, H {}×{}, f {}, w {}", m.m, m.n, h.m, h.n, f.len(), wv.len())));
    }
    // Dense W (rows²) and one dense column of M⁻¹H at a time.
    rd.budget(
        "the reduced matrix W = Hᵀ M⁻¹ H",
        (rows as u64)
            .pow(2)
            .saturating_mul(8)
            .saturating_add(8 * n as u64),
    )?;
    let csr = |t: &Triplets| {
        let coo = {
            let mut c = nalgebra_sparse::CooMatrix::new(t.m, t.n);
            for &(i, j, v) in &t.entries {
                c.push(i, j, v);
            }
            c
        };
        CsrMatrix::from(&coo)
    };
    let mm = csr(&m);
    let factor = Factorization::new(&mm, Symmetry::Symmetric)
        .or_else(|_| Factorization::new(&mm, Symmetry::Unsymmetric))
        .map_err(|e| rd.layout("fclib_global/M", format!("an invertible mass matrix ({e})")))?;
    // Columns of H (compressed), for Hᵀ x.
    let mut hcols: Vec<Vec<(usize, f64)>> = vec![Vec::new(); rows];
    for &(i, j, v) in &h.entries {
        hcols[j].push((i, v));
    }
    let ht_times = |x: &[f64], out: &mut [f64]| {
        for (k, col) in hcols.iter().enumerate() {
            out[k] = col.iter().map(|&(i, v)| v * x[i]).sum();
        }
    };
    let mut x = f.clone();
    factor.solve_in_place(&mut x);
    let mut q = vec![0.0; rows];
    ht_times(&x, &mut q);
    for (qk, wk) in q.iter_mut().zip(&wv) {
        *qk += wk;
    }
    let mut entries = Vec::new();
    let mut col = vec![0.0; rows];
    for j in 0..rows {
        x.iter_mut().for_each(|v| *v = 0.0);
        for &(i, v) in &hcols[j] {
            x[i] += v;
        }
        factor.solve_in_place(&mut x);
        ht_times(&x, &mut col);
        for (i, &v) in col.iter().enumerate() {
            if v != 0.0 {
                entries.push((i, j, v));
            }
        }
    }
    Ok((q, entries))
}
