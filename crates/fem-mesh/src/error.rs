//! The error type of this crate.

use std::path::{Path, PathBuf};

use crate::cell::CellKind;

/// Everything that can go wrong when reading, generating or validating a mesh.
///
/// Messages name the file (when reading one) and say what was expected, so that
/// they can be shown to a user as they are.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    /// The mesh file could not be read.
    #[error("cannot read mesh file {}: {source}", path.display())]
    Io {
        /// The file that could not be read.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// The path names something other than a regular file (a device, a pipe, a folder).
    #[error("{} is {kind}, not a mesh file: give the path of a .msh file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is: `a character device`, `a folder`.
        kind: &'static str,
    },

    /// The file is larger, or announces more, than may be read.
    #[error("{}: {message}", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// What it would take and what is allowed.
        message: String,
    },

    /// The file is a Gmsh MSH file, but not of version 4.1.
    #[error(
        "{} is MSH {found}; fem reads MSH 4.1 only — re-save with Gmsh: File > Export, \
         Version 4 ASCII/binary, or `gmsh FILE -save -format msh41`",
        path.display()
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version string found in the `$MeshFormat` section, e.g. `"2.2"`.
        found: String,
    },

    /// The file contains elements of a type that fem does not support.
    #[error(
        "{}: {count} element(s) of Gmsh type {gmsh_type} ({gmsh_name}) are not supported; \
         supported element types are {}",
        path.display(),
        CellKind::supported_list()
    )]
    UnsupportedCell {
        /// The file.
        path: PathBuf,
        /// The Gmsh element type number.
        gmsh_type: i32,
        /// A human-readable name of the Gmsh element type, e.g. `"prism6"`.
        gmsh_name: String,
        /// Number of elements of that type in the file.
        count: usize,
    },

    /// The file is not a well-formed MSH 4.1 file (truncated, corrupt, not a mesh, …).
    #[error("{} is not a valid MSH 4.1 file: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What was wrong, and where.
        message: String,
    },

    /// The file holds a partitioned mesh, which fem does not read.
    #[error(
        "{} holds a partitioned mesh ($PartitionedEntities), which fem does not read — \
         re-save the unpartitioned mesh (in Gmsh: Mesh > Unpartition, then save)",
        path.display()
    )]
    Partitioned {
        /// The file.
        path: PathBuf,
    },

    /// The file stores parametric node coordinates, which fem does not read.
    #[error(
        "{} stores parametric node coordinates, which fem does not read — re-save without \
         them (Gmsh option Mesh.SaveParametric = 0, or untick \"Save parametric coordinates\")",
        path.display()
    )]
    ParametricNodes {
        /// The file.
        path: PathBuf,
    },

    /// A cell failed [`Mesh::validate`](crate::Mesh::validate).
    #[error("{}block {block} ({kind}), cell {cell}: {reason}", file_prefix(path.as_deref()))]
    InvalidCell {
        /// The file the mesh was read from, if any.
        path: Option<PathBuf>,
        /// Index of the block in [`Mesh::blocks`](crate::Mesh::blocks).
        block: usize,
        /// Index of the cell within the block.
        cell: usize,
        /// Kind of the cells in the block.
        kind: CellKind,
        /// What is wrong with the cell.
        reason: String,
    },

    /// A node failed [`Mesh::validate`](crate::Mesh::validate) (non-finite coordinates).
    #[error("{}node {node}: {reason}", file_prefix(path.as_deref()))]
    InvalidNode {
        /// The file the mesh was read from, if any.
        path: Option<PathBuf>,
        /// 0-based node index.
        node: usize,
        /// What is wrong with the node.
        reason: String,
    },

    /// A physical group refers to cells or nodes that do not exist.
    #[error("{}physical group \"{group}\": {reason}", file_prefix(path.as_deref()))]
    InvalidGroup {
        /// The file the mesh was read from, if any.
        path: Option<PathBuf>,
        /// Name of the group.
        group: String,
        /// What is wrong with the group.
        reason: String,
    },

    /// A mesh generator was called with an invalid parameter.
    #[error("invalid mesh parameter {what} = {value}: expected {expected}")]
    InvalidParameter {
        /// The parameter, e.g. `"n_cells"`.
        what: &'static str,
        /// The value given, formatted.
        value: String,
        /// What would have been accepted.
        expected: &'static str,
    },
}

fn file_prefix(path: Option<&Path>) -> String {
    match path {
        Some(p) => format!("{}: ", p.display()),
        None => String::new(),
    }
}

impl MeshError {
    /// Attaches `path` to a validation error (`InvalidCell`, `InvalidNode`,
    /// `InvalidGroup`); other variants are returned unchanged.
    pub fn with_path(self, file: &Path) -> MeshError {
        match self {
            MeshError::InvalidCell {
                block,
                cell,
                kind,
                reason,
                ..
            } => MeshError::InvalidCell {
                path: Some(file.to_path_buf()),
                block,
                cell,
                kind,
                reason,
            },
            MeshError::InvalidNode { node, reason, .. } => MeshError::InvalidNode {
                path: Some(file.to_path_buf()),
                node,
                reason,
            },
            MeshError::InvalidGroup { group, reason, .. } => MeshError::InvalidGroup {
                path: Some(file.to_path_buf()),
                group,
                reason,
            },
            other => other,
        }
    }
}
