//! Round-robin arbitration for the router's single-cycle separable allocator.
//!
//! A round-robin arbiter over `n` requesters with pointer `ptr` grants the
//! first requester at or after `ptr` (cyclically); when its grant is used the
//! pointer moves to `winner + 1 (mod n)`, so the winner becomes the lowest
//! priority next time. Strict priority between classes is a choice of which
//! of two request masks (class 1 before class 0) is arbitrated; each class
//! has its own pointer.

/// The requester granted by a round-robin arbiter: the lowest set bit of
/// `mask` at or above `ptr`, else the lowest set bit. `mask` must be non-zero.
#[inline]
pub fn rr_pick(mask: u32, ptr: u8) -> usize {
    debug_assert!(mask != 0);
    let above = mask & (u32::MAX << ptr);
    if above != 0 {
        above.trailing_zeros() as usize
    } else {
        mask.trailing_zeros() as usize
    }
}

/// The class to arbitrate: 1 (high priority) if it has requests, else 0; `None` if neither.
#[inline]
pub fn pick_class(masks: [u32; 2]) -> Option<usize> {
    if masks[1] != 0 {
        Some(1)
    } else if masks[0] != 0 {
        Some(0)
    } else {
        None
    }
}

/// The pointer after `winner` of `n` requesters was served.
#[inline]
pub fn rr_next(winner: usize, n: usize) -> u8 {
    if winner + 1 == n {
        0
    } else {
        (winner + 1) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: scan from ptr cyclically.
    fn reference(mask: u32, ptr: usize, n: usize) -> usize {
        (0..n)
            .map(|i| (ptr + i) % n)
            .find(|&i| mask >> i & 1 == 1)
            .unwrap()
    }

    #[test]
    fn matches_a_cyclic_scan() {
        let mut rng = crate::rng::Rng::new(3);
        for _ in 0..10_000 {
            let n = 1 + rng.below(16) as usize;
            let mask = rng.bits(n as u32) as u32;
            if mask == 0 {
                continue;
            }
            let ptr = rng.below(n as u64) as usize;
            assert_eq!(rr_pick(mask, ptr as u8), reference(mask, ptr, n));
        }
        assert_eq!(pick_class([0, 0]), None);
        assert_eq!(pick_class([1, 4]), Some(1));
        assert_eq!(pick_class([1, 0]), Some(0));
        assert_eq!(rr_next(6, 7), 0);
    }
}
