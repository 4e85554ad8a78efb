//! Meshes for fem: the [`Mesh`] type, a reader for Gmsh MSH 4.1 files
//! ([`read_msh`]) and built-in generators ([`generate`]).
//!
//! A mesh is a list of node coordinates, blocks of cells (one [`CellBlock`]
//! per [`CellKind`], flat 0-based connectivity) and named [`PhysicalGroup`]s
//! that refer to cells as `(block, cell)` pairs and list their nodes.
//!
//! # Node ordering
//!
//! Node order within a cell is Gmsh's, for meshes read from files and for
//! generated ones alike. Corner nodes come first. The reference coordinates are
//! given by [`CellKind::reference_nodes`]; tet4/tet10/hex8 cells have positive
//! volume in this order ([`Mesh::validate`] checks it).
//!
//! ```text
//! line2, line3 (xi in [-1, 1]):
//!
//!     0-----------1        0-----2-----1
//!
//! tri3 (unit triangle)     quad4 (xi, eta in [-1, 1])
//!
//! v                               v
//! ^                               ^
//! |                         3-----------2
//! 2                         |     |     |
//! |`\                       |     |     |
//! |  `\                     |     +-----|---> u
//! |    `\                   |           |
//! |      `\                 |           |
//! 0--------1 --> u          0-----------1
//!
//! tri6 = tri3 plus mid-edge nodes 3:(0,1) 4:(1,2) 5:(2,0).
//!
//! tet4 = corners 0..3 of tet10 (unit tetrahedron); tet10 mid-edge nodes are
//! 4:(0,1) 5:(1,2) 6:(2,0) 7:(3,0) 8:(3,2) 9:(3,1):
//!
//!                    v
//!                  .
//!                ,/
//!               /
//!            2
//!          ,/|`\
//!        ,/  |  `\
//!      ,6    '.   `5
//!    ,/       8     `\
//!  ,/         |       `\
//! 0--------4--'.--------1 --> u
//!  `\.         |      ,/
//!     `\.      |    ,9
//!        `7.   '. ,/
//!           `\. |/
//!              `3
//!                 `\.
//!                    ` w
//!
//! hex8 (xi, eta, zeta in [-1, 1]):
//!
//!        v
//! 3----------2
//! |\     ^   |\
//! | \    |   | \
//! |  \   |   |  \
//! |   7------+---6
//! |   |  +-- |-- | -> u
//! 0---+---\--1   |
//!  \  |    \  \  |
//!   \ |     \  \ |
//!    \|      w  \|
//!     4----------5
//! ```
//!
//! (Gmsh manual, section "Node ordering".)
//!
//! # Reading Gmsh files
//!
//! Only MSH 4.1 is read (ASCII or binary); other versions, partitioned meshes,
//! parametric node coordinates and element types other than those of
//! [`CellKind`] are refused with a [`MeshError`] that says how to fix the file.
//! Gmsh saves only the elements of physical groups unless `Mesh.SaveAll` is
//! set; whatever elements the file holds become cells.

mod cell;
mod error;
pub mod generate;
mod gmsh;
mod mesh;

pub use cell::CellKind;
pub use error::MeshError;
pub use gmsh::{
    MAX_MSH_FILE, MshSize, file_kind, read_msh, read_msh_bytes, read_msh_bytes_within,
    read_msh_within,
};
pub use mesh::{CellBlock, Mesh, PhysicalGroup};
