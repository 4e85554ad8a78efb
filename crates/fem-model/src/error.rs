//! Why an input was refused, in the user's words, with the YAML path of what is wrong.

/// An input section refused: where (the YAML path) and why (what was expected).
///
/// The `fem` program adds the file's name and returns exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A value out of range or inconsistent with the rest of the input.
    #[error("{field}: {message}")]
    Invalid {
        /// YAML path of the offending value (`time.dt`, `dirichlet[0].group`).
        field: String,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The mesh could not be read or generated, or is invalid.
    #[error("{field}: {source}")]
    Mesh {
        /// YAML path that named the mesh.
        field: String,
        /// The mesh error (it names the mesh file).
        source: Box<fem_mesh::MeshError>,
    },
}

impl InputError {
    /// A value refused at `field` because of `message`.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        InputError::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The YAML path of the refused value.
    pub fn field(&self) -> &str {
        match self {
            InputError::Invalid { field, .. } | InputError::Mesh { field, .. } => field,
        }
    }
}
