//! The YAML input schema: the whole file, and the registry of models.
//!
//! Unknown keys are refused everywhere (`deny_unknown_fields`), so a misspelt key is an error
//! rather than a silently ignored default. Parsing errors carry the YAML line and column
//! (from `serde-saphyr`); range checks after parsing name the YAML path (`time.dt`). The
//! shared sections are `fem_model::input`'s, each model's section its model crate's; the
//! reference for every key is `docs/input.md`.

use std::path::Path;

use fem_model::input::{
    ContactInput, DirichletInput, FixedInput, InitialInput, MeshInput, OutputInput, TimeInput,
};
use fem_model::resources::Budget;
use fem_model::resources::OutputEstimate;
use fem_model::{InputError, Model, ModelSection, Sections};
use serde::Deserialize;

/// A whole input file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Where the mesh comes from (models on a mesh; the others need none).
    #[serde(default)]
    pub mesh: Option<MeshInput>,
    /// The model: one of the registry's.
    pub model: ModelInput,
    /// Homogeneous Dirichlet conditions: dofs held at zero (eliminated).
    #[serde(default)]
    pub fixed: Vec<FixedInput>,
    /// Prescribed motion: dofs driven by functions of time (direct, rate or full control).
    #[serde(default)]
    pub dirichlet: Vec<DirichletInput>,
    /// Unilateral contact with obstacles.
    #[serde(default)]
    pub contact: Option<ContactInput>,
    /// Initial displacement and velocity.
    #[serde(default)]
    pub initial: InitialInput,
    /// Time interval and scheme.
    pub time: TimeInput,
    /// What is written, and how often.
    #[serde(default)]
    pub output: OutputInput,
    /// The output the model's builder estimated (not read from the file).
    #[serde(skip)]
    pub estimate: std::cell::Cell<Option<OutputEstimate>>,
}

impl Input {
    /// Everything but the model's section, for the model's builder, within `budget`.
    pub fn sections<'a>(&'a self, path: &'a Path, budget: Budget) -> Sections<'a> {
        Sections {
            path,
            mesh: self.mesh.as_ref(),
            fixed: &self.fixed,
            dirichlet: &self.dirichlet,
            contact: self.contact.as_ref(),
            initial: &self.initial,
            time: &self.time,
            output: &self.output,
            budget,
            estimate: &self.estimate,
        }
    }

    /// Validates the whole input and builds its model (stepper included) within the machine's
    /// budget ([`Budget::from_machine`], output in the current folder): the one path of
    /// `fem check` and `fem run`.
    pub fn build(&self, path: &Path) -> Result<Box<dyn Model>, InputError> {
        self.build_within(path, &Budget::from_machine(None)?)
    }

    /// Validates the whole input and builds its model within `budget`: every count is checked
    /// against it before anything is allocated.
    pub fn build_within(&self, path: &Path, budget: &Budget) -> Result<Box<dyn Model>, InputError> {
        self.model.build(&self.sections(path, *budget))
    }
}

/// The registry: each line names a model's key under `model:` (the variant, in snake case)
/// and its section type, which builds the model. Adding a model is adding a line.
macro_rules! registry {
    ($($variant:ident => $section:ty),* $(,)?) => {
        /// The model: one entry per model family.
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "snake_case")]
        pub enum ModelInput {
            $(
                #[doc = concat!("`model.", stringify!($variant), "` (", stringify!($section), ")")]
                $variant(Box<$section>),
            )*
        }

        impl ModelInput {
            /// Refuses what the model does not read, then builds it.
            pub fn build(&self, sections: &Sections<'_>) -> Result<Box<dyn Model>, InputError> {
                match self {
                    $(ModelInput::$variant(s) => fem_model::build(s.as_ref(), sections),)*
                }
            }

            /// The model's key under `model:`.
            pub fn name(&self) -> &'static str {
                match self {
                    $(ModelInput::$variant(_) => <$section as ModelSection>::NAME,)*
                }
            }
        }
    };
}

registry! {
    String => fem_string::StringSection,
    ModalString => fem_modal::ModalStringSection,
    CollidingStrings => fem_string::CollidingStringsSection,
    DoublePendulum => fem_pendulum::DoublePendulumSection,
    Beam => fem_beam::BeamSection,
    RigidBodies => fem_rigid::RigidBodiesSection,
    Solid => fem_solid::SolidSection,
}
