//! The contact layer of `fem`: the velocity-level Signorini–Coulomb law with Newton
//! restitution and bilateral constraints, the interface a body offers to it, the assembly
//! of the local problem `u = W r + q`, the nonsmooth block Gauss–Seidel solver with
//! Siconos' and Solfec's error measures, detection (over `parry3d-f64`), and a reader of
//! FCLIB's problems. It knows no body kind: rigid bodies and solids implement
//! [`body::ContactBody`].
//!
//! Equations: docs/theory/contact.md (numbers (C1)–(C14) are cited in the doc comments).
//!
//! | module | what it holds |
//! |---|---|
//! | [`body`] | the body interface, constraint points, the assembly of `W` and `q` |
//! | [`cone`] | Coulomb's cone, its projection, contact frames |
//! | [`law`] | surface-pair materials and the law of a point (contact or bilateral) |
//! | [`local`] | the 3×3 local solver: closed forms, Alart–Curnier semismooth Newton, fallback |
//! | [`problem`] | the block-sparse local problem and the error measures |
//! | [`nsgs`] | nonsmooth block Gauss–Seidel |
//! | [`newton`] | a global semismooth Newton method on the Alart–Curnier function (a polish after NSGS, or the first solver) |
//! | [`detect`] | shapes, obstacles, broad and narrow phase (parry3d-f64), materials by pair |
//! | [`fclib`] | FCLIB's HDF5 problems (local, and global reduced to local) |

pub mod body;
pub mod cone;
pub mod detect;
pub mod fclib;
pub mod law;
pub mod local;
pub mod newton;
pub mod nsgs;
pub mod problem;

pub use law::{Law, LawError, SurfaceMaterial};
pub use newton::{LineSearch, NewtonSettings, OnLineSearchFailure, RhoChoice};
pub use nsgs::{CapPolicy, NsgsReport, NsgsSettings, SolveError, Strategy, SweepOrder, solve};
pub use problem::{Problem, ProblemError};
