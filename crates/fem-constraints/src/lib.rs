//! Constraints: Dirichlet sets, penalty and augmented-Lagrangian constraints, and the linear
//! complementarity problems (LCP) of unilateral contact.
