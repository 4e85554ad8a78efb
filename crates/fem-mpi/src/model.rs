//! The solid model of a distributed run: the same [`SolidModel`] as a serial run's, its
//! stepper DEF_EXP on this process's [`DistributedSolid`], its frames this process's part of
//! the body with the global numbers of its nodes and cells. The run loop (`fem_drive`) runs it
//! with [`crate::MpiProcesses`] exactly as it runs a serial model.

use std::sync::Arc;

use fem_io::VtkCells;
use fem_model::{InputError, ModelSection, Sections};
use fem_solid::model::SolidOutput;
use fem_solid::{SolidModel, SolidSection};
use fem_time::{DefExp, StepError, StepSettings};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::collective::agree;
use crate::partition::{centroids, recursive_bisection};
use crate::subdomain::Subdomain;
use crate::system::{DistributedSolid, RankSum};

/// This process's part of a distributed solid: the model the run loop runs, and the size of its
/// exchange.
#[derive(Debug)]
pub struct DistributedSolidModel {
    /// The model.
    pub model: SolidModel,
    /// Values this process sends to its neighbours per force evaluation.
    pub values_sent_per_step: usize,
    /// Cells of this process's subdomain.
    pub n_cells: usize,
}

/// Builds this process's part of the solid `section` describes with the rest of `input`: the
/// whole input is read and resolved on every process (an input error is the same on every
/// process, and agreed), the mesh split by recursive coordinate bisection, and the operator
/// built on this process's cells only. Collective.
pub fn distributed_solid_model(
    world: &SimpleCommunicator,
    section: &SolidSection,
    input: &Sections<'_>,
) -> Result<DistributedSolidModel, InputError> {
    let scheme = fem_model::check_uses(SolidSection::NAME, &section.uses(), input)?;
    if scheme.name != fem_time::leapfrog::def_exp::NAME {
        return Err(InputError::invalid(
            "time.scheme",
            format!(
                "a run on {} MPI processes needs the explicit scheme 'def_exp' (DEF_EXP); '{}' runs on one process: start it without mpirun",
                world.size(),
                scheme.name
            ),
        ));
    }
    let input = &Sections {
        scheme: Some(scheme),
        ..*input
    };
    let setup = section.setup(input)?;
    let n = setup.kind.n_nodes();
    let size = world.size() as usize;
    let parts = recursive_bisection(&centroids(&setup.mesh.points, &setup.connectivity, n), size);
    let sub = Subdomain::new(
        &setup.connectivity,
        n,
        setup.mesh.n_nodes(),
        &parts,
        world.rank() as usize,
    );
    let points: Vec<[f64; 3]> = sub.nodes.iter().map(|&v| setup.mesh.points[v]).collect();
    let mut cells = VtkCells::new();
    cells.push_block(setup.mesh_kind, &sub.connectivity);
    let (global_nodes, global_cells) = (sub.nodes.clone(), sub.cells.clone());
    let owned = sub.owned.clone();
    let n_subdomain_cells = sub.n_cells();
    let system = DistributedSolid::new(world.duplicate(), &setup, sub)?;
    let operator = system.shared_operator();
    let values_sent_per_step = system.values_sent_per_step();

    // Centre of mass of the whole body (for a rotation without a centre), as the serial model
    // computes it.
    let centre = fem_elements::solid::mass_properties(
        setup.kind,
        &setup.mesh.points,
        &setup.connectivity,
        setup.density,
    )
    .map(|p| p.center)
    .map_err(|e| InputError::invalid("mesh", e.to_string()))?;
    let v0 = system.restrict(&setup.initial_velocity(section, centre)?);
    let x0 = vec![0.0; v0.len()];
    // The element bound refined by Lanczos, as a serial run's (every dot product a collective
    // exact sum, the start a field of the dofs' positions: the same bits on any number of ranks).
    let critical =
        DefExp::estimate(&system, &x0).map_err(|e| InputError::invalid("mesh", e.to_string()))?;
    let (grid, scheme_line) = section.time_grid(input, setup.grid, critical.step.dt)?;
    let dirichlet = system.dirichlet(&setup.dirichlet);
    let settings = StepSettings::new(grid.dt())
        .starting_at(grid.t0())
        .with_dirichlet(dirichlet);
    let check = section.critical_step_check();
    let stepper = DefExp::with_bound_at(system, settings, &x0, &v0, check, critical.clone());
    let stepper = stepper.map_err(|e| match e {
        StepError::Unstable { .. } => InputError::invalid("time.dt", e.to_string()),
        other => InputError::invalid("time", other.to_string()),
    });
    let stepper = agree(world, stepper)?;
    let describe = vec![
        format!(
            "  mesh: {} nodes, {} {} cells in the solid, on {size} MPI processes (recursive coordinate bisection; this rank: {} cells, {} nodes)",
            setup.mesh.n_nodes(),
            setup.connectivity.len() / n,
            setup.kind,
            n_subdomain_cells,
            points.len(),
        ),
        scheme_line,
        format!(
            "  explicit critical step 2/sqrt(lambda_max) = {:e} at t0 (lambda_max of M^-1 K by Lanczos; the element bound is {:e}, cell {})",
            critical.step.dt, critical.element.dt, critical.element.cell
        ),
    ];
    let output = SolidOutput::new(points, cells, Arc::clone(&operator))
        .with_global_numbers(&global_nodes, &global_cells)
        .with_ghost_points(&owned)
        .with_sum_over_processes(Box::new(RankSum(world.duplicate())));
    Ok(DistributedSolidModel {
        model: SolidModel::new(Box::new(stepper), grid, describe, output),
        values_sent_per_step,
        n_cells: n_subdomain_cells,
    })
}
