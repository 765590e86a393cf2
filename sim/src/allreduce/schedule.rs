//! Schedules of the allreduce engine: which rank exchanges which elements
//! with which partner, in which order, and the combining order every rank
//! follows so that all of them end with bit-identical results.
//!
//! # Ranks on the torus
//! A communicator is an axis-aligned box of the torus ([`CommBox`]): an
//! origin and an extent per dimension, taken modulo the torus size (a box
//! may wrap). Rank `r` sits at offset `(r mod ex, (r / ex) mod ey,
//! r / (ex · ey))` from the origin: X fastest. For power-of-two extents the
//! low rank bits are the X offset, then Y, then Z, so recursive doubling's
//! step `k` pairs ranks `2^k` hops apart on one ring (1, 2, 4 hops on an
//! 8-ring, shortest way round on a torus) and moves to the next dimension
//! when that ring is done: the exchange is mapped onto the dimensions.
//!
//! # Algorithms
//! `P` ranks, `Q` = the largest power of two `≤ P`, `K = log2 Q` steps.
//! - **Pre** (only when `P` is not a power of two): rank `r ≥ Q` (an
//!   *extra*) sends its whole vector to its *host* `r − Q`, which combines
//!   it into its own. Extras then wait for the **Post** step, in which the
//!   host sends them the final result (no combining).
//! - [`Algorithm::RecursiveDoubling`] (small vectors): for `k = 0..K`,
//!   ranks `r < Q` exchange their whole partial vector with `r ^ 2^k` and
//!   combine. Every step moves the whole vector: `K` messages of `n`
//!   elements per rank, latency-optimal.
//! - [`Algorithm::ReduceScatterAllgather`] (large vectors, above the
//!   engine's threshold register): reduce-scatter by recursive halving, for
//!   `k = 0..K`: the current segment `[lo, hi)` splits at
//!   `mid = lo + (hi − lo) / 2`; the rank whose bit `k` is 0 keeps
//!   `[lo, mid)` and sends `[mid, hi)`, its partner the opposite, and each
//!   combines what it receives into what it keeps. Then allgather by
//!   recursive doubling in reverse, `k = K−1..0`: each sends its segment to
//!   `r ^ 2^k` and stores (no combining) the partner's. Each rank sends
//!   about `2n` elements in all, whatever `P`: bandwidth-optimal, so large
//!   vectors are not sent whole at every step.
//!
//! # Combining order (the result's bits)
//! Every reduction op is commutative bit for bit (IEEE addition and
//! 754-2019 minimum/maximum with one canonical NaN; wrapping integer and
//! bitwise ops), so a pair of partners combining `a ⊕ b` and `b ⊕ a` get
//! the same bits. Floating-point addition is not associative, so the
//! *tree* is fixed: element `i` of the result is
//! ```text
//! y_r = x_r ⊕ x_{r+Q}   (r < P − Q; y_r = x_r otherwise)       -- Pre
//! level 0:  y_r ⊕ y_{r^1}, level k: (level k−1 of r) ⊕ (level k−1 of r ^ 2^k)
//! result  = level K−1, the same value for every r
//! ```
//! Recursive halving with bit 0 first builds exactly the same tree for
//! each element as recursive doubling (it only splits *where* each element
//! is combined), so both algorithms give bit-identical results, and
//! [`reference()`] computes them without any schedule.

use super::reduce_alu::{reduce_lane, ReduceDtype, ReduceOp};
use anyhow::{bail, Result};
use std::ops::Range;

/// Torus dimensions (X, Y, Z).
pub const DIMS: usize = 3;

/// An axis-aligned box of the torus: the ranks of a communicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommBox {
    /// Coordinates of rank 0.
    pub origin: [usize; DIMS],
    /// Nodes per dimension, each `1..=` the torus size.
    pub extent: [usize; DIMS],
}

impl CommBox {
    /// The whole torus of `dims`.
    pub fn whole(dims: [usize; DIMS]) -> Self {
        CommBox {
            origin: [0; DIMS],
            extent: dims,
        }
    }

    /// Reject an empty box, one larger than the torus, or an origin off it.
    #[allow(clippy::needless_range_loop)] // d names the dimension in the messages
    pub fn validate(&self, dims: [usize; DIMS]) -> Result<()> {
        for d in 0..DIMS {
            if self.extent[d] == 0 || self.extent[d] > dims[d] {
                bail!(
                    "communicator extent[{d}] = {}: must be 1..={} (the torus size)",
                    self.extent[d],
                    dims[d]
                );
            }
            if self.origin[d] >= dims[d] {
                bail!(
                    "communicator origin[{d}] = {}: must be below {} (the torus size)",
                    self.origin[d],
                    dims[d]
                );
            }
        }
        Ok(())
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.extent.iter().product()
    }

    /// Torus coordinates of `rank` (below [`Self::ranks`]).
    pub fn coords_of(&self, rank: usize, dims: [usize; DIMS]) -> [usize; DIMS] {
        let mut rest = rank;
        let mut c = [0; DIMS];
        for d in 0..DIMS {
            c[d] = (self.origin[d] + rest % self.extent[d]) % dims[d];
            rest /= self.extent[d];
        }
        c
    }

    /// Rank of the node at `coords`, or `None` outside the box.
    pub fn rank_of(&self, coords: [usize; DIMS], dims: [usize; DIMS]) -> Option<usize> {
        let mut rank = 0;
        for d in (0..DIMS).rev() {
            let off = (coords[d] + dims[d] - self.origin[d] % dims[d]) % dims[d];
            if off >= self.extent[d] {
                return None;
            }
            rank = rank * self.extent[d] + off;
        }
        Some(rank)
    }
}

/// Which schedule a collective uses (chosen by vector size).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Whole vector at every step.
    RecursiveDoubling,
    /// Recursive halving, then recursive doubling of the segments.
    ReduceScatterAllgather,
}

impl Algorithm {
    /// The schedule for `bytes` of vector with a threshold register
    /// `threshold` (bytes; vectors strictly above it use the large schedule).
    pub fn for_size(bytes: usize, threshold: usize) -> Self {
        if bytes > threshold {
            Algorithm::ReduceScatterAllgather
        } else {
            Algorithm::RecursiveDoubling
        }
    }
}

/// Phase of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// An extra rank's vector folded into its host.
    Pre,
    /// Recursive doubling / halving (combining).
    Reduce,
    /// Allgather of the reduce-scatter segments (storing).
    Gather,
    /// The host's result to its extra rank.
    Post,
}

/// One step of one rank: at most one send and one receive, both with the
/// same partner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Position in this collective's step numbering (the same number at
    /// both partners; carried in every fragment).
    pub index: usize,
    /// Phase.
    pub phase: Phase,
    /// The other rank.
    pub partner: usize,
    /// Elements sent to the partner (empty: nothing sent).
    pub send: Range<usize>,
    /// Elements received from the partner (empty: nothing received).
    pub recv: Range<usize>,
    /// Received elements are combined into the partial result (else stored).
    pub combine: bool,
}

/// Largest power of two `≤ p` (`p ≥ 1`).
pub fn pow2_floor(p: usize) -> usize {
    1 << (usize::BITS - 1 - p.leading_zeros())
}

/// Number of step indices a collective of `p` ranks uses (the same for
/// every rank, so fragments name steps consistently): Pre, `K` reduce
/// steps, `K` gather steps for the large schedule, Post.
pub fn step_count(p: usize, algo: Algorithm) -> usize {
    let k = pow2_floor(p).trailing_zeros() as usize;
    let gather = if algo == Algorithm::ReduceScatterAllgather {
        k
    } else {
        0
    };
    1 + k + gather + 1
}

/// The steps of `rank` (below `p`) for a vector of `n` elements.
///
/// Step indices: 0 = Pre, `1..=K` reduce steps (`1 + k` for bit `k`),
/// then gather steps (`1 + K + j` for the `j`-th, bit `K − 1 − j`), last =
/// Post. A rank's list holds only the steps it takes part in, in order.
pub fn steps(p: usize, rank: usize, n: usize, algo: Algorithm) -> Vec<Step> {
    assert!(rank < p, "rank {rank} of {p}");
    let q = pow2_floor(p);
    let k_steps = q.trailing_zeros() as usize;
    let post = step_count(p, algo) - 1;
    let all = 0..n;
    let mut out = Vec::new();
    if rank >= q {
        out.push(Step {
            index: 0,
            phase: Phase::Pre,
            partner: rank - q,
            send: all.clone(),
            recv: 0..0,
            combine: false,
        });
        out.push(Step {
            index: post,
            phase: Phase::Post,
            partner: rank - q,
            send: 0..0,
            recv: all,
            combine: false,
        });
        return out;
    }
    let extra = rank + q < p;
    if extra {
        out.push(Step {
            index: 0,
            phase: Phase::Pre,
            partner: rank + q,
            send: 0..0,
            recv: all.clone(),
            combine: true,
        });
    }
    match algo {
        Algorithm::RecursiveDoubling => {
            for k in 0..k_steps {
                out.push(Step {
                    index: 1 + k,
                    phase: Phase::Reduce,
                    partner: rank ^ (1 << k),
                    send: all.clone(),
                    recv: all.clone(),
                    combine: true,
                });
            }
        }
        Algorithm::ReduceScatterAllgather => {
            // Segments held after each halving step (for the gather in reverse).
            let mut segs = vec![all.clone()];
            for k in 0..k_steps {
                let cur = segs[k].clone();
                let mid = cur.start + (cur.end - cur.start) / 2;
                let (keep, give) = if rank >> k & 1 == 0 {
                    (cur.start..mid, mid..cur.end)
                } else {
                    (mid..cur.end, cur.start..mid)
                };
                out.push(Step {
                    index: 1 + k,
                    phase: Phase::Reduce,
                    partner: rank ^ (1 << k),
                    send: give,
                    recv: keep.clone(),
                    combine: true,
                });
                segs.push(keep);
            }
            for j in 0..k_steps {
                let k = k_steps - 1 - j;
                let mine = segs[k + 1].clone();
                let parent = segs[k].clone();
                let theirs = if mine.start == parent.start {
                    mine.end..parent.end
                } else {
                    parent.start..mine.start
                };
                out.push(Step {
                    index: 1 + k_steps + j,
                    phase: Phase::Gather,
                    partner: rank ^ (1 << k),
                    send: mine,
                    recv: theirs,
                    combine: false,
                });
            }
        }
    }
    if extra {
        out.push(Step {
            index: post,
            phase: Phase::Post,
            partner: rank + q,
            send: all,
            recv: 0..0,
            combine: false,
        });
    }
    out
}

/// Element-wise `a ⊕ b` (lanes in the low `dtype.bits()` bits).
pub fn combine(op: ReduceOp, dtype: ReduceDtype, a: &[u64], b: &[u64]) -> Vec<u64> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| reduce_lane(op, dtype, x, y))
        .collect()
}

/// The result every rank must hold, from the combining tree in the module
/// doc, without any schedule. `inputs[r]` is rank `r`'s vector (all the
/// same length, elements in the low `dtype.bits()` bits).
pub fn reference(op: ReduceOp, dtype: ReduceDtype, inputs: &[Vec<u64>]) -> Result<Vec<u64>> {
    let p = inputs.len();
    if p == 0 {
        bail!("allreduce of zero ranks");
    }
    if !dtype.supports(op) {
        bail!("{} is not defined on {}", op.name(), dtype.name());
    }
    let n = inputs[0].len();
    if let Some(r) = inputs.iter().position(|v| v.len() != n) {
        bail!("rank {r} has {} elements, rank 0 has {n}", inputs[r].len());
    }
    let q = pow2_floor(p);
    let mut level: Vec<Vec<u64>> = (0..q)
        .map(|r| {
            if r + q < p {
                combine(op, dtype, &inputs[r], &inputs[r + q])
            } else {
                inputs[r].clone()
            }
        })
        .collect();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|pair| combine(op, dtype, &pair[0], &pair[1]))
            .collect();
    }
    Ok(level.pop().unwrap_or_default())
}

/// Run every rank's schedule by message passing (no timing; each step
/// sends before it receives, messages matched by step index) and return
/// every rank's final vector: a check that the schedules are complete and
/// consistent, and what a golden engine must reproduce.
pub fn execute(
    op: ReduceOp,
    dtype: ReduceDtype,
    inputs: &[Vec<u64>],
    algo: Algorithm,
) -> Result<Vec<Vec<u64>>> {
    use std::collections::HashMap;
    let p = inputs.len();
    let n = inputs.first().map_or(0, Vec::len);
    let plans: Vec<Vec<Step>> = (0..p).map(|r| steps(p, r, n, algo)).collect();
    let mut buf: Vec<Vec<u64>> = inputs.to_vec();
    let mut pc = vec![0usize; p];
    let mut sent = vec![false; p];
    // (from, to, step index) -> elements.
    let mut wire: HashMap<(usize, usize, usize), Vec<u64>> = HashMap::new();
    loop {
        let mut moved = false;
        for r in 0..p {
            let Some(s) = plans[r].get(pc[r]) else {
                continue;
            };
            if !sent[r] {
                if !s.send.is_empty() {
                    let key = (r, s.partner, s.index);
                    if wire.contains_key(&key) {
                        bail!("rank {r} sends step {} to {} twice", s.index, s.partner);
                    }
                    wire.insert(key, buf[r][s.send.clone()].to_vec());
                }
                sent[r] = true;
                moved = true;
            }
            if !s.recv.is_empty() {
                let Some(got) = wire.remove(&(s.partner, r, s.index)) else {
                    continue;
                };
                if got.len() != s.recv.len() {
                    bail!(
                        "rank {r} step {}: {} elements from {}, expected {}",
                        s.index,
                        got.len(),
                        s.partner,
                        s.recv.len()
                    );
                }
                let dst = &mut buf[r][s.recv.clone()];
                if s.combine {
                    let y = combine(op, dtype, dst, &got);
                    dst.copy_from_slice(&y);
                } else {
                    dst.copy_from_slice(&got);
                }
            }
            pc[r] += 1;
            sent[r] = false;
            moved = true;
        }
        if !moved {
            break;
        }
    }
    if let Some(r) = (0..p).find(|&r| pc[r] < plans[r].len()) {
        bail!(
            "rank {r} stuck at step {} of {}",
            plans[r][pc[r]].index,
            plans[r].len()
        );
    }
    if !wire.is_empty() {
        bail!("{} messages never received", wire.len());
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn random_inputs(rng: &mut Rng, p: usize, n: usize, dtype: ReduceDtype) -> Vec<Vec<u64>> {
        let mask = if dtype.bits() == 32 { 0xFFFF_FFFF } else { !0 };
        (0..p)
            .map(|_| {
                (0..n)
                    .map(|_| {
                        // Mostly ordinary values, with the special classes mixed in.
                        let v = rng.next_u64() & mask;
                        match rng.below(16) {
                            0 => 0,
                            1 => mask, // NaN pattern for floats, -1 for ints
                            2 => v & 0x807F_FFFF & mask, // f32 subnormal / small
                            _ => v,
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn every_rank_ends_with_the_reference_bits_for_every_op_size_and_schedule() {
        let mut rng = Rng::new(7);
        for p in [1, 2, 3, 4, 5, 6, 7, 8, 12, 15, 16] {
            for n in [1, 2, 3, 7, 16, 33] {
                for op in ReduceOp::ALL {
                    for dtype in ReduceDtype::ALL {
                        if !dtype.supports(op) {
                            continue;
                        }
                        let x = random_inputs(&mut rng, p, n, dtype);
                        let want = reference(op, dtype, &x).unwrap();
                        for algo in [
                            Algorithm::RecursiveDoubling,
                            Algorithm::ReduceScatterAllgather,
                        ] {
                            let got = execute(op, dtype, &x, algo).unwrap();
                            for (r, v) in got.iter().enumerate() {
                                assert_eq!(
                                    v,
                                    &want,
                                    "p={p} n={n} {} {} {algo:?} rank {r}",
                                    op.name(),
                                    dtype.name()
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_tree_is_the_documented_one_not_a_left_fold() {
        // Float sum where the order matters: 1e20 + 1 - 1e20 + 1.
        let f = |v: f64| vec![v.to_bits()];
        let x = vec![f(1e20), f(1.0), f(-1e20), f(1.0)];
        let got = reference(ReduceOp::Sum, ReduceDtype::F64, &x).unwrap();
        // (1e20 + 1) + (-1e20 + 1) = 1e20 - 1e20 = 0
        assert_eq!(f64::from_bits(got[0]), 0.0);
        // p = 3: (x0 + x2) + x1
        let x = vec![f(1e20), f(1.0), f(-1e20)];
        let got = reference(ReduceOp::Sum, ReduceDtype::F64, &x).unwrap();
        assert_eq!(f64::from_bits(got[0]), 1.0);
    }

    #[test]
    fn large_schedule_sends_about_twice_the_vector_and_small_sends_it_per_step() {
        let n = 1 << 12;
        for p in [2usize, 4, 8, 16, 128] {
            let k = p.trailing_zeros() as usize;
            let rs: usize = steps(p, 0, n, Algorithm::ReduceScatterAllgather)
                .iter()
                .map(|s| s.send.len())
                .sum();
            assert_eq!(rs, 2 * (n - n / p), "p={p}");
            let rd: usize = steps(p, 0, n, Algorithm::RecursiveDoubling)
                .iter()
                .map(|s| s.send.len())
                .sum();
            assert_eq!(rd, k * n, "p={p}");
        }
    }

    #[test]
    fn partners_agree_on_step_index_and_ranges() {
        for p in 1..=20 {
            for algo in [
                Algorithm::RecursiveDoubling,
                Algorithm::ReduceScatterAllgather,
            ] {
                let plans: Vec<_> = (0..p).map(|r| steps(p, r, 37, algo)).collect();
                for (r, plan) in plans.iter().enumerate() {
                    for s in plan {
                        assert!(s.index < step_count(p, algo));
                        let twin = plans[s.partner]
                            .iter()
                            .find(|t| t.index == s.index)
                            .unwrap_or_else(|| panic!("p={p} rank {r} step {}", s.index));
                        assert_eq!(twin.partner, r);
                        assert_eq!(twin.recv, s.send, "p={p} {algo:?} {r}->{}", s.partner);
                        assert_eq!(twin.send, s.recv);
                    }
                }
            }
        }
    }

    #[test]
    fn power_of_two_boxes_pair_neighbours_on_one_ring_first() {
        let dims = [8, 4, 4];
        let b = CommBox::whole(dims);
        let hops = |a: [usize; 3], c: [usize; 3]| -> usize {
            (0..3)
                .map(|d| {
                    let x = (a[d] + dims[d] - c[d]) % dims[d];
                    x.min(dims[d] - x)
                })
                .sum()
        };
        let plan = steps(128, 0, 1, Algorithm::RecursiveDoubling);
        let dist: Vec<usize> = plan
            .iter()
            .map(|s| hops(b.coords_of(0, dims), b.coords_of(s.partner, dims)))
            .collect();
        assert_eq!(dist, vec![1, 2, 4, 1, 2, 1, 2]);
    }

    #[test]
    fn boxes_wrap_and_map_ranks_both_ways() {
        let dims = [8, 4, 4];
        let b = CommBox {
            origin: [6, 3, 0],
            extent: [3, 2, 1],
        };
        b.validate(dims).unwrap();
        assert_eq!(b.ranks(), 6);
        assert_eq!(b.coords_of(0, dims), [6, 3, 0]);
        assert_eq!(b.coords_of(2, dims), [0, 3, 0]);
        assert_eq!(b.coords_of(3, dims), [6, 0, 0]);
        for r in 0..6 {
            assert_eq!(b.rank_of(b.coords_of(r, dims), dims), Some(r));
        }
        assert_eq!(b.rank_of([1, 3, 0], dims), None);
        assert_eq!(b.rank_of([6, 3, 1], dims), None);
        let e = CommBox {
            origin: [0, 0, 0],
            extent: [9, 1, 1],
        }
        .validate(dims)
        .unwrap_err();
        assert!(e.to_string().contains("extent[0] = 9"), "{e}");
        let e = CommBox {
            origin: [0, 4, 0],
            extent: [1, 1, 1],
        }
        .validate(dims)
        .unwrap_err();
        assert!(e.to_string().contains("origin[1] = 4"), "{e}");
    }

    #[test]
    fn reference_refuses_bad_mixes() {
        let e = reference(ReduceOp::Band, ReduceDtype::F32, &[vec![1]]).unwrap_err();
        assert!(e.to_string().contains("band"), "{e}");
        assert!(reference(ReduceOp::Sum, ReduceDtype::U32, &[]).is_err());
        let e = reference(ReduceOp::Sum, ReduceDtype::U32, &[vec![1], vec![]]).unwrap_err();
        assert!(e.to_string().contains("rank 1"), "{e}");
    }
}
