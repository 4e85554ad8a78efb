//! The contact law and the bilateral constraints, per constraint point.
//!
//! Every constraint point of a local problem has a law (docs/theory/contact.md, §1):
//!
//! | law | rows | condition on the local velocity `u = W r + q` and impulse `r` |
//! |---|---|---|
//! | [`Law::Contact`] | 3 | Signorini–Coulomb: `r ∈ K_μ`, `u + μ‖u_T‖e_N ∈ K_μ*`, `rᵀ(u + μ‖u_T‖e_N) = 0` (C3) |
//! | [`Law::FixedPoint`] | 3 | `u = 0`, `r` free (a point pinned to a fixed point or to another body) |
//! | [`Law::FixedDirection`] | 1 | `u_N = 0`, `r_N` free, `r_T = 0` |
//! | [`Law::RigidLink`] | 1 | `u_N = 0` along the link, `r_N` free, `r_T = 0` (a distance kept) |
//!
//! Newton's restitution enters through `q` (the assembly adds `e·min(U_N⁻, 0)` to `q_N`,
//! eq. (C2)), so that the solver sees the plain Signorini–Coulomb problem in the modified
//! velocity `U_N⁺ + e·min(U_N⁻, 0)`.

/// The friction and restitution of a pair of surface materials.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceMaterial {
    /// Coulomb's friction coefficient `μ ≥ 0`.
    pub friction: f64,
    /// Newton's restitution coefficient `e ∈ [0, 1]`.
    pub restitution: f64,
}

/// Why a material or a link was refused (each names the key a user gave).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LawError {
    /// `μ` negative or not a number.
    #[error("friction: expected a number ≥ 0 (Coulomb's coefficient), got {0}")]
    Friction(f64),
    /// `e` outside `[0, 1]` or not a number.
    #[error("restitution: expected a number in [0, 1] (Newton's coefficient), got {0}")]
    Restitution(f64),
    /// A rigid link whose two points coincide has no direction.
    #[error(
        "rigid link: the two points are {0:e} apart; a link needs two distinct points (a length > 0)"
    )]
    LinkLength(f64),
    /// A fixed direction that is not a direction.
    #[error("direction: expected a nonzero vector, got {0:?}")]
    Direction([f64; 3]),
}

impl SurfaceMaterial {
    /// A material pair, checked: `friction ≥ 0` and `restitution ∈ [0, 1]`, both finite.
    pub fn new(friction: f64, restitution: f64) -> Result<Self, LawError> {
        if !(friction.is_finite() && friction >= 0.0) {
            return Err(LawError::Friction(friction));
        }
        if !(restitution.is_finite() && (0.0..=1.0).contains(&restitution)) {
            return Err(LawError::Restitution(restitution));
        }
        Ok(Self {
            friction,
            restitution,
        })
    }

    /// The law of a contact point of this material.
    pub fn law(&self) -> Law {
        Law::Contact {
            friction: self.friction,
            restitution: self.restitution,
        }
    }
}

/// The law of one constraint point (a row block of the local problem).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Law {
    /// Unilateral contact with Coulomb friction and Newton restitution.
    Contact {
        /// `μ ≥ 0`.
        friction: f64,
        /// `e ∈ [0, 1]` (used by the assembly of `q`; the solver reads `μ` only).
        restitution: f64,
    },
    /// A point held at a fixed point (or at a point of another body): three equality rows.
    FixedPoint,
    /// A point's velocity along a fixed direction (the frame's normal) held at zero: one row.
    FixedDirection,
    /// Two points of two bodies kept at their distance: one row along the link (the normal).
    RigidLink,
}

impl Law {
    /// How many rows of the 3-row block the law constrains (3 or 1).
    pub fn rows(&self) -> usize {
        match self {
            Law::Contact { .. } | Law::FixedPoint => 3,
            Law::FixedDirection | Law::RigidLink => 1,
        }
    }

    /// Whether the law is an equality (bilateral) constraint.
    pub fn is_bilateral(&self) -> bool {
        !matches!(self, Law::Contact { .. })
    }

    /// Coulomb's coefficient (0 for bilateral rows).
    pub fn friction(&self) -> f64 {
        match self {
            Law::Contact { friction, .. } => *friction,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn materials_are_checked() {
        assert!(SurfaceMaterial::new(0.3, 0.5).is_ok());
        assert!(SurfaceMaterial::new(0.0, 0.0).is_ok());
        assert!(SurfaceMaterial::new(0.0, 1.0).is_ok());
        assert_eq!(
            SurfaceMaterial::new(-0.1, 0.5),
            Err(LawError::Friction(-0.1))
        );
        assert!(matches!(
            SurfaceMaterial::new(f64::NAN, 0.5),
            Err(LawError::Friction(_))
        ));
        assert_eq!(
            SurfaceMaterial::new(0.1, 1.5),
            Err(LawError::Restitution(1.5))
        );
        assert_eq!(
            SurfaceMaterial::new(0.1, -0.01),
            Err(LawError::Restitution(-0.01))
        );
        let msg = SurfaceMaterial::new(-1.0, 0.0).unwrap_err().to_string();
        assert!(msg.starts_with("friction: expected a number ≥ 0"), "{msg}");
    }
}
