//! Total-Lagrangian solids: reference elements, quadrature, hyperelastic materials and the
//! element kernels (force, tangent, energy, stress, mass, loads, stable step, mass properties).
//!
//! | module | what it holds |
//! |---|---|
//! | [`shape`] | tet4, hex8, tet10, hex20, hex27 and face (tri3, quad4, tri6, quad8, quad9) shape functions, Gmsh order |
//! | [`quadrature3d`] | rules on the reference tetrahedron, cube, triangle and square |
//! | [`material`] | the [`Hyperelastic`] trait; Saint Venant–Kirchhoff and two compressible Neo-Hookean energies: `W`, `S`, `𝒞` |
//! | [`material_check`] | central-difference checks of any material's stress and tangent against its energy |
//! | [`total_lagrangian`] | reference gradients; internal force, tangent, energy, stress of one element |
//! | [`hex8`] | the hex8 2×2×2 internal force by sum factorization from a compact geometry |
//! | [`eas`] | hex8 with incompatible modes (enhanced assumed strain) at finite strain |
//! | [`fbar`] | the F-bar (mean dilatation) element for nearly incompressible materials |
//! | [`one_point`] | the one-point hex8 with hourglass stiffness from the enhanced element |
//! | [`element`] | [`Element`]: a kind and a [`Formulation`], the dispatch the assembled body uses |
//! | [`mass`] | consistent mass, row-sum and HRZ lumping |
//! | [`loads`] | consistent dead tractions and body forces |
//! | [`stable_step`] | the largest eigenvalue of `(K_e, M_e)` for the explicit critical step |
//! | [`mass_properties`](mod@mass_properties) | volume, centre of mass and inertia tensor of a meshed body |
//!
//! All kernels take one element's data as slices and fill caller buffers; global assembly is
//! `fem-assembly`'s (`fem_assembly::solid`). Theory and conventions: `docs/theory/solid.md`.

pub mod eas;
pub mod element;
pub mod fbar;
pub mod hex8;
pub mod loads;
pub mod mass;
pub mod mass_properties;
pub mod material;
pub mod material_check;
pub mod one_point;
pub mod quadrature3d;
pub mod shape;
pub mod stable_step;
pub mod total_lagrangian;

pub use element::{CellFailure, Element, FailedCell, Formulation, UnsupportedFormulation};
pub use mass::{Lumping, MassError};
pub use mass_properties::{MassProperties, mass_properties};
pub use material::{Hyperelastic, Material, MaterialError, MaterialModel};
pub use material_check::{MaterialCheck, MaterialCheckError, check_material};
pub use quadrature3d::CellRule;
pub use shape::{FaceKind, SolidKind};
pub use total_lagrangian::{CellStress, NonPositiveJacobian};
