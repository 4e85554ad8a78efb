//! Dirichlet sets: which dofs are prescribed, by what function of time, enforced how.
//!
//! The three concerns are kept apart (STYLE.md, item 8): *locating* the dofs (by physical
//! group, node id or a generator's boundary) is the caller's job and yields plain dof indices;
//! *valuing* them is a [`Signal`] (a time function with its first two derivatives); *enforcing*
//! them is the [`Enforcement`] method, carried out by each stepper (Serac seed, "Dirichlet
//! Enforcement for Ordinary Differential Equations"):
//!
//! - [`Enforcement::Direct`]: the constrained rows are replaced by `G x(t+Δt) = g(t+Δt)`;
//! - [`Enforcement::Rate`]: by `G ẋ(t+Δt) = ġ(t+Δt)` (better stability, drift in `x`);
//! - [`Enforcement::Full`]: `x_c, ẋ_c, ẍ_c` are replaced by `g, ġ, g̈` and only the free
//!   accelerations are solved for (robust when `g` has a kink).

use std::fmt::Debug;
use std::sync::Arc;

/// A prescribed scalar function of time with its first two derivatives.
pub trait Signal: Send + Sync + Debug {
    /// `g(t)`.
    fn value(&self, t: f64) -> f64;
    /// `ġ(t)` (exact, or by the central difference of the Serac seed).
    fn rate(&self, t: f64) -> f64;
    /// `g̈(t)` (exact, or by the central second difference of the Serac seed).
    fn acceleration(&self, t: f64) -> f64;
}

/// How a stepper enforces a prescribed dof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Enforcement {
    /// Hold the position: `x_c = g`.
    Direct,
    /// Hold the velocity: `ẋ_c = ġ` (the position drifts by the integration error of `ġ`).
    Rate,
    /// Hold position, velocity and acceleration: `x_c, ẋ_c, ẍ_c = g, ġ, g̈`.
    Full,
}

/// A dof of the system a stepper steps, in the system's own numbering — for a model on a mesh
/// the index among its *free* dofs, after the fixed ones are eliminated, not
/// `node · n_components + component`. Made by the model from its own numbering
/// (`fem_solid::SolidSystem::system_dof(node, component)`, `fem_model::build::system_dof`), or
/// by [`SystemDof::new`] for a system whose unknowns are numbered by its author.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SystemDof(usize);

impl SystemDof {
    /// The system's unknown number `index` (its own numbering: see the type's documentation).
    pub fn new(index: usize) -> Self {
        Self(index)
    }

    /// The index among the system's unknowns.
    pub fn index(self) -> usize {
        self.0
    }
}

/// Dofs prescribed by one signal with one enforcement method.
#[derive(Clone, Debug)]
pub struct DirichletSet {
    /// The system's dofs (its own numbering, [`SystemDof`]).
    pub dofs: Vec<SystemDof>,
    /// The prescribed function of time.
    pub signal: Arc<dyn Signal>,
    /// How it is enforced.
    pub enforcement: Enforcement,
}

/// Two sets prescribe one dof differently.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "dof {dof} is prescribed by Dirichlet sets {first} and {second} with different functions or methods"
)]
pub struct ConflictingSets {
    /// The dof.
    pub dof: usize,
    /// Index of the first set.
    pub first: usize,
    /// Index of the second set.
    pub second: usize,
}

/// All prescribed dofs of a system, each with its signal and method, sorted by dof.
#[derive(Clone, Debug, Default)]
pub struct DirichletConditions {
    dofs: Vec<usize>,
    signals: Vec<Arc<dyn Signal>>,
    enforcement: Vec<Enforcement>,
}

impl DirichletConditions {
    /// No prescribed dofs.
    pub fn none() -> Self {
        Self::default()
    }

    /// Merges sets. A dof named by several sets is accepted only if they share the same signal
    /// (the same `Arc`) and method; otherwise [`ConflictingSets`] names it.
    pub fn new(sets: &[DirichletSet]) -> Result<Self, ConflictingSets> {
        let mut entries: Vec<(usize, usize)> = sets
            .iter()
            .enumerate()
            .flat_map(|(s, set)| set.dofs.iter().map(move |&d| (d.index(), s)))
            .collect();
        entries.sort_unstable();
        let mut out = Self::default();
        let mut last: Option<(usize, usize)> = None;
        for (dof, s) in entries {
            if let Some((last_dof, last_set)) = last
                && last_dof == dof
            {
                let (a, b) = (&sets[last_set], &sets[s]);
                if !Arc::ptr_eq(&a.signal, &b.signal) || a.enforcement != b.enforcement {
                    return Err(ConflictingSets {
                        dof,
                        first: last_set,
                        second: s,
                    });
                }
                continue;
            }
            out.dofs.push(dof);
            out.signals.push(sets[s].signal.clone());
            out.enforcement.push(sets[s].enforcement);
            last = Some((dof, s));
        }
        Ok(out)
    }

    /// Number of prescribed dofs.
    pub fn len(&self) -> usize {
        self.dofs.len()
    }

    /// Whether no dof is prescribed.
    pub fn is_empty(&self) -> bool {
        self.dofs.is_empty()
    }

    /// The prescribed dofs, increasing.
    pub fn dofs(&self) -> &[usize] {
        &self.dofs
    }

    /// Method of the `i`-th prescribed dof.
    pub fn enforcement(&self, i: usize) -> Enforcement {
        self.enforcement[i]
    }

    /// Signal of the `i`-th prescribed dof.
    pub fn signal(&self, i: usize) -> &dyn Signal {
        self.signals[i].as_ref()
    }

    /// Signal of the `i`-th prescribed dof, shared: a new set built from it (a subset of these
    /// conditions, or these merged with others) prescribes the dof by the same function.
    pub fn shared_signal(&self, i: usize) -> Arc<dyn Signal> {
        self.signals[i].clone()
    }

    /// Iterates `(dof, signal, method)`.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &dyn Signal, Enforcement)> + '_ {
        (0..self.len()).map(|i| (self.dofs[i], self.signal(i), self.enforcement[i]))
    }

    /// Largest dof index plus one (0 when empty): callers check it against their system size.
    pub fn dof_bound(&self) -> usize {
        self.dofs.last().map_or(0, |d| d + 1)
    }
}

impl Signal for crate::function::Prescribed {
    fn value(&self, t: f64) -> f64 {
        crate::function::Prescribed::value(self, t)
    }
    fn rate(&self, t: f64) -> f64 {
        crate::function::Prescribed::rate(self, t)
    }
    fn acceleration(&self, t: f64) -> f64 {
        crate::function::Prescribed::acceleration(self, t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Ramp(f64);
    impl Signal for Ramp {
        fn value(&self, t: f64) -> f64 {
            self.0 * t
        }
        fn rate(&self, _: f64) -> f64 {
            self.0
        }
        fn acceleration(&self, _: f64) -> f64 {
            0.0
        }
    }

    #[test]
    fn merges_sets_and_refuses_conflicts() {
        let a: Arc<dyn Signal> = Arc::new(Ramp(1.0));
        let b: Arc<dyn Signal> = Arc::new(Ramp(2.0));
        let set = |dofs: Vec<usize>, signal: &Arc<dyn Signal>, enforcement| DirichletSet {
            dofs: dofs.into_iter().map(SystemDof::new).collect(),
            signal: signal.clone(),
            enforcement,
        };
        let ok = DirichletConditions::new(&[
            set(vec![5, 1], &a, Enforcement::Direct),
            set(vec![1, 3], &a, Enforcement::Direct),
            set(vec![7], &b, Enforcement::Full),
        ])
        .unwrap();
        assert_eq!(ok.dofs(), &[1, 3, 5, 7]);
        assert_eq!(ok.enforcement(3), Enforcement::Full);
        assert_eq!(ok.signal(3).value(1.0), 2.0);
        assert_eq!(ok.dof_bound(), 8);
        let clash = DirichletConditions::new(&[
            set(vec![2], &a, Enforcement::Direct),
            set(vec![2], &b, Enforcement::Direct),
        ]);
        assert_eq!(
            clash.unwrap_err(),
            ConflictingSets {
                dof: 2,
                first: 0,
                second: 1
            }
        );
        let clash = DirichletConditions::new(&[
            set(vec![2], &a, Enforcement::Direct),
            set(vec![2], &a, Enforcement::Rate),
        ]);
        assert!(clash.is_err());
    }
}
