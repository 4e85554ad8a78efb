//! The YAML input schema: the whole file, and the registry of models.
//!
//! Unknown keys are refused everywhere (`deny_unknown_fields`), so a misspelt key is an error
//! rather than a silently ignored default. Parsing errors carry the YAML line and column
//! (from `serde-saphyr`); range checks after parsing name the YAML path (`time.dt`). The
//! shared sections are `fem_model::input`'s, each model's section its model crate's; the
//! reference for every key is `docs/input.md`.

use std::any::Any;
use std::path::Path;

use fem_model::input::{
    ContactInput, DirichletInput, FixedInput, InitialInput, MeshInput, OutputInput, TimeInput,
};
use fem_model::resources::Budget;
use fem_model::resources::OutputEstimate;
use fem_model::{InputError, Model, Sections};
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// The models an input file may name under `model:`: an enum with one variant per model, each
/// holding its section, made by [`registry!`](crate::registry). `fem`'s own is [`ModelInput`];
/// a downstream program makes its own with its models added and runs it with
/// [`crate::cli::main`].
pub trait ModelRegistry: DeserializeOwned + std::fmt::Debug {
    /// Refuses what the model does not read, then builds it.
    fn build(&self, sections: &Sections<'_>) -> Result<Box<dyn Model>, InputError>;
    /// Refuses what the model does not read, then checks it as `fem check` does
    /// ([`fem_model::ModelSection::check`]: possibly without building it).
    fn check(
        &self,
        sections: &Sections<'_>,
        options: fem_model::CheckOptions,
    ) -> Result<fem_model::Checked, InputError>;
    /// The model's key under `model:`.
    fn name(&self) -> &'static str;
    /// The model's section, for a caller that handles one section type specially (the
    /// distributed solid).
    fn section(&self) -> &dyn Any;
}

/// A whole input file, its model one of the registry `M`'s.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, bound(deserialize = "M: DeserializeOwned"))]
pub struct Input<M = ModelInput> {
    /// Where the mesh comes from (models on a mesh; the others need none).
    #[serde(default)]
    pub mesh: Option<MeshInput>,
    /// The model: one of the registry's.
    pub model: M,
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
    /// The largest memory estimate the model's builder checked (not read from the file).
    #[serde(skip)]
    pub memory: std::cell::Cell<f64>,
}

impl<M: ModelRegistry> Input<M> {
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
            memory: &self.memory,
            scheme: None,
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

    /// Validates the whole input as [`build_within`](Self::build_within) does and describes
    /// the run, for `fem check`: a model may do so without building itself
    /// ([`fem_model::ModelSection::check`]).
    pub fn check_within(
        &self,
        path: &Path,
        budget: &Budget,
        options: fem_model::CheckOptions,
    ) -> Result<fem_model::Checked, InputError> {
        self.model.check(&self.sections(path, *budget), options)
    }
}

/// Makes a registry of models ([`ModelRegistry`]): an enum whose variants are the models' keys
/// under `model:` (the variant's name in snake case) holding their sections. Adding a model to
/// `fem` is adding a line to [`ModelInput`]'s; a downstream program makes its own registry
/// with `fem`'s lines and its own:
///
/// ```ignore
/// fem::registry! {
///     /// fem's models and the chain.
///     pub enum Models {
///         String => fem::string::StringSection,
///         Chain => crate::ChainSection,
///     }
/// }
/// ```
#[macro_export]
macro_rules! registry {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($variant:ident => $section:ty),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, $crate::serde::Deserialize)]
        #[serde(crate = "fem::serde", deny_unknown_fields, rename_all = "snake_case")]
        $vis enum $name {
            $(
                #[doc = concat!("`model.", stringify!($variant), "` (", stringify!($section), ")")]
                $variant(Box<$section>),
            )*
        }

        impl $crate::input::ModelRegistry for $name {
            fn build(
                &self,
                sections: &$crate::model::Sections<'_>,
            ) -> Result<Box<dyn $crate::model::Model>, $crate::model::InputError> {
                match self {
                    $($name::$variant(s) => $crate::model::build(s.as_ref(), sections),)*
                }
            }

            fn check(
                &self,
                sections: &$crate::model::Sections<'_>,
                options: $crate::model::CheckOptions,
            ) -> Result<$crate::model::Checked, $crate::model::InputError> {
                match self {
                    $($name::$variant(s) => $crate::model::check(s.as_ref(), sections, options),)*
                }
            }

            fn name(&self) -> &'static str {
                match self {
                    $($name::$variant(_) => <$section as $crate::model::ModelSection>::NAME,)*
                }
            }

            fn section(&self) -> &dyn std::any::Any {
                match self {
                    $($name::$variant(s) => s.as_ref(),)*
                }
            }
        }
    };
}

registry! {
    /// The models of `fem`: one entry per model family.
    pub enum ModelInput {
        String => fem_string::StringSection,
        ModalString => fem_modal::ModalStringSection,
        CollidingStrings => fem_string::CollidingStringsSection,
        DoublePendulum => fem_pendulum::DoublePendulumSection,
        Beam => fem_beam::BeamSection,
        RigidBodies => fem_rigid::RigidBodiesSection,
        Scene => fem_scene::SceneSection,
        Solid => fem_solid::SolidSection,
    }
}
