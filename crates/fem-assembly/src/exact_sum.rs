//! Exactly rounded sums: the sum of many `f64` terms rounded once, so the result does not
//! depend on the order of the terms or on how they are split between threads or processes.
//!
//! The accumulator keeps the running sum exactly as a short list of non-overlapping partials
//! (Shewchuk, "Adaptive precision floating-point arithmetic and fast robust geometric
//! predicates", 1997, `GROW-EXPANSION` with zero elimination; the same scheme as Python's
//! `math.fsum`), and rounds it to the nearest `f64` (ties to even) only when asked. Two
//! accumulators merge exactly ([`ExactSum::merge`]), so a sum over a distributed mesh is the
//! serial sum bit for bit: each process accumulates its own terms and the partials are
//! combined.
//!
//! A non-finite term makes the sum non-finite (its IEEE sum with the other non-finite
//! terms); the exact path holds the finite terms. An intermediate overflow of the exact sum
//! (terms near `f64::MAX`) gives an infinite result.

/// An exactly rounded sum in progress.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExactSum {
    /// Non-overlapping partials in increasing magnitude; their exact sum is the sum so far.
    partials: Vec<f64>,
    /// The IEEE sum of the non-finite terms (0 if there were none).
    special: f64,
}

impl ExactSum {
    /// The empty sum.
    pub fn new() -> Self {
        Self::default()
    }

    /// The sum of `terms`, rounded once.
    pub fn of(terms: impl IntoIterator<Item = f64>) -> f64 {
        let mut s = Self::new();
        for x in terms {
            s.add(x);
        }
        s.value()
    }

    /// Adds `x` exactly.
    pub fn add(&mut self, x: f64) {
        if x == 0.0 {
            // Adds nothing (and a zero sum is +0 whatever the signs of its zeros).
            return;
        }
        if !x.is_finite() {
            self.special += x;
            return;
        }
        let mut x = x;
        let mut kept = 0;
        for j in 0..self.partials.len() {
            let mut y = self.partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            // Two-sum of |x| >= |y|: hi + lo == x + y exactly.
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                self.partials[kept] = lo;
                kept += 1;
            }
            x = hi;
        }
        self.partials.truncate(kept);
        self.partials.push(x);
    }

    /// Adds every term of another sum exactly (the result is that of adding its terms here).
    pub fn merge(&mut self, other: &ExactSum) {
        for &p in &other.partials {
            self.add(p);
        }
        self.special += other.special;
    }

    /// The partials and the non-finite part, for sending to another process: the sum is
    /// [`from_parts`](Self::from_parts) of them.
    pub fn to_parts(&self) -> Vec<f64> {
        let mut parts = Vec::with_capacity(self.partials.len() + 1);
        parts.push(self.special);
        parts.extend_from_slice(&self.partials);
        parts
    }

    /// The sum given by [`to_parts`](Self::to_parts).
    pub fn from_parts(parts: &[f64]) -> Self {
        let mut s = Self::new();
        if let Some((&special, partials)) = parts.split_first() {
            s.special = special;
            for &p in partials {
                s.add(p);
            }
        }
        s
    }

    /// The exact sum rounded to the nearest `f64`, ties to even (a zero sum is `+0.0`).
    pub fn value(&self) -> f64 {
        if self.special != 0.0 || self.special.is_nan() {
            return self.special;
        }
        let p = &self.partials;
        let Some(&top) = p.last() else {
            return 0.0;
        };
        // Add the partials from the largest down until the sum stops being exact.
        let mut hi = top;
        let mut lo = 0.0;
        let mut n = p.len() - 1;
        while n > 0 {
            let x = hi;
            let y = p[n - 1];
            n -= 1;
            hi = x + y;
            let yr = hi - x;
            lo = y - yr;
            if lo != 0.0 {
                break;
            }
        }
        // Round half-even correctly when the rest is exactly half an ulp and the partials
        // below push it one way.
        if n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0)) {
            let y = lo * 2.0;
            let x = hi + y;
            if y == x - hi {
                hi = x;
            }
        }
        hi + 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random sequence of wildly scaled terms.
    fn terms(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let m = (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                let e = ((s >> 3) % 60) as i32 - 30;
                m * 2f64.powi(e)
            })
            .collect()
    }

    #[test]
    fn cancellation_that_a_naive_sum_loses_is_kept() {
        assert_eq!(ExactSum::of([1e100, 1.0, -1e100]), 1.0);
        assert_eq!(ExactSum::of([0.1; 10]), 1.0);
        assert_eq!(ExactSum::of([]), 0.0);
        assert!(ExactSum::of([-0.0]).is_sign_positive());
    }

    #[test]
    fn sum_does_not_depend_on_order_or_split() {
        let t = terms(10_000, 7);
        let whole = ExactSum::of(t.iter().copied());
        let reversed = ExactSum::of(t.iter().rev().copied());
        assert_eq!(whole.to_bits(), reversed.to_bits());
        for parts in [2, 3, 7] {
            let mut total = ExactSum::new();
            for chunk in t.chunks(t.len() / parts + 1) {
                let mut s = ExactSum::new();
                chunk.iter().for_each(|&x| s.add(x));
                total.merge(&ExactSum::from_parts(&s.to_parts()));
            }
            assert_eq!(total.value().to_bits(), whole.to_bits(), "{parts} parts");
        }
        // A naive sum of the same terms differs in the reversed order (the test has teeth).
        let naive: f64 = t.iter().sum();
        let naive_rev: f64 = t.iter().rev().sum();
        assert_ne!(naive.to_bits(), naive_rev.to_bits());
    }

    #[test]
    fn ties_round_to_even() {
        // 1 + 2^-53 is a tie between 1 and 1 + 2^-52: rounds to 1 (even); with a tiny extra
        // term above the tie it rounds up.
        let u = 2f64.powi(-53);
        assert_eq!(ExactSum::of([1.0, u]), 1.0);
        assert_eq!(ExactSum::of([1.0, u, u * 1e-10]), 1.0 + 2.0 * u);
        assert_eq!(ExactSum::of([1.0, u, -u * 1e-10]), 1.0);
    }

    #[test]
    fn non_finite_terms_give_non_finite_sums() {
        assert!(ExactSum::of([1.0, f64::NAN]).is_nan());
        assert_eq!(ExactSum::of([1.0, f64::INFINITY]), f64::INFINITY);
        assert!(ExactSum::of([f64::INFINITY, f64::NEG_INFINITY]).is_nan());
    }
}
