//! The mesh split into parts by recursive coordinate bisection (RCB) of the cell centroids.
//!
//! Why RCB and not METIS: RCB needs no C library, takes a few lines, and is deterministic by
//! construction (the same mesh gives the same parts on every rank, with no communication),
//! which the bitwise comparison with the serial run and the replicated set-up rely on. On the
//! structured boxes and bars of this project its cuts are planes, whose surface-to-volume
//! ratio is what METIS would reach; on an unstructured mesh METIS would cut fewer faces (a
//! smaller halo), a later improvement behind the same interface (`parts[cell]`).
//!
//! At each level the cells are sorted along the longest side of their centroids' bounding box
//! (ties broken by the cell's index) and cut so that the two halves' cell counts are in the
//! ratio of the parts they get (`⌊P/2⌋ : ⌈P/2⌉`): every part gets `⌊n/P⌋` or `⌈n/P⌉` cells
//! up to the rounding at each level.

/// The part (0..`n_parts`) of each cell, from its centroid.
///
/// # Panics
/// If `n_parts` is 0.
pub fn recursive_bisection(centroids: &[[f64; 3]], n_parts: usize) -> Vec<u32> {
    assert!(n_parts > 0, "at least one part");
    let mut ids: Vec<u32> = (0..centroids.len() as u32).collect();
    let mut parts = vec![0u32; centroids.len()];
    bisect(centroids, &mut ids, 0, n_parts, &mut parts);
    parts
}

fn bisect(centroids: &[[f64; 3]], ids: &mut [u32], first: usize, n_parts: usize, out: &mut [u32]) {
    if n_parts == 1 || ids.is_empty() {
        for &c in ids.iter() {
            out[c as usize] = first as u32;
        }
        return;
    }
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for &c in ids.iter() {
        for k in 0..3 {
            lo[k] = lo[k].min(centroids[c as usize][k]);
            hi[k] = hi[k].max(centroids[c as usize][k]);
        }
    }
    let mut axis = 0;
    for k in 1..3 {
        if hi[k] - lo[k] > hi[axis] - lo[axis] {
            axis = k;
        }
    }
    ids.sort_unstable_by(|&a, &b| {
        centroids[a as usize][axis]
            .total_cmp(&centroids[b as usize][axis])
            .then(a.cmp(&b))
    });
    let left = n_parts / 2;
    let cut = ids.len() * left / n_parts;
    let (a, b) = ids.split_at_mut(cut);
    bisect(centroids, a, first, left, out);
    bisect(centroids, b, first + left, n_parts - left, out);
}

/// The centroid (mean of the nodes) of each cell of `connectivity` (`n` nodes per cell).
pub fn centroids(points: &[[f64; 3]], connectivity: &[usize], n: usize) -> Vec<[f64; 3]> {
    connectivity
        .chunks_exact(n)
        .map(|cell| {
            let mut c = [0.0; 3];
            for &v in cell {
                for k in 0..3 {
                    c[k] += points[v][k];
                }
            }
            c.map(|x| x / n as f64)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(n: usize) -> Vec<[f64; 3]> {
        let mut c = Vec::new();
        for k in 0..n {
            for j in 0..n {
                for i in 0..2 * n {
                    c.push([i as f64, j as f64, k as f64]);
                }
            }
        }
        c
    }

    #[test]
    fn parts_are_balanced_and_cut_the_longest_side_first() {
        let c = grid(6);
        for p in 1..=7 {
            let parts = recursive_bisection(&c, p);
            let mut count = vec![0usize; p];
            parts.iter().for_each(|&q| count[q as usize] += 1);
            let (min, max) = (count.iter().min().unwrap(), count.iter().max().unwrap());
            assert!(max - min <= 2, "{p} parts: {count:?}");
        }
        // Two parts of a 12 × 6 × 6 block: the cut is the plane x = 5.5.
        let parts = recursive_bisection(&c, 2);
        for (cell, &q) in c.iter().zip(&parts) {
            assert_eq!(q, u32::from(cell[0] > 5.5));
        }
    }

    #[test]
    fn the_partition_is_deterministic() {
        let c = grid(5);
        assert_eq!(recursive_bisection(&c, 3), recursive_bisection(&c, 3));
    }
}
