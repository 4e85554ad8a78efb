//! fem
