//! Quadrature rules, shape functions and element kernels.
//!
//! Element kernels are plain functions of an element's reference data (node coordinates,
//! material constants) that fill caller-owned buffers. They know nothing about global
//! numbering, sparse storage or time stepping; `fem-assembly` scatters what they return.
//!
//! | module | what it holds |
//! |---|---|
//! | [`quadrature`] | Gauss–Legendre rules on the reference interval |
//! | [`string`] | the P1 string element (Glowinski–Holmström §3.1, eq. (52)–(55)) |
//! | [`hermite`] | the Hermite cubic beam element (Glowinski–Holmström §4.3) |
//! | [`solid`] | total-Lagrangian tet4/hex8/tet10 solids: shapes, rules, materials, kernels |

pub mod hermite;
pub mod quadrature;
pub mod solid;
pub mod string;

pub use hermite::HermiteCubic;
pub use string::{P1String, StringMaterial};
