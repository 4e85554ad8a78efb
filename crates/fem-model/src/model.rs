//! The `Model` interface: what a model family gives the run loop, and how it is built from its
//! input section.
//!
//! A model owns its stepper (a [`Stepper`]) and knows how to show its state: the columns of
//! `history.csv` after the common `step,t,kinetic,potential,total`, the ParaView frame, and
//! optional probes. It is built by its section ([`ModelSection::build`]), which validates the
//! section against the rest of the input; [`build`] first refuses, in one place, every
//! top-level section and setting the model does not use, so `fem check` and `fem run` (which
//! both call it) can never disagree.

use std::path::Path;

use fem_io::Frame;
use fem_time::{Energy, StateField, StepError, StepReport, Stepper, TimeGrid};
use serde::de::DeserializeOwned;

use crate::error::InputError;
use crate::input::{
    ContactInput, DirichletInput, FixedInput, InitialInput, MeshInput, OfferedScheme, OutputInput,
    TimeInput, TimeSetting,
};
use crate::resources::{BASE_MEMORY, Budget, OutputEstimate, check_output, check_output_memory};

/// A model being run: its stepper, and what it writes.
pub trait Model {
    /// What `fem check` prints about the model (size, scheme, stability), one line each.
    fn describe(&self) -> Vec<String>;
    /// The time grid of the run.
    fn grid(&self) -> TimeGrid;
    /// The model's stepper.
    fn stepper(&self) -> &dyn Stepper;
    /// The model's stepper, to step it.
    fn stepper_mut(&mut self) -> &mut dyn Stepper;
    /// Bookkeeping after each step (multiplier updates, say); nothing by default.
    fn after_step(&mut self, report: &StepReport) -> Result<(), StepError> {
        let _ = report;
        Ok(())
    }
    /// The energy of the common history columns (the stepper's by default; `None` writes
    /// empty cells).
    fn energy(&self) -> Option<Energy> {
        self.stepper().energy()
    }
    /// Names of the model's own history columns, after `step,t,kinetic,potential,total`.
    fn history_columns(&self) -> Vec<String>;
    /// Their values at the current step; `report` is the last step's (default at step 0).
    fn history_values(&self, report: &StepReport, out: &mut Vec<f64>);
    /// The ParaView frame of the current state.
    fn frame(&mut self) -> Frame<'_>;
    /// Names of the columns of `probes.csv` after `t`, if the model writes probes.
    fn probe_columns(&self) -> Vec<String> {
        Vec::new()
    }
    /// The probe values at the current step.
    fn probe_values(&self, out: &mut Vec<f64>) {
        let _ = out;
    }
    /// Everything a restart needs, as named arrays: the stepper's state by default. A model
    /// that keeps state of its own between steps (beyond what it recomputes in `after_step`)
    /// adds it here and takes it back in [`Model::restore`].
    fn save(&self) -> Vec<StateField<'_>> {
        self.stepper().state()
    }
    /// Restores what [`Model::save`] returned at step `step_index`, so that the following
    /// steps and outputs are bitwise those of the run that saved it.
    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        self.stepper_mut().restore(step_index, fields)
    }
    /// Names of further frame series the model writes beside its frames, at the same steps,
    /// as `BASE_NAME.pvd` (a scene's contact points: `contacts`); none by default. Their frames
    /// are [`Model::extra_frame`]'s. They are written as `.pvd` series whatever the output
    /// format, and only by a run on one process.
    fn extra_series(&self) -> Vec<&'static str> {
        Vec::new()
    }
    /// The frame of further series `k` (the `k`-th of [`Model::extra_series`]) now: `None`
    /// by default and for a `k` beyond them.
    fn extra_frame(&mut self, k: usize) -> Option<Frame<'_>> {
        let _ = k;
        None
    }
    /// How the frames are best looked at (the ParaView view written beside the series):
    /// camera, warp, colour, obstacles and supports. By default an oblique view, no warp.
    fn view(&self) -> fem_io::View {
        fem_io::View::default()
    }
    /// The model linearized about its initial state (stiffness, mass, held dofs), for modal
    /// analysis (`fem modes`); `None` (the default) for a model that offers none.
    fn linearization(&self) -> Option<crate::vibration::LinearizationResult> {
        None
    }
}

/// Whether a model needs a mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshUse {
    /// The model runs on a mesh from the `mesh` section.
    Required,
    /// The model builds its own geometry; `mesh` is refused.
    Refused,
}

/// Which top-level sections and settings a model reads; everything else is refused.
#[derive(Clone, Copy, Debug)]
pub struct Uses {
    /// The `mesh` section.
    pub mesh: MeshUse,
    /// `fixed`.
    pub fixed: bool,
    /// `dirichlet`.
    pub dirichlet: bool,
    /// `contact`.
    pub contact: bool,
    /// `initial.displacement` and `initial.velocity`.
    pub initial: bool,
    /// `initial.exact_start`.
    pub exact_start: bool,
    /// `output.probes`.
    pub probes: bool,
    /// `output.samples`.
    pub samples: bool,
    /// The time schemes the model can be stepped by; the first is the default.
    pub schemes: &'static [OfferedScheme],
}

impl Uses {
    /// A model on a mesh that reads `fixed`, `dirichlet` and `initial`.
    pub const ON_A_MESH: Uses = Uses {
        mesh: MeshUse::Required,
        fixed: true,
        dirichlet: true,
        contact: false,
        initial: true,
        exact_start: false,
        probes: false,
        samples: false,
        schemes: &[],
    };

    /// A model that builds its own geometry and takes its initial state in its own section.
    pub const OWN_GEOMETRY: Uses = Uses {
        mesh: MeshUse::Refused,
        fixed: false,
        dirichlet: false,
        contact: false,
        initial: false,
        exact_start: false,
        probes: false,
        samples: false,
        schemes: &[],
    };
}

/// Everything in an input file but the model's own section.
#[derive(Clone, Copy, Debug)]
pub struct Sections<'a> {
    /// The input file (relative file names are resolved from its folder).
    pub path: &'a Path,
    /// `mesh`.
    pub mesh: Option<&'a MeshInput>,
    /// `fixed`.
    pub fixed: &'a [FixedInput],
    /// `dirichlet`.
    pub dirichlet: &'a [DirichletInput],
    /// `contact`.
    pub contact: Option<&'a ContactInput>,
    /// `initial`.
    pub initial: &'a InitialInput,
    /// `time`.
    pub time: &'a TimeInput,
    /// `output`.
    pub output: &'a OutputInput,
    /// The memory and disk the run may claim; every count is checked against it before it
    /// is allocated.
    pub budget: Budget,
    /// Where [`Sections::check_output`] leaves its estimate of the output, for `fem check` to
    /// print.
    pub estimate: &'a std::cell::Cell<Option<OutputEstimate>>,
    /// The largest memory estimate [`Sections::check_memory`] checked ([`BASE_MEMORY`]
    /// included): the model's, which [`Sections::check_output`] adds the output's to.
    pub memory: &'a std::cell::Cell<f64>,
    /// The scheme the run is stepped by, once [`check_uses`] has resolved `time.scheme`
    /// against the model's list (`None` before).
    pub scheme: Option<&'static OfferedScheme>,
}

impl Sections<'_> {
    /// The name of the scheme the run is stepped by: the one [`check_uses`] resolved (the
    /// model's default when `time.scheme` is not given), else `time.scheme` as written.
    pub fn scheme_name(&self) -> &str {
        match (self.scheme, &self.time.scheme) {
            (Some(s), _) => s.name,
            (None, Some(name)) => name,
            (None, None) => "",
        }
    }

    /// The error of a scheme a model's build does not handle although its `uses` lists it (a
    /// programming error of the model, reported rather than panicking).
    pub fn unhandled_scheme(&self, model: &str) -> InputError {
        InputError::invalid(
            "time.scheme",
            format!(
                "model.{model} lists the scheme '{}' but does not build it",
                self.scheme_name()
            ),
        )
    }

    /// The folder relative file names are resolved from.
    pub fn base_dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// Refuses `what` at `field` when `bytes` (the model's estimate, [`BASE_MEMORY`] added
    /// here) are beyond the memory budget.
    pub fn check_memory(&self, field: &str, what: &str, bytes: f64) -> Result<(), InputError> {
        let output = self.estimate.get().map_or(0.0, |e| e.memory);
        self.budget
            .check_memory(field, what, BASE_MEMORY + bytes + output)?;
        self.memory.set(self.memory.get().max(BASE_MEMORY + bytes));
        Ok(())
    }

    /// Refuses an output beyond [`MAX_FRAMES`](crate::resources::MAX_FRAMES) frames or the disk
    /// budget: frames of `frame_bytes` each (see
    /// [`frame_bytes`](crate::resources::frame_bytes)) every `output.every` steps of `grid`
    /// (or of the budget's [`steps`](Budget::steps), `--max-steps`, when fewer), and
    /// `history.csv` rows of `columns` numbers. The estimate is left in
    /// [`estimate`](Self::estimate).
    pub fn check_output(
        &self,
        grid: &TimeGrid,
        frame_bytes: f64,
        columns: f64,
    ) -> Result<(), InputError> {
        let steps = self
            .budget
            .steps
            .map_or(grid.n_steps(), |m| m.min(grid.n_steps()));
        let estimate = check_output(
            &self.budget,
            steps,
            self.output.every,
            frame_bytes,
            self.output.history_every,
            columns,
        )?;
        // A compressed VTKHDF step is written by a thread of its own holding a copy of the
        // frame (fem-io's VtkHdfSeries): that copy beside the model's estimate.
        let compressing_thread = self.output.format == crate::input::FormatKind::Vtkhdf
            && self.output.compression != crate::input::CompressionKind::None;
        let memory = check_output_memory(
            &self.budget,
            self.memory.get().max(BASE_MEMORY),
            frame_bytes,
            compressing_thread,
        )?;
        self.estimate
            .set(Some(OutputEstimate { memory, ..estimate }));
        Ok(())
    }
}

/// A model's input section (`model.NAME`): it says what else it reads and builds the model.
pub trait ModelSection: DeserializeOwned {
    /// The model's key under `model:` (`string`, `beam`).
    const NAME: &'static str;
    /// What the model reads besides its section.
    fn uses(&self) -> Uses;
    /// Validates the section with the rest of the input and builds the model, its stepper
    /// included (so a step above a stability bound, say, is refused here).
    fn build(&self, input: &Sections<'_>) -> Result<Box<dyn Model>, InputError>;
    /// What `fem check` reports: by default the model is built ([`build`](Self::build)) and
    /// described. A model whose build is costly (a large solid's operator, the Lanczos
    /// refinement of its critical step) may validate the same input and describe the run
    /// without building it, refusing what the build would refuse.
    fn check(&self, input: &Sections<'_>, options: CheckOptions) -> Result<Checked, InputError> {
        let _ = options;
        check_by_building(self, input)
    }
}

/// [`ModelSection::check`]'s default: builds the model as a run does, refuses an initial
/// energy that is not a number (as [`build`] does) and describes it.
pub fn check_by_building<M: ModelSection>(
    section: &M,
    input: &Sections<'_>,
) -> Result<Checked, InputError> {
    let model = section.build(input)?;
    check_initial_energy(M::NAME, model.as_ref())?;
    Ok(Checked {
        describe: model.describe(),
        grid: model.grid(),
    })
}

/// What `fem check` asks of a model beyond the validation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// Compute the explicit critical step of the assembled body (the Lanczos refinement of
    /// the element bound) even where the element bound answers (`fem check --critical-step`).
    pub critical_step: bool,
    /// Compute a modal model's modes (the eigen-solve the run starts with) and report their
    /// frequencies (`fem check --modes`); without it a modal solid is checked without them.
    pub modes: bool,
}

/// What `fem check` prints of a model: its description and its time grid.
#[derive(Clone, Debug)]
pub struct Checked {
    /// As [`Model::describe`].
    pub describe: Vec<String>,
    /// As [`Model::grid`]: the run's grid, or with `auto_dt` and no refinement the grid of
    /// the shortest step the run can take (the most frames it can write).
    pub grid: TimeGrid,
}

/// [`build`]'s checks, then the model's [`ModelSection::check`]: the one path of `fem check`.
pub fn check<M: ModelSection>(
    section: &M,
    input: &Sections<'_>,
    options: CheckOptions,
) -> Result<Checked, InputError> {
    let scheme = check_uses(M::NAME, &section.uses(), input)?;
    section.check(
        &Sections {
            scheme: Some(scheme),
            ..*input
        },
        options,
    )
}

/// Refuses what the model does not read, then builds it: the one path of `fem check` and
/// `fem run`.
pub fn build<M: ModelSection>(
    section: &M,
    input: &Sections<'_>,
) -> Result<Box<dyn Model>, InputError> {
    let scheme = check_uses(M::NAME, &section.uses(), input)?;
    let model = section.build(&Sections {
        scheme: Some(scheme),
        ..*input
    })?;
    check_initial_energy(M::NAME, model.as_ref())?;
    Ok(model)
}

/// Refuses an initial state whose energy is not a number: an initial value so large that its
/// energy overflows (an angular velocity of 1e200) would otherwise pass `fem check` and stop
/// `fem run` at step 0.
fn check_initial_energy(name: &str, model: &dyn Model) -> Result<(), InputError> {
    let Some(e) = model.stepper().energy() else {
        return Ok(());
    };
    for (what, v) in [
        ("kinetic", e.kinetic),
        ("potential", e.potential),
        ("total", e.total),
    ] {
        if !v.is_finite() {
            return Err(InputError::invalid(
                format!("model.{name}"),
                format!(
                    "the initial state's {what} energy is not a finite number ({v}): an initial \
                     value (a velocity, an angular velocity, a displacement) is too large to compute \
                     with"
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses every section and setting a model does not read; returns the scheme `time.scheme`
/// names among the model's (its first when not given).
pub fn check_uses(
    name: &str,
    uses: &Uses,
    input: &Sections<'_>,
) -> Result<&'static OfferedScheme, InputError> {
    let not_for = |field: &str| {
        InputError::invalid(
            field,
            format!("'{field}' does not apply to model.{name}: remove it"),
        )
    };
    match (uses.mesh, input.mesh) {
        (MeshUse::Required, None) => {
            return Err(InputError::invalid(
                "mesh",
                format!("model.{name} needs a mesh: give 'mesh' with 'file', 'line' or 'box'"),
            ));
        }
        (MeshUse::Refused, Some(_)) => {
            return Err(InputError::invalid(
                "mesh",
                format!("model.{name} needs no mesh (it builds its own geometry): remove 'mesh'"),
            ));
        }
        _ => {}
    }
    if !uses.fixed && !input.fixed.is_empty() {
        return Err(not_for("fixed"));
    }
    if !uses.dirichlet && !input.dirichlet.is_empty() {
        return Err(not_for("dirichlet"));
    }
    if !uses.contact && input.contact.is_some() {
        return Err(not_for("contact"));
    }
    let initial = input.initial;
    if !uses.initial
        && (initial.displacement != Default::default() || initial.velocity != Default::default())
    {
        return Err(InputError::invalid(
            "initial",
            format!("model.{name} takes its initial state in its own section: remove 'initial'"),
        ));
    }
    if !uses.exact_start && initial.exact_start {
        return Err(not_for("initial.exact_start"));
    }
    if !uses.probes && !input.output.probes.is_empty() {
        return Err(not_for("output.probes"));
    }
    if !uses.samples && input.output.samples.is_some() {
        return Err(not_for("output.samples"));
    }
    let scheme = resolve_scheme(name, uses, input.time)?;
    for setting in TimeSetting::ALL {
        if setting.is_given(input.time) && !scheme.settings.contains(&setting) {
            let field = setting.key();
            return Err(InputError::invalid(
                field,
                format!(
                    "the scheme '{}' has no such setting: remove '{field}'",
                    scheme.name
                ),
            ));
        }
    }
    if input.output.every == 0 {
        return Err(InputError::invalid(
            "output.every",
            "expected a positive number of steps between frames, got 0",
        ));
    }
    if input.output.checkpoint_every == Some(0) {
        return Err(InputError::invalid(
            "output.checkpoint_every",
            "expected a positive number of steps between checkpoints, got 0",
        ));
    }
    if input.output.precision.is_some() && input.output.format != crate::input::FormatKind::Vtkhdf {
        return Err(InputError::invalid(
            "output.precision",
            "the precision applies to 'format: vtkhdf' only (.vtu files are written in double precision): remove it or add 'format: vtkhdf'",
        ));
    }
    if input.output.history_every == 0 {
        return Err(InputError::invalid(
            "output.history_every",
            "expected a positive number of steps between rows, got 0",
        ));
    }
    Ok(scheme)
}

/// The scheme `time.scheme` names among the model's, or the model's first.
fn resolve_scheme(
    name: &str,
    uses: &Uses,
    time: &TimeInput,
) -> Result<&'static OfferedScheme, InputError> {
    let listed = || {
        let names: Vec<&str> = uses.schemes.iter().map(|s| s.name).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    };
    match &time.scheme {
        None => uses.schemes.first().ok_or_else(|| {
            InputError::invalid("time.scheme", format!("model.{name} offers no time scheme"))
        }),
        Some(given) => uses
            .schemes
            .iter()
            .find(|s| s.name == given)
            .ok_or_else(|| {
                InputError::invalid(
                    "time.scheme",
                    format!(
                        "model.{name} is stepped by {}; '{given}' does not apply to it",
                        listed()
                    ),
                )
            }),
    }
}
